"""Relay-BP: qdecode's numba kernel vs relay-bp 0.2.1 (``RelayDecoderF64``) on the gross code.

[[144,12,12]] memory-Z circuit (``bb144_12_12``, ``bb-uniform`` noise, 12 rounds, Z detectors
only), IBM's gross-code tuning for both: gamma0 0.15, gamma ~ U[-0.226, 0.622), 80 / 60
iterations, 300 legs, stop after S = 5 converged legs, alpha = 1. Same shots for both.

1. LER on ``--shots`` shots: ours with ``--threads`` threads, relay-bp's
   ``ObservableDecoderRunner.decode_observables_batch(parallel=True)`` (rayon; its RNG stream is
   cloned per work item). Intervals: ``fit_binomial`` with likelihood factor 1e3.
2. Single-thread latency on the first ``--timing-shots`` shots, interleaved shot by shot: ours
   (``decode`` of one shot, own counter-based gammas) vs relay-bp ``decode`` (one shot, its own RNG
   stream): mean / p50 / p99 / max per shot, iterations. The gamma draws differ, so per-shot
   iteration counts differ; the means are comparable statistically.
3. Same work, single thread: both decoders given the same explicit gamma table (301 x n), so they
   run identical iterations (outputs compared bit for bit); ratio of total times = kernel speed.
4. Our batch throughput with ``--threads`` threads vs one thread on the timing shots.

Usage: python benchmarks/relay_vs_relaybp.py [--shots 7000] [--timing-shots 300] [--p 0.004]
       [--threads 2] [--seed 2025]
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np


def _q(x, q):
    return float(np.quantile(x, q))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shots", type=int, default=7000)
    ap.add_argument("--timing-shots", type=int, default=300)
    ap.add_argument("--p", type=float, default=0.004)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=2025)
    ap.add_argument("--skip-ler", action="store_true")
    args = ap.parse_args()

    import relay_bp

    from qdecode.decoders.relay_bp import RelayBpDecoder
    from qdecode.problem import DecodingProblem, decoding_dem
    from qdecode.sims.circuits import build_circuit
    from qdecode.sims.stats import fit_binomial

    params = dict(gamma0=0.15, gamma_interval=(-0.226, 0.622), pre_iter=80, legs=300, leg_iter=60, stop_after=5,
                  bits=0)  # float64 lanes: relay-bp's own arithmetic
    ref_params = dict(gamma0=0.15, gamma_dist_interval=(-0.226, 0.622), pre_iter=80, num_sets=300,
                      set_max_iter=60, stop_nconv=5, alpha=None)

    circ = build_circuit("bb144_12_12", noise="bb-uniform", p=args.p, rounds=12, basis="Z")
    prob = DecodingProblem.from_dem(decoding_dem(circ))
    m, n = prob.H.shape
    S = max(args.shots, args.timing_shots)
    dets, obs = circ.compile_detector_sampler(seed=args.seed).sample(S, separate_observables=True)
    dets = dets.astype(np.uint8)
    obs = obs.astype(np.uint8)
    print(f"bb144_12_12 bb-uniform p={args.p}, 12 rounds, Z detectors: H {m}x{n} (nnz {prob.H.nnz}), "
          f"relay-bp {getattr(relay_bp, '__version__', '0.2.1')}, numba {numba.__version__}")
    print(f"parameters: {params}, alpha=1")

    ours1 = RelayBpDecoder(prob, threads=1, **params)
    oursT = RelayBpDecoder(prob, threads=args.threads, **params)
    ours1.decode_batch(dets[:2])  # compile / load the numba cache
    ref = relay_bp.RelayDecoderF64(prob.H, error_priors=prob.priors, **ref_params)
    rows = []

    # 1. LER
    if not args.skip_ler:
        N = args.shots
        t = time.perf_counter()
        pred = oursT.predict_observables_batch(dets[:N])
        t_ours = time.perf_counter() - t
        info = oursT.last_info
        k_ours = int((pred != obs[:N]).any(axis=1).sum())
        runner = relay_bp.ObservableDecoderRunner(
            relay_bp.RelayDecoderF64(prob.H, error_priors=prob.priors, **ref_params),
            prob.L.toarray().astype(np.uint8))
        t = time.perf_counter()
        pred_r = runner.decode_observables_batch(dets[:N], parallel=True, progress_bar=False)
        pred_r = np.asarray(pred_r, dtype=np.uint8)
        t_ref = time.perf_counter() - t
        k_ref = int((pred_r != obs[:N]).any(axis=1).sum())
        print(f"\nLER on {N} shots (ours {args.threads} threads {t_ours:.0f} s, "
              f"relay-bp rayon parallel {t_ref:.0f} s):")
        print("| decoder | errors / shots | LER per shot [fit_binomial 1e3] | not converged | mean iters | mean legs |")
        print("|---|---|---|---|---|---|")
        for name, k, extra in (
            ("qdecode relay-bp", k_ours, f"{int((~info.converged).sum())} | {info.iterations.mean():.1f} | "
                                         f"{info.extra['legs'].mean():.2f}"),
            ("relay-bp 0.2.1 RelayDecoderF64", k_ref, "- | - | -"),
        ):
            f = fit_binomial(num_shots=N, num_hits=k, max_likelihood_factor=1e3)
            print(f"| {name} | {k} / {N} | {f.best:.2e} [{f.low:.2e}, {f.high:.2e}] | {extra} |")
        both = int(((pred != obs[:N]).any(axis=1) & (pred_r != obs[:N]).any(axis=1)).sum())
        print(f"shots both fail: {both}")

    # 2. single-thread latency, own RNG, interleaved
    T = args.timing_shots
    to, tr, io, ir = [], [], [], []
    for x in dets[:T]:
        t = time.perf_counter()
        ours1.decode(x)
        to.append(time.perf_counter() - t)
        io.append(int(ours1.last_info.iterations[0]))
        t = time.perf_counter()
        r = ref.decode_detailed(x)
        tr.append(time.perf_counter() - t)
        ir.append(int(r.iterations))
    to, tr, io, ir = map(np.asarray, (to, tr, io, ir))
    print(f"\nsingle thread, {T} shots, interleaved, each with its own gamma draws (ms per shot):")
    print("| decoder | mean | p50 | p99 | max | iters mean | iters p50 | iters p99 | iters max |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, tt, it in (("qdecode relay-bp", to, io), ("relay-bp 0.2.1 F64", tr, ir)):
        print(f"| {name} | {tt.mean()*1e3:.1f} | {_q(tt, .5)*1e3:.1f} | {_q(tt, .99)*1e3:.1f} | {tt.max()*1e3:.1f} | "
              f"{it.mean():.1f} | {_q(it, .5):.0f} | {_q(it, .99):.0f} | {it.max()} |")
    print(f"ratio ours/relay-bp: mean {to.mean()/tr.mean():.3f}, p99 {_q(to, .99)/_q(tr, .99):.3f}; "
          f"per iteration {to.sum()/io.sum()*1e6:.0f} us vs {tr.sum()/max(ir.sum(), 1)*1e6:.0f} us "
          "(relay-bp 0.2.1 counts one iteration fewer per converged leg)")
    rows.append(("own gammas", to, tr))

    # 3. identical work: shared explicit gamma table
    G = np.random.default_rng(args.seed).uniform(-0.226, 0.622, size=(301, n))
    oursG = RelayBpDecoder(prob, threads=1, explicit_gammas=G, **params)
    oursG.decode_batch(dets[:1])
    refG = relay_bp.RelayDecoderF64(prob.H, error_priors=prob.priors, explicit_gammas=G, **ref_params)
    tg, trg, same = [], [], 0
    for x in dets[:T]:
        t = time.perf_counter()
        e = oursG.decode(x)
        tg.append(time.perf_counter() - t)
        t = time.perf_counter()
        er = refG.decode(x)
        trg.append(time.perf_counter() - t)
        same += bool(np.array_equal(e, er))
    tg, trg = np.asarray(tg), np.asarray(trg)
    print(f"\nsame explicit gamma table (identical iterations), single thread, {T} shots: outputs identical "
          f"{same}/{T}")
    print("| decoder | mean ms | p50 | p99 | max |")
    print("|---|---|---|---|---|")
    for name, tt in (("qdecode relay-bp", tg), ("relay-bp 0.2.1 F64", trg)):
        print(f"| {name} | {tt.mean()*1e3:.1f} | {_q(tt, .5)*1e3:.1f} | {_q(tt, .99)*1e3:.1f} | {tt.max()*1e3:.1f} |")
    print(f"ratio ours/relay-bp: total {tg.sum()/trg.sum():.3f}, median of per-shot ratios {np.median(tg/trg):.3f}, "
          f"p99 {_q(tg, .99)/_q(trg, .99):.3f}")

    # 4. throughput
    t = time.perf_counter()
    ours1.decode_batch(dets[:T])
    t1 = time.perf_counter() - t
    t = time.perf_counter()
    oursT.decode_batch(dets[:T])
    tT = time.perf_counter() - t
    print(f"\nbatch throughput on {T} shots: 1 thread {T/t1:.1f} shots/s, {args.threads} threads {T/tT:.1f} shots/s "
          f"(x{t1/tT:.2f})")


if __name__ == "__main__":
    main()
