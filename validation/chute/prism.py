#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The thesis' chute study from its initial pile: a settled triangular prism behind the flap.

The thesis (ch. 16) starts every run from one settled pile behind the discharge flap, 29.6 cm
above the end of the 30 degree chute: roughly a triangular prism, l_init = 238 mm long on the
chute floor and h_init = 116 mm high at the flap, across the 10 cm wide channel. This script
builds such a prism of beads (grain's bead sizes, radii 1.5-2.5 mm), lets it settle against the
flap, then opens the flap (removes it) and lets the pile flow for each bead-bead friction
coefficient, and measures the flow duration Q(0.95) - Q(0.05) of the beads crossing the end of
the chute with `grain-convert analyze crossing` (the thesis' measure; it roughly doubles from
mu = 0 to mu = 3).

  1. fill: the beads start on a loose grid (spacing 5.4 mm) filling a prism of the thesis' shape,
     layer by layer parallel to the chute floor, each layer shorter by the prism's slope; they
     settle for fill_time against the flap (a static plane at x = 0) with mu = 0.5 between beads,
     into a smaller prism of about the same shape (with 10^4 beads of grain's sizes the settled
     prism is about 0.6 of the thesis' size; its 10^6 beads were smaller);
  2. flow: `GlobalInitialCondition` from the fill's last state (at rest), the flap moved out of
     the way, for every mu of MUS, END_TIME of flow;
  3. the crossing of the plane x = -0.296 m (the end of the chute) per run; the plot.

usage: validation/chute/prism.py [--small] [-o DIR] [-j N] [--reuse] [--mu MU]... [--set XPATH=VALUE]...
                                 [--check]

  (default)  10242 beads in a loose prism of the thesis' shape (l/h = 2.05), 267 mm x 130 mm,
             which settles to about 150 mm x 73 mm; mu = 0, 0.3, 0.9, 1.5, 3
  --small    the test-suite version: 882 beads, loose 82 mm x 40 mm; mu = 0 and 3
  --reuse    reduce the runs already in DIR instead of running them again (the fill is reused
             too, so --mu and --set can rerun some flows from the same pile)
  --mu       run only these bead-bead friction coefficients
  --set      a grain-sim override for the flow runs, e.g. the solver's maxIter
  --check    exit 1 unless every bead crossed, the duration grows with mu, and by at least
             MIN_RATIO from mu = 0 to mu = 3
"""
import argparse
import concurrent.futures
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import vlib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SPACING = 5.4e-3  # m, loose grid of the beads (largest diameter 5 mm)
WIDTH = 0.1       # m, the channel (thesis: w = 10 cm)
# The loose prism the beads start in (h high at the flap, l long on the floor; l/h = 2.05 as the
# thesis' 238 mm / 116 mm); it settles to about 0.56 of these sizes (docs/validation.md).
FULL = dict(h=0.130, l=0.2665, mus=[0.0, 0.3, 0.9, 1.5, 3.0], fill_time=0.5, end_time=1.2)
SMALL = dict(h=0.040, l=0.082, mus=[0.0, 3.0], fill_time=0.3, end_time=1.0)
MIN_RATIO = {"full": 1.7, "small": 1.6}
REUSE = False


def prism_layers(h, l):
    """Grid layers filling the prism: [(x0, z, nx)] with x0 the first bead centre along the chute
    (m), z the layer's height above the floor (m) and nx its beads along x; 18 across."""
    layers = []
    z = 0.5 * SPACING
    while z < h:
        length = l * (1.0 - z / h)  # the prism's top face at this height
        nx = int((length - 0.5 * SPACING) / SPACING)
        if nx < 1:
            break
        layers.append((0.5 * SPACING + 0.5e-3, z, nx))
        z += SPACING
    return layers


def ny():
    return int((WIDTH - SPACING) / SPACING) + 1


def scene(cfg, fill, fill_sim=""):
    """The scene text: scenes/chute.xml's chute, run-out and trees, the 10 cm channel, the beads
    as prism layers, the flap (fill) or not (flow, starting from the fill's last state)."""
    with open(os.path.join(ROOT, "scenes", "chute.xml")) as f:
        text = f.read()
    head, rest = text.split("<SceneObjects>")
    objects_end = rest.index("</SceneObjects>")
    objects = rest[:objects_end]
    # Drop the template's bead block; keep the static bodies.
    start = objects.index('<RigidBodies name="beads"')
    stop = objects.index("</RigidBodies>", start) + len("</RigidBodies>")
    statics = objects[:start] + objects[stop:]
    statics = statics.replace('trans="0 0.1 0"', f'trans="0 {WIDTH / 2} 0"').replace(
        'trans="0 -0.1 0"', f'trans="0 {-WIDTH / 2} 0"')
    beads = []
    n = ny()
    for k, (x0, z, nx) in enumerate(prism_layers(cfg["h"], cfg["l"])):
        xc = x0 + 0.5 * (nx - 1) * SPACING  # the grid is centred in x and y on its translation
        beads.append(f"""    <RigidBodies name="beads{k}" instances="{nx * n}" groupId="0">
      <Geometry>
        <Sphere distribute="random" generator="piecewise-const" intervals="1.5e-3 2e-3 2.5e-3"
                densities="1 0.5" seed="{5 + k}"/>
      </Geometry>
      <DynamicProperties>
        <DynamicState type="simulated"/>
        <Mass distribute="homogen" density="2500"/>
        <InertiaTensor type="homogen"/>
        <Material distribute="uniform" id="0"/>
        <InitialCondition type="posvel">
          <InitialPosition distribute="grid" gridSizeX="{nx}" gridSizeY="{n}" distance="{SPACING}"
                           translation="{xc:.6f} 0 {z:.6f}" jitter="true" seed="{40 + k}"
                           delta="0.1e-3"/>
        </InitialCondition>
      </DynamicProperties>
    </RigidBodies>
""")
    flap = f"""    <RigidBodies name="flap" instances="1" groupId="4">
      <Geometry>
        <Halfspace distribute="uniform" normal="1 0 0"/>
      </Geometry>
      <DynamicProperties>
        <DynamicState type="static"/>
        <Material distribute="uniform" id="3"/>
        <InitialCondition type="posvel">
          <InitialPosition distribute="transforms">
            <Pos><Trafo trans="{0.0 if fill else -10.0} 0 0" axis="1 0 0" deg="0"/></Pos>
          </InitialPosition>
        </InitialCondition>
      </DynamicProperties>
    </RigidBodies>
"""
    settings = head
    if not fill:
        settings = settings.replace(
            "  </SceneSettings>",
            f'    <GlobalInitialCondition file="{fill_sim}" whichState="end" '
            'useTimeToContinue="false" readVelocities="false"/>\n  </SceneSettings>')
    return (settings + "<SceneObjects>\n" + "".join(beads) + flap + statics +
            rest[objects_end:])


def bead_count(cfg):
    return sum(nx for _, _, nx in prism_layers(cfg["h"], cfg["l"])) * ny()


def run(scene_text, run_dir, sets):
    """Writes the scene beside the run folder `run_dir` and runs it there; returns the record."""
    path = run_dir + ".xml"
    with open(path, "w") as f:
        f.write(scene_text)
    rec = os.path.join(run_dir, "SimFiles", "SimDataRECORD_0")
    if not (REUSE and os.path.exists(os.path.join(rec, "SimState.sim"))):
        rec = vlib.simulate(path, run_dir, sets)
    return rec


def flow(cfg, outdir, mu, extra):
    run_dir = os.path.join(outdir, f"mu{mu:g}")
    cp = 'SceneSettings/ContactParameterMap/ContactParameter[@materialId1="0" and @materialId2="0"]'
    fill_sim = os.path.join(outdir, "fill", "SimFiles", "SimDataRECORD_0", "SimState.sim")
    rec = run(scene(cfg, False, fill_sim), run_dir,
              [f"{cp}/@mu={mu}", f"SceneSettings/TimeStepperSettings/@endTime={cfg['end_time']}"] +
              extra)
    csv = os.path.join(run_dir, "crossing.csv")
    meta, cols = vlib.analyze("crossing", [os.path.join(rec, "SimState.sim")], csv,
                              ["--point", "-0.296,0,0", "--normal", "-1,0,0", "-g", "0"])
    return mu, meta, cols


def main():
    global REUSE
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true")
    ap.add_argument("-o", "--out", default=None)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--reuse", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--set", action="append", default=[],
                    help="a grain-sim override for the flow runs (XPATH=VALUE)")
    ap.add_argument("--mu", type=float, action="append", default=None,
                    help="the bead-bead friction coefficients to run (default: the case's)")
    args = ap.parse_args()
    REUSE = args.reuse
    cfg = dict(SMALL if args.small else FULL)
    if args.mu:
        cfg["mus"] = sorted(args.mu)
    name = "chute_prism_small" if args.small else "chute_prism"
    outdir = os.path.abspath(args.out or os.path.join("out", name))
    os.makedirs(outdir, exist_ok=True)
    n = bead_count(cfg)
    print(f"prism l = {cfg['l'] * 1e3:.0f} mm, h = {cfg['h'] * 1e3:.0f} mm, w = {WIDTH * 1e3:.0f} mm: "
          f"{n} beads in {len(prism_layers(cfg['h'], cfg['l']))} layers")

    # 1. The fill: the prism settles against the flap.
    fill_rec = run(scene(cfg, True), os.path.join(outdir, "fill"),
                   [f"SceneSettings/TimeStepperSettings/@endTime={cfg['fill_time']}"])
    states = vlib.read_sim_states(os.path.join(fill_rec, "SimState.sim"))
    t_end, bodies = states[-1]
    xs = [b[1] for b in bodies]
    zs = [b[3] for b in bodies]
    vmax = max(b[4] for b in bodies)
    print(f"fill: settled at t = {t_end:.2f} s, pile from x = {min(xs) * 1e3:.0f} to "
          f"{max(xs) * 1e3:.0f} mm, top z = {max(zs) * 1e3:.0f} mm, largest speed {vmax:.3f} m/s")

    # 2. The flows.
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for mu, meta, cols in pool.map(lambda m: flow(cfg, outdir, m, args.set), cfg["mus"]):
            results.append((mu, meta, cols))
    results.sort(key=lambda r: r[0])
    durations = []
    crossed = []
    for mu, meta, cols in results:
        fd = float(meta["flow_duration"].split()[0])
        durations.append(fd)
        crossed.append(cols["fraction_crossed"][-1])
        print(f"mu = {mu:g}: flow duration {fd:.3f} s ({fd / durations[0]:.2f} x mu = 0), "
              f"front Q(0.05) {float(meta['Q(0.05)'].split()[0]):.3f} s, crossed {crossed[-1]:.3f}")

    plt = vlib.pyplot()
    if plt is not None:
        fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
        for mu, meta, cols in results:
            a.plot(cols["time"], cols["fraction_crossed"], label=f"μ = {mu:g}")
        a.set_xlabel("time (s)")
        a.set_ylabel("fraction of beads past the end of the chute")
        a.legend()
        b.plot([r[0] for r in results], durations, "o-", label="grain, prism")
        b.set_xlabel("bead-bead μ")
        b.set_ylabel("flow duration Q(0.95) − Q(0.05) (s)")
        b.legend()
        fig.tight_layout()
        png = os.path.join(outdir, name + ".png")
        fig.savefig(png, dpi=110)
        print(f"plot {png}")
    if not args.check:
        return 0
    ok = True
    ratio = durations[-1] / durations[0]
    need = MIN_RATIO["small" if args.small else "full"]
    ok &= vlib.check(all(c >= 0.95 for c in crossed), "95 % of the beads crossed in every run")
    ok &= vlib.check(all(y > x for x, y in zip(durations, durations[1:])),
                     "flow duration grows with mu: " + ", ".join(f"{d:.3f}" for d in durations))
    ok &= vlib.check(ratio >= need, f"duration(mu = {results[-1][0]:g}) / duration(mu = 0) = "
                                    f"{ratio:.2f} >= {need}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
