// SPDX-License-Identifier: MIT
#include "sim_options.hpp"

#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>

#include <grain/io/restart.hpp>
#include <grain/io/version.hpp>

namespace grain::app {

namespace fs = std::filesystem;
namespace po = boost::program_options;

bool parseSimOptions(const SimProgram& program, int argc, char** argv, SimOptions& opt,
                     int& exitCode, bool print) {
  const std::string name = program.name;
  std::ostringstream usage;
  usage << name << ": simulate a scene file" << (program.distributed ? " on MPI processes" : "")
        << "\n\nusage: " << name
        << " -s SCENE.xml [-g OUTDIR] [-m MEDIADIR] [--set XPATH=VALUE]... [--threads N]"
        << " [--print-scene|--check]" << (program.distributed ? " [-l LOCALDIR]..." : "")
        << " [--dump-fclib EVERY]\n       " << name
        << " --restart RECORD_DIR [--set XPATH=VALUE]... [--dump-fclib EVERY]"
        << "\n\noptions";
  std::ostringstream discarded;  // what processes other than the first would print
  std::ostream& out = print ? static_cast<std::ostream&>(std::cout) : discarded;
  std::ostream& err = print ? static_cast<std::ostream&>(std::cerr) : discarded;
  po::options_description desc(usage.str());
  // clang-format off
  desc.add_options()
      ("help,h", "print this help and exit")
      ("version", "print the version and exit")
      ("scene,s", po::value<std::string>(), "scene file (XML)")
      ("global-path,g", po::value<std::string>()->default_value("."),
       "output folder; the run writes OUTDIR/SimFiles/SimDataRECORD_<n>/")
      ("local-path,l", po::value<std::vector<std::string>>()->multitoken(),
       program.distributed
           ? "per-process folders for the process logs: one for all, or one per process"
           : "per-process folders (accepted for GRSF compatibility; serial runs use -g)")
      ("media-path,m", po::value<std::string>(),
       "base folder of relative mesh paths (default: the scene file's folder)")
      ("restart", po::value<std::string>(),
       "continue the run in RECORD_DIR (OUTDIR/SimFiles/SimDataRECORD_<n>) from the last "
       "complete state of its SimState.sim, with its SceneFile.xml, appending to its files")
      ("set", po::value<std::vector<std::string>>()->composing(),
       "XPATH=VALUE: set the attributes the XPath (1.0, relative to the root element) selects, "
       "before the scene is read, e.g. 'SceneSettings/TimeStepperSettings/@endTime=0.5' or "
       "'SceneObjects/RigidBodies[@name=\"beads\"]/@instances=5000'; repeatable; an XPath "
       "that matches nothing is an error")
      ("threads", po::value<long long>(),
       "N: threads per process (default: the scene's TimeStepperSettings/@threadCount, 1); "
       "the same as --set 'SceneSettings/TimeStepperSettings/@threadCount=N'")
      ("print-scene", "write the scene (after --set) to stdout and exit")
      ("check", "load the scene (after --set) with the scene reader and exit without writing "
       "anything: 0 if it loads, 2 with file:line: message if not");
  // clang-format on
  const std::string fclibHelp =
      "EVERY: write the contact problem of every EVERY-th step (steps with contacts only) as an "
      "FCLIB local problem with grain's solution, to RECORD_DIR/fclib/"
      "<scene>-i<step>-<contacts>.hdf5" +
      std::string(program.distributed ? " (on one process only)" : "");
  desc.add_options()("dump-fclib", po::value<long long>(), fclibHelp.c_str());
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    err << name << ": " << e.what() << "\n" << desc << "\n";
    exitCode = kExitBadInput;
    return false;
  }
  if (vm.count("help")) {
    out << desc << "\n";
    exitCode = kExitOk;
    return false;
  }
  if (vm.count("version")) {
    out << name << " " << grain::versionString() << "\n";
    exitCode = kExitOk;
    return false;
  }
  if (vm.count("local-path")) {
    for (const std::string& d : vm["local-path"].as<std::vector<std::string>>()) {
      opt.localDirs.emplace_back(d);
    }
  }
  if (vm.count("set")) {
    opt.overrides = vm["set"].as<std::vector<std::string>>();
  }
  if (vm.count("threads")) {
    const long long threads = vm["threads"].as<long long>();
    if (threads < 1 || threads > 1024) {
      err << name << ": --threads: N must be in [1, 1024] (got " << threads << ")\n";
      exitCode = kExitBadInput;
      return false;
    }
    // After the --set overrides, so that --threads wins.
    opt.overrides.push_back("SceneSettings/TimeStepperSettings/@threadCount=" +
                            std::to_string(threads));
  }
  opt.printScene = vm.count("print-scene") > 0;
  opt.check = vm.count("check") > 0;
  if (vm.count("dump-fclib")) {
    const long long every = vm["dump-fclib"].as<long long>();
    if (every < 1) {
      err << name << ": --dump-fclib: EVERY must be >= 1 (got " << every << ")\n";
      exitCode = kExitBadInput;
      return false;
    }
    if (!program.withFclib) {
      err << name
          << ": --dump-fclib is not available: this build has no HDF5 "
             "(configure with GRAIN_WITH_HDF5=ON)\n";
      exitCode = kExitBadInput;
      return false;
    }
    opt.dumpFclibEvery = static_cast<std::uint64_t>(every);
  }
  if (vm.count("restart")) {
    opt.restart = vm["restart"].as<std::string>();
    if (vm.count("scene")) {
      err << name << ": --restart uses RECORD_DIR/SceneFile.xml; do not give -s\n";
      exitCode = kExitBadInput;
      return false;
    }
    opt.scene = opt.restart / "SceneFile.xml";
    opt.mediaDir = vm.count("media-path") ? fs::path(vm["media-path"].as<std::string>())
                                          : grain::io::recordedMediaDirectory(opt.restart);
    return true;
  }
  if (!vm.count("scene")) {
    err << name << ": missing scene file (-s SCENE.xml)\n" << desc << "\n";
    exitCode = kExitBadInput;
    return false;
  }
  opt.scene = vm["scene"].as<std::string>();
  opt.outDir = vm["global-path"].as<std::string>();
  if (vm.count("media-path")) {
    opt.mediaDir = vm["media-path"].as<std::string>();
  }
  return true;
}

}  // namespace grain::app
