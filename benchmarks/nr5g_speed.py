"""Decoding speed of 5G NR LDPC on one core: ``ldpc-ms`` against ldpc's BpDecoder and sionna, same frames.

Code: ``nr5g[bg=1,k=6144,n=12288]`` (base graph 1, Z = 288, the AFF3CT anchor's code): the mother matrix has
316 base edges, 91,008 lifted edges. Frames: random messages, BPSK over AWGN at ``--ebn0`` dB (default 1.0, below
the waterfall, so that no decoder converges early and every one runs its 10 iterations: ldpc's BpDecoder always
stops at a zero syndrome, ours and sionna's run without early stop here).

Decoders, each with 10 iterations:
- ``ldpc-ms[bits=8]`` / ``ldpc-ms[bits=16,frac_bits=6]``: horizontal-layered offset min-sum (offset 0.5), early
  stop off, one thread (qdecode's kernels on 64 / 32 frames per vector);
- ldpc 2.x ``BpDecoder`` (``bp_method="minimum_sum"``, ``schedule="serial"``, ``ms_scaling_factor=1``): one frame
  at a time (``update_channel_probs`` then ``decode`` of the zero syndrome; it takes no batch of LLRs);
- sionna ``LDPC5GDecoder`` (``cn_update="offset-minsum"``, ``num_iter=10``; ``cn_schedule="layered"``, the same
  schedule, and ``"flooding"``, sionna's recommended and faster one), torch on one CPU thread, on a batch of the
  same frames.

Timing: thread CPU time (``time.thread_time``; torch's intra-op pool is set to one thread) of the decode call
alone (rate recovery and quantisation included for ours; the "kernel only" rows time the lane kernel on LLRs
already recovered and quantised), median of ``--repeats`` runs after one warm-up
call. Reported per decoder: µs per frame, information Mb/s (6144 bits per frame / time) and ns per
edge-iteration (time / (frames x 10 x 91,008)); ratios are the peer's time per frame over ours.

    python benchmarks/nr5g_speed.py --json benchmarks/results/nr5g_speed.json
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
from importlib.metadata import version

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from _common import timed, write_result  # noqa: E402

ITERS = 10


def _timed(fn, repeats: int) -> float:
    """Median thread CPU seconds of ``repeats`` calls of ``fn`` after a warm-up call (``_common.timed``)."""
    fn()
    return statistics.median(timed(fn)[0] for _ in range(repeats))


def _frames(code, frames: int, ebn0: float, seed: int):
    from qdecode.sims.channels import BpskAwgn

    rng = np.random.default_rng(seed)
    msgs = rng.integers(0, 2, size=(frames, code.k), dtype=np.uint8)
    llr = BpskAwgn(ebn0_db=ebn0, rate=code.k / code.n).transmit(code.encode(msgs), rng)
    return msgs, llr


def run(args) -> dict:
    from qdecode.codes.nr5g import Nr5gCode
    from qdecode.decoders.qc_ldpc import QcMinSumDecoder

    code = Nr5gCode.from_params(bg=1, K=6144, E=12288)
    edges = int(np.count_nonzero(code.shifts >= 0)) * code.Z
    msgs, llr = _frames(code, args.frames, args.ebn0, args.seed)
    rows = []

    def add(name: str, seconds: float, frames: int, errors: int | None) -> None:
        rows.append({"decoder": name, "frames": frames, "us_per_frame": 1e6 * seconds / frames,
                     "info_mbps": frames * code.k / seconds / 1e6,
                     "ns_per_edge_iteration": 1e9 * seconds / (frames * ITERS * edges),
                     "frame_errors": errors})

    for label, kw in (("ldpc-ms[bits=8]", {}), ("ldpc-ms[bits=16,frac_bits=6]", dict(bits=16, frac_bits=6))):
        dec = QcMinSumDecoder(code, early_stop=False, max_iter=ITERS, threads=1, **kw)
        t = _timed(lambda: dec.decode_mother_llr_batch(llr), args.repeats)
        mother = dec.decode_mother_llr_batch(llr)
        errors = int((mother[:, :code.k] != msgs).any(axis=1).sum())
        add(label, t, args.frames, errors)
        q = dec.quantize_sent(llr)  # the lane kernel alone, on LLRs already rate-recovered and quantised
        add(f"{label}, kernel only", _timed(lambda: dec.decode_quantized(q), args.repeats), args.frames, errors)

    from ldpc import BpDecoder

    H = code.H.tocsr()
    n_ldpc = args.ldpc_frames
    mother_llr = np.clip(code.rate_recover(llr[:n_ldpc]), -30.0, 30.0)
    probs = 1.0 / (1.0 + np.exp(mother_llr))
    bp = BpDecoder(H, error_rate=0.1, max_iter=ITERS, bp_method="minimum_sum", schedule="serial",
                   ms_scaling_factor=1.0)
    zero = np.zeros(H.shape[0], dtype=np.uint8)
    out = np.zeros((n_ldpc, H.shape[1]), dtype=np.uint8)

    def ldpc_all():
        for s in range(n_ldpc):
            bp.update_channel_probs(probs[s])
            out[s] = bp.decode(zero)

    add(f"ldpc {version('ldpc')} BpDecoder (min-sum, serial)", _timed(ldpc_all, args.repeats), n_ldpc,
        int((out[:, :code.k] != msgs[:n_ldpc]).any(axis=1).sum()))

    import torch
    from sionna.phy.fec.ldpc import LDPC5GDecoder, LDPC5GEncoder

    torch.set_num_threads(1)
    enc = LDPC5GEncoder(k=code.k, n=code.n)
    n_s = args.sionna_frames
    y = torch.tensor(-llr[:n_s], dtype=torch.float32)  # sionna's LLR is ln P(1) / P(0)
    for schedule in ("layered", "flooding"):
        sdec = LDPC5GDecoder(enc, cn_update="offset-minsum", cn_schedule=schedule, num_iter=ITERS, hard_out=True,
                             return_infobits=True)
        res = {}

        def sionna_all():
            with torch.no_grad():
                res["u"] = sdec(y)

        t = _timed(sionna_all, args.repeats)
        fe = int((res["u"].numpy().astype(np.uint8) != msgs[:n_s]).any(axis=1).sum())
        add(f"sionna {version('sionna-no-rt')} LDPC5GDecoder (offset-minsum, {schedule})", t, n_s, fe)
    ours = rows[0]["us_per_frame"]
    for r in rows:
        r["time_ratio_to_ldpc_ms_i8"] = r["us_per_frame"] / ours
    return {"command": " ".join(["python", *sys.argv]), "code": code.name, "Z": code.Z, "lifted_edges": edges,
            "iterations": ITERS, "ebn0": args.ebn0, "repeats": args.repeats, "seed": args.seed,
            "clock": "thread CPU time, median of repeats after a warm-up call; one thread",
            "machine": platform.processor() or platform.machine(), "cpu_count": os.cpu_count(), "rows": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=512)
    ap.add_argument("--ldpc-frames", type=int, default=8)
    ap.add_argument("--sionna-frames", type=int, default=16)
    ap.add_argument("--ebn0", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    result = run(args)
    for r in result["rows"]:
        print(f"{r['decoder']:60s} {r['us_per_frame']:10.1f} us/frame {r['info_mbps']:8.2f} Mb/s "
              f"{r['ns_per_edge_iteration']:7.3f} ns/edge-it  x{r['time_ratio_to_ldpc_ms_i8']:.1f}  "
              f"FE {r['frame_errors']}/{r['frames']}")
    write_result(args.json, result)


if __name__ == "__main__":
    main()
