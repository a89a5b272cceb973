"""Berlekamp-Massey decoding speed: qdecode's batched numba BM vs galois' ``decode`` on the same words.

Words: random codewords of BCH(127,64) and RS(16,8) over GF(256) (binary image) sent over
BPSK-AWGN at ``--ebn0`` dB (default 5 dB, the issue's operating point), hard decisions.
Both decoders get the same ``--words`` words (default 10^4); each is timed ``--repeats``
times (after a warm-up call that excludes JIT compilation) and the median is reported,
together with the agreement of the corrected words and failure flags. qdecode runs with
one thread and with numba's thread count. (galois' BM returns a non-codeword instead of
failing in a rare case, see qdecode.kernels.bm; agreement counts those as disagreements.)

For BCH codes the table also has a plain-numpy baseline, :class:`NumpyBch` below: syndromes by
byte-table lookups, Berlekamp-Massey vectorised over the batch (log/exp tables), Chien search
as one GF(2) matrix product. It is checked against qdecode's output (same corrected words and
failure flags on every benchmark word) before it is timed.

Usage::

    python benchmarks/bm_vs_galois.py [--words 10000] [--repeats 3] [--ebn0 5.0] [--codes bch127_64,rs16_8] \
        [--json benchmarks/results/bm_vs_galois.json]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import numba
import numpy as np
from _common import write_result

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


class NumpyBch:
    """Plain-numpy hard-decision BCH decoder (Berlekamp-Massey), vectorised over words.

    Same conventions as :mod:`qdecode.codes.bch` (array index ``a`` holds the coefficient of
    ``x^(n-1-a)``, narrow-sense roots ``alpha^1 .. alpha^2t``). Failed words (locator degree
    > t or fewer roots than its degree) come back unchanged with ``nerr = -1``.
    """

    def __init__(self, code) -> None:
        f = code.field
        self.n, self.t, self.m, self.N = code.n, code.t, f.m, f.n_max
        n, t, m, N = self.n, self.t, self.m, self.N
        self.exp = np.asarray(f.exp, dtype=np.int64)[:N]
        self.exp2 = np.concatenate([self.exp, self.exp])  # exp2[i] for 0 <= i < 2N
        self.log = np.asarray(f.log, dtype=np.int64)
        power = n - 1 - np.arange(n)  # array index -> power of x
        # syndrome tables: word split into bytes; tab[c, v, j] = XOR_{bit b of v} alpha^{(j+1) p(8c+b)}
        self.nbytes = (n + 7) // 8
        contrib = self.exp[(np.outer(power, np.arange(1, 2 * t + 1))) % N]  # (n, 2t)
        contrib = np.vstack([contrib, np.zeros((8 * self.nbytes - n, 2 * t), dtype=np.int64)])
        tab = np.zeros((self.nbytes, 256, 2 * t), dtype=np.int64)
        for v in range(1, 256):
            low = (v & -v).bit_length() - 1
            tab[:, v] = tab[:, v & (v - 1)] ^ contrib[np.arange(self.nbytes) * 8 + low]
        self.tab = tab
        # Chien search: bits of Lambda_i (i = 0..t) -> bits of Lambda(alpha^{-p}) for every position
        M = np.zeros(((t + 1) * m, n * m), dtype=np.float32)
        for i in range(t + 1):
            for b in range(m):
                # alpha^b * alpha^{-p i} for every position's power p
                v = self.exp[(b - power * i) % N]
                for c in range(m):
                    M[i * m + b, np.arange(n) * m + c] = (v >> c) & 1
        self.chien = M
        self.bitw = (1 << np.arange(m)).astype(np.int64)

    def _mul(self, a, b):
        r = self.exp2[self.log[a] + self.log[b]]
        return np.where((a == 0) | (b == 0), 0, r)

    def decode(self, rx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n, t, m, N = self.n, self.t, self.m, self.N
        W = rx.shape[0]
        packed = np.packbits(rx, axis=1, bitorder="little")  # (W, nbytes)
        S = np.zeros((W, 2 * t), dtype=np.int64)
        for c in range(self.nbytes):
            S ^= self.tab[c][packed[:, c]]
        # Berlekamp-Massey over the batch: Lam, B (W, t+2) ascending coefficients
        Lam = np.zeros((W, 2 * t + 2), dtype=np.int64)
        B = np.zeros_like(Lam)
        Lam[:, 0] = 1
        B[:, 0] = 1
        L = np.zeros(W, dtype=np.int64)
        b = np.ones(W, dtype=np.int64)
        shift = np.ones(W, dtype=np.int64)  # B is multiplied by x^shift
        for r in range(2 * t):
            # discrepancy: S_{r+1} + sum_{i=1}^{L} Lam_i S_{r+1-i}
            idx = r - np.arange(r + 1)  # S index (0-based) for Lam_0..Lam_r
            d = np.bitwise_xor.reduce(self._mul(Lam[:, : r + 1], S[:, idx]), axis=1)
            nz = d != 0
            # Lam' = Lam - (d / b) x^shift B
            coef = self.exp2[(self.log[d] - self.log[b]) % N]
            xB = np.zeros_like(B)
            cols = np.arange(B.shape[1])
            src = cols[None, :] - shift[:, None]
            ok = src >= 0
            xB[ok] = B[np.nonzero(ok)[0], src[ok]]
            newLam = Lam ^ np.where(nz[:, None], self._mul(coef[:, None], xB), 0)
            grow = nz & (2 * L <= r)
            B = np.where(grow[:, None], Lam, B)
            b = np.where(grow, d, b)
            L = np.where(grow, r + 1 - L, L)
            shift = np.where(grow, 1, shift + 1)
            Lam = newLam
        fail = L > t
        # Chien search: Lambda(alpha^{-p}) for every position as one GF(2) matrix product
        coef_bits = ((Lam[:, : t + 1, None] >> np.arange(m)) & 1).reshape(W, -1).astype(np.float32)
        vals = (coef_bits @ self.chien).astype(np.int64) & 1  # (W, n*m)
        err = ~vals.reshape(W, n, m).any(axis=2)
        nroots = err.sum(axis=1)
        fail |= nroots != L
        out = rx.copy()
        ok = ~fail
        out[ok] ^= err[ok].astype(np.uint8)
        nerr = np.where(fail, -1, nroots).astype(np.int32)
        return out, nerr


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
    # RS words are symbols here (galois decodes symbols): the symbol path; BCH words are bits
    run1 = dec1.decode_symbols_batch if code.kind == "rs" else dec1.decode_hard_batch
    runn = decn.decode_symbols_batch if code.kind == "rs" else decn.decode_hard_batch
    run1(rx[:10])  # JIT / cache load
    runn(rx[:10])
    ref.decode(to_field(rx[:10]), output="codeword", errors=True)
    t_ours1 = _median_time(lambda: run1(rx), repeats)
    t_oursn = _median_time(lambda: runn(rx), repeats)
    out = run1(rx)
    nerr = dec1.last_info.extra["corrected"]
    rx_f = to_field(rx)
    holder = {}

    def run_galois():
        holder["res"] = ref.decode(rx_f, output="codeword", errors=True)

    t_gal = _median_time(run_galois, repeats)
    g_out, g_nerr = holder["res"]
    g_out = np.array(g_out)
    np_ws = np_agree = None
    if code.kind == "bch":
        npdec = NumpyBch(code)
        np_out, np_nerr = npdec.decode(rx)
        np_agree = bool(np.array_equal(np_out, out) and np.array_equal(np_nerr < 0, nerr < 0))
        if not np_agree:
            raise AssertionError(f"{name}: the numpy BM baseline disagrees with qdecode's BM")
        t_np = _median_time(lambda: npdec.decode(rx), repeats)
        np_ws = words / t_np
    return {
        "numpy": np_ws,
        "numpy_agree": np_agree,
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
    ap.add_argument("--json", metavar="FILE", help="also write the rows to this result file")
    args = ap.parse_args()
    rows = []
    import galois

    print(f"# {platform.processor() or platform.machine()}, numpy {np.__version__}, numba {numba.__version__}, "
          f"galois {galois.__version__}; median of {args.repeats}; Eb/N0 = {args.ebn0} dB hard decisions")
    print("| code | words | symbol/bit errors per word | BM failures | qdecode 1 thread (words/s) | "
          "qdecode N threads (words/s) | galois (words/s) | speed-up 1 thread | speed-up N threads | "
          "same words / same failure flags | plain numpy BM (words/s) | qdecode 1 thread / numpy |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.codes.split(","):
        r = bench(name.strip(), args.words, args.repeats, args.ebn0)
        rows.append(r)
        npw = "-" if r["numpy"] is None else f"{r['numpy']:,.0f} (agrees)"
        npr = "-" if r["numpy"] is None else f"{r['ours_1t'] / r['numpy']:.0f}x"
        print(f"| {r['code']} | {r['words']} | {r['errors_per_word']:.2f} | {r['failures']} | {r['ours_1t']:,.0f} | "
              f"{r['ours_nt']:,.0f} (N={r['threads']}) | {r['galois']:,.0f} | {r['ratio_1t']:.0f}x | "
              f"{r['ratio_nt']:.0f}x | {r['agree_words']} / {r['agree_fail']} | {npw} | {npr} |", flush=True)
    write_result(args.json, {"ebn0": args.ebn0, "repeats": args.repeats, "galois": galois.__version__, "rows": rows})


if __name__ == "__main__":
    main()
