#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Angle of repose of a heap poured on a rough floor, against the bead friction coefficient.

Runs heap.xml (beads lifted out of a tube onto a rough floor) for each mu (bead-bead and
bead-floor), reads the last state of each run and
measures the heap's surface: in rings of width 3 mm around the heap axis the highest bead
centre gives the surface height h(rho); the angle is atan of minus the slope of a straight line
fitted to h(rho) where h lies between 20 % and 80 % of the heap height (the flanks, without the
rounded top and the foot).

usage: validation/repose/repose.py [--small] [-o DIR] [-j N] [--check]

  (default)  1536 beads, mu = 0.1, 0.3, 0.5, 0.7, 1.0 (docs/validation.md)
  --small    the test-suite version: 384 beads, mu = 0.05 and 0.5
  --check    exit 1 unless the angles rise with mu and lie in the bands (BANDS)
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

FULL = dict(beads=1536, mus=[0.1, 0.3, 0.5, 0.7, 1.0], end_time=1.0)
SMALL = dict(beads=384, mus=[0.05, 0.5], end_time=0.5)
# Bands the --check asserts, by mu: [lo, hi] in degrees.
# The full version's band is the glass-bead band; the small heap (384 beads, about 3 bead
# diameters high) only tells a frictional heap (>= 12 deg) from a nearly frictionless one, whose
# angle must be at least MIN_RISE lower.
BANDS = {"full": {0.3: (20.0, 30.0), 0.5: (20.0, 30.0)},
         "small": {0.5: (12.0, 30.0)}}
MIN_RISE = {"full": 0.0, "small": 5.0}


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


def one_run(cfg, outdir, mu):
    run_dir = os.path.join(outdir, f"mu{mu:g}")
    cp = "SceneSettings/ContactParameterMap/ContactParameter"
    sets = [f'{cp}[@materialId2="0"]/@mu={mu}', f'{cp}[@materialId2="1"]/@mu={mu}',
            f'SceneObjects/RigidBodies[@name="beads"]/@instances={cfg["beads"]}',
            f"SceneSettings/TimeStepperSettings/@endTime={cfg['end_time']}"]
    rec = vlib.simulate(os.path.join(HERE, "heap.xml"), run_dir, sets)
    return heap_angle(os.path.join(rec, "SimState.sim"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true")
    ap.add_argument("-o", "--out", default=None)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    cfg = SMALL if args.small else FULL
    outdir = os.path.abspath(args.out or ("out/repose_small" if args.small else "out/repose"))
    os.makedirs(outdir, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {mu: pool.submit(one_run, cfg, outdir, mu) for mu in cfg["mus"]}
        res = {mu: f.result() for mu, f in futures.items()}
    mus = cfg["mus"]
    with open(os.path.join(outdir, "repose.csv"), "w") as f:
        f.write("mu,angle_deg,heap_height,max_speed\n")
        for mu in mus:
            a, h, _, v = res[mu]
            f.write(f"{mu},{a:.3f},{h:.5f},{v:.3g}\n")
            print(f"mu = {mu:g}: angle of repose {a:.1f} deg, heap height {h * 1000:.1f} mm, "
                  f"max speed at the end {v:.3g} m/s")
    plt = vlib.pyplot()
    if plt:
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
        for mu in mus:
            prof = res[mu][2]
            ax1.plot([p[0] * 1000 for p in prof], [p[1] * 1000 for p in prof], ".-", label=f"μ = {mu:g}")
        ax1.set_xlabel("distance from the heap axis (mm)")
        ax1.set_ylabel("surface height (mm)")
        ax1.set_aspect("equal")
        ax1.legend(fontsize=8)
        ax1.grid(alpha=0.3)
        ax2.plot(mus, [res[mu][0] for mu in mus], "o-", label="grain")
        ax2.axhspan(20, 30, color="tab:green", alpha=0.15, label="glass beads, 20–30°")
        ax2.set_xlabel("friction coefficient μ (bead–bead and bead–floor)")
        ax2.set_ylabel("angle of repose (deg)")
        ax2.legend()
        ax2.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, "repose.png"), dpi=110)
        print(f"plot {os.path.join(outdir, 'repose.png')}")
    if not args.check:
        return 0
    ok = True
    angles = [res[mu][0] for mu in mus]
    rise = MIN_RISE["small" if args.small else "full"]
    ok &= vlib.check(all(b > a for a, b in zip(angles, angles[1:])) and angles[-1] - angles[0] >= rise,
                     "angle rises with mu" + (f" (by >= {rise:g} deg)" if rise else "") + ": "
                     + ", ".join(f"{a:.1f}" for a in angles))
    for mu, (lo, hi) in BANDS["small" if args.small else "full"].items():
        ok &= vlib.check(lo <= res[mu][0] <= hi, f"mu = {mu:g}: {res[mu][0]:.1f} deg in [{lo}, {hi}]")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
