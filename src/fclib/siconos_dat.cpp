// SPDX-License-Identifier: MIT
// Reader of Siconos' FrictionContactProblem text format (see fclib_io.hpp for the layout).
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/block_sparse_matrix.hpp>
#include <grain/fclib/fclib_io.hpp>

namespace grain::fclib {

namespace {

/// Whitespace-separated tokens with their line numbers.
class Tokens {
 public:
  explicit Tokens(const std::string& path) : path_(path) {
    std::ifstream in(path);
    if (!in) {
      throw Error(path + ": cannot open the file");
    }
    std::string line;
    std::size_t number = 0;
    while (std::getline(in, line)) {
      ++number;
      std::size_t pos = 0;
      while (pos < line.size()) {
        while (pos < line.size() && std::isspace(static_cast<unsigned char>(line[pos]))) {
          ++pos;
        }
        const std::size_t start = pos;
        while (pos < line.size() && !std::isspace(static_cast<unsigned char>(line[pos]))) {
          ++pos;
        }
        if (pos > start) {
          tokens_.push_back(line.substr(start, pos - start));
          lines_.push_back(number);
        }
      }
    }
  }

  long integer(const char* what) {
    const std::string& t = next(what);
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(t.c_str(), &end, 10);
    if (end != t.c_str() + t.size() || errno != 0) {
      fail(std::string("expected an integer (") + what + "), got '" + t + "'");
    }
    return v;
  }

  double real(const char* what) {
    const std::string& t = next(what);
    char* end = nullptr;
    const double v = std::strtod(t.c_str(), &end);
    if (end != t.c_str() + t.size()) {
      fail(std::string("expected a number (") + what + "), got '" + t + "'");
    }
    return v;
  }

  /// Fails unless at least `count` tokens are left (checked before anything of that size is
  /// allocated, so the file's own length bounds every allocation).
  void need(long count, const std::string& what) const {
    const std::size_t left = tokens_.size() - std::min(pos_, tokens_.size());
    if (count < 0 || static_cast<unsigned long>(count) > left) {
      fail("unexpected end of file: " + std::to_string(count) + " values of " + what +
           " expected, " + std::to_string(left) + " left");
    }
  }

  [[noreturn]] void fail(const std::string& what) const {
    const std::size_t k = pos_ == 0 ? 0 : pos_ - 1;
    const std::string where = k < lines_.size() ? ":" + std::to_string(lines_[k]) : "";
    throw Error(path_ + where + ": " + what + " (not a Siconos FrictionContactProblem file?)");
  }

 private:
  const std::string& next(const char* what) {
    if (pos_ >= tokens_.size()) {
      pos_ = tokens_.size() + 1;
      throw Error(path_ + ": unexpected end of file while reading " + what +
                  " (not a Siconos FrictionContactProblem file?)");
    }
    return tokens_[pos_++];
  }

  std::string path_;
  std::vector<std::string> tokens_;
  std::vector<std::size_t> lines_;
  std::size_t pos_ = 0;
};

}  // namespace

LocalProblem readSiconosDat(const std::string& path) {
  Tokens in(path);
  const long dim = in.integer("dimension");
  if (dim != 2 && dim != 3) {
    in.fail("dimension must be 2 or 3, got " + std::to_string(dim));
  }
  const long nc = in.integer("number of contacts");
  if (nc < 0 || nc > 100000000) {
    in.fail("invalid number of contacts " + std::to_string(nc));
  }
  const long storage = in.integer("matrix storage type");
  const long rows = in.integer("matrix rows");
  const long cols = in.integer("matrix columns");
  const long m = dim * nc;
  if (rows != m || cols != m) {
    in.fail("matrix is " + std::to_string(rows) + " x " + std::to_string(cols) + ", expected " +
            std::to_string(m) + " x " + std::to_string(m));
  }
  std::vector<Eigen::Triplet<Real>> t;
  if (storage == 0) {
    const long r2 = in.integer("dense rows");
    const long c2 = in.integer("dense columns");
    if (r2 != rows || c2 != cols) {
      in.fail("dense matrix header " + std::to_string(r2) + " x " + std::to_string(c2) +
              " does not match " + std::to_string(rows) + " x " + std::to_string(cols));
    }
    in.need(rows * cols + m + nc, "the dense matrix, q and mu");
    for (long j = 0; j < cols; ++j) {
      for (long i = 0; i < rows; ++i) {
        const double v = in.real("dense matrix entry");
        if (v != 0.0) {
          t.emplace_back(i, j, v);
        }
      }
    }
  } else if (storage == 1) {
    const long blocks = in.integer("number of blocks");
    const long blockRows = in.integer("number of block rows");
    const long blockCols = in.integer("number of block columns");
    if (blocks < 0 || blockRows <= 0 || blockCols <= 0 || blockRows > m || blockCols > m) {
      in.fail("invalid sparse block header");
    }
    in.need(blockRows + blockCols, "the cumulative block sizes");
    // Cumulative sizes: increasing, the last one the matrix size (a block outside the matrix
    // would be written past its end).
    auto readEnds = [&](long count, long size, const char* what) {
      std::vector<long> ends(static_cast<std::size_t>(count));
      long previous = 0;
      for (auto& v : ends) {
        v = in.integer(what);
        if (v <= previous || v > size) {
          in.fail(std::string(what) + " " + std::to_string(v) + " after " +
                  std::to_string(previous) + ": must increase up to " + std::to_string(size));
        }
        previous = v;
      }
      return ends;
    };
    const std::vector<long> rowEnd = readEnds(blockRows, rows, "cumulative block row size");
    const std::vector<long> colEnd = readEnds(blockCols, cols, "cumulative block column size");
    if (rowEnd.back() != rows || colEnd.back() != cols) {
      in.fail("block sizes do not add up to the matrix size");
    }
    const long filled1 = in.integer("size of the block-row index");
    const long filled2 = in.integer("size of the block-column index");
    if (filled1 != blockRows + 1 || filled2 != blocks) {
      in.fail("index sizes " + std::to_string(filled1) + ", " + std::to_string(filled2) +
              " do not match " + std::to_string(blockRows + 1) + ", " + std::to_string(blocks));
    }
    in.need(filled1, "the block-row starts");
    in.need(filled2, "the block columns");
    std::vector<long> rowStart(static_cast<std::size_t>(filled1));
    std::vector<long> blockCol(static_cast<std::size_t>(filled2));
    for (auto& v : rowStart) {
      v = in.integer("block-row start");
    }
    for (auto& v : blockCol) {
      v = in.integer("block column");
    }
    long k = 0;
    for (long br = 0; br < blockRows; ++br) {
      const long b = rowStart[static_cast<std::size_t>(br)];
      const long e = rowStart[static_cast<std::size_t>(br) + 1];
      if (b != k || e < b || e > blocks) {
        in.fail("block-row starts are inconsistent");
      }
      const long r0 = br == 0 ? 0 : rowEnd[static_cast<std::size_t>(br) - 1];
      const long nr = rowEnd[static_cast<std::size_t>(br)] - r0;
      for (; k < e; ++k) {
        const long bc = blockCol[static_cast<std::size_t>(k)];
        if (bc < 0 || bc >= blockCols) {
          in.fail("block column " + std::to_string(bc) + " out of range");
        }
        in.integer("block number");
        const long c0 = bc == 0 ? 0 : colEnd[static_cast<std::size_t>(bc) - 1];
        const long ncols = colEnd[static_cast<std::size_t>(bc)] - c0;
        if (nr <= 0 || ncols <= 0) {
          in.fail("empty block");
        }
        for (long j = 0; j < ncols; ++j) {
          for (long i = 0; i < nr; ++i) {
            const double v = in.real("block entry");
            if (v != 0.0) {
              t.emplace_back(r0 + i, c0 + j, v);
            }
          }
        }
      }
    }
  } else {
    in.fail("matrix storage type " + std::to_string(storage) +
            " is not supported (0 dense, 1 sparse block)");
  }
  in.need(m + nc, "q and mu");
  VecX q(m);
  for (long i = 0; i < m; ++i) {
    q[i] = in.real("q");
  }
  VecX mu(nc);
  for (long i = 0; i < nc; ++i) {
    mu[i] = in.real("mu");
  }
  SparseMat w(m, m);
  w.setFromTriplets(t.begin(), t.end());

  LocalProblem p;
  if (dim == 2) {
    p = embedPlanarProblem(w, q, mu);
  } else {
    p.W = std::move(w);
    p.q = std::move(q);
    p.mu = std::move(mu);
  }
  p.title = "Siconos FrictionContactProblem";
  try {
    validate(p);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
  return p;
}

void writeSiconosDat(const std::string& path, const LocalProblem& problem) {
  validate(problem);
  const BlockSparseMatrix3 w(problem.W);
  const std::size_t n = problem.contactCount();
  const int d = problem.spaceDim;
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    throw Error(path + ": cannot create the file");
  }
  std::fprintf(f, "%d\n%zu\n1\n%zu\n%zu\n%zu\n%zu\n%zu\n", d, n, d * n, d * n, w.blockCount(), n,
               n);
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t i = 0; i < n; ++i) {
      std::fprintf(f, "%zu\t", d * (i + 1));
    }
    std::fprintf(f, "\n");
  }
  std::fprintf(f, "%zu\n%zu\n", n + 1, w.blockCount());
  for (std::uint32_t s : w.rowStart()) {
    std::fprintf(f, "%u\t", s);
  }
  std::fprintf(f, "\n");
  for (std::uint32_t c : w.columns()) {
    std::fprintf(f, "%u\t", c);
  }
  std::fprintf(f, "\n");
  for (std::size_t k = 0; k < w.blockCount(); ++k) {
    std::fprintf(f, "%zu\n", k);
    const Mat3& b = w.blocks()[k];
    for (int j = 0; j < d; ++j) {
      for (int i = 0; i < d; ++i) {
        std::fprintf(f, "%.17g\n", b(i, j));
      }
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    for (int k = 0; k < d; ++k) {
      std::fprintf(f, "%.17g ",
                   problem.q[static_cast<Eigen::Index>(3 * i + static_cast<std::size_t>(k))]);
    }
  }
  std::fprintf(f, "\n");
  for (std::size_t i = 0; i < n; ++i) {
    std::fprintf(f, "%.17g ", problem.mu[static_cast<Eigen::Index>(i)]);
  }
  std::fprintf(f, "\n");
  if (std::fclose(f) != 0) {
    throw Error(path + ": cannot write the file");
  }
}

}  // namespace grain::fclib
