#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Packing fraction of beads deposited gently into a box, with friction and without.

Lays the beads of validation/silo/silo_fill.xml (radii 1.9..2.1 mm) into the same box with a
closed floor in successive thin layers (validation/packing/deposit.xml, one grain-sim run per
layer): each layer is a set of beads at random places of the box's cross-section, at least
4.4 mm apart, each starting at rest 0.4 mm above the height at which it would first touch the
bed, LAYER_TIME apart; after the last layer the bed settles for SETTLE_TIME. Runs mu = 0.5 (and
1.0 in the full version; random loose packing expected, 0.55..0.60) and mu = 0 (close to random
close packing, >= 0.62), and measures the solid fraction with `grain-convert analyze packing` in
a box that keeps 1.5 bead diameters away from the walls, the floor and the free surface (the
top is the 95th percentile of the bead centres' heights). The largest overlap of the last
SETTLE_TIME comes from SimData.dat; the volume of the overlaps inside the box, which the solid
volume counts twice, is reported as a fraction of the box (d_phi).

The contacts' gap drift correction leaves overlaps up to SLOP uncorrected
(driftCorrectionGapSlop, docs/physics.md "Piles that come to rest"): without a slop it pushes
the resting contacts of the bed apart every step, a numerical agitation that compacts the bed
by about 0.01 per simulated second (docs/validation.md). --pour and --set give the comparisons
of docs/validation.md.

usage: validation/packing/packing.py [--small] [--pour] [--set XPATH=VALUE]... [-o DIR] [-j N]
                                     [--reuse] [--check]

  (default)  4056 beads in the 60 mm box, 39 layers of 104, mu = 0.5, 1.0 and 0
             (docs/validation.md)
  --small    the test-suite version: 1200 beads in a 48 mm box, 20 layers of 60, mu = 0.5 and 0
  --pour     the comparison: all beads fall at once from the loose grid of silo_fill.xml
             (13 x 13 or 10 x 10 beads a layer; 0.8 s, small: 0.5 s) instead of the
             layer-by-layer deposition
  --set      a grain-sim override for every run, after the script's own (for comparisons,
             e.g. '.../InclusionSolverSettings/@driftCorrectionGapSlop=0' for no slop)
  --reuse    reduce the runs already in DIR (from an earlier call) instead of running them again
  --check    exit 1 unless the packing fractions lie in the bands (BANDS) and the frictionless
             one is the denser by MIN_GAP
"""
import argparse
import concurrent.futures
import math
import os
import random
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import vlib  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEPOSIT = os.path.join(ROOT, "packing", "deposit.xml")
POUR = os.path.join(ROOT, "silo", "silo_fill.xml")
D_BEAD = 0.004
R_MAX = 0.0021  # largest bead radius of the scenes
DT = 0.0005  # time step of the scenes

FULL = dict(beads=4056, grid=13, layer=104, half_width=0.03, end_time=0.8, mus=[0.5, 1.0, 0.0])
SMALL = dict(beads=1200, grid=10, layer=60, half_width=0.024, end_time=0.5, mus=[0.5, 0.0])
SPACING = 0.0044  # least horizontal distance between the beads of a layer
SLOP = 4e-5  # driftCorrectionGapSlop (m), 2 % of the bead radius, 16 g dt^2
GAP = 0.0004  # height of a new bead above the point where it would first touch the bed
LAYER_TIME = 0.03  # simulated time per layer (s)
SETTLE_TIME = 0.05  # after the last layer
SEED = 7
# Literature: random loose packing 0.55..0.60 with friction, random close packing about 0.64
# without (docs/validation.md); the frictionless packing must be denser by at least MIN_GAP.
BANDS = {0.5: (0.55, 0.60), 1.0: (0.55, 0.60), 0.0: (0.62, 0.66)}
MIN_GAP = 0.015
REUSE = False

# One body of a .sim state (docs/sim-format.md), as a numpy record.
BODY = np.dtype([("id", "<u8"), ("r", "<f8", 3), ("q", "<f8", 4), ("v", "<f8", 3), ("w", "<f8", 3)])


def read_states(path):
    """All states of a .sim file as [(time, structured array of BODY)]."""
    try:
        states = vlib.simfile.read_states(path)
    except vlib.simfile.SimFileError as e:
        sys.exit(str(e))
    return [(s.time, np.array([(b.id, b.r, b.q, b.v, b.w) for b in s.bodies], BODY)) for s in states]


def write_state(path, t, bodies):
    """A .sim file with one state (bodies in the array's order, sorted by id)."""
    sim = vlib.simfile
    sim.write(path, [sim.State(t, [sim.Body(int(b["id"]), b["r"], b["q"], b["v"], b["w"]) for b in bodies])])


def new_layer(bed, count, cfg, rng):
    """count beads at rest at random places of the box's cross-section, at least 4.4 mm apart
    (random sequential addition), each 0.4 mm above the height where it would first touch a
    bead of the bed (or the floor) if lowered vertically (radii taken as the largest, 2.1 mm)."""
    lim = cfg["half_width"] - R_MAX - 1e-4
    xy, tries = [], 0
    while len(xy) < count:
        tries += 1
        if tries > 100000:
            sys.exit(f"no room for {count} beads 4.4 mm apart in a layer")
        p = (rng.uniform(-lim, lim), rng.uniform(-lim, lim))
        if all((p[0] - a) ** 2 + (p[1] - b) ** 2 >= SPACING ** 2 for a, b in xy):
            xy.append(p)
    layer = np.zeros(count, BODY)
    layer["q"][:, 3] = 1.0
    for i, (x, y) in enumerate(xy):
        z = R_MAX
        if len(bed):
            rho2 = (bed["r"][:, 0] - x) ** 2 + (bed["r"][:, 1] - y) ** 2
            near = rho2 < (2 * R_MAX) ** 2
            if near.any():
                z = max(z, float(np.max(bed["r"][near, 2] + np.sqrt(4 * R_MAX ** 2 - rho2[near]))))
        layer["r"][i] = (x, y, z + GAP)
    layer["id"] = np.arange(len(bed), len(bed) + count, dtype=np.uint64)  # group 0
    return layer


def walls(h):
    pos = 'SceneObjects/RigidBodies[@name="walls"]/DynamicProperties/InitialCondition/InitialPosition/Pos'
    return [f"{pos}[1]/Trafo/@trans=0 {h} 0", f"{pos}[2]/Trafo/@trans=0 {-h} 0",
            f"{pos}[3]/Trafo/@trans={h} 0 0", f"{pos}[4]/Trafo/@trans={-h} 0 0"]


def common_sets(cfg, mu, extra):
    cp = "SceneSettings/ContactParameterMap/ContactParameter"
    return [f'{cp}[@materialId2="0"]/@mu={mu}', f'{cp}[@materialId2="1"]/@mu={mu}',
            f"SceneSettings/TimeStepperSettings/InclusionSolverSettings/@driftCorrectionGapSlop={SLOP}"
            ] + walls(cfg["half_width"]) + extra


def largest_speed(states):
    return max(float(np.sqrt((b["v"] ** 2).sum(axis=1)).max()) for _, b in states)


def deposit(cfg, run_dir, mu, extra):
    """The layer-by-layer deposition; returns the record of the settling run and the largest
    bead speed during the deposition (states every 10 steps)."""
    rec = os.path.join(run_dir, "settle", "SimFiles", "SimDataRECORD_0")
    log = os.path.join(run_dir, "layers.csv")
    if REUSE and os.path.exists(os.path.join(rec, "SimState.sim")) and os.path.exists(log):
        _, cols = vlib.read_csv(log)
        return rec, max(cols["largest_speed"][:-1])
    rng = random.Random(SEED)
    bed, t = np.zeros(0, BODY), 0.0
    rows = []
    per_layer = cfg["layer"]
    while True:
        count = min(per_layer, cfg["beads"] - len(bed))
        if count:
            bed = np.concatenate([bed, new_layer(bed, count, cfg, rng)])
        stage = os.path.join(run_dir, "settle" if not count else "layer")
        os.makedirs(run_dir, exist_ok=True)
        start = os.path.join(run_dir, "start.sim")
        write_state(start, t, bed)
        steps = round((LAYER_TIME if count else SETTLE_TIME) / DT)
        sets = [f'SceneObjects/RigidBodies[@name="beads"]/@instances={len(bed)}',
                f"SceneSettings/GlobalInitialCondition/@file={start}",
                f"SceneSettings/TimeStepperSettings/@endTime={t + steps * DT:.6f}",
                "SceneSettings/RecorderSettings/@everyXStep=10"] + common_sets(cfg, mu, extra)
        out = vlib.simulate(DEPOSIT, stage, sets)
        states = read_states(os.path.join(out, "SimState.sim"))
        t, bed = states[-1]
        rows.append((t, len(bed), float(bed["r"][:, 2].max()), largest_speed(states)))
        if not count:
            break
    with open(log, "w") as f:
        f.write("time,beads,highest_centre,largest_speed\n")
        f.writelines(f"{r[0]:.4f},{r[1]},{r[2]:.5f},{r[3]:.4f}\n" for r in rows)
    return rec, max(r[3] for r in rows[:-1])


def pour(cfg, run_dir, mu, extra):
    """The comparison: silo_fill.xml's pour from a loose grid."""
    rec = os.path.join(run_dir, "SimFiles", "SimDataRECORD_0")
    b = 'SceneObjects/RigidBodies[@name="beads"]'
    sets = [f"{b}/@instances={cfg['beads']}",
            f"{b}/DynamicProperties/InitialCondition/InitialPosition/@gridSizeX={cfg['grid']}",
            f"{b}/DynamicProperties/InitialCondition/InitialPosition/@gridSizeY={cfg['grid']}",
            f"SceneSettings/TimeStepperSettings/@endTime={cfg['end_time']}",
            "SceneSettings/RecorderSettings/@everyXStep=10"] + common_sets(cfg, mu, extra)
    if not (REUSE and os.path.exists(os.path.join(rec, "SimState.sim"))):
        rec = vlib.simulate(POUR, run_dir, sets)
    return rec, largest_speed(read_states(os.path.join(rec, "SimState.sim")))


def radii(rec, run_dir):
    """Bead radii by body number, from grain-convert vtk (ASCII) of the first state."""
    _, conv = vlib.programs()
    out = os.path.join(run_dir, "vtk")
    vlib.run([conv, "vtk", os.path.join(rec, "SimState.sim"), "-s", os.path.join(rec, "SceneFile.xml"),
              "--ascii", "--last", "0", "-q", "-o", out])
    with open(os.path.join(out, "states", "states_00000.vtu")) as f:
        text = f.read()

    def array(name):
        start = text.index(">", text.index(f'Name="{name}"')) + 1
        return np.array(text[start:text.index("</DataArray>", start)].split(), float)

    return dict(zip(array("number").astype(int), array("radius")))


def overlap_volume(bodies, rad, lo, hi):
    """Volume of the sphere-sphere overlaps (lenses) whose centre lies in the box [lo, hi]."""
    r = np.array([rad[int(i) & 0xFFFFFFFF] for i in bodies["id"]])
    x = bodies["r"]
    total = 0.0
    for i in range(len(x) - 1):
        d = np.sqrt(((x[i + 1:] - x[i]) ** 2).sum(axis=1))
        s = r[i] + r[i + 1:]
        for k in np.nonzero(d < s)[0]:
            j = i + 1 + k
            mid = 0.5 * (x[i] + x[j])
            if not all(lo[a] <= mid[a] <= hi[a] for a in range(3)):
                continue
            R, q, dd = r[i], r[j], d[k]
            total += math.pi * (R + q - dd) ** 2 * (dd * dd + 2 * dd * q - 3 * q * q + 2 * dd * R
                                                     + 6 * q * R - 3 * R * R) / (12 * dd)
    return total


def largest_overlap(path, t_from):
    """The largest MaxOverlap of SimData.dat in the steps after t_from."""
    names, largest = None, 0.0
    with open(path) as f:
        for line in f:
            if line.startswith("# WallTime"):
                names = line[2:].rstrip("\n").split("\t")
            elif names and not line.startswith("#"):
                row = dict(zip(names, line.split("\t")))
                if float(row["SimulationTime [s]"]) > t_from:
                    largest = max(largest, float(row["MaxOverlap [m]"]))
    return largest


def one_run(cfg, outdir, mu, args):
    run_dir = os.path.join(outdir, f"mu{mu:g}")
    rec, vfall = (pour if args.pour else deposit)(cfg, run_dir, mu, args.set)
    sim = os.path.join(rec, "SimState.sim")
    t_end, bodies = read_states(sim)[-1]
    z = np.sort(bodies["r"][:, 2])
    top = float(z[int(0.95 * len(z))])
    m = 1.5 * D_BEAD
    inner = cfg["half_width"] - m
    lo, hi = (-inner, -inner, m), (inner, inner, top - m)
    scene = os.path.join(rec, "SceneFile.xml")
    _, pk = vlib.analyze("packing", [sim], os.path.join(run_dir, "packing.csv"),
                         ["-s", scene, "--t-min", f"{t_end - 1e-9}",
                          "--min", ",".join(f"{v}" for v in lo), "--max", ",".join(f"{v}" for v in hi)])
    overlap = largest_overlap(os.path.join(rec, "SimData.dat"), t_end - SETTLE_TIME)
    box = (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2])
    d_phi = overlap_volume(bodies, radii(rec, run_dir), lo, hi) / box
    vmax = float(np.sqrt((bodies["v"] ** 2).sum(axis=1)).max())
    # The profile: the same measure in horizontal slabs one bead diameter thick.
    profile = []
    z = 0.0
    while z + D_BEAD <= top + 0.5 * D_BEAD:
        _, sl = vlib.analyze("packing", [sim], os.path.join(run_dir, "slab.csv"),
                             ["-s", scene, "--t-min", f"{t_end - 1e-9}",
                              "--min", f"{-inner},{-inner},{z}", "--max", f"{inner},{inner},{z + D_BEAD}"])
        profile.append((z + 0.5 * D_BEAD, sl["packing_fraction"][-1]))
        z += D_BEAD
    return dict(phi=pk["packing_fraction"][-1], top=top, overlap=overlap, d_phi=d_phi, vmax=vmax,
                vfall=vfall, t_end=t_end, profile=profile, box=(lo[2], hi[2]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--pour", action="store_true")
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("-o", "--out", default=None)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--reuse", action="store_true")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    global REUSE
    REUSE = args.reuse
    cfg = SMALL if args.small else FULL
    mus = cfg["mus"]
    name = "packing" + ("_small" if args.small else "") + ("_pour" if args.pour else "")
    outdir = os.path.abspath(args.out or os.path.join("out", name))
    os.makedirs(outdir, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {mu: pool.submit(one_run, cfg, outdir, mu, args) for mu in mus}
        res = {mu: f.result() for mu, f in futures.items()}
    how = ("poured" if args.pour else "deposited layer by layer") + (" (with --set)" if args.set else "")
    with open(os.path.join(outdir, "packing.csv"), "w") as f:
        f.write("mu,packing_fraction,pile_top,max_overlap,overlap_d_phi,max_speed_end,"
                "max_speed_filling,end_time\n")
        for mu in mus:
            r = res[mu]
            f.write(f"{mu},{r['phi']:.5f},{r['top']:.5f},{r['overlap']:.3g},{r['d_phi']:.3g},"
                    f"{r['vmax']:.3g},{r['vfall']:.3g},{r['t_end']:.4f}\n")
            print(f"mu = {mu:g} ({how}): packing fraction {r['phi']:.4f} (z = {1.5 * D_BEAD:.3f} .. "
                  f"{r['top'] - 1.5 * D_BEAD:.4f} m, t = {r['t_end']:.3f} s), overlaps in the box "
                  f"{r['d_phi']:.2g} of it, largest overlap {r['overlap']:.3g} m, largest speed "
                  f"while filling {r['vfall']:.3g} m/s, at the end {r['vmax']:.3g} m/s")
    plt = vlib.pyplot()
    if plt:
        fig, ax = plt.subplots(figsize=(7, 4.2))
        for mu in mus:
            colour = {0.5: "tab:blue", 1.0: "tab:green", 0.0: "tab:red"}[mu]
            prof, (zlo, zhi) = res[mu]["profile"], res[mu]["box"]
            ax.plot([p[1] for p in prof], [p[0] * 1000 for p in prof], ".-", color=colour,
                    label=f"μ = {mu:g}: slabs of one bead diameter")
            ax.plot([res[mu]["phi"]] * 2, [zlo * 1000, zhi * 1000], "-", color=colour, lw=3, alpha=0.5,
                    label=f"μ = {mu:g}: measured box, φ = {res[mu]['phi']:.3f}")
        ax.axvspan(0.55, 0.60, color="tab:blue", alpha=0.1, label="random loose packing 0.55–0.60")
        ax.axvline(0.64, color="tab:red", ls="--", lw=1, label="random close packing ≈ 0.64")
        ax.set_xlim(0.4, 0.7)
        ax.set_xlabel("packing fraction")
        ax.set_ylabel("height above the floor (mm)")
        ax.set_title(f"{cfg['beads']} beads {how}", fontsize=10)
        ax.legend(fontsize=8, loc="upper left")
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, "packing.png"), dpi=110)
        print(f"plot {os.path.join(outdir, 'packing.png')}")
    if not args.check:
        return 0
    ok = True
    for mu in mus:
        lo, hi = BANDS[mu]
        ok &= vlib.check(lo <= res[mu]["phi"] <= hi,
                         f"mu = {mu:g}: packing fraction {res[mu]['phi']:.4f} in [{lo}, {hi}]")
    gap = res[0.0]["phi"] - res[0.5]["phi"]
    ok &= vlib.check(gap >= MIN_GAP, f"frictionless packing denser by {gap:.4f} >= {MIN_GAP}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
