#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Olsen-Kamrin cannonball pyramid: compatible contact forces against linear elasticity.

A square-based close-packed pyramid of equal frictionless spheres (diameter 2.5 mm,
2000 kg/m^3) stands on a fixed base layer; the upper layers start 5 % of a radius apart
vertically and are dropped under gravity (Olsen and Kamrin, "Resolving force indeterminacy in
contact dynamics using compatibility conditions", section 8.2). The rigid model leaves the
contact forces of the settled pyramid indeterminate: grain's SOR solver returns one member of
the set, and <ContactForceOutput compatibleForces="true"> the compatible forces
(docs/contact-output.md).

The reference is computed here, independently of grain: the contact network is detected from
the last state of the .sim file (sphere pairs with centre distance <= 2 r), every contact a
linear spring of the same stiffness, the base layer fixed, the weights m g as load; K u = f is
solved with numpy (three translations per sphere; rotations do not load a sphere's central
contacts; dense up to DENSE_LIMIT unknowns, preconditioned conjugate gradients above), and
contacts that would pull are taken out and put back while they would
overlap (no-tension network). This is the uniform Hookean elastic equilibrium in the limit of
stiff contacts, the solution the compatibility conditions stand for.

Measured, from the last block of ContactForces.dat: the floor load (the vertical force each
base sphere carries from the layer above) and all contact forces, as relative errors
||F - F_ref|| / ||F_ref|| for the compatible and for the SOR forces, and the over-prediction of
the largest contact force by SOR. `grain-convert analyze energy` and `analyze contacts` check
that the pyramid is at rest and how well the solver converged.

Also runs plate.xml: a rigid plate on four fixed spheres with an off-centre load, whose
uniform-spring reactions have a closed form (the 3-D analogue of the paper's beam).

usage: validation/pyramid/pyramid.py [--small] [-o DIR] [--set XPATH=VALUE]... [--eps EPS]
                                     [--reuse] [--check]

  (default)  20 spheres along the base edge (2870 spheres) as in the paper
  --small    the test-suite version: 8 along the base (204 spheres)
  --set      a grain-sim override for the pyramid run, e.g. to change the time step or the
             solver (docs/scene-format.md)
  --eps      in-plane centre distance d (1 - EPS) (default 1e-4: neighbours within a layer are
             contacts; a negative value leaves a gap between them, no in-plane contacts)
  --reuse    reduce the runs already in DIR instead of running them again
  --check    exit 1 unless the compatible forces match the reference within BOUND, the SOR
             forces are worse by at least SOR_FACTOR, and the plate matches its closed form

Needs python3-numpy (and python3-matplotlib for the plot).
"""
import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import vlib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

D = 2.5e-3  # sphere diameter (m)
RHO = 2000.0  # kg/m^3
G = 9.81
# In-plane centre distance d (1 - EPS): neighbours within a layer overlap by EPS d, far above
# round-off, so that every one of them is a contact of the network (the paper's 12 neighbours
# of an interior sphere) and none is found or missed by rounding, as exactly touching
# neighbours would be.
EPS = 1e-4
DROP_GAP = 0.05 * 0.5 * D  # vertical gap between layers at the start: 5 % of a radius

FULL = dict(base=20, dt=1e-3, end_time=0.06, force_every=20)
SMALL = dict(base=8, dt=1e-3, end_time=0.04, force_every=10)

# --check: relative floor-load error of the compatible forces (the paper: 1.9e-5), and how
# much larger the SOR forces' error must be.
BOUND = 1e-8
SOR_FACTOR = 100.0
PLATE_TOL = 1e-6  # relative, of the plate's closed-form reactions
# The reference solves K u = f densely (numpy.linalg.solve) up to this many unknowns (the small
# version), by preconditioned conjugate gradients above (the full one).
DENSE_LIMIT = 3000
REUSE = False


def scene_xml(cfg):
    """The pyramid scene: layer k (k = 0 the fixed base) is a (n-k) x (n-k) grid, group k."""
    n = cfg["base"]
    s = D * (1.0 - cfg["eps"])
    pitch = math.sqrt(D * D - 0.5 * s * s)  # height of a sphere in the pocket of four below
    steps = int(round(cfg["end_time"] / cfg["dt"]))
    layers = []
    for k in range(n):
        m = n - k
        state = '<DynamicState type="static"/>' if k == 0 else (
            '<DynamicState type="simulated"/>\n'
            f'        <Mass distribute="homogen" density="{RHO:g}"/>\n'
            '        <InertiaTensor type="homogen"/>')
        layers.append(f"""    <RigidBodies name="layer{k}" instances="{m * m}" groupId="{k}">
      <Geometry><Sphere distribute="uniform" radius="{0.5 * D!r}"/></Geometry>
      <DynamicProperties>
        {state}
        <Material distribute="uniform" id="0"/>
        <InitialCondition type="posvel">
          <InitialPosition distribute="grid" gridSizeX="{m}" gridSizeY="{m}" distance="{s!r}"
                           translation="0 0 {k * (pitch + DROP_GAP)!r}" jitter="false" delta="0"/>
        </InitialCondition>
      </DynamicProperties>
    </RigidBodies>""")
    layer_text = "\n".join(layers)
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<!-- Generated by validation/pyramid/pyramid.py: a cannonball pyramid of {n} x {n} spheres at
     the base (diameter {D} m, {RHO:g} kg/m^3, frictionless, no restitution), base layer
     static, upper layers {DROP_GAP!r} m apart vertically at the start. -->
<DynamicsSystem xmlns="SceneFile">
  <SceneSettings>
    <RecorderSettings mode="everyXTimeStep" everyXStep="{cfg['force_every']}"/>
    <ContactForceOutput everyXStep="{cfg['force_every']}" compatibleForces="true" tolerance="1e-12"/>
    <TimeStepperSettings deltaT="{cfg['dt']!r}" endTime="{steps * cfg['dt']!r}">
      <InclusionSolverSettings method="SORContact" useGPU="false" alphaJORProx="0.5"
                               alphaSORProx="1.0" maxIter="5000" absTol="1e-14" relTol="1e-12"
                               usePercussionCache="true" computeTotalOverlap="true"/>
    </TimeStepperSettings>
    <ContactParameterMap>
      <ContactParameterStandard type="UCF" mu="0" epsilonN="0" epsilonT="0"/>
    </ContactParameterMap>
    <ExternalForces>
      <ForceField applyTo="all" type="gravity" value="{G}" direction="0 0 -1"/>
    </ExternalForces>
  </SceneSettings>
  <SceneObjects>
{layer_text}
  </SceneObjects>
</DynamicsSystem>
"""


def read_contact_forces(path):
    """Blocks of ContactForces.dat (docs/contact-output.md) as a list of (header dict, rows);
    a row is (idA, idB, point[3], normal[3], solverN, compatibleN) with id = (group, number)."""
    blocks = []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            t = line.split()
            if t[0] == "step":
                head = {t[i]: float(t[i + 1]) for i in range(0, len(t) - 1, 2)}
                blocks.append((head, []))
                continue
            v = [float(x) for x in t]
            blocks[-1][1].append(((int(v[0]), int(v[1])), (int(v[2]), int(v[3])), v[4:7], v[7:10],
                                  v[10], v[11]))
    return [b for b in blocks if len(b[1]) == int(b[0]["contacts"])]


def base_positions(n, eps):
    """{(0, j): centre} of the static base layer, as the scene's grid places it (.sim files
    hold the simulated bodies only)."""
    s = D * (1.0 - eps)
    c = 0.5 * (n - 1) * s
    return {(0, j): np.array([(j % n) * s - c, (j // n) * s - c, 0.0]) for j in range(n * n)}


def sim_positions(path):
    """{(group, number): centre} of the last state of a .sim file."""
    _, bodies = vlib.read_sim_states(path)[0]
    return {(bid >> 32, bid & 0xFFFFFFFF): np.array([x, y, z]) for bid, x, y, z, _ in bodies}


def find_contacts(pos, radius):
    """Sphere pairs with centre distance <= 2 radius (grain's test: gap <= 0), not both in the
    static base (group 0); as sorted (id, id) tuples, the lower id first."""
    cell = 2.0 * radius
    grid = {}
    for bid, p in pos.items():
        grid.setdefault(tuple(np.floor(p / cell).astype(int)), []).append(bid)
    pairs = set()
    for bid, p in pos.items():
        c = np.floor(p / cell).astype(int)
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                for dz in (-1, 0, 1):
                    for other in grid.get((c[0] + dx, c[1] + dy, c[2] + dz), ()):
                        if other <= bid or (bid[0] == 0 and other[0] == 0):
                            continue
                        if np.linalg.norm(pos[other] - p) <= 2.0 * radius:
                            pairs.add((bid, other))
    return sorted(pairs)


def elastic_network(pos, pairs, load, active=None):
    """No-tension linear springs (stiffness 1) on the contacts `pairs` between spheres at `pos`;
    group 0 is fixed. `load` maps every free sphere to the external force it carries. Returns
    (force per pair (compression > 0), unit normals from the first to the second sphere, solves
    until the active set settled, largest relative equilibrium residual). `active`: the contacts
    to start from (default all)."""
    free = sorted({b for pr in pairs for b in pr if b[0] != 0})
    index = {b: i for i, b in enumerate(free)}
    m = len(pairs)
    normals = np.array([(pos[b] - pos[a]) / np.linalg.norm(pos[b] - pos[a]) for a, b in pairs])
    ia = np.array([index.get(a, -1) for a, _ in pairs])
    ib = np.array([index.get(b, -1) for _, b in pairs])
    f_ext = np.zeros(3 * len(free))
    for b, i in index.items():
        f_ext[3 * i:3 * i + 3] = load[b]

    def jac_times(u):
        """J u: gap change of every contact (opening > 0)."""
        g = np.zeros(m)
        for idx, sign in ((ib, 1.0), (ia, -1.0)):
            ok = idx >= 0
            g[ok] += sign * np.einsum("ij,ij->i", normals[ok], u.reshape(-1, 3)[idx[ok]])
        return g

    def jac_t_times(f):
        """J^T f: force on the free spheres of contact values f (positive pushes apart)."""
        out = np.zeros((len(free), 3))
        for idx, sign in ((ib, 1.0), (ia, -1.0)):
            ok = idx >= 0
            np.add.at(out, idx[ok], sign * f[ok, None] * normals[ok])
        return out.ravel()

    def dense_solve(act):
        k = np.zeros((3 * len(free), 3 * len(free)))
        for c in np.nonzero(act)[0]:
            nn = np.outer(normals[c], normals[c])
            for p, sp in ((ia[c], -1.0), (ib[c], 1.0)):
                for q, sq in ((ia[c], -1.0), (ib[c], 1.0)):
                    if p >= 0 and q >= 0:
                        k[3 * p:3 * p + 3, 3 * q:3 * q + 3] += sp * sq * nn
        return np.linalg.solve(k, f_ext)

    def cg_solve(act, u):
        """Conjugate gradients with the 3 x 3 diagonal blocks of K as preconditioner, to a
        relative residual of 1e-14 (the residual K u - f recomputed from u then stays near
        1e-13: round-off)."""
        def k_times(v):
            return jac_t_times(np.where(act, jac_times(v), 0.0))
        blocks = np.zeros((len(free), 3, 3))
        for idx in (ia, ib):
            ok = (idx >= 0) & act
            np.add.at(blocks, idx[ok], normals[ok, :, None] * normals[ok, None, :])
        pinv = np.linalg.inv(blocks)

        def precondition(v):
            return np.einsum("bij,bj->bi", pinv, v.reshape(-1, 3)).ravel()
        goal = 1e-14 * np.linalg.norm(f_ext)
        r = f_ext - k_times(u)
        z = precondition(r)
        p = z.copy()
        rz = r @ z
        for _ in range(len(f_ext)):
            kp = k_times(p)
            alpha = rz / (p @ kp)
            u = u + alpha * p
            r = r - alpha * kp
            if np.linalg.norm(r) <= goal:
                return u
            z = precondition(r)
            rz_new = r @ z
            p = z + (rz_new / rz) * p
            rz = rz_new
        sys.exit("elastic reference: conjugate gradients did not converge")

    active = np.ones(m, dtype=bool) if active is None else active.copy()
    u = np.zeros(len(f_ext))
    for sweep in range(1, 101):
        u = dense_solve(active) if len(f_ext) <= DENSE_LIMIT else cg_solve(active, u)
        gap = jac_times(u)
        force = np.where(active, -gap, 0.0)
        scale = np.abs(force).max()
        pulling = active & (force < -1e-12 * scale)
        closing = ~active & (gap < -1e-12 * np.abs(gap).max())
        if not pulling.any() and not closing.any():
            break
        active = (active & ~pulling) | closing
    else:
        sys.exit("elastic reference: the active set did not settle in 100 solves")
    force = np.maximum(force, 0.0)
    # Equilibrium of the springs' forces: contact forces + load = 0 on every free sphere.
    res = jac_t_times(force) + f_ext
    return force, normals, sweep, np.abs(res).max() / np.abs(f_ext).max()


def floor_load(pairs, normals, force, base):
    """Vertical force each base sphere (group 0, number j) carries from the layer above, as an
    n x n array (row = y index, column = x index of the grid)."""
    out = np.zeros(base * base)
    for (a, _), nrm, f in zip(pairs, normals, force):
        if a[0] == 0:
            out[a[1]] += f * nrm[2]
    return out.reshape(base, base)


def rel(x, ref):
    return float(np.linalg.norm(x - ref) / np.linalg.norm(ref))


def run_pyramid(cfg, outdir, sets):
    os.makedirs(outdir, exist_ok=True)
    scene = os.path.join(outdir, "pyramid.xml")
    with open(scene, "w") as f:
        f.write(scene_xml(cfg))
    run_dir = os.path.join(outdir, "pyramid")
    rec = os.path.join(run_dir, "SimFiles", "SimDataRECORD_0")
    if not (REUSE and os.path.exists(os.path.join(rec, "ContactForces.dat"))):
        rec = vlib.simulate(scene, run_dir, sets)
    sim = os.path.join(rec, "SimState.sim")
    n = cfg["base"]
    r = 0.5 * D
    mass = RHO * math.pi / 6.0 * D ** 3
    weight = mass * G

    # Settled? Kinetic energy (grain-convert analyze energy) and the solver's log.
    _, en = vlib.analyze("energy", [sim], os.path.join(run_dir, "energy.csv"),
                         ["-s", os.path.join(rec, "SceneFile.xml")])
    cs, _ = vlib.analyze("contacts", [os.path.join(rec, "SimData.dat")],
                         os.path.join(run_dir, "contacts.csv"))
    head, rows = read_contact_forces(os.path.join(rec, "ContactForces.dat"))[-1]
    with open(os.path.join(rec, "SceneFile.xml")) as f:
        warm = 'usePercussionCache="true"' in f.read()
    pos = sim_positions(sim)
    pos.update(base_positions(n, cfg["eps"]))
    free = [b for b in pos if b[0] != 0]
    vmax = max(bb[4] for bb in vlib.read_sim_states(sim)[0][1])

    # The network: found here from the positions, checked against grain's contact list.
    pairs = find_contacts(pos, r)
    grain_rows = {tuple(sorted((a, b))): row for row in rows for a, b in [(row[0], row[1])]}
    same_network = set(grain_rows) == set(pairs)
    sor = np.array([grain_rows[p][4] if p in grain_rows else 0.0 for p in pairs])
    compat = np.array([grain_rows[p][5] if p in grain_rows else 0.0 for p in pairs])

    gravity = {b: np.array([0.0, 0.0, -weight]) for b in free}
    ref, normals, sweeps, ref_res = elastic_network(pos, pairs, gravity)
    # The load the solver's normal forces carry (grain's F~): the reference for that load tells
    # the post-processor's error from the solver's equilibrium error.
    solver_load = {b: np.zeros(3) for b in free}
    for (a, b), nrm, f in zip(pairs, normals, sor):
        if a[0] != 0:
            solver_load[a] += f * nrm
        solver_load[b] -= f * nrm
    ref_same, _, _, _ = elastic_network(pos, pairs, solver_load, ref > 0)
    sor_eq = max(np.linalg.norm(solver_load[b] - gravity[b]) for b in free) / weight

    floor = {k: floor_load(pairs, normals, v, n) for k, v in
             (("ref", ref), ("compat", compat), ("sor", sor), ("ref_same", ref_same))}
    res = dict(
        n=n, spheres=len(pos), free=len(free), contacts=len(pairs), grain_contacts=len(rows),
        same_network=same_network, step=int(head["step"]), time=head["time"],
        newton_iterations=int(head["iterations"]), newton_converged=int(head["converged"]),
        newton_residual=head["residual"], ref_sweeps=sweeps, ref_residual=ref_res,
        ref_active=int((ref > 0).sum()),
        kinetic=en["kinetic"][-1], vmax=vmax,
        max_overlap=float(cs.get("max_overlap", "nan").split()[0]),
        not_converged=int(cs.get("not_converged_steps", "-1")),
        sweeps_mean=float(cs.get("iterations_mean", "nan")),
        sweeps_max=int(cs.get("iterations_max", "-1")),
        sor_equilibrium=sor_eq,
        floor_err_compat=rel(floor["compat"], floor["ref"]),
        floor_err_sor=rel(floor["sor"], floor["ref"]),
        floor_err_compat_same=rel(floor["compat"], floor["ref_same"]),
        force_err_compat=rel(compat, ref), force_err_sor=rel(sor, ref),
        max_ref=ref.max() / weight, max_compat=compat.max() / weight, max_sor=sor.max() / weight,
        weight=weight, warm_start=warm)
    res["max_over_sor"] = res["max_sor"] / res["max_ref"] - 1.0
    res["max_over_compat"] = res["max_compat"] / res["max_ref"] - 1.0
    with open(os.path.join(outdir, "pyramid_forces.csv"), "w") as f:
        f.write("groupA,numberA,groupB,numberB,nz,reference,compatible,sor\n")
        for (a, b), nrm, fr, fc, fs in zip(pairs, normals, ref, compat, sor):
            f.write(f"{a[0]},{a[1]},{b[0]},{b[1]},{nrm[2]!r},{fr!r},{fc!r},{fs!r}\n")
    with open(os.path.join(outdir, "pyramid_floor.csv"), "w") as f:
        f.write("ix,iy,reference,compatible,sor\n")
        for iy in range(n):
            for ix in range(n):
                f.write(f"{ix},{iy},{floor['ref'][iy, ix]!r},{floor['compat'][iy, ix]!r},"
                        f"{floor['sor'][iy, ix]!r}\n")
    return res, floor, dict(ref=ref, compat=compat, sor=sor)


def run_plate(outdir):
    """The plate on four supports; returns (rows of (support x, y, closed form, compatible,
    SOR), largest relative deviation of the compatible reactions)."""
    run_dir = os.path.join(outdir, "plate")
    rec = os.path.join(run_dir, "SimFiles", "SimDataRECORD_0")
    if not (REUSE and os.path.exists(os.path.join(rec, "ContactForces.dat"))):
        rec = vlib.simulate(os.path.join(HERE, "plate.xml"), run_dir)
    head, rows = read_contact_forces(os.path.join(rec, "ContactForces.dat"))[-1]
    s, a, b, w_plate, w = 0.4, 0.1, -0.2, 20.0, 50.0
    out = []
    dev = 0.0
    for row in rows:
        if row[0][0] != 0:  # the ball on the plate
            continue
        x, y = round(row[2][0] / s) * s, round(row[2][1] / s) * s
        exact = w_plate / 4 + w / 4 * (1 + a * x / s ** 2 + b * y / s ** 2)
        out.append((x, y, exact, row[5], row[4]))
        dev = max(dev, abs(row[5] - exact) / exact)
    if len(out) != 4:
        dev = float("inf")
    return sorted(out), dev


def plot(path, res, floor, forces):
    plt = vlib.pyplot()
    if not plt:
        return
    n = res["n"]
    w = res["weight"]
    fig, axes = plt.subplots(2, 2, figsize=(10, 8.4))
    vmax = max(floor[k].max() for k in ("ref", "sor")) / w
    extent = (-0.5, n - 0.5, -0.5, n - 0.5)
    sor = "SOR, warm start" if res["warm_start"] else "SOR, no warm start"
    for ax, key, title in ((axes[0, 0], "ref", "elastic reference (= grain compatible)"),
                           (axes[0, 1], "sor", sor)):
        im = ax.imshow(floor[key] / w, origin="lower", vmin=0, vmax=vmax, cmap="viridis",
                       extent=extent)
        ax.set_title(f"floor load: {title}", fontsize=10)
        ax.set_xlabel("base sphere x index")
    axes[0, 0].set_ylabel("base sphere y index")
    fig.colorbar(im, ax=axes[0, :], label="vertical force / m g", shrink=0.9)
    ax = axes[1, 0]
    row = n // 2
    ix = np.arange(n)
    ax.plot(ix, floor["ref"][row] / w, "k-", lw=2.5, alpha=0.4, label="elastic reference")
    ax.plot(ix, floor["compat"][row] / w, "o", ms=5, mfc="none", color="tab:blue",
            label=f"grain compatible (error {res['floor_err_compat']:.1e})")
    ax.plot(ix, floor["sor"][row] / w, "s-", ms=4, lw=0.8, color="tab:red",
            label=f"grain {sor} (error {res['floor_err_sor']:.2f})")
    ax.set_xlabel(f"base sphere x index (row y = {row})")
    ax.set_ylabel("vertical force / m g")
    ax.set_title("floor load along one row of the base", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    ax = axes[1, 1]
    top = max(forces[k].max() for k in forces) / w
    bins = np.linspace(0.0, top * 1.02, 40)
    for key, colour, label, style in (
            ("ref", "k", "elastic reference", dict(histtype="stepfilled", alpha=0.25)),
            ("compat", "tab:blue", "grain compatible", dict(histtype="step", lw=2, ls="--")),
            ("sor", "tab:red", f"grain {sor}", dict(histtype="step", lw=1.5))):
        f = forces[key] / w
        ax.hist(f[f > 1e-9 * top], bins=bins, color=colour, label=label, **style)
    ax.axvline(res["max_ref"], color="k", lw=0.8, ls=":")
    ax.axvline(res["max_sor"], color="tab:red", lw=0.8, ls=":")
    ax.set_yscale("log")
    ax.set_xlabel("contact force / m g (nonzero forces)")
    ax.set_ylabel("contacts")
    ax.set_title(f"contact forces (largest: reference {res['max_ref']:.2f}, "
                 f"SOR {res['max_sor']:.2f})", fontsize=10)
    ax.legend(fontsize=8)
    fig.suptitle(f"Cannonball pyramid, {n} spheres along the base ({res['spheres']} spheres, "
                 f"{res['contacts']} contacts), frictionless, t = {res['time']:.3f} s")
    fig.savefig(path, dpi=100)
    print(f"plot {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true")
    ap.add_argument("-o", "--out", default=None)
    ap.add_argument("-j", "--jobs", type=int, default=1, help="unused (one run at a time)")
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--eps", type=float, default=EPS)
    ap.add_argument("--reuse", action="store_true")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    global REUSE
    REUSE = args.reuse
    cfg = dict(SMALL if args.small else FULL, eps=args.eps)
    outdir = os.path.abspath(args.out or ("out/pyramid_small" if args.small else "out/pyramid"))
    os.makedirs(outdir, exist_ok=True)

    plate_rows, plate_dev = run_plate(outdir)
    print("plate on four supports (off-centre load), reactions in N:")
    print("   x     y   closed form  compatible        SOR")
    for x, y, exact, comp, sor in plate_rows:
        print(f"{x:5.1f} {y:5.1f} {exact:12.6f} {comp:11.6f} {sor:10.6f}")
    print(f"largest relative deviation of the compatible reactions: {plate_dev:.2e}")

    res, floor, forces = run_pyramid(cfg, outdir, args.set)
    print(f"pyramid: {res['n']} along the base, {res['spheres']} spheres ({res['free']} dropped), "
          f"state at t = {res['time']:.4f} s (step {res['step']})")
    print(f"  at rest: kinetic energy {res['kinetic']:.3g} J, largest speed {res['vmax']:.3g} m/s")
    print(f"  solver: {res['sweeps_mean']:.0f} sweeps per step on average, at most "
          f"{res['sweeps_max']}, {res['not_converged']} steps not converged; largest overlap "
          f"{res['max_overlap']:.3g} m ({100 * res['max_overlap'] / D:.2f} % of d)")
    print(f"  contacts: {res['contacts']} found from the positions, {res['grain_contacts']} in "
          f"ContactForces.dat, same pairs: {res['same_network']}")
    print(f"  reference: {res['ref_active']} contacts carry force, active set settled after "
          f"{res['ref_sweeps']} solves, equilibrium residual {res['ref_residual']:.1e}")
    print(f"  compatible forces: Newton {res['newton_iterations']} iterations, converged "
          f"{res['newton_converged']}, residual {res['newton_residual']:.1e}")
    print(f"  SOR forces ({'warm' if res['warm_start'] else 'no warm'} start) against the weights: "
          f"largest imbalance {res['sor_equilibrium']:.1e} m g")
    print(f"  floor load error   compatible {res['floor_err_compat']:.2e}   SOR "
          f"{res['floor_err_sor']:.3f}   (compatible against the reference for the solver's "
          f"load: {res['floor_err_compat_same']:.2e})")
    print(f"  all forces error   compatible {res['force_err_compat']:.2e}   SOR "
          f"{res['force_err_sor']:.3f}")
    print(f"  largest force / m g: reference {res['max_ref']:.4f}, compatible "
          f"{res['max_compat']:.4f} ({res['max_over_compat']:+.1e}), SOR {res['max_sor']:.4f} "
          f"({100 * res['max_over_sor']:+.1f} %)")
    with open(os.path.join(outdir, "pyramid.csv"), "w") as f:
        keys = sorted(res)
        f.write(",".join(keys) + "\n" + ",".join(str(res[k]) for k in keys) + "\n")
    plot(os.path.join(outdir, "pyramid.png"), res, floor, forces)
    if not args.check:
        return 0
    ok = True
    ok &= vlib.check(plate_dev <= PLATE_TOL,
                     f"plate: compatible reactions within {PLATE_TOL:g} of the closed form "
                     f"({plate_dev:.1e})")
    ok &= vlib.check(res["same_network"],
                     f"pyramid: grain's contacts are the reference network ({res['contacts']})")
    ok &= vlib.check(res["vmax"] < 1e-6, f"pyramid at rest (largest speed {res['vmax']:.1e} m/s)")
    ok &= vlib.check(res["floor_err_compat"] <= BOUND,
                     f"floor load: compatible error {res['floor_err_compat']:.2e} <= {BOUND:g}")
    ok &= vlib.check(res["force_err_compat"] <= BOUND,
                     f"all contacts: compatible error {res['force_err_compat']:.2e} <= {BOUND:g}")
    ok &= vlib.check(res["floor_err_sor"] >= SOR_FACTOR * max(res["floor_err_compat"], 1e-12),
                     f"floor load: SOR error {res['floor_err_sor']:.3f} >= {SOR_FACTOR:g} x the "
                     "compatible one")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
