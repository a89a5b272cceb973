"""5G NR LDPC frame error rates at AFF3CT's reference points, same decoder settings.

AFF3CT v4.5's reference curves (:mod:`qdecode.sims.published_curves`: repository, files, settings): BPSK over
AWGN, horizontal-layered offset min-sum, offset 0.5, 10 iterations, no syndrome stop, float32 arithmetic.
Ours: ``ldpc-ms[early_stop=false]`` (layered OMS, offset 0.5, 10 iterations) in the two fixed-point formats of
:mod:`qdecode.decoders.qc_ldpc`: 8-bit with 2 fractional bits (the default; messages at most 7.75, posteriors
at most 31.75 in LLR units) and 16-bit with 6 fractional bits (messages at most 63.98).

Per point: frames in batches of ``--batch`` (seeded per point and batch: ``seed + 1000 * point + batch``), until
``--errors`` frame errors *on the information bits* (AFF3CT's count) or ``--max-frames``. Both counts are kept:
``fe_info`` (any of the K message bits wrong: the first K bits of the decoded mother word) and ``fe_sent`` (any
of the E transmitted bits wrong: what ``qdecode sweep`` counts), on the same frames. Intervals: the likelihood-
ratio interval of the binomial rate with factor exp(1.92) = 6.83, about 95 %
(:func:`qdecode.sims.stats.binomial_likelihood_interval`).

    NUMBA_NUM_THREADS=1 python benchmarks/nr5g_aff3ct.py --json benchmarks/results/nr5g_aff3ct.json
"""

from __future__ import annotations

import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import write_result  # noqa: E402

FORMATS = {"8-bit": dict(bits=8, frac_bits=2), "16-bit": dict(bits=16, frac_bits=6)}
FACTOR_95 = math.exp(1.92)  # chi-square(1) 95 % quantile / 2


def point(code, dec, ebn0: float, seed: int, batch: int, errors: int, max_frames: int) -> dict:
    from qdecode.sims.channels import BpskAwgn

    channel = BpskAwgn(ebn0_db=ebn0, rate=code.k / code.n)
    frames = fe_info = fe_sent = b = 0
    while fe_info < errors and frames < max_frames:
        rng = np.random.default_rng(seed + b)
        msgs = rng.integers(0, 2, size=(batch, code.k), dtype=np.uint8)
        sent = code.encode(msgs)
        mother = dec.decode_mother_llr_batch(channel.transmit(sent, rng))
        fe_info += int((mother[:, :code.k] != msgs).any(axis=1).sum())
        fe_sent += int((code.rate_match(mother[:, 2 * code.Z:]) != sent).any(axis=1).sum())
        frames += batch
        b += 1
    return {"ebn0": ebn0, "frames": frames, "fe_info": fe_info, "fe_sent": fe_sent}


def run(args) -> dict:
    from qdecode.codes.nr5g import Nr5gCode
    from qdecode.decoders.qc_ldpc import QcMinSumDecoder
    from qdecode.sims.published_curves import published_curves_for
    from qdecode.sims.stats import binomial_likelihood_interval

    out = []
    for spec, (bg, K, E) in {"nr5g[bg=2,k=512,n=1024]": (2, 512, 1024),
                              "nr5g[bg=1,k=6144,n=12288]": (1, 6144, 12288)}.items():
        if args.code and args.code != spec:
            continue
        code = Nr5gCode.from_params(bg=bg, K=K, E=E)
        ref = published_curves_for(spec)[0]
        for fmt in args.formats.split(","):
            dec = QcMinSumDecoder(code, early_stop=False, max_iter=10, beta=0.5, threads=1, **FORMATS[fmt])
            for i, (x, fer_ref) in enumerate(zip(ref.ebn0, ref.fer)):
                if x not in args.points[spec]:
                    continue
                r = point(code, dec, x, args.seed + 1000 * i, args.batch, args.errors, args.max_frames)
                fit = binomial_likelihood_interval(num_shots=r["frames"], num_hits=r["fe_info"],
                                                   max_likelihood_factor=FACTOR_95)
                r.update(code=spec, format=fmt, decoder=f"ldpc-ms[bits={FORMATS[fmt]['bits']},"
                         f"frac_bits={FORMATS[fmt]['frac_bits']},early_stop=false]",
                         fer=r["fe_info"] / r["frames"], fer_low=fit.low, fer_high=fit.high, aff3ct_fer=fer_ref,
                         aff3ct_inside=bool(fit.low <= fer_ref <= fit.high))
                out.append(r)
                print(f"{spec} {fmt:6s} {x:5.2f} dB  frames {r['frames']:8d}  FE {r['fe_info']:4d}"
                      f" (sent {r['fe_sent']:4d})"
                      f"  FER {r['fer']:.3e} [{fit.low:.3e}, {fit.high:.3e}]  AFF3CT {fer_ref:.3e}"
                      f"  {'inside' if r['aff3ct_inside'] else 'OUTSIDE'}", flush=True)
    return {"command": " ".join(["python", *sys.argv]), "interval": "likelihood ratio, factor exp(1.92) (~95 %)",
            "aff3ct_settings": "BPSK/AWGN, HL-OMS offset 0.5, 10 iterations, no syndrome stop, float32",
            "rows": out}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--code", default="", help="only this code spec")
    ap.add_argument("--formats", default="8-bit,16-bit")
    ap.add_argument("--errors", type=int, default=100)
    ap.add_argument("--max-frames", type=int, default=2_000_000)
    ap.add_argument("--batch", type=int, default=2048)
    ap.add_argument("--seed", type=int, default=47)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    args.points = {"nr5g[bg=2,k=512,n=1024]": (1.75, 2.0, 2.25), "nr5g[bg=1,k=6144,n=12288]": (1.4, 1.5, 1.6)}
    write_result(args.json, run(args))


if __name__ == "__main__":
    main()
