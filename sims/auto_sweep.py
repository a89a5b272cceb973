"""``auto`` in a sweep: one decoder per model kind, decided once, said out loud, kept on resume.

:func:`qdecode.decoders.auto.choose` picks a concrete decoder for *one* model. Resolved per task,
one ``--decoder auto`` sweep over d = 3, 5, 7 could become three decoders (the small model fits
a slow candidate, the large one does not), splitting the plot and hiding the threshold; and a
resume, measuring again on a busy machine, could move a point to another decoder. So a sweep
resolves ``auto`` here, before anything is sampled:

1. **Groups.** The ``auto`` tasks are grouped by their ``auto`` parameters (``time_budget``) and
   their model's kind (:func:`~qdecode.decoders.auto.model_kind`: graphlike or hypergraph; the
   two kinds have different candidate lists). Every task of a group gets the same decoder: one
   decoder per model kind per sweep.
2. **Resume.** If the output file (or ``--existing-data-filepaths``) already holds rows of a
   group's tasks under one of its candidates (matched by strong_id: the CSV itself is the
   record), the group keeps that candidate without measuring; where rows of several candidates
   exist (files from before this rule), the one with the most shots.
3. **Calibration.** Otherwise the group's largest model (most detectors, then the largest sum
   of priors: the slowest to decode) is calibrated, so the choice fits the budget on every task
   of the group. The calibration batch (up to 2,048 shots) is the size at which the sweep's own
   per-shot time is measured against (``benchmarks/in_sweep_speed.py``: in-sweep CPU time per
   shot against one 2,048-shot call), since the sweep decodes consecutive chunks in calls of
   up to :data:`qdecode.sims.sampling.CALL_SHOTS` shots.

Each decision is announced in lines: the choice, the model it was measured on, and every
candidate's CPU time per shot; a budget no candidate meets is a warning line naming the
fastest candidate and its time (which is then chosen).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping, Sequence

from qdecode.errors import InputError
from qdecode.sims.tasks import SweepTask, describe_task, strong_id

#: The placeholder decoder a task is described with before its kind is known (no decoder is built).
_PLACEHOLDER = "pymatching"


@dataclasses.dataclass
class _Group:
    params: tuple
    kind: str
    tasks: list[int] = dataclasses.field(default_factory=list)
    described: list[Any] = dataclasses.field(default_factory=list)
    sizes: list[tuple[int, float]] = dataclasses.field(default_factory=list)


def _candidate_specs(kind: str) -> list[Any]:
    from qdecode.decoders.auto import GRAPHLIKE_CANDIDATES, HYPERGRAPH_CANDIDATES
    from qdecode.decoders.registry import DecoderSpec, split_label

    labels = GRAPHLIKE_CANDIDATES if kind == "graphlike" else HYPERGRAPH_CANDIDATES
    return [DecoderSpec.create(*split_label(label)) for label in labels]


def _recorded_candidate(group: _Group, existing: Mapping[str, Any]) -> tuple[Any, int] | None:
    """The candidate with the most shots already recorded for the group's tasks, or None."""
    shots: dict[str, int] = {}
    specs = {}
    for spec in _candidate_specs(group.kind):
        label = spec.record_label
        for ct in group.described:
            sid = strong_id(ct.sampled, ct.dem, label, ct.json_metadata, ct.postselection_mask)
            row = existing.get(sid)
            if row is not None and row.shots:
                shots[label] = shots.get(label, 0) + row.shots
                specs[label] = spec
    if not shots:
        return None
    best = max(shots, key=lambda label: shots[label])
    return specs[best], len(shots)


def _format_trials(trials: Sequence[Any], budget: float) -> str:
    parts = []
    for t in trials:
        if t.ms_per_shot == float("inf"):
            parts.append(f"{t.label} refused the model")
        else:
            mark = "within" if t.ms_per_shot <= budget else "over"
            parts.append(f"{t.label} {t.ms_per_shot:.3g} ms ({mark})")
    return "; ".join(parts)


def resolve_auto_tasks(tasks: Sequence[SweepTask], existing: Mapping[str, Any],
                       announce: Callable[[str], None] | None = None) -> list[SweepTask]:
    """``tasks`` with every ``auto`` decoder replaced by its group's one concrete decoder (module docstring).

    Args:
        tasks: the sweep's tasks; those without ``auto`` pass through unchanged.
        existing: strong_id -> merged row already recorded (the output file and existing data).
        announce: called with one line per decision (choice, calibration, over-budget warning).

    Raises:
        ValueError: ``"task <task.describe()>: ..."`` when a task's model cannot be described.
    """
    from qdecode.decoders.auto import AUTO_PARAMS, choose, model_kind
    from qdecode.decoders.registry import DecoderSpec
    from qdecode.problem import DecodingProblem

    groups: dict[tuple, _Group] = {}
    for i, task in enumerate(tasks):
        if task.decoder.name != "auto" or task.classical is not None:
            continue
        try:
            ct = describe_task(dataclasses.replace(task, decoder=DecoderSpec.create(_PLACEHOLDER)))
        except ValueError as exc:
            raise InputError(f"task {task.describe()}: {exc}") from None
        problem = DecodingProblem.from_dem(ct.dem)
        kind = model_kind(problem, DecoderSpec)
        params = tuple(sorted(dict(task.decoder.params).items()))
        group = groups.setdefault((params, kind), _Group(params, kind))
        group.tasks.append(i)
        group.described.append(ct)
        group.sizes.append((problem.num_detectors, float(problem.priors.sum())))
    out = list(tasks)
    say = announce or (lambda line: None)
    for group in groups.values():
        n = len(group.tasks)
        what = f"auto ({group.kind} models, {n} task{'s' if n != 1 else ''})"
        kept = _recorded_candidate(group, existing)
        if kept is not None:
            spec, found = kept
            note = "" if found == 1 else f"; rows of {found} candidates found, the one with the most shots kept"
            say(f"{what}: {spec.label()} (recorded in the output file{note})")
        else:
            largest = max(range(n), key=lambda j: group.sizes[j])
            ct = group.described[largest]
            budget = float(dict(group.params).get("time_budget", AUTO_PARAMS["time_budget"].default))
            choice = choose(DecodingProblem.from_dem(ct.dem), time_budget=budget, specs=DecoderSpec)
            spec = choice.spec
            say(f"{what}: {spec.label()}, measured on {tasks[group.tasks[largest]].describe()} "
                f"(CPU time per shot, budget {budget:g} ms): {_format_trials(choice.trials, budget)}")
            if not choice.within_budget:
                best = min((t for t in choice.trials if t.label == spec.label()), key=lambda t: t.ms_per_shot)
                say(f"warning: no auto candidate meets the budget of {budget:g} ms per shot; using the fastest, "
                    f"{spec.label()} at {best.ms_per_shot:.3g} ms")
        for i in group.tasks:
            out[i] = dataclasses.replace(tasks[i], decoder=spec)
    return out

