#!/usr/bin/python3
"""Preconditioners for the matrix-free IPM's Newton systems, compared on one FCLIB global problem.

usage: bench/ipm_preconditioner.py PROBLEM.hdf5 SOLUTION.hdf5

PROBLEM is an FCLIB global problem (M, H, w, mu); SOLUTION holds /solution/r, e.g. written by
`grain-fclib solve PROBLEM --solver sor --tol 1e-10 --out SOLUTION`. The contacts' states in that
solution (separating: r_N = 0; sticking: |r_T| < 0.99 mu r_N; else sliding) give each contact a
block D_i like the interior point method's G_i^-2 late in its iterations: 1e4 w (w the mean
diagonal entry of W = H^T M^-1 H) along the directions the contact leaves open (every direction of
a separating contact, the slip direction of a sliding one) and 1e-8 w along the closed ones. For
A = W + D and a random right-hand side, it prints the iterations of preconditioned conjugate
gradients to a relative residual of 1e-6 and 1e-10 with
  - block-Jacobi, (W_ii + D_i)^-1 per contact (the matrix-free IPM's preconditioner);
  - additive Schwarz with one overlapping block per body, the contacts touching it;
  - the body-space form by Woodbury, dx = D^-1 (rhs - H^T y), (M + H D^-1 H^T) y = H D^-1 rhs,
    CG on y with a 6 x 6 block-Jacobi per body; printed with the residual of dx in A.
Dense linear algebra (numpy, h5py: Debian's python3-numpy, python3-h5py): problems of a few
hundred contacts.
"""
import sys

import h5py
import numpy as np


def read_matrix(group):
    """A dense matrix from an FCLIB sparse matrix group (triplets if nz >= 0, else CSC)."""
    rows, cols, nz = int(group["m"][0]), int(group["n"][0]), int(group["nz"][0])
    out = np.zeros((rows, cols))
    i, p, x = group["i"][:], group["p"][:], group["x"][:]
    if nz >= 0:
        for a, b, v in zip(i, p, x):
            out[a, b] += v
    else:
        for col in range(cols):
            for k in range(p[col], p[col + 1]):
                out[i[k], col] += x[k]
    return out


def pcg(apply, precondition, b, tol, max_iter):
    """Preconditioned CG from 0; returns (x, iterations) at |b - A x| <= tol |b| or max_iter."""
    x = np.zeros_like(b)
    r = b.copy()
    z = precondition(r)
    p = z.copy()
    rz = r @ z
    norm_b = np.linalg.norm(b)
    for k in range(max_iter):
        if np.linalg.norm(r) <= tol * norm_b:
            return x, k
        ap = apply(p)
        alpha = rz / (p @ ap)
        x += alpha * p
        r -= alpha * ap
        z = precondition(r)
        rz_next = r @ z
        p = z + (rz_next / rz) * p
        rz = rz_next
    return x, max_iter


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    problem = h5py.File(sys.argv[1], "r")["fclib_global"]
    mass = read_matrix(problem["M"])
    h = read_matrix(problem["H"])
    if h.shape[0] != mass.shape[0]:
        h = h.T
    n, m = h.shape
    bodies, contacts = n // 6, m // 3
    w = h.T @ np.linalg.solve(mass, h)
    r = h5py.File(sys.argv[2], "r")["solution/r"][:]
    mu = problem["vectors"]["mu"][:]
    w_mean = np.mean(np.diag(w))
    open_, closed = 1e4 * w_mean, 1e-8 * w_mean
    d = np.zeros((m, m))
    states = {"separating": 0, "sticking": 0, "sliding": 0}
    scale = np.abs(r).max()
    for c in range(contacts):
        rn, rt = r[3 * c], np.linalg.norm(r[3 * c + 1:3 * c + 3])
        if rn <= 1e-12 * scale:
            block = open_ * np.eye(3)
            states["separating"] += 1
        elif rt < 0.99 * mu[c] * rn:
            block = closed * np.eye(3)
            states["sticking"] += 1
        else:
            t = r[3 * c + 1:3 * c + 3] / rt
            q = np.eye(3)
            q[1:, 1] = t
            q[1:, 2] = [-t[1], t[0]]
            block = q @ np.diag([closed, open_, closed]) @ q.T
            states["sliding"] += 1
        d[3 * c:3 * c + 3, 3 * c:3 * c + 3] = block
    a = w + d
    print("bodies %d  contacts %d  rank W %d of %d  %s" % (
        bodies, contacts, np.linalg.matrix_rank(w), m,
        "  ".join("%s %d" % kv for kv in states.items())))
    print("cond A %.2e" % np.linalg.cond(a))
    rhs = np.random.default_rng(1).standard_normal(m)

    def residual(x):
        return np.linalg.norm(a @ x - rhs) / np.linalg.norm(rhs)

    jacobi = [np.linalg.inv(a[3 * c:3 * c + 3, 3 * c:3 * c + 3]) for c in range(contacts)]

    def block_jacobi(v):
        return np.concatenate([jacobi[c] @ v[3 * c:3 * c + 3] for c in range(contacts)])

    touching = [[c for c in range(contacts) if np.any(h[6 * b:6 * b + 6, 3 * c:3 * c + 3])]
                for b in range(bodies)]
    index = [np.array([3 * c + k for c in cs for k in range(3)], dtype=int) for cs in touching]
    schwarz = [np.linalg.inv(a[np.ix_(ix, ix)]) if len(ix) else None for ix in index]

    def additive_schwarz(v):
        out = np.zeros_like(v)
        for ix, inverse in zip(index, schwarz):
            if inverse is not None:
                out[ix] += inverse @ v[ix]
        return out

    print("contacts per body block: mean %.1f, most %d" % (
        np.mean([len(cs) for cs in touching]), max(len(cs) for cs in touching)))
    for name, precondition in (("block-Jacobi", block_jacobi),
                               ("additive Schwarz per body", additive_schwarz)):
        for tol in (1e-6, 1e-10):
            x, k = pcg(lambda v: a @ v, precondition, rhs, tol, 5000)
            print("contact space, %s: tol %g  %d iterations  residual %.1e" % (
                name, tol, k, residual(x)))
    d_inv = np.linalg.inv(d)
    k_body = mass + h @ d_inv @ h.T
    body_blocks = [np.linalg.inv(k_body[6 * b:6 * b + 6, 6 * b:6 * b + 6]) for b in range(bodies)]

    def body_jacobi(v):
        return np.concatenate([body_blocks[b] @ v[6 * b:6 * b + 6] for b in range(bodies)])

    print("body space: cond (M + H D^-1 H^T) %.2e" % np.linalg.cond(k_body))
    for tol in (1e-6, 1e-8, 1e-10):
        y, k = pcg(lambda v: k_body @ v, body_jacobi, h @ (d_inv @ rhs), tol, 5000)
        dx = d_inv @ (rhs - h.T @ y)
        print("body space, block-Jacobi: tol %g  %d iterations  residual of dx in A %.1e" % (
            tol, k, residual(dx)))


if __name__ == "__main__":
    main()
