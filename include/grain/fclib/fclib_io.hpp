// SPDX-License-Identifier: MIT
#pragma once

#include <string>

#include <grain/core/solvers/local_problem.hpp>

/// Reading and writing frictional contact problems: FCLIB HDF5 files (Acary, Bremond,
/// Koziara, Perignon, INRIA RT-0444, 2014) and Siconos' FC3D text format. Every reader returns
/// a grain::LocalProblem (3-D; planar problems embedded, see LocalProblem) and throws
/// grain::Error with the file name in the message if the file is missing, of another kind or
/// malformed.
namespace grain::fclib {

/// FCLIB global problem without equality constraints:
///   M v = H r + f,   u = H^T v + w,   K*_mu contains u + mu ||u_T|| e_N _|_ r in K_mu.
/// M is n x n symmetric positive definite, H is n x m (m = spaceDim * contacts).
struct GlobalProblem {
  SparseMat M;
  SparseMat H;
  VecX f;   ///< n
  VecX w;   ///< m
  VecX mu;  ///< contacts
  int spaceDim = 3;
  std::string title;
  std::string description;
};

/// Kind of a problem file.
enum class FileKind { FclibLocal, FclibGlobal, SiconosDat };

/// Detects the kind from the content: an HDF5 file with /fclib_local or /fclib_global, else
/// Siconos text. Throws if the file is missing or an HDF5 file without either group.
FileKind detectKind(const std::string& path);

/// Reads /fclib_local: W (/fclib_local/W/{m,n,nz,nzmax,p,i,x}: triplet if nz >= 0 with row
/// indices in i and column indices in p, compressed columns if nz = -1, compressed rows if
/// nz = -2), /fclib_local/vectors/{q,mu}, /fclib_local/spacedim and the optional info strings.
LocalProblem readLocal(const std::string& path);

/// Reads /fclib_global (M, H, vectors f, w, mu, spacedim). A problem with equality
/// constraints (/fclib_global/G) is rejected.
GlobalProblem readGlobal(const std::string& path);

/// Condenses a global problem to local form by eliminating v = M^-1 (H r + f):
///   W = H^T M^-1 H,   q = H^T M^-1 f + w
/// (FCLIB's sign convention, checked on Box_Stacks-i0122-82-5.hdf5: its stored solution velocity
/// satisfies u = W r + q to 1e-15). M^-1 H is formed from a sparse Cholesky factorisation
/// M = P^T L L^T P, W = (L^-1 P H)^T (L^-1 P H); throws grain::Error if M is not positive
/// definite.
LocalProblem condense(const GlobalProblem& global);

/// Reads Siconos' FrictionContactProblem text format (frictionContact_printInFile):
///   dimension (2 or 3), number of contacts nc,
///   the matrix: storage type (0 dense, 1 sparse block), rows, columns, then
///     dense:   rows, columns again and rows * columns values in column-major order;
///     sparse block: number of blocks, block rows R, block columns C, the R cumulative row
///       sizes, the C cumulative column sizes, the sizes of the two index arrays, the block-row
///       starts (R + 1), the block column of each block, then per block its number and its
///       values (column-major),
///   q (rows values), mu (nc values); anything after mu is ignored.
/// Column-major order is what makes W of the test files symmetric positive semi-definite
/// (row-major reading gives indefinite matrices on e.g. BoxesStack1-i100000-32.hdf5.dat).
LocalProblem readSiconosDat(const std::string& path);

/// Writes `problem` in Siconos' text format with sparse-block storage (the layout readSiconosDat
/// reads; planar problems are written back in 2-D), e.g. to run Siconos' solvers on FCLIB HDF5
/// problems.
void writeSiconosDat(const std::string& path, const LocalProblem& problem);

/// Reads any of the three kinds as a local problem (global problems condensed).
LocalProblem readProblem(const std::string& path);

/// Writes `problem` as /fclib_local (W in compressed rows) and the solution as /solution/r and
/// /solution/u into a new HDF5 file (FCLIB's solution layout, readable with
/// fclib_read_local / fclib_read_solution). Planar problems are written back in 2-D.
void writeSolution(const std::string& path, const LocalProblem& problem, const VecX& r,
                   const VecX& u);

/// A solution or guess (r, u) stored in an FCLIB file, in the 3-D layout of `problem`
/// (embedded if the problem is planar).
struct Solution {
  VecX r;
  VecX u;
};

/// Reads /solution/{r,u} (or /guesses/1/{r,u} if `guess`) of an FCLIB file for `problem`.
Solution readSolution(const std::string& path, const LocalProblem& problem, bool guess = false);

}  // namespace grain::fclib
