"""Random detector error models for the decoder fuzzer (a hypothesis strategy).

:func:`dems` draws the text of a small stim DEM covering what foreign models contain and our own
circuits never make:

* 0-8 detectors and 0-3 observables, zero of either included (declared with ``detector D<i>`` /
  ``logical_observable L<i>`` so the counts are exact even where no mechanism touches them);
* 0-4 coordinates per detector (one count per model, or a count per detector), four of them
  sometimes in Chromobius' ``(x, y, t, basis-and-colour)`` layout;
* mechanisms touching 0-4 detectors (graphlike or hyperedge) and 0-2 observables, among them
  observable-only and detector-only mechanisms, with probabilities from 1e-6 to 0.5 drawn
  log-uniformly (0.5 itself included);
* disconnected parts: the detectors split into two blocks that no mechanism joins;
* an optional ``repeat`` block whose body ends with ``shift_detectors`` (with a time shift of the
  coordinates when they have any), unrolled by stim into several rounds;
* sometimes 1-2 herald detectors (``detector[herald]``, :mod:`qdecode.heralds`) after the others, each
  flipped alone by one mechanism and together with other detectors and observables by one or two more
  (split off by ``^`` in graphlike models).

The strategy returns the DEM text; :func:`describe` summarises a model for failure messages.
"""

from __future__ import annotations

import math

from hypothesis import strategies as st

MAX_DETECTORS = 8
MAX_OBSERVABLES = 3


@st.composite
def probabilities(draw) -> float:
    """A probability in [1e-6, 0.5], log-uniform, with 0.5 itself drawn now and then."""
    if draw(st.integers(0, 15)) == 0:
        return 0.5
    return round(10 ** draw(st.floats(-6.0, math.log10(0.5))), 9)


@st.composite
def _mechanisms(draw, detectors: list[int], num_observables: int, graphlike: bool, max_count: int) -> list[str]:
    """Lines ``error(p) D.. L..`` over the given detector indices (never an empty target list)."""
    lines = []
    widest = 2 if graphlike else 4
    for _ in range(draw(st.integers(0, max_count))):
        dets = draw(st.lists(st.sampled_from(detectors), max_size=widest, unique=True)) if detectors else []
        obs = (draw(st.lists(st.integers(0, num_observables - 1), max_size=2, unique=True))
               if num_observables else [])
        if not dets and not obs:
            continue  # stim accepts an error with no targets, but it is no mechanism at all
        targets = " ".join([f"D{d}" for d in sorted(dets)] + [f"L{o}" for o in sorted(obs)])
        lines.append(f"error({draw(probabilities())}) {targets}")
    return lines


@st.composite
def _heralds(draw, num_dets: int, num_obs: int, graphlike: bool) -> list[str]:
    """1-2 herald detectors numbered from ``num_dets``, each with its mechanisms (module docstring)."""
    lines = []
    for h in range(num_dets, num_dets + draw(st.integers(1, 2))):
        lines.append(f"error({draw(probabilities())}) D{h}")
        for effect in draw(_mechanisms(list(range(num_dets)), num_obs, graphlike, 2)):
            targets = effect.split(" ", 1)[1]
            lines.append(f"error({draw(probabilities())}) D{h} {'^ ' if graphlike else ''}{targets}")
        lines.append(f"detector[herald] D{h}")
    return lines


def _coords(draw, ncoord: int, index: int) -> str:
    """``(c0, ..., t)``: free integers, then the detector's round or index as the time; with four
    coordinates, half the time Chromobius' layout ``(x, y, t, basis-and-colour in -1..5)``."""
    if ncoord == 0:
        return ""
    if ncoord == 4 and draw(st.booleans()):
        values = [draw(st.integers(-3, 6)), draw(st.integers(-3, 6)), index, draw(st.integers(-1, 5))]
    else:
        values = [draw(st.integers(-3, 6)) for _ in range(ncoord - 1)] + [index]
    return "(" + ", ".join(str(v) for v in values) + ")"


@st.composite
def dems(draw) -> str:
    """The text of a random stim DEM (module docstring)."""
    num_obs = draw(st.integers(0, MAX_OBSERVABLES))
    graphlike = draw(st.booleans())
    per_model_coords = draw(st.booleans())
    model_ncoord = draw(st.integers(0, 4))

    def ncoord() -> int:
        return model_ncoord if per_model_coords else draw(st.integers(0, 4))

    lines: list[str] = []
    if draw(st.integers(0, 3)) == 0:
        # a repeat block: h detectors per round, mechanisms inside one round or joining it to the next
        h = draw(st.integers(1, 3))
        rounds = draw(st.integers(2, 4))
        body = draw(_mechanisms(list(range(2 * h)), num_obs, graphlike, 6))
        nc = model_ncoord
        body += [f"detector{_coords(draw, nc, 0)} D{i}" for i in range(h)]
        shift = f"shift_detectors({', '.join(['0'] * (nc - 1) + ['1'])}) {h}" if nc else f"shift_detectors {h}"
        lines.append(f"repeat {rounds} {{")
        lines += ["    " + line for line in body + [shift]]
        lines.append("}")
        # the last round's partners (detectors h*rounds .. h*rounds + h - 1) are declared after the block
        base = h * rounds
        lines += [f"detector{_coords(draw, nc, rounds)} D{base + i}" for i in range(h)]
        num_dets = base + h
    else:
        num_dets = draw(st.integers(0, MAX_DETECTORS))
        split = draw(st.integers(0, num_dets)) if draw(st.booleans()) else num_dets
        for part in (list(range(split)), list(range(split, num_dets))):  # two parts no mechanism joins
            lines += draw(_mechanisms(part, num_obs, graphlike, 10))
        if num_obs and draw(st.booleans()):
            lines += draw(_mechanisms([], num_obs, graphlike, 2))  # observable-only mechanisms
        lines += [f"detector{_coords(draw, ncoord(), i)} D{i}" for i in range(num_dets)]
        if draw(st.integers(0, 2)) == 0:
            lines += draw(_heralds(num_dets, num_obs, graphlike))
    lines += [f"logical_observable L{i}" for i in range(num_obs)]
    return "\n".join(lines) + "\n"


def describe(text: str) -> str:
    """One line: the DEM text with newlines shown as `` | `` (for assertion messages)."""
    return " | ".join(line.strip() for line in text.strip().splitlines())
