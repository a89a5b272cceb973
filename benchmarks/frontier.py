"""The accuracy frontier: every applicable decoder and its peers on the same shots, LER against CPU time.

For one problem (``--problem``, a name of :data:`PROBLEMS`), ``--shots`` shots are sampled once
(fixed seed) and decoded by every decoder in ``--decoders`` that accepts the DEM. A decoder is a
qdecode registry label (``bposd[osd_key=sum4]``) or a peer package called through its own API:

* ``peer:pymatching``, ``peer:pymatching-correlated``: PyMatching 2 on the DEM;
* ``peer:tesseract-<preset>``: Tesseract's sinter presets (``tesseract_decoder``);
* ``peer:chromobius``: Chromobius on the DEM;
* ``peer:ldpc-bposd``, ``peer:ldpc-bplsd``: ldpc 2's BpOsdDecoder (min-sum, 80 iterations, OSD-CS10)
  and BpLsdDecoder (LSD-0), one shot per call (ldpc has no batch call);
* ``peer:relay-bp``: relay-bp 0.2.1's ``RelayDecoderF64`` with its published gross-code
  parameters (the same as qdecode's ``relay-bp`` defaults), through ``ObservableDecoderRunner``.

Time is CPU time of this process per shot (``time.process_time``; one thread: numba, rayon and
OpenMP pools are pinned to 1 before anything is imported), after one untimed warm-up call. Each
row gives failures (any observable wrong), the LER per shot with sinter's binomial interval
(likelihood ratio 1000), and the time; the decoders on the Pareto front (no other decoder both
faster and with fewer failures) are marked. ``--plot`` draws LER against time per shot with the
front. ``--json`` writes the rows.

    python benchmarks/frontier.py --problem color-xyz-d5 --shots 20000 \\
        --plot benchmarks/figures/frontier_color-xyz-d5.png --json benchmarks/results/frontier_color-xyz-d5.json
"""

from __future__ import annotations

import os

for _var in ("NUMBA_NUM_THREADS", "RAYON_NUM_THREADS", "OMP_NUM_THREADS"):  # one thread, before the imports
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402
import stim  # noqa: E402

from qdecode.decoders.registry import DecoderSpec, split_label  # noqa: E402
from qdecode.problem import DecodingProblem, decoding_dem  # noqa: E402
from qdecode.sims.stats import fit_binomial  # noqa: E402


def _stim(kind: str, d: int, p: float) -> Callable[[], stim.Circuit]:
    """stim's generated circuit with all four noise knobs at ``p`` (uniform depolarizing)."""
    return lambda: stim.Circuit.generated(kind, distance=d, rounds=d, after_clifford_depolarization=p,
                                          before_round_data_depolarization=p, before_measure_flip_probability=p,
                                          after_reset_flip_probability=p)


def _ours(code: str, d: int | None, noise: str, p: float, **kw) -> Callable[[], stim.Circuit]:
    def build():
        from qdecode.sims.circuits import build_circuit

        return build_circuit(code, d=d, noise=noise, p=p, **kw)
    return build


#: name -> (circuit builder, description)
PROBLEMS: dict[str, tuple[Callable[[], stim.Circuit], str]] = {
    **{f"surface-d{d}-si1000": (_ours("surface", d, "si1000", 0.004), f"rotated surface code d={d}, SI1000 p=0.004")
       for d in (5, 7, 9)},
    **{f"surface-d{d}-uniform": (_stim("surface_code:rotated_memory_x", d, 0.004),
                                 f"stim rotated_memory_x d={d}, uniform depolarizing p=0.004") for d in (5, 7, 9)},
    **{f"color-xyz-d{d}": (_stim("color_code:memory_xyz", d, 0.002), f"stim color_code:memory_xyz d={d}, p=0.002")
       for d in (5, 7)},
    **{f"superdense-d{d}": (_ours("color", d, "sd6", 0.002), f"superdense colour code d={d}, SD6 p=0.002")
       for d in (5, 7)},
    "bb144-p0.003": (_ours("bb144_12_12", None, "bb-uniform", 0.003, rounds=12),
                     "[[144,12,12]] memory Z, 12 rounds, bb-uniform p=0.003"),
    "hgp58-p0.003": (_ours("hgp58_16_3", None, "sd6", 0.003, rounds=3),
                     "HGP [[58,16,3]] (Hamming x Hamming), 3 rounds, SD6 p=0.003"),
    "gb126-p0.002": (_ours("gb126_28_8", None, "sd6", 0.002, rounds=8),
                     "generalized bicycle (1x1 lifted product) [[126,28,8]], 8 rounds, SD6 p=0.002"),
}


# ------------------------------------------------------------------ peers
def _peer(name: str, dem: stim.DetectorErrorModel) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``(packed dets, dets) -> uint8 (S, k)`` predictions of a peer package (module docstring)."""
    k = dem.num_observables
    unpack = lambda out: np.unpackbits(np.asarray(out, dtype=np.uint8).reshape(out.shape[0], -1),  # noqa: E731
                                       axis=1, count=k, bitorder="little")
    if name in ("pymatching", "pymatching-correlated"):
        import pymatching

        corr = name.endswith("correlated")
        m = pymatching.Matching.from_detector_error_model(dem, enable_correlations=corr)
        return lambda packed, dets: unpack(m.decode_batch(packed, bit_packed_shots=True, bit_packed_predictions=True,
                                                          enable_correlations=corr))
    if name.startswith("tesseract"):
        import tesseract_decoder

        compiled = tesseract_decoder.make_tesseract_sinter_decoders_dict()[name].compile_decoder_for_dem(dem=dem)
        return lambda packed, dets: unpack(compiled.decode_shots_bit_packed(bit_packed_detection_event_data=packed))
    if name == "chromobius":
        import chromobius

        compiled = chromobius.compile_decoder_for_dem(dem)
        return lambda packed, dets: unpack(compiled.predict_obs_flips_from_dets_bit_packed(packed))
    problem = DecodingProblem.from_dem(dem)
    H, L = problem.H.astype(np.uint8).tocsr(), problem.L.toarray().astype(np.uint8)
    if name in ("ldpc-bposd", "ldpc-bplsd"):
        from ldpc import BpLsdDecoder, BpOsdDecoder

        if name == "ldpc-bposd":
            dec = BpOsdDecoder(H, error_channel=list(problem.priors), max_iter=80, bp_method="minimum_sum",
                               osd_method="osd_cs", osd_order=10, schedule="parallel")
        else:
            dec = BpLsdDecoder(H, error_channel=list(problem.priors), max_iter=80, bp_method="minimum_sum",
                               lsd_order=0, bits_per_step=1, schedule="parallel")

        def run(packed, dets):
            errors = np.stack([dec.decode(s) for s in dets]) if dets.shape[0] else np.zeros((0, H.shape[1]))
            return ((errors.astype(np.int64) @ L.T.astype(np.int64)) & 1).astype(np.uint8)
        return run
    if name == "relay-bp":
        import relay_bp

        params = dict(gamma0=0.15, gamma_dist_interval=(-0.226, 0.622), pre_iter=80, num_sets=300,
                      set_max_iter=60, stop_nconv=5, alpha=None)
        runner = relay_bp.ObservableDecoderRunner(relay_bp.RelayDecoderF64(H, error_priors=problem.priors, **params),
                                                  L)
        return lambda packed, dets: np.asarray(runner.decode_observables_batch(dets, parallel=False,
                                                                               progress_bar=False), dtype=np.uint8)
    raise KeyError(f"unknown peer {name!r}")


def _decoder(label: str, dem: stim.DetectorErrorModel, problem: DecodingProblem):
    if label.startswith("peer:"):
        return _peer(label[5:], dem)
    name, params = split_label(label)
    dec = DecoderSpec.create(name, params).build(problem)
    k = problem.num_observables
    return lambda packed, dets: np.unpackbits(dec.predict_observables_packed(packed), axis=1, count=k,
                                              bitorder="little")


def split_labels(text: str) -> list[str]:
    """``"a,b[x=1,y=2],c"`` -> ``["a", "b[x=1,y=2]", "c"]``: commas inside brackets belong to a label."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return [x for x in [*out, cur.strip()] if x]


def markdown_table(rows: list[dict[str, Any]]) -> str:
    """The rows as a markdown table, fewest failures first (benchmarks/render.py draws the README's with it)."""
    lines = ["| decoder | failures / shots | LER per shot [interval] | CPU ms per shot | front |",
             "|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["failures"], r["ms_per_shot"])):
        name = f"`{r['decoder'][5:]}` (peer)" if r["decoder"].startswith("peer:") else f"`{r['decoder']}`"
        lines.append(f"| {name} | {r['failures']} / {r['shots']} | {r['ler']:.2e} [{r['ler_low']:.2e}, "
                     f"{r['ler_high']:.2e}] | {r['ms_per_shot']:.3f} | {'yes' if r['front'] else ''} |")
    return "\n".join(lines)


def print_table(rows: list[dict[str, Any]]) -> None:
    """The rows as a markdown table, fewest failures first."""
    print()
    print(markdown_table(rows))


def pareto(rows: list[dict[str, Any]]) -> None:
    """Mark ``front`` on rows no other row beats in both failures and time (ties: fewer failures first)."""
    for r in rows:
        r["front"] = not any((o["failures"] <= r["failures"] and o["ms_per_shot"] < r["ms_per_shot"])
                             or (o["failures"] < r["failures"] and o["ms_per_shot"] <= r["ms_per_shot"])
                             for o in rows if o is not r)


def short_name(label: str) -> str:
    """A plot label: peers in grey without ``peer:``; Tesseract's presets abbreviated."""
    name = label.replace("peer:", "")
    for long, short in (("-sparsify-color-code-like", "+sparsify(color)"),
                        ("-sparsify-surface-code-like", "+sparsify(surface)"), ("-beam", "")):
        name = name.replace(long, short)
    return name


def plot(rows: list[dict[str, Any]], title: str, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # Points are numbered, and the names listed beside the axes: a dozen decoders within a factor
    # of two of each other cannot carry their names on the plot without overlapping.
    fig, (ax, key) = plt.subplots(1, 2, figsize=(11, 6), gridspec_kw={"width_ratios": [2.6, 1]})
    ordered = sorted(rows, key=lambda r: (r["failures"], r["ms_per_shot"]))
    lines = []
    for i, r in enumerate(ordered, start=1):
        peer = r["decoder"].startswith("peer:")
        y = max(r["ler"], 1e-9)
        err = [[r["ler"] - r["ler_low"]], [r["ler_high"] - r["ler"]]]
        ax.errorbar(r["ms_per_shot"], y, yerr=err, fmt="s" if peer else "o", color="tab:gray" if peer else "tab:blue",
                    ms=6, capsize=2, zorder=3, alpha=0.85)
        ax.annotate(str(i), (r["ms_per_shot"], y), fontsize=7, xytext=(4, 2), textcoords="offset points",
                    color="dimgray" if peer else "navy", zorder=4)
        mark = "*" if r["front"] else " "
        lines.append((f"{i:>2}{mark} {short_name(r['decoder'])}  {r['failures']}, {r['ms_per_shot']:.3g} ms",
                      "dimgray" if peer else "navy"))
    key.axis("off")
    key.text(0.0, 1.0, "#  decoder  failures, CPU/shot\n(* on the front; grey: peer package)", fontsize=7.5,
             va="top", family="monospace", transform=key.transAxes)
    for j, (text, color) in enumerate(lines):
        key.text(0.0, 0.92 - j * 0.9 / max(len(lines), 12), text, fontsize=7, va="top", family="monospace",
                 color=color, transform=key.transAxes)
    front = sorted((r for r in rows if r["front"]), key=lambda r: r["ms_per_shot"])
    ax.step([r["ms_per_shot"] for r in front], [r["ler"] for r in front], where="post", color="tab:red", lw=1.2,
            label="Pareto front", zorder=2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("CPU time per shot (ms, one thread)")
    ax.set_ylabel("logical error rate per shot")
    ax.set_title(title, fontsize=10)
    ax.plot([], [], "o", color="tab:blue", label="qdecode")
    ax.plot([], [], "s", color="tab:gray", label="peer package")
    ax.legend(fontsize=8, loc="best")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=130)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--problem", required=True, choices=sorted(PROBLEMS))
    ap.add_argument("--shots", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--decoders", default="peer:pymatching,peer:pymatching-correlated,peer:tesseract-short-beam,"
                    "peer:chromobius,pymatching,pymatching-correlated,tesseract[beam=short],bposd,"
                    "bposd[osd_key=sum4],relay-bp[bits=8],bplsd,chromobius")
    ap.add_argument("--plot")
    ap.add_argument("--json")
    ap.add_argument("--append", action="store_true",
                    help="add the rows to those already in --json (same problem, shots and seed: the same shots)")
    ap.add_argument("--plot-only", action="store_true",
                    help="print the table and redraw --plot (if given) from the rows in --json, decode nothing")
    args = ap.parse_args()
    build, title = PROBLEMS[args.problem]
    if args.plot_only:
        with open(args.json) as f:
            saved = json.load(f)
        pareto(saved["rows"])
        print_table(saved["rows"])
        if args.plot:
            plot(saved["rows"], f"{saved['title']}, {saved['rows'][0]['shots']} shots", args.plot)
        return
    circuit = build()
    dem = decoding_dem(circuit)  # as sinter derives it: decomposed where stim can
    problem = DecodingProblem.from_dem(dem)
    packed, obs_packed = circuit.compile_detector_sampler(seed=args.seed).sample(
        args.shots, separate_observables=True, bit_packed=True)
    dets = np.unpackbits(packed, axis=1, count=dem.num_detectors, bitorder="little")
    obs = np.unpackbits(obs_packed, axis=1, count=dem.num_observables, bitorder="little")
    print(f"{title}: {dem.num_detectors} detectors, {problem.num_errors} mechanisms, {args.shots} shots, "
          f"seed {args.seed}, load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    rows = []
    if args.append:
        with open(args.json) as f:
            old = json.load(f)
        if (old["problem"], old["seed"], old["rows"][0]["shots"]) != (args.problem, args.seed, args.shots):
            raise SystemExit(f"{args.json} holds other shots ({old['problem']}, seed {old['seed']})")
        rows = old["rows"]
    for label in split_labels(args.decoders):
        try:
            run = _decoder(label, dem, problem)
            run(packed[:4], dets[:4])  # compiles and caches outside the timing
        except (ValueError, RuntimeError) as exc:
            print(f"  {label}: does not apply ({' '.join(str(exc).split())[:140]})")
            continue
        t0 = time.process_time()
        pred = run(packed, dets)
        cpu = time.process_time() - t0
        k = int(np.any(pred != obs, axis=1).sum())
        fit = fit_binomial(num_shots=args.shots, num_hits=k, max_likelihood_factor=1e3)
        rows.append({"decoder": label, "failures": k, "shots": args.shots, "ler": k / args.shots,
                     "ler_low": fit.low, "ler_high": fit.high, "ms_per_shot": 1e3 * cpu / args.shots})
        if not label.startswith("peer:"):  # the full label: what the row means, whatever the defaults become
            rows[-1]["label"] = DecoderSpec.create(*split_label(label)).label()
        print(f"  {label}: {k} failures, {rows[-1]['ms_per_shot']:.3f} ms/shot", flush=True)
    pareto(rows)
    print_table(rows)
    if args.plot:
        plot(rows, f"{title}, {args.shots} shots", args.plot)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"problem": args.problem, "title": title, "seed": args.seed, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
