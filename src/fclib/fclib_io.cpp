// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <Eigen/SparseCholesky>

#include <grain/core/common/error.hpp>
#include <grain/fclib/fclib_io.hpp>

#include "hdf5_file.hpp"

namespace grain::fclib {

namespace {

/// Reads an FCLIB matrix group (see readLocal for the layout) that must be rows x cols, the
/// size the problem's vectors give (`why`); checked before the matrix is allocated, as m and n
/// are plain numbers in the file.
SparseMat readMatrix(const h5::File& f, const std::string& group, Eigen::Index rows,
                     Eigen::Index cols, const std::string& why) {
  if (!f.exists(group)) {
    f.fail(group, "missing");
  }
  const int m = f.readInt(group + "/m");
  const int n = f.readInt(group + "/n");
  const int nz = f.readInt(group + "/nz");
  if (m < 0 || n < 0) {
    f.fail(group, "negative size");
  }
  if (m != rows || n != cols) {
    f.fail(group, "is " + std::to_string(m) + " x " + std::to_string(n) + ", expected " +
                      std::to_string(rows) + " x " + std::to_string(cols) + " (" + why + ")");
  }
  const std::vector<int> p = f.readInts(group + "/p");
  const std::vector<int> idx = f.readInts(group + "/i");
  const std::vector<double> x = f.readDoubles(group + "/x");
  std::vector<Eigen::Triplet<Real>> t;
  auto add = [&](long row, long col, double v) {
    if (row < 0 || row >= m || col < 0 || col >= n) {
      f.fail(group, "entry (" + std::to_string(row) + ", " + std::to_string(col) +
                        ") outside the " + std::to_string(m) + " x " + std::to_string(n) +
                        " matrix");
    }
    t.emplace_back(static_cast<Eigen::Index>(row), static_cast<Eigen::Index>(col), v);
  };
  if (nz >= 0) {  // triplet: rows in i, columns in p
    const auto count = static_cast<std::size_t>(nz);
    if (p.size() < count || idx.size() < count || x.size() < count) {
      f.fail(group, "triplet arrays shorter than nz = " + std::to_string(nz));
    }
    t.reserve(count);
    for (std::size_t k = 0; k < count; ++k) {
      add(idx[k], p[k], x[k]);
    }
  } else if (nz == -1 || nz == -2) {  // compressed columns / rows
    const int outer = nz == -1 ? n : m;
    if (p.size() < static_cast<std::size_t>(outer) + 1) {
      f.fail(group,
             "pointer array p needs " + std::to_string(static_cast<long>(outer) + 1) + " entries");
    }
    const auto count = static_cast<std::size_t>(p[static_cast<std::size_t>(outer)]);
    if (p[0] != 0 || idx.size() < count || x.size() < count) {
      f.fail(group, "inconsistent compressed arrays");
    }
    t.reserve(count);
    for (int o = 0; o < outer; ++o) {
      const int b = p[static_cast<std::size_t>(o)];
      const int e = p[static_cast<std::size_t>(o) + 1];
      if (e < b || static_cast<std::size_t>(e) > count) {
        f.fail(group, "pointer array p is not increasing");
      }
      for (int k = b; k < e; ++k) {
        const auto ku = static_cast<std::size_t>(k);
        if (nz == -1) {
          add(idx[ku], o, x[ku]);
        } else {
          add(o, idx[ku], x[ku]);
        }
      }
    }
  } else {
    f.fail(group, "unknown storage nz = " + std::to_string(nz));
  }
  SparseMat a(m, n);
  a.setFromTriplets(t.begin(), t.end());
  return a;
}

VecX toVec(const std::vector<double>& v) {
  return Eigen::Map<const VecX>(v.data(), static_cast<Eigen::Index>(v.size()));
}

int readSpaceDim(const h5::File& f, const std::string& group) {
  const int d = f.readInt(group + "/spacedim");
  if (d != 2 && d != 3) {
    f.fail(group + "/spacedim", "must be 2 or 3, got " + std::to_string(d));
  }
  return d;
}

/// Builds the 3-D local problem from (W, q, mu) in `dim` dimensions.
LocalProblem makeLocal(SparseMat w, VecX q, VecX mu, int dim, const std::string& where) {
  const Eigen::Index n = mu.size();
  if (w.rows() != dim * n || w.cols() != dim * n || q.size() != dim * n) {
    throw Error(where + ": sizes do not match: W is " + std::to_string(w.rows()) + " x " +
                std::to_string(w.cols()) + ", q has " + std::to_string(q.size()) + " entries, mu " +
                std::to_string(n) + " (space dimension " + std::to_string(dim) + ")");
  }
  if (dim == 2) {
    return embedPlanarProblem(w, q, mu);
  }
  LocalProblem p;
  p.W = std::move(w);
  p.q = std::move(q);
  p.mu = std::move(mu);
  return p;
}

void checkValid(LocalProblem& p, const std::string& path) {
  try {
    validate(p);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

}  // namespace

FileKind detectKind(const std::string& path) {
  std::FILE* fp = std::fopen(path.c_str(), "rb");
  if (fp == nullptr) {
    throw Error(path + ": cannot open the file");
  }
  unsigned char magic[8] = {};
  const std::size_t got = std::fread(magic, 1, sizeof(magic), fp);
  std::fclose(fp);
  const unsigned char hdf5[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  if (got == 8 && std::equal(magic, magic + 8, hdf5)) {
    const h5::File f = h5::File::openRead(path);
    if (f.exists("/fclib_local")) {
      return FileKind::FclibLocal;
    }
    if (f.exists("/fclib_global")) {
      return FileKind::FclibGlobal;
    }
    throw Error(path + ": HDF5 file without /fclib_local or /fclib_global (not an FCLIB problem)");
  }
  return FileKind::SiconosDat;
}

LocalProblem readLocal(const std::string& path) {
  const h5::File f = h5::File::openRead(path);
  const std::string g = "/fclib_local";
  if (!f.exists(g)) {
    throw Error(path + ": no /fclib_local group (not an FCLIB local problem)");
  }
  if (f.exists(g + "/V") || f.exists(g + "/R")) {
    throw Error(path + ": mixed local problems (/fclib_local/V, R) are not supported");
  }
  const int dim = readSpaceDim(f, g);
  VecX q = toVec(f.readDoubles(g + "/vectors/q"));
  VecX mu = toVec(f.readDoubles(g + "/vectors/mu"));
  const Eigen::Index m = dim * mu.size();
  SparseMat w = readMatrix(f, g + "/W", m, m,
                           "space dimension " + std::to_string(dim) + " times " +
                               std::to_string(mu.size()) + " contacts, the size of mu");
  LocalProblem p = makeLocal(std::move(w), std::move(q), std::move(mu), dim, path);
  p.title = f.readStringOr(g + "/info/title", "");
  p.description = f.readStringOr(g + "/info/description", "");
  checkValid(p, path);
  return p;
}

GlobalProblem readGlobal(const std::string& path) {
  const h5::File f = h5::File::openRead(path);
  const std::string g = "/fclib_global";
  if (!f.exists(g)) {
    throw Error(path + ": no /fclib_global group (not an FCLIB global problem)");
  }
  if (f.exists(g + "/G")) {
    throw Error(path +
                ": global problems with equality constraints (/fclib_global/G) are not "
                "supported");
  }
  GlobalProblem p;
  p.spaceDim = readSpaceDim(f, g);
  p.f = toVec(f.readDoubles(g + "/vectors/f"));
  p.w = toVec(f.readDoubles(g + "/vectors/w"));
  p.mu = toVec(f.readDoubles(g + "/vectors/mu"));
  const std::string sizes = "the sizes of f (" + std::to_string(p.f.size()) + ") and w (" +
                            std::to_string(p.w.size()) + ")";
  p.M = readMatrix(f, g + "/M", p.f.size(), p.f.size(), sizes);
  p.H = readMatrix(f, g + "/H", p.f.size(), p.w.size(), sizes);
  p.title = f.readStringOr(g + "/info/title", "");
  p.description = f.readStringOr(g + "/info/description", "");
  const Eigen::Index n = p.M.rows();
  const Eigen::Index m = p.H.cols();
  if (p.M.cols() != n || p.H.rows() != n || p.f.size() != n || p.w.size() != m ||
      m != p.spaceDim * p.mu.size()) {
    throw Error(path + ": sizes do not match: M " + std::to_string(n) + " x " +
                std::to_string(p.M.cols()) + ", H " + std::to_string(p.H.rows()) + " x " +
                std::to_string(m) + ", f " + std::to_string(p.f.size()) + ", w " +
                std::to_string(p.w.size()) + ", mu " + std::to_string(p.mu.size()));
  }
  return p;
}

LocalProblem condense(const GlobalProblem& g) {
  // Diagonal M (rigid bodies in principal axes, lumped masses): scale directly.
  bool diagonal = true;
  for (int k = 0; k < g.M.outerSize() && diagonal; ++k) {
    for (SparseMat::InnerIterator it(g.M, k); it; ++it) {
      if (it.row() != it.col() && it.value() != 0.0) {
        diagonal = false;
        break;
      }
    }
  }
  SparseMat w;
  VecX q;
  if (diagonal) {
    const VecX d = g.M.diagonal();
    if (!(d.minCoeff() > 0.0)) {
      throw Error("global problem: M is not positive definite (non-positive diagonal entry)");
    }
    const VecX dInv = d.cwiseInverse();
    const SparseMat scaled = dInv.asDiagonal() * g.H;
    w = SparseMat(g.H.transpose()) * scaled;
    q = g.H.transpose() * dInv.cwiseProduct(g.f) + g.w;
  } else {
    const Eigen::SimplicialLLT<SparseMat> llt(g.M);
    if (llt.info() != Eigen::Success) {
      throw Error("global problem: M is not positive definite (Cholesky factorisation failed)");
    }
    SparseMat ph = llt.permutationP() * g.H;
    const SparseMat l = llt.matrixL();
    l.triangularView<Eigen::Lower>().solveInPlace(ph);
    w = SparseMat(ph.transpose()) * ph;
    q = g.H.transpose() * llt.solve(g.f) + g.w;
  }
  w.prune(0.0);
  LocalProblem p = makeLocal(std::move(w), std::move(q), g.mu, g.spaceDim, "global problem");
  p.title = g.title;
  p.description = g.description;
  return p;
}

LocalProblem readProblem(const std::string& path) {
  switch (detectKind(path)) {
    case FileKind::FclibLocal:
      return readLocal(path);
    case FileKind::FclibGlobal: {
      LocalProblem p;
      try {
        p = condense(readGlobal(path));
      } catch (const Error& e) {
        const std::string what = e.what();
        if (what.rfind(path, 0) == 0) {
          throw;
        }
        throw Error(path + ": " + what);
      }
      checkValid(p, path);
      return p;
    }
    case FileKind::SiconosDat:
      return readSiconosDat(path);
  }
  throw Error(path + ": unknown file kind");
}

void writeSolution(const std::string& path, const LocalProblem& problem, const VecX& r,
                   const VecX& u) {
  validate(problem);
  const Eigen::Index m3 = problem.q.size();
  if (r.size() != m3 || u.size() != m3) {
    throw Error(path + ": solution vectors must have " + std::to_string(m3) + " entries");
  }
  const bool planar = problem.spaceDim == 2;
  const Eigen::Index n = static_cast<Eigen::Index>(problem.contactCount());
  const Eigen::Index m = planar ? 2 * n : m3;

  // W (planar: without the embedded t2 rows and columns) in compressed rows.
  auto keep = [planar](Eigen::Index k) { return !planar || k % 3 != 2; };
  auto reduced = [planar](Eigen::Index k) { return planar ? 2 * (k / 3) + k % 3 : k; };
  const Eigen::SparseMatrix<Real, Eigen::RowMajor> rows(problem.W);
  std::vector<int> ptr(1, 0);
  std::vector<int> col;
  std::vector<double> val;
  for (Eigen::Index i = 0; i < rows.outerSize(); ++i) {
    if (!keep(i)) {
      continue;
    }
    for (decltype(rows)::InnerIterator it(rows, i); it; ++it) {
      if (keep(it.col())) {
        col.push_back(static_cast<int>(reduced(it.col())));
        val.push_back(it.value());
      }
    }
    ptr.push_back(static_cast<int>(col.size()));
  }
  const VecX q = planar ? planarPart(problem.q) : problem.q;
  const VecX rr = planar ? planarPart(r) : r;
  const VecX uu = planar ? planarPart(u) : u;

  h5::File f = h5::File::create(path);
  const int dims[4] = {static_cast<int>(m), static_cast<int>(m), -2, static_cast<int>(val.size())};
  const std::string g = "/fclib_local";
  f.writeInts(g + "/W/m", &dims[0], 1);
  f.writeInts(g + "/W/n", &dims[1], 1);
  f.writeInts(g + "/W/nz", &dims[2], 1);
  f.writeInts(g + "/W/nzmax", &dims[3], 1);
  f.writeInts(g + "/W/p", ptr.data(), ptr.size());
  f.writeInts(g + "/W/i", col.data(), col.size());
  f.writeDoubles(g + "/W/x", val.data(), val.size());
  f.writeDoubles(g + "/vectors/q", q.data(), static_cast<std::size_t>(q.size()));
  f.writeDoubles(g + "/vectors/mu", problem.mu.data(), static_cast<std::size_t>(n));
  const int dim = problem.spaceDim;
  f.writeInts(g + "/spacedim", &dim, 1);
  f.writeString(g + "/info/title", problem.title);
  f.writeString(g + "/info/description", problem.description);
  f.writeString(g + "/info/math_info", "");
  f.writeDoubles("/solution/r", rr.data(), static_cast<std::size_t>(rr.size()));
  f.writeDoubles("/solution/u", uu.data(), static_cast<std::size_t>(uu.size()));
}

Solution readSolution(const std::string& path, const LocalProblem& problem, bool guess) {
  const h5::File f = h5::File::openRead(path);
  const std::string g = guess ? "/guesses/1" : "/solution";
  VecX r = toVec(f.readDoubles(g + "/r"));
  VecX u = toVec(f.readDoubles(g + "/u"));
  const Eigen::Index n = static_cast<Eigen::Index>(problem.contactCount());
  const Eigen::Index m = problem.spaceDim * n;
  if (r.size() != m || u.size() != m) {
    throw Error(path + ": " + g + ": r and u must have " + std::to_string(m) + " entries");
  }
  if (problem.spaceDim == 2) {
    VecX r3 = VecX::Zero(3 * n);
    VecX u3 = VecX::Zero(3 * n);
    for (Eigen::Index c = 0; c < n; ++c) {
      r3.segment<2>(3 * c) = r.segment<2>(2 * c);
      u3.segment<2>(3 * c) = u.segment<2>(2 * c);
    }
    return {r3, u3};
  }
  return {r, u};
}

}  // namespace grain::fclib
