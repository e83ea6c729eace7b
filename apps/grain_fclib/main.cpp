// SPDX-License-Identifier: MIT
// grain-fclib: solves FCLIB / Siconos frictional contact problems with grain's local solvers.
//
//   grain-fclib solve FILE [--solver sor|jor|apgd|pqn|ipm|nsn|prox] [--tol T] [--max-iter N]
//                          [--out SOL.h5] [--measure natural-map|koziara|relaxed]
//                          [--pqn-direct] [--pqn-warm E] [--pqn-delta D] [--pqn-unscaled]
//                          [--pqn-omega-continuation THETA]
//                          [--apgd-relaxed] [--ipm-max-iter N] [--ipm-polish N] [--ipm-apgd N]
//                          [--nsn-* ...] [--prox-* ...] [--repeat N] [--repeat-stat min|mean]
//                          [--ucf ac|ds] [--alpha A]
//                          [--r-strategy max|sum] [--check adaptive|every] [--check-period K]
//                          [--guess] [--csv]
//   grain-fclib info FILE
//   grain-fclib convert FILE OUT.dat       (Siconos text format, sparse blocks)
//   grain-fclib evaluate FILE R.txt        (errors of the percussions r read from a text file)
#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/block_sparse_matrix.hpp>
#include <grain/core/solvers/local_solver.hpp>
#include <grain/fclib/fclib_io.hpp>
#include <grain/io/version.hpp>

namespace po = boost::program_options;

namespace {

const char* kUsage =
    "usage: grain-fclib solve FILE [options]   solve a frictional contact problem\n"
    "       grain-fclib info FILE              print the problem's size and properties\n"
    "       grain-fclib convert FILE OUT.dat   write the problem in Siconos' text format\n"
    "       grain-fclib evaluate FILE R.txt    error measures of r (whitespace-separated):\n"
    "                                          natural map, koziara, |e|/|q|, relaxed\n"
    "FILE is an FCLIB HDF5 file (local or global problem) or a Siconos .dat file.\n";

const char* kindName(grain::fclib::FileKind k) {
  switch (k) {
    case grain::fclib::FileKind::FclibLocal:
      return "FCLIB local";
    case grain::fclib::FileKind::FclibGlobal:
      return "FCLIB global, condensed";
    case grain::fclib::FileKind::SiconosDat:
      return "Siconos text";
  }
  return "?";
}

void printProblem(const std::string& file, const grain::LocalProblem& p) {
  const grain::BlockSparseMatrix3 blocks(p.W);
  std::printf("file        %s (%s)\n", file.c_str(), kindName(grain::fclib::detectKind(file)));
  if (!p.title.empty()) {
    std::printf("title       %s\n", p.title.c_str());
  }
  std::printf("contacts    %zu (%d-D), W %ld x %ld, %ld non-zeros, %zu blocks\n", p.contactCount(),
              p.spaceDim, static_cast<long>(p.W.rows()), static_cast<long>(p.W.cols()),
              static_cast<long>(p.W.nonZeros()), blocks.blockCount());
  if (p.contactCount() > 0) {
    std::printf("mu          %g .. %g\n", p.mu.minCoeff(), p.mu.maxCoeff());
  }
}

int info(const std::string& file) {
  const grain::LocalProblem p = grain::fclib::readProblem(file);
  printProblem(file, p);
  const grain::SparseMat t = p.W.transpose();
  const double asym = (p.W - t).norm();
  std::printf("|W - W^T|   %.3e (|W| = %.3e)\n", asym, p.W.norm());
  std::printf("|q|         %.6e\n", p.q.norm());
  return 0;
}

int convert(const std::string& file, const std::string& out) {
  grain::fclib::writeSiconosDat(out, grain::fclib::readProblem(file));
  return 0;
}

int evaluate(const std::string& file, const std::string& rFile) {
  const grain::LocalProblem p = grain::fclib::readProblem(file);
  std::ifstream in(rFile);
  if (!in) {
    throw grain::Error(rFile + ": cannot open the file");
  }
  std::vector<double> values;
  double v = 0.0;
  while (in >> v) {
    values.push_back(v);
  }
  const auto n = static_cast<Eigen::Index>(p.contactCount());
  const Eigen::Index d = p.spaceDim;
  if (static_cast<Eigen::Index>(values.size()) < d * n) {
    throw grain::Error(rFile + ": needs " + std::to_string(d * n) + " values, has " +
                       std::to_string(values.size()));
  }
  grain::VecX r = grain::VecX::Zero(3 * n);
  for (Eigen::Index c = 0; c < n; ++c) {
    for (Eigen::Index k = 0; k < d; ++k) {
      r[3 * c + k] = values[static_cast<std::size_t>(d * c + k)];
    }
  }
  const grain::VecX u = grain::localVelocity(p, r);
  const grain::LocalErrorEvaluator ev(p);
  std::printf("%.6e %.6e %.6e %.6e\n", ev.naturalMap(r, u), ev.koziara(r, u),
              ev.naturalMapOverQ(r, u), ev.relaxed(r, u));
  return 0;
}

int solveCommand(const std::string& file, const po::variables_map& vm) {
  grain::LocalSolverSettings s;
  const std::string solverName = vm["solver"].as<std::string>();
  const auto method = grain::localSolverMethodFromString(solverName);
  if (!method) {
    throw grain::Error("unknown solver '" + solverName + "' (sor, jor, apgd, pqn, ipm, nsn, prox)");
  }
  s.method = *method;
  s.tolerance = vm["tol"].as<double>();
  s.maxIter = vm["max-iter"].as<unsigned>();
  const std::string measure = vm["measure"].as<std::string>();
  if (measure == "natural-map") {
    s.errorMeasure = grain::LocalErrorMeasure::NaturalMap;
  } else if (measure == "koziara") {
    s.errorMeasure = grain::LocalErrorMeasure::Koziara;
  } else if (measure == "relaxed") {
    s.errorMeasure = grain::LocalErrorMeasure::Relaxed;
  } else {
    throw grain::Error("unknown --measure '" + measure + "' (natural-map, koziara, relaxed)");
  }
  if (vm.count("apgd-relaxed") != 0) {
    // APGD on the convex relaxation; it stops on the relaxed measure unless --measure is given.
    s.apgdDeSaxce = false;
    if (vm["measure"].defaulted()) {
      s.errorMeasure = grain::LocalErrorMeasure::Relaxed;
    }
  }
  if (s.method == grain::LocalSolverMethod::Ipm) {
    s.errorMeasure = grain::LocalErrorMeasure::Relaxed;  // the only measure the IPM stops on
  }
  s.ipmMaxIter = vm["ipm-max-iter"].as<unsigned>();
  s.ipmPolishSteps = vm["ipm-polish"].as<unsigned>();
  s.ipmApgdSteps = vm["ipm-apgd"].as<unsigned>();
  const std::string ucf = vm["ucf"].as<std::string>();
  if (ucf == "ac") {
    s.subMethod = grain::UcfSubMethod::AlartCurnier;
  } else if (ucf == "ds") {
    s.subMethod = grain::UcfSubMethod::DeSaxce;
  } else {
    throw grain::Error("unknown --ucf '" + ucf + "' (ac, ds)");
  }
  const std::string strategy = vm["r-strategy"].as<std::string>();
  if (strategy == "max") {
    s.rStrategy = grain::RStrategy::Max;
  } else if (strategy == "sum") {
    s.rStrategy = grain::RStrategy::Sum;
  } else {
    throw grain::Error("unknown --r-strategy '" + strategy + "' (max, sum)");
  }
  if (vm.count("alpha") != 0) {
    s.alphaSor = s.alphaJor = vm["alpha"].as<double>();
  }
  const std::string check = vm["check"].as<std::string>();
  if (check == "adaptive") {
    s.errorCheck = grain::ErrorCheck::Adaptive;
  } else if (check == "every") {
    s.errorCheck = grain::ErrorCheck::Every;
  } else {
    throw grain::Error("unknown --check '" + check + "' (adaptive, every)");
  }
  s.errorCheckPeriod = vm["check-period"].as<unsigned>();
  s.pqnDirectSolve = vm.count("pqn-direct") != 0;
  s.pqnWarmStartTolerance = vm["pqn-warm"].as<double>();
  s.pqnDelta = vm["pqn-delta"].as<double>();
  s.pqnScaling = vm.count("pqn-unscaled") == 0;
  s.pqnOmegaContinuation = vm["pqn-omega-continuation"].as<double>();
  s.nsnMaxIter = vm["nsn-max-iter"].as<unsigned>();
  s.nsnDenseLimit = vm["nsn-dense-limit"].as<unsigned>();
  s.nsnRescueSweeps = vm["nsn-rescue-sweeps"].as<unsigned>();
  s.proxSigma = vm["prox-sigma"].as<double>();
  s.proxNu = vm["prox-nu"].as<double>();
  s.proxSigmaMin = vm["prox-sigma-min"].as<double>();
  s.proxInnerMaxIter = vm["prox-inner-max-iter"].as<unsigned>();
  const unsigned repeat = vm["repeat"].as<unsigned>();
  if (repeat < 1) {
    throw grain::Error("--repeat must be >= 1");
  }
  const std::string repeatStat = vm["repeat-stat"].as<std::string>();
  if (repeatStat != "min" && repeatStat != "mean") {
    throw grain::Error("unknown --repeat-stat '" + repeatStat + "' (min, mean)");
  }

  const grain::LocalProblem p = grain::fclib::readProblem(file);
  grain::VecX guess;
  if (vm.count("guess") != 0) {
    guess = grain::fclib::readSolution(file, p, true).r;
  }
  const grain::VecX* guessPtr = vm.count("guess") != 0 ? &guess : nullptr;
  grain::LocalSolverResult res = grain::solve(p, s, guessPtr);
  // Further identical solves in the same process, into the same result (its r and u storage is
  // reused, as a caller of a time-stepping loop would): the reported time is the minimum or the
  // mean over all of them (the result is the same every time).
  double minSeconds = res.seconds;
  double sumSeconds = res.seconds;
  for (unsigned k = 1; k < repeat; ++k) {
    grain::solve(p, s, guessPtr, res);
    const double t = res.seconds;
    minSeconds = std::min(minSeconds, t);
    sumSeconds += t;
  }
  res.seconds = repeatStat == "min" ? minSeconds : sumSeconds / repeat;
  const grain::LocalErrorEvaluator ev(p);
  const double natural = ev.naturalMap(res.r, res.u);
  const double koziara = ev.koziara(res.r, res.u);
  const double relaxed = ev.relaxed(res.r, res.u);

  const std::string solverLabel =
      std::string(grain::toString(s.method)) +
      (s.method == grain::LocalSolverMethod::Apgd
           ? (s.apgdDeSaxce ? "" : "/relaxed")
           : (s.method == grain::LocalSolverMethod::Ipm
                  ? ""
                  : (s.subMethod == grain::UcfSubMethod::DeSaxce ? "/ds" : "/ac")));
  if (vm.count("csv") != 0) {
    std::printf(
        "file,contacts,solver,measure,tol,iterations,seconds,error,natural-map,koziara,converged,"
        "warm-start sweeps,fallback sweeps,relaxed\n");
    std::printf("%s,%zu,%s,%s,%g,%u,%.6g,%.6e,%.6e,%.6e,%d,%u,%u,%.6e\n",
                std::filesystem::path(file).filename().c_str(), p.contactCount(),
                solverLabel.c_str(), std::string(grain::toString(s.errorMeasure)).c_str(),
                s.tolerance, res.iterations, res.seconds, res.error, natural, koziara,
                res.converged ? 1 : 0, res.warmStartIterations, res.fallbackIterations, relaxed);
  } else {
    printProblem(file, p);
    std::printf("solver      %s, measure %s, tol %g, max-iter %u\n", solverLabel.c_str(),
                std::string(grain::toString(s.errorMeasure)).c_str(), s.tolerance, s.maxIter);
    std::printf("iterations  %u", res.iterations);
    if (res.warmStartIterations > 0) {
      std::printf(" (%u SOR warm-start sweeps)", res.warmStartIterations);
    }
    if (res.fallbackIterations > 0) {
      std::printf(" (%u SOR fallback sweeps)", res.fallbackIterations);
    }
    if (res.polishSteps > 0) {
      std::printf(" (%u polishing steps: Newton and APGD)", res.polishSteps);
    }
    if (res.gmresIterations > 0) {
      std::printf(" (%u GMRES iterations)", res.gmresIterations);
    }
    std::printf("\ntime        %.6f s\n", res.seconds);
    std::printf("error       %.6e (natural-map %.6e, koziara %.6e, |e|/|q| %.6e, relaxed %.6e)\n",
                res.error, natural, koziara, ev.naturalMapOverQ(res.r, res.u), relaxed);
    if (s.method == grain::LocalSolverMethod::Ipm ||
        (s.method == grain::LocalSolverMethod::Apgd && !s.apgdDeSaxce)) {
      std::printf(
          "problem     convex relaxation (no De Saxce term): the natural-map error above "
          "is the distance to the Coulomb law\n");
    }
    std::printf("converged   %s%s\n", res.converged ? "yes" : "no",
                res.finite ? "" : " (NaN/Inf encountered)");
  }
  if (vm.count("out") != 0) {
    const std::string out = vm["out"].as<std::string>();
    grain::fclib::writeSolution(out, p, res.r, res.u);
    if (vm.count("csv") == 0) {
      std::printf("solution    %s\n", out.c_str());
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  po::options_description options("options");
  // clang-format off
  options.add_options()
    ("help,h", "print this help")
    ("version", "print the version and exit")
    ("solver", po::value<std::string>()->default_value("sor"),
     "sor, jor, apgd, pqn, ipm (interior point method for the convex relaxation: stops on "
     "the relaxed measure), nsn or prox")
    ("tol", po::value<double>()->default_value(1e-8), "tolerance on the error measure")
    ("max-iter", po::value<unsigned>()->default_value(100000), "maximum iterations")
    ("measure", po::value<std::string>()->default_value("natural-map"),
     "stopping measure: natural-map (Siconos), koziara, or relaxed (natural map of the convex "
     "relaxation, without the De Saxce term)")
    ("apgd-relaxed", "APGD on the convex relaxation (no De Saxce term); stops on the relaxed "
     "measure unless --measure is given")
    ("ipm-max-iter", po::value<unsigned>()->default_value(100), "IPM: interior point iterations")
    ("ipm-polish", po::value<unsigned>()->default_value(5), "IPM: at most this many polishing "
     "Newton steps")
    ("ipm-apgd", po::value<unsigned>()->default_value(2000), "IPM: then at most this many APGD "
     "steps on the relaxation")
    ("ucf", po::value<std::string>()->default_value("ac"),
     "prox of SOR/JOR/PQN fallback: ac (Alart-Curnier) or ds (De Saxce)")
    ("alpha", po::value<double>(), "relaxation of SOR/JOR (defaults 1.0 / 0.5)")
    ("r-strategy", po::value<std::string>()->default_value("max"), "prox metric: max or sum")
    ("check", po::value<std::string>()->default_value("adaptive"),
     "SOR error test: adaptive or every")
    ("check-period", po::value<unsigned>()->default_value(1), "SOR with --check every")
    ("pqn-direct", "PQN: sparse LU instead of GMRES for the Newton systems")
    ("pqn-warm", po::value<double>()->default_value(0.0),
     "PQN: SOR until this error before the first Newton step")
    ("pqn-delta", po::value<double>()->default_value(0.01),
     "PQN: shift delta relative to the mean diagonal entry of W")
    ("pqn-unscaled", "PQN: Newton steps on R itself, not on (W_ii)_NN R_i")
    ("pqn-omega-continuation", po::value<double>()->default_value(1e-4),
     "PQN: smoothing omega_k = max(omega, theta e_k |q|_inf) from theta = this (0: omega)")
    ("nsn-max-iter", po::value<unsigned>()->default_value(100),
     "NSN: Newton steps before the SOR fallback")
    ("nsn-dense-limit", po::value<unsigned>()->default_value(30),
     "NSN/prox: dense LU up to this many unknowns, sparse LU above")
    ("nsn-rescue-sweeps", po::value<unsigned>()->default_value(10),
     "NSN: SOR sweeps when Newton stalls (0: none)")
    ("prox-sigma", po::value<double>()->default_value(1.0),
     "prox: initial shift factor (times mean(diag W))")
    ("prox-nu", po::value<double>()->default_value(1.0), "prox: shift ~ error^nu")
    ("prox-sigma-min", po::value<double>()->default_value(0.0),
     "prox: lower bound of the shift (times mean(diag W))")
    ("prox-inner-max-iter", po::value<unsigned>()->default_value(20),
     "prox: Newton steps per inner problem")
    ("repeat", po::value<unsigned>()->default_value(1),
     "solve N times in this process and report the --repeat-stat of the times")
    ("repeat-stat", po::value<std::string>()->default_value("min"), "min or mean")
    ("guess", "start from /guesses/1/r of the FCLIB file")
    ("out", po::value<std::string>(), "write the problem and /solution/{r,u} to this HDF5 file")
    ("csv", "print a header line and one line: file,contacts,solver,measure,tol,iterations,"
            "seconds,error,natural-map,koziara,converged,warm-start sweeps,fallback sweeps,"
            "relaxed");
  // clang-format on
  po::options_description hidden;
  hidden.add_options()("command", po::value<std::string>())("file", po::value<std::string>())(
      "second", po::value<std::string>());
  po::options_description all;
  all.add(options).add(hidden);
  po::positional_options_description positional;
  positional.add("command", 1).add("file", 1).add("second", 1);
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
    if (vm.count("version") != 0) {
      std::cout << "grain-fclib " << grain::versionString() << "\n";
      return 0;
    }
    if (vm.count("help") != 0 || vm.count("command") == 0) {
      std::cout << kUsage << options;
      return vm.count("help") != 0 ? 0 : 1;
    }
    const std::string command = vm["command"].as<std::string>();
    if (vm.count("file") == 0) {
      std::cerr << "grain-fclib: missing FILE\n" << kUsage;
      return 1;
    }
    const std::string file = vm["file"].as<std::string>();
    if (command == "solve") {
      return solveCommand(file, vm);
    }
    if (command == "info") {
      return info(file);
    }
    if (command == "convert" || command == "evaluate") {
      if (vm.count("second") == 0) {
        std::cerr << "grain-fclib: " << command << " needs a second file\n" << kUsage;
        return 1;
      }
      const std::string second = vm["second"].as<std::string>();
      return command == "convert" ? convert(file, second) : evaluate(file, second);
    }
    std::cerr << "grain-fclib: unknown command '" << command << "'\n" << kUsage;
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "grain-fclib: " << e.what() << "\n";
    return 1;
  }
}
