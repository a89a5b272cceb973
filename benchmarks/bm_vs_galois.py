"""Berlekamp-Massey decoding speed: qdecode's batched numba BM vs galois' ``decode`` on the same words.

Words: random codewords of BCH(127,64) and RS(16,8) over GF(256) (binary image) sent over
BPSK-AWGN at ``--ebn0`` dB (default 5 dB, the issue's operating point), hard decisions.
Both decoders get the same ``--words`` words (default 10^4); each is timed ``--repeats``
times (after a warm-up call that excludes JIT compilation) and the median is reported,
together with the agreement of the corrected words and failure flags. qdecode runs with
one thread and with numba's thread count. (galois' BM returns a non-codeword instead of
failing in a rare case, see qdecode.kernels.bm; agreement counts those as disagreements.)

Usage::

    python benchmarks/bm_vs_galois.py [--words 10000] [--repeats 3] [--ebn0 5.0] [--codes bch127_64,rs16_8]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import numba
import numpy as np

from qdecode.codes.catalog import get_code
from qdecode.decoders.bm import BmDecoder
from qdecode.sims.channels import BpskAwgn


def _median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench(name: str, words: int, repeats: int, ebn0: float) -> dict:
    import galois

    code = get_code(name)
    rng = np.random.default_rng(12345)
    if code.kind == "bch":
        cw = code.encode(rng.integers(0, 2, (words, code.k), dtype=np.uint8))
        rx = (BpskAwgn(ebn0, code.rate).transmit(cw, rng) <= 0).astype(np.uint8)
        ref = galois.BCH(code.n_mother, code.k_mother)
        to_field = galois.GF2
    else:
        bits = code.encode_bits(rng.integers(0, 2, (words, code.k_bits), dtype=np.uint8))
        cw = code.from_bits(bits)
        rx = code.from_bits((BpskAwgn(ebn0, code.rate).transmit(bits, rng) <= 0).astype(np.uint8))
        nm = code.field.n_max
        ref = galois.ReedSolomon(nm, nm - (code.n - code.k))
        to_field = ref.field
    dec1 = BmDecoder(code, threads=1)
    decn = BmDecoder(code)
    dec1.decode_hard_batch(rx[:10])  # JIT / cache load
    decn.decode_hard_batch(rx[:10])
    ref.decode(to_field(rx[:10]), output="codeword", errors=True)
    t_ours1 = _median_time(lambda: dec1.decode_hard_batch(rx), repeats)
    t_oursn = _median_time(lambda: decn.decode_hard_batch(rx), repeats)
    out = dec1.decode_hard_batch(rx)
    nerr = dec1.last_info.extra["corrected"]
    rx_f = to_field(rx)
    holder = {}

    def run_galois():
        holder["res"] = ref.decode(rx_f, output="codeword", errors=True)

    t_gal = _median_time(run_galois, repeats)
    g_out, g_nerr = holder["res"]
    g_out = np.array(g_out)
    return {
        "code": name,
        "words": words,
        "ebn0": ebn0,
        "errors_per_word": float(np.mean((rx != cw).sum(axis=1))),
        "failures": int(np.count_nonzero(nerr < 0)),
        "ours_1t": words / t_ours1,
        "ours_nt": words / t_oursn,
        "threads": numba.get_num_threads(),
        "galois": words / t_gal,
        "ratio_1t": t_gal / t_ours1,
        "ratio_nt": t_gal / t_oursn,
        "agree_words": int(np.count_nonzero((out == g_out).all(axis=1))),
        "agree_fail": int(np.count_nonzero((nerr < 0) == (np.asarray(g_nerr) < 0))),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--words", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--ebn0", type=float, default=5.0)
    ap.add_argument("--codes", default="bch127_64,rs16_8")
    args = ap.parse_args()
    import galois

    print(f"# {platform.processor() or platform.machine()}, numpy {np.__version__}, numba {numba.__version__}, "
          f"galois {galois.__version__}; median of {args.repeats}; Eb/N0 = {args.ebn0} dB hard decisions")
    print("| code | words | symbol/bit errors per word | BM failures | qdecode 1 thread (words/s) | "
          "qdecode N threads (words/s) | galois (words/s) | speed-up 1 thread | speed-up N threads | "
          "same words / same failure flags |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in args.codes.split(","):
        r = bench(name.strip(), args.words, args.repeats, args.ebn0)
        print(f"| {r['code']} | {r['words']} | {r['errors_per_word']:.2f} | {r['failures']} | {r['ours_1t']:,.0f} | "
              f"{r['ours_nt']:,.0f} (N={r['threads']}) | {r['galois']:,.0f} | {r['ratio_1t']:.0f}x | "
              f"{r['ratio_nt']:.0f}x | {r['agree_words']} / {r['agree_fail']} |", flush=True)


if __name__ == "__main__":
    main()
