"""The sweep's scheduling: every task's first two batches are submitted before any task's third, so
the progress display's cost estimate (which waits for every task's second batch, free of the
worker's start-up: qdecode.cli.progress) comes early. Scheduling only: what is recorded never depends on it."""

from __future__ import annotations

import stim

from qdecode.decoders import DecoderSpec
from qdecode.sims.executors import InlineExecutor
from qdecode.sims.sweep import SweepOptions, run_sweep
from qdecode.sims.tasks import SweepTask


class _Recording(InlineExecutor):
    """Runs batches inline and records (task key, batch index) in submission order."""

    num_workers = 2  # four batches in flight, as two process workers would have

    def __init__(self):
        self.order: list[tuple[int, int]] = []

    def submit(self, fn, *args):
        self.order.append((args[1], args[2]))
        return super().submit(fn, *args)


def test_every_task_gets_two_batches_before_any_third():
    tasks = [SweepTask(decoder=DecoderSpec.create("pymatching"),
                  circuit_text=str(stim.Circuit.generated("repetition_code:memory", distance=3, rounds=3,
                                                          after_clifford_depolarization=p)),
                  extra_metadata=(("p", p),))
             for p in (0.001, 0.002, 0.003, 0.004, 0.005, 0.006)]
    ex = _Recording()
    opts = SweepOptions(max_shots=100 * 63, max_errors=10**9, seed=5, min_batch_size=100, max_batch_size=1600)
    totals = run_sweep(tasks, out_path=None, options=opts, executor=ex)
    assert [t.shots for t in totals] == [opts.max_shots] * len(tasks)
    third = min(i for i, (_, index) in enumerate(ex.order) if index >= 2)
    assert sorted(ex.order[:third]) == [(k, i) for k in range(len(tasks)) for i in (0, 1)]
    assert [index for _, index in ex.order[:len(tasks)]] == [0] * len(tasks)  # first batches first, as before
