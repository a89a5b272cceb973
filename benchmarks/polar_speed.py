"""SC / SCL decoding speed on Polar(64,22) and Polar(128,64): qdecode's numba kernels vs batched numpy.

No peer package with polar SC/SCL decoders is installed in this environment (sionna and
aff3ct are not dependencies), so the comparison is a plain batched numpy implementation
written here from the textbook rules (min-sum ``f``, ``g``, ``|llr|`` path-metric
increments, list copies by fancy indexing). It is also the cross-check: its decisions
must agree with qdecode's (SC bit for bit; SCL up to metric ties, which have probability 0).

Blocks are BPSK-AWGN at ``--ebn0`` dB with random messages, the same blocks for every
decoder, one thread (``threads=1``), median of ``--repeats`` runs of wall time and of
process CPU time (on a shared machine the CPU time is the steadier figure).

Usage: python benchmarks/polar_speed.py [--blocks 20000] [--repeats 3] [--ebn0 2.5] [--lists 8 32] \
           [--json benchmarks/results/polar_speed.json]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from _common import write_result


# ----------------------------------------------------------------------------- numpy reference
def _minsum(a, b):
    return np.sign(a) * np.sign(b) * np.minimum(np.abs(a), np.abs(b))


def numpy_sc(llr: np.ndarray, frozen: np.ndarray) -> np.ndarray:
    """Batched recursive SC (min-sum) over all blocks at once: (S, N) LLRs -> (S, N) codewords."""

    def rec(lv, lo):
        n = lv.shape[1]
        if n == 1:
            if frozen[lo]:
                return np.zeros((lv.shape[0], 1), dtype=np.uint8)
            return (lv < 0).astype(np.uint8)
        h = n // 2
        b1 = rec(_minsum(lv[:, :h], lv[:, h:]), lo)
        b2 = rec(lv[:, h:] + (1.0 - 2.0 * b1) * lv[:, :h], lo + h)
        return np.concatenate([b1 ^ b2, b2], axis=1)

    return rec(llr, 0)


def numpy_scl(llr: np.ndarray, frozen: np.ndarray, L: int) -> np.ndarray:
    """Batched SCL (min-sum, |llr| metric), paths copied by fancy indexing at every fork."""
    S, N = llr.shape
    m = N.bit_length() - 1
    rows = np.arange(S)[:, None]
    alpha = [None] * (m + 1)
    alpha[m] = llr[:, None, :]
    bl = [np.zeros((S, 1, 1 << s), dtype=np.uint8) for s in range(m)]
    u = np.zeros((S, 1, N), dtype=np.uint8)
    pm = np.zeros((S, 1))
    for i in range(N):
        top = m if i == 0 else (i & -i).bit_length()
        for s in range(top, 0, -1):
            a = alpha[s]
            h = 1 << (s - 1)
            if s == top and i > 0:
                alpha[s - 1] = a[..., h:] + (1.0 - 2.0 * bl[s - 1]) * a[..., :h]
            else:
                alpha[s - 1] = _minsum(a[..., :h], a[..., h:])
        lam = alpha[0][..., 0]
        if frozen[i]:
            pm = pm + np.abs(lam) * (lam < 0)
            ui = np.zeros(lam.shape, dtype=np.uint8)
        else:
            P = lam.shape[1]
            cand = np.concatenate([pm + np.abs(lam) * (lam < 0), pm + np.abs(lam) * (lam >= 0)], axis=1)
            if 2 * P <= L:
                pick = np.broadcast_to(np.arange(2 * P), (S, 2 * P))
            else:
                pick = np.argsort(cand, axis=1, kind="stable")[:, :L]
            parent, ui = pick % P, (pick // P).astype(np.uint8)
            pm = np.take_along_axis(cand, pick, axis=1)
            for s in range(1, m):
                if alpha[s] is not None:
                    alpha[s] = alpha[s][rows, parent]
            alpha[m] = alpha[m][rows, np.zeros_like(parent)]
            bl = [b[rows, parent] for b in bl]
            u = u[rows, parent]
        u[..., i] = ui
        # re-encode upward while leaf i closes right children, park the result as bl
        cur = ui[..., None]
        s = 0
        while s < m and (i >> s) & 1:
            cur = np.concatenate([bl[s] ^ cur, cur], axis=2)
            s += 1
        if s < m:
            bl[s] = cur
    best = np.argmin(pm, axis=1)
    ub = u[np.arange(S), best]
    x = ub.copy()
    h = 1
    while h < N:  # x = u G_N
        v = x.reshape(S, N // (2 * h), 2, h)
        v[:, :, 0, :] ^= v[:, :, 1, :]
        h *= 2
    return x


# ----------------------------------------------------------------------------- timing
def timed(fn, repeats):
    walls, cpus, out = [], [], None
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--ebn0", type=float, default=2.5)
    ap.add_argument("--lists", type=int, nargs="+", default=[8, 32])
    ap.add_argument("--numpy-blocks", type=int, default=2000, help="blocks for the (slow) numpy SCL")
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--json", metavar="FILE", help="also write the rows to this result file")
    args = ap.parse_args()

    import numba

    from qdecode.codes.catalog import get_code
    from qdecode.decoders.sc_scl import ScDecoder, SclDecoder

    numba.set_num_threads(1)
    print(f"BPSK-AWGN Eb/N0 = {args.ebn0} dB, 1 thread, median of {args.repeats}; numpy {np.__version__}, "
          f"numba {numba.__version__}")
    print("| code | decoder | blocks | qdecode blocks/s (wall) | qdecode blocks/s (CPU) | numpy blocks/s (CPU) "
          "| CPU ratio | agreement | BLER |")
    print("|---|---|---|---|---|---|---|---|---|")
    rows = []
    for name in ("polar64_22", "polar128_64"):
        code = get_code(name)
        rng = np.random.default_rng(args.seed)
        S = args.blocks
        x = code.encode(rng.integers(0, 2, (S, code.k), dtype=np.uint8))
        sigma2 = 1.0 / (2.0 * code.rate * 10.0 ** (args.ebn0 / 10.0))
        llr = 2.0 * ((1.0 - 2.0 * x) + rng.normal(0.0, np.sqrt(sigma2), x.shape)) / sigma2
        frozen = code.frozen_mask.astype(bool)
        runs = [("SC", ScDecoder(code, threads=1), S, lambda sl: numpy_sc(llr[sl], frozen), S)]
        for L in args.lists:
            nb = max(1, S // max(1, L // 4))
            runs.append((f"SCL-{L}", SclDecoder(code, L, threads=1), nb,
                         (lambda L: lambda sl: numpy_scl(llr[sl], frozen, L))(L), args.numpy_blocks))
        for label, dec, nb, ref, nref in runs:
            dec.decode_llr_batch(llr[:8])  # compile / load the numba cache outside the timing
            wall, cpu, out = timed(lambda: dec.decode_llr_batch(llr[:nb]), args.repeats)
            nref = min(nref, nb)
            _, rcpu, rout = timed(lambda: ref(slice(0, nref)), args.repeats)
            agree = float(np.mean((out[:nref] == rout).all(axis=1)))
            bler = float(np.mean((out != x[:nb]).any(axis=1)))
            rows.append({"code": name, "decoder": label, "blocks": nb, "blocks_per_s_wall": nb / wall,
                         "blocks_per_s_cpu": nb / cpu, "numpy_blocks": nref, "numpy_blocks_per_s_cpu": nref / rcpu,
                         "agreement": agree, "bler": bler})
            print(f"| {name} | {label} | {nb:,} | {nb / wall:,.0f} | {nb / cpu:,.0f} | {nref / rcpu:,.0f} "
                  f"| {(nb / cpu) / (nref / rcpu):.1f}x | {agree:.4f} | {bler:.3g} |", flush=True)
    write_result(args.json, {"ebn0": args.ebn0, "repeats": args.repeats, "seed": args.seed, "rows": rows})


if __name__ == "__main__":
    main()
