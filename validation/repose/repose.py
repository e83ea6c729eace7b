#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Angle of repose of a heap poured on a rough floor, against the bead friction coefficient.

Runs heap.xml (beads lifted out of a tube onto a rough floor) for each mu (bead-bead and
bead-floor) and each rolling-resistance coefficient mu_r (muRolling, bead-bead and
bead-floor; the frictionless tube walls have none), reads the last state of each run and
measures the heap's surface: in rings of width 3 mm around the heap axis the highest bead
centre gives the surface height h(rho); the angle is atan of minus the slope of a straight line
fitted to h(rho) where h lies between 20 % and 80 % of the heap height (the flanks, without the
rounded top and the foot). Each (mu, mu_r) is run with several bead samples (seeds of the
radii and of the initial jitter); the angle of a (mu, mu_r) is the mean over the samples, with
its standard error.

usage: validation/repose/repose.py [--small] [--mu-rolling R[,R...]] [--mus M[,M...]]
                                   [--seeds N] [--set XPATH=VALUE]... [-o DIR] [-j N] [--check]
                                   [--reuse] [--extra CSV ...]

  (default)     1536 beads, mu = 0.1, 0.3, 0.5, 0.7, 1.0, mu_r = MU_ROLLING, 4 samples each
                (docs/validation.md)
  --small       the test-suite version: 384 beads, 0.5 s, one sample (SMALL_RUNS)
  --mu-rolling  the mu_r values to run (every mu with every mu_r)
  --mus         the mu values to run instead of the default ones
  --seeds       the number of bead samples per (mu, mu_r); sample 0 is the scene's own seeds
  --set         a grain-sim override for every run
  --check       exit 1 unless, for the largest mu_r, the mean angles rise with mu within the
                sampling error (no fall by more than 2 standard errors from one mu to the next,
                a rise by more than 2 from the first to the last) and lie in the bands (BANDS);
                --small checks its own runs (SMALL_RUNS, SMALL_CHECKS)
  --reuse       measure the runs already in the output folder instead of running them again
  --extra       repose.csv files of other runs, drawn as points in the angle plot
"""
import argparse
import concurrent.futures
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import vlib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RING = 0.003

# The rolling-resistance coefficient of the documented runs (docs/validation.md, "Angle of
# repose": chosen from the sensitivity study at mu = 0.5).
MU_ROLLING = 0.2
FULL = dict(beads=1536, mus=[0.1, 0.3, 0.5, 0.7, 1.0], end_time=1.0, seeds=4)
SMALL = dict(beads=384, mus=[0.05, 0.5], end_time=0.5, seeds=1)
# The seeds of bead sample i: the scene's (radii 23, jitter 9) for i = 0, then these plus 100 i.
SEED_STEP = 100
# The small version's runs as (mu, mu_r): a nearly frictionless heap and the documented law.
SMALL_RUNS = [(0.05, 0.0), (0.5, MU_ROLLING)]
# Bands the full version's --check asserts, by mu: [lo, hi] in degrees (the glass-bead band).
BANDS = {0.3: (20.0, 30.0), 0.5: (20.0, 30.0)}
# The small heap (384 beads, about 3 bead diameters high, its top a large part of it) only tells
# whether a heap with friction and rolling resistance stands steep (15-40 deg) and well above a
# nearly frictionless one: (condition on the results by (mu, mu_r), text).
SMALL_CHECKS = [
    (lambda r: 15.0 <= r[(0.5, MU_ROLLING)][0] <= 40.0,
     lambda r: f"mu = 0.5, mu_r = {MU_ROLLING:g}: {r[(0.5, MU_ROLLING)][0]:.1f} deg in [15, 40]"),
    (lambda r: r[(0.5, MU_ROLLING)][0] - r[(0.05, 0.0)][0] >= 5.0,
     lambda r: f"at least 5 deg above mu = 0.05, mu_r = 0: {r[(0.05, 0.0)][0]:.1f}, "
               f"{r[(0.5, MU_ROLLING)][0]:.1f}"),
]


def heap_angle(sim_path):
    """(angle in degrees, heap height, [(rho, h)], max speed) of the last state."""
    _, bodies = vlib.read_sim_states(sim_path)[0]
    cx, cy = 0.0, 0.0  # the axis of the tube
    z0 = min(b[3] for b in bodies)
    top = {}
    for _, x, y, z, _ in bodies:
        k = int(math.hypot(x - cx, y - cy) / RING)
        top[k] = max(top.get(k, -1.0), z - z0)
    profile = [((k + 0.5) * RING, top[k]) for k in sorted(top)]
    hmax = max(h for _, h in profile)
    # The flank: from the first ring below 80 % of the height outwards to the last ring above
    # 20 % (rings beyond the first one that falls below 20 % are loose beads, not heap).
    flank = []
    for rho, h in profile:
        if h < 0.2 * hmax:
            break
        if h <= 0.8 * hmax:
            flank.append((rho, h))
    if len(flank) < 3:
        return math.nan, hmax, profile, max(b[4] for b in bodies)
    _, slope, _ = vlib.line_fit([p[0] for p in flank], [p[1] for p in flank])
    return math.degrees(math.atan(-slope)), hmax, profile, max(b[4] for b in bodies)


def one_run(cfg, outdir, mu, mu_rolling, sample, extra, reuse=False):
    run_dir = os.path.join(outdir, f"mu{mu:g}" + (f"_mur{mu_rolling:g}" if mu_rolling else "")
                           + (f"_s{sample}" if sample else ""))
    cp = "SceneSettings/ContactParameterMap/ContactParameter"
    beads = 'SceneObjects/RigidBodies[@name="beads"]'
    sets = [f'{cp}[@materialId2="0"]/@mu={mu}', f'{cp}[@materialId2="1"]/@mu={mu}',
            f'{beads}/@instances={cfg["beads"]}',
            f"SceneSettings/TimeStepperSettings/@endTime={cfg['end_time']}"]
    if mu_rolling:
        sets += [f'{cp}[@materialId2="0"]/@muRolling={mu_rolling}',
                 f'{cp}[@materialId2="1"]/@muRolling={mu_rolling}']
    if sample:
        sets += [f"{beads}/Geometry/Sphere/@seed={23 + SEED_STEP * sample}",
                 f"{beads}/DynamicProperties/InitialCondition/InitialPosition/@seed="
                 f"{9 + SEED_STEP * sample}"]
    sets += extra
    rec = os.path.join(run_dir, "SimFiles", "SimDataRECORD_0")
    if not (reuse and os.path.exists(os.path.join(rec, "SimState.sim"))):
        rec = vlib.simulate(os.path.join(HERE, "heap.xml"), run_dir, sets)
    return heap_angle(os.path.join(rec, "SimState.sim"))


def mean_and_error(values):
    """Mean and standard error of the mean (0 for a single value)."""
    n = len(values)
    m = sum(values) / n
    if n < 2:
        return m, 0.0
    return m, math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1) / n)


def floats(text):
    return [float(x) for x in text.split(",") if x.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--mu-rolling", type=floats, default=None,
                    help=f"comma-separated mu_r values (default {MU_ROLLING:g})")
    ap.add_argument("--mus", type=floats, default=None, help="comma-separated mu values")
    ap.add_argument("--seeds", type=int, default=None, help="bead samples per (mu, mu_r)")
    ap.add_argument("--set", action="append", default=[], help="grain-sim override for every run")
    ap.add_argument("-o", "--out", default=None)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--reuse", action="store_true",
                    help="measure the runs already in the output folder instead of running them")
    ap.add_argument("--extra", nargs="*", default=[],
                    help="repose.csv files of other runs to add to the angle plot")
    args = ap.parse_args()
    cfg = SMALL if args.small else FULL
    mus = args.mus or cfg["mus"]
    murs = args.mu_rolling if args.mu_rolling is not None else [MU_ROLLING]
    if args.small and args.mus is None and args.mu_rolling is None:
        runs = SMALL_RUNS
    else:
        runs = [(mu, mur) for mur in murs for mu in mus]
    murs = sorted({mur for _, mur in runs})
    samples = range(args.seeds if args.seeds is not None else cfg["seeds"])
    outdir = os.path.abspath(args.out or ("out/repose_small" if args.small else "out/repose"))
    os.makedirs(outdir, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {(run, i): pool.submit(one_run, cfg, outdir, *run, i, args.set, args.reuse)
                   for run in runs for i in samples}
        each = {key: f.result() for key, f in futures.items()}
    # res[(mu, mu_r)] = (mean angle, heap height, profile, max speed) with the first sample's
    # profile; err[(mu, mu_r)] = standard error of the mean angle.
    res, err = {}, {}
    with open(os.path.join(outdir, "repose_runs.csv"), "w") as f:
        f.write("mu,mu_rolling,sample,angle_deg,heap_height,max_speed\n")
        for mu, mur in runs:
            for i in samples:
                a, h, _, v = each[((mu, mur), i)]
                f.write(f"{mu},{mur},{i},{a:.3f},{h:.5f},{v:.3g}\n")
                print(f"mu = {mu:g}, mu_r = {mur:g}, sample {i}: angle of repose {a:.1f} deg, "
                      f"heap height {h * 1000:.1f} mm, max speed at the end {v:.3g} m/s")
    with open(os.path.join(outdir, "repose.csv"), "w") as f:
        f.write("mu,mu_rolling,angle_deg,angle_error_deg,heap_height,max_speed,samples\n")
        for mu, mur in runs:
            one = [each[((mu, mur), i)] for i in samples]
            a, e = mean_and_error([r[0] for r in one])
            h = sum(r[1] for r in one) / len(one)
            v = max(r[3] for r in one)
            res[(mu, mur)], err[(mu, mur)] = (a, h, one[0][2], v), e
            f.write(f"{mu},{mur},{a:.3f},{e:.3f},{h:.5f},{v:.3g},{len(one)}\n")
            print(f"mu = {mu:g}, mu_r = {mur:g}: angle of repose {a:.1f} +- {e:.1f} deg "
                  f"({len(one)} samples), heap height {h * 1000:.1f} mm, largest speed at the end "
                  f"{v:.3g} m/s")
    plt = vlib.pyplot()
    if plt:
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
        # Profiles of the runs with the largest mu_r (the chosen one in the documented runs).
        for mu, mur in runs:
            if mur != murs[-1]:
                continue
            prof = res[(mu, mur)][2]
            ax1.plot([p[0] * 1000 for p in prof], [p[1] * 1000 for p in prof], ".-",
                     label=f"μ = {mu:g}, μ_r = {mur:g}")
        ax1.set_xlabel("distance from the heap axis (mm)")
        ax1.set_ylabel("surface height (mm)")
        ax1.set_aspect("equal")
        ax1.legend(fontsize=8)
        ax1.grid(alpha=0.3)
        for mur in murs:
            xs = [mu for mu, r in runs if r == mur]
            line = ax2.errorbar(xs, [res[(mu, mur)][0] for mu in xs], yerr=[err[(mu, mur)] for mu in xs],
                                fmt="o-", capsize=3, label=f"grain, μ_r = {mur:g} (mean ± s.e.)")
            if len(samples) > 1:
                ax2.plot([mu for mu in xs for i in samples], [each[((mu, mur), i)][0] for mu in xs
                         for i in samples], ".", color=line[0].get_color(), alpha=0.4)
        for path in args.extra:
            with open(path) as f:
                rows = [line.strip().split(",") for line in f.readlines()[1:] if line.strip()]
            ax2.plot([float(r[0]) for r in rows], [float(r[2]) for r in rows], "s", mfc="none",
                     color="gray")
            for r in rows:
                ax2.annotate(f"μ_r = {float(r[1]):g}", (float(r[0]), float(r[2])), fontsize=7,
                             xytext=(5, -3), textcoords="offset points", color="gray")
        ax2.axhspan(20, 30, color="tab:green", alpha=0.15, label="glass beads, 20–30°")
        ax2.set_xlabel("friction coefficient μ (bead–bead and bead–floor)")
        ax2.set_ylabel("angle of repose (deg)")
        ax2.legend(fontsize=8)
        ax2.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, "repose.png"), dpi=110)
        print(f"plot {os.path.join(outdir, 'repose.png')}")
    if not args.check:
        return 0
    ok = True
    if args.small:
        for cond, text in SMALL_CHECKS:
            ok &= vlib.check(cond(res), text(res))
        return 0 if ok else 1
    mur = murs[-1]
    angles = [res[(mu, mur)][0] for mu in mus]
    errors = [err[(mu, mur)] for mu in mus]
    # Monotone within the sampling error: from one mu to the next the mean angle does not fall
    # by more than two standard errors of the difference, and from the first mu to the last it
    # rises by more than two.
    def sigma(i, j):
        return math.hypot(errors[i], errors[j])
    listed = ", ".join(f"{a:.1f} +- {e:.1f}" for a, e in zip(angles, errors))
    ok &= vlib.check(all(angles[i + 1] - angles[i] >= -2 * sigma(i, i + 1)
                         for i in range(len(angles) - 1)),
                     f"mu_r = {mur:g}: no mean angle falls by more than 2 standard errors: {listed}")
    ok &= vlib.check(len(angles) > 1 and angles[-1] - angles[0] > 2 * sigma(0, len(angles) - 1),
                     f"mu_r = {mur:g}: the angle rises from mu = {mus[0]:g} to {mus[-1]:g} by more "
                     f"than 2 standard errors: {angles[-1] - angles[0]:.1f} deg")
    strict = all(b > a for a, b in zip(angles, angles[1:]))
    print(f"(the means {'rise' if strict else 'do not rise'} strictly from each mu to the next)")
    for mu, (lo, hi) in BANDS.items():
        if (mu, mur) in res:
            a = res[(mu, mur)][0]
            ok &= vlib.check(lo <= a <= hi, f"mu = {mu:g}, mu_r = {mur:g}: {a:.1f} deg in [{lo}, {hi}]")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
