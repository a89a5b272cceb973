"""sem-OSD vs OSD and Berlekamp-Massey on held-out English text (arXiv:2605.02296's comparison).

For each Eb/N0, the same consecutive 8-byte text blocks and the same noise (one seeded generator
per point, :func:`qdecode.sims.text_source.text_batch`) go to Berlekamp-Massey (hard decisions),
plain OSD of order ``--order`` and sem-OSD (order-4 Kneser-Ney prior, forward-backward
marginals, same order, union with the channel-ordered OSD, one byte substitution) with decoded
context and (unless ``--no-genie``) with genie context; ``--prior ngram,transformer`` adds the
same sem-OSD rows with the byte Transformer prior (shipped ``lm_byte``, onnxruntime, 1 thread).
Prints a markdown table: BLER with 95 % Wilson intervals, byte error rate, blocks/second (one
thread), and the Eb/N0 at BLER 1e-2 (log-linear interpolation between the two grid points around
it) with the gains over OSD and BM.

Channels: ``--channel awgn`` (BPSK-AWGN) or ``--channel ge-awgn`` (Gilbert-Elliott with AWGN
states, :class:`qdecode.sims.channels.GilbertElliottAwgn`: ``--p-gb``, ``--p-bg``,
``--delta-db``, ``--reference`` (Eb/N0 of the average noise power or of the good state),
state-aware LLRs ``2y/sigma_state^2`` unless ``--no-csi``). Berlekamp-Massey decodes the signs
of the same LLRs.

    .venv/bin/python benchmarks/sem_osd.py --code bch127_64 --blocks 3000
    .venv/bin/python benchmarks/sem_osd.py --code rs16_8 --channel ge-awgn --ebn0 2,3,4,5,6 --blocks 2000
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from qdecode.decoders.bm import BmDecoder
from qdecode.decoders.classical_entries import binary_generator
from qdecode.decoders.osd import OsdBlockDecoder
from qdecode.decoders.sem_osd import SemOsdDecoder, message_bytes
from qdecode.sims.classical_points import ClassicalRecipe
from qdecode.sims.text_source import bytes_to_bits, text_batch


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % Wilson score interval of ``k`` errors in ``n`` blocks."""
    if k == 0:
        return 0.0, z * z / (n + z * z)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


def ebn0_at(xs: list[float], ys: list[float], target: float = 1e-2) -> float | None:
    for (x0, y0), (x1, y1) in zip(zip(xs, ys), zip(xs[1:], ys[1:])):
        if y0 >= target >= y1 and y0 > 0 and y1 > 0:
            return x0 + (math.log(target) - math.log(y0)) / (math.log(y1) - math.log(y0)) * (x1 - x0)
    return None


def _gain(ref: float | None, x: float | None) -> str:
    return f"{ref - x:+.2f} dB" if (ref is not None and x is not None) else "n/a"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--code", default="bch127_64")
    ap.add_argument("--ebn0", default="1.0,1.5,2.0,2.5,3.0")
    ap.add_argument("--blocks", type=int, default=3000)
    ap.add_argument("--order", type=int, default=2)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--channel", choices=("awgn", "ge-awgn"), default="awgn")
    ap.add_argument("--p-gb", type=float, default=0.01, help="GE: P(good -> bad) per bit")
    ap.add_argument("--p-bg", type=float, default=0.1, help="GE: P(bad -> good) per bit")
    ap.add_argument("--delta-db", type=float, default=10.0, help="GE: sigma_B^2 / sigma_G^2 in dB")
    ap.add_argument("--reference", choices=("average", "good"), default="average",
                    help="GE: Eb/N0 of the average noise power or of the good state")
    ap.add_argument("--no-csi", action="store_true", help="GE: state-blind LLRs 2y/sigma_avg^2")
    ap.add_argument("--no-bm", action="store_true", help="leave out Berlekamp-Massey")
    ap.add_argument("--no-genie", action="store_true", help="leave out sem-OSD with genie context")
    ap.add_argument("--prior", default="ngram",
                    help="comma-separated sem-OSD priors: ngram (order-4 Kneser-Ney) and/or transformer (byte "
                         "Transformer, shipped lm_byte, onnxruntime 1 thread); each gets its own rows")
    ap.add_argument("--model", default="auto", help="transformer prior model: auto (shipped lm_byte) or a .onnx path")
    args = ap.parse_args()
    grid = [float(x) for x in args.ebn0.split(",")]
    chan: dict = {}
    if args.channel == "ge-awgn":
        chan = {"p_gb": args.p_gb, "p_bg": args.p_bg, "delta_db": args.delta_db, "csi": not args.no_csi,
                "reference": args.reference}
    recipe = ClassicalRecipe(code=args.code, noise=args.channel, ebn0=grid[0], source="text",
                             channel=tuple(sorted(chan.items())))
    view = recipe.build_code()
    G = binary_generator(view.code)
    nb = view.k // 8
    decoders: dict = {}
    if not args.no_bm:
        decoders["BM"] = BmDecoder(view.code)
    decoders[f"OSD-{args.order}"] = OsdBlockDecoder(G=G, order=args.order)
    priors = [p.strip() for p in args.prior.split(",") if p.strip()]
    for p in priors:
        if p not in ("ngram", "transformer"):
            raise SystemExit(f"--prior: unknown prior {p!r} (ngram, transformer)")
        tag = "" if p == "ngram" else ", transformer"
        decoders[f"sem-OSD (decoded ctx{tag})"] = SemOsdDecoder(G, p, order=args.order, context="decoded",
                                                                model=args.model)
        if not args.no_genie:
            decoders[f"sem-OSD (genie ctx{tag})"] = SemOsdDecoder(G, p, order=args.order, context="genie",
                                                                  model=args.model)
    ctx_len = max([8] + [int(getattr(d, "context_len", 0)) for d in decoders.values()])
    warm = np.ones((4, view.n))
    for name, d in decoders.items():  # compile + train the LM outside the timings
        d.decode_llr_batch(warm, **({"context_bytes": np.zeros((4, 3), np.uint8)} if "genie" in name else {}))
    res: dict[str, list[tuple[int, int, int, float, int]]] = {k: [] for k in decoders}
    t_all = time.perf_counter()
    for e in grid:
        key = int(round(e * 1000))  # one stream per point (negative Eb/N0: a distinct, longer seed)
        rng = np.random.default_rng([args.seed, key] if key >= 0 else [args.seed, -key, 1])
        blocks, prev = text_batch(rng, args.blocks, nb, context=ctx_len)  # same blocks for any ctx_len
        cw = view.encode(bytes_to_bits(blocks))
        point = ClassicalRecipe(code=args.code, noise=args.channel, ebn0=e, channel=tuple(sorted(chan.items())))
        llr = point.build_channel(view.rate).transmit(cw, rng)
        for name, d in decoders.items():
            kw = {"context_bytes": prev} if "genie" in name else {}
            kw.update({"threads": 1} if name != "BM" else {})
            t0 = time.perf_counter()
            out = d.decode_llr_batch(llr, **kw)
            dt = time.perf_counter() - t0
            err = int((out != cw).any(axis=1).sum())
            berr = int((message_bytes(out, nb) != blocks).sum())
            reenc = d.last_info.counts().get("reencodings", 0) if getattr(d, "last_info", None) else 0
            res[name].append((err, args.blocks, berr, dt, reenc))
            print(f"# {e} dB {name}: {err}/{args.blocks} blocks, {berr} bytes, {args.blocks / dt:.0f} blocks/s",
                  flush=True)
    wall = time.perf_counter() - t_all
    if args.channel == "awgn":
        desc = "BPSK-AWGN"
    else:
        ch = recipe.build_channel(view.rate)
        desc = (f"Gilbert-Elliott AWGN (p_gb = {args.p_gb}, p_bg = {args.p_bg}: pi_B = {ch.pi_bad:.3f}, mean burst "
                f"{ch.mean_burst:.0f} bits; bad state {args.delta_db:g} dB noisier; Eb/N0 of the {args.reference} "
                f"noise power; {'state-blind' if args.no_csi else 'state-aware'} LLRs)")
    print(f"\n{args.code}, {desc}, held-out English text, {args.blocks} blocks per point (same blocks and noise "
          f"for every decoder); decoding wall time {wall:.0f} s\n")
    print("| decoder | " + " | ".join(f"{e} dB" for e in grid) + " | Eb/N0 @ BLER 1e-2 | gain vs OSD | gain vs BM |")
    print("|---|" + "---|" * (len(grid) + 3))
    at = {name: ebn0_at(grid, [r[0] / r[1] for r in rows]) for name, rows in res.items()}
    osd_x = at[f"OSD-{args.order}"]
    bm_x = at.get("BM")
    for name, rows in res.items():
        cells = []
        for err, n, _, _, _ in rows:
            lo, hi = wilson(err, n)
            cells.append(f"{err / n:.2e} [{lo:.1e}, {hi:.1e}]")
        x = at[name]
        xs = f"{x:.2f} dB" if x is not None else "n/a"
        print(f"| {name} | " + " | ".join(cells) + f" | {xs} | {_gain(osd_x, x)} | {_gain(bm_x, x)} |")
    print("\n| decoder | " + " | ".join(f"{e} dB" for e in grid) + " |")
    print("|---|" + "---|" * len(grid))
    for name, rows in res.items():
        print(f"| {name}: byte error rate | " + " | ".join(f"{r[2] / (r[1] * nb):.1e}" for r in rows) + " |")
        print(f"| {name}: blocks/s (1 thread) | " + " | ".join(f"{r[1] / r[3]:.0f}" for r in rows) + " |")
        if name.startswith("sem-OSD"):
            print(f"| {name}: re-encodings/block | " + " | ".join(f"{r[4] / r[1]:.0f}" for r in rows) + " |")


if __name__ == "__main__":
    main()
