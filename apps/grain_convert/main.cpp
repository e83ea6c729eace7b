// SPDX-License-Identifier: MIT
// grain-convert: post-processing of .sim files (docs/convert.md).
//
//   grain-convert COMMAND [options] [FILE...]      COMMAND --help for its options
//
// Exit codes: 0 success, 1 failure while converting, 2 bad command line or input.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include <grain/app/progress.hpp>
#include <grain/app/signals.hpp>
#include <grain/convert/analyze.hpp>
#include <grain/convert/grid.hpp>
#include <grain/convert/info.hpp>
#include <grain/convert/render.hpp>
#include <grain/convert/scene_bodies.hpp>
#include <grain/convert/sequence.hpp>
#include <grain/convert/sim_tool.hpp>
#include <grain/convert/vtk.hpp>
#include <grain/io/version.hpp>
#ifdef GRAIN_WITH_HDF5
#include <grain/convert/hdf5_export.hpp>
#endif

namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;
namespace gc = grain::convert;

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitBadInput = 2;

/// Bad command line: printed with the command's usage, exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---- shared option groups ---------------------------------------------------------------------

void addInputOptions(po::options_description& d) {
  // clang-format off
  d.add_options()
      ("input,i", po::value<std::vector<std::string>>()->multitoken(),
       ".sim files, in time order (also as positional arguments)")
      ("keep-repeated", "keep a state of a later file whose time is not after the previous "
       "file's last state (default: skip it, as when a continued run starts with the state its "
       "predecessor ended with)");
  // clang-format on
}

void addStateOptions(po::options_description& d) {
  // clang-format off
  d.add_options()
      ("every,k", po::value<std::size_t>()->default_value(1), "use every k-th selected state")
      ("first", po::value<std::size_t>()->default_value(0), "first state index (0-based, over "
       "all input files)")
      ("last", po::value<std::size_t>(), "last state index (inclusive)")
      ("t-min", po::value<double>(), "earliest state time (s)")
      ("t-max", po::value<double>(), "latest state time (s)");
  // clang-format on
}

void addBodyOptions(po::options_description& d) {
  // clang-format off
  d.add_options()
      ("bodies,b", po::value<std::vector<std::string>>()->composing(),
       "bodies to use: G:N, G:N-M, G:* or raw ids, comma-separated (default: all)")
      ("groups,g", po::value<std::string>(), "body groups to use, e.g. 0,2 (same as -b 0:*,2:*)");
  // clang-format on
}

void addSceneOptions(po::options_description& d, bool required) {
  // clang-format off
  d.add_options()
      ("scene,s", po::value<std::string>(), required
           ? "scene file (shapes, masses, static bodies); required"
           : "scene file for shapes, materials and static bodies (e.g. the run folder's "
             "SceneFile.xml)")
      ("media-path,m", po::value<std::string>(), "base folder of relative mesh paths")
      ("radius,r", po::value<double>()->default_value(0.0),
       "sphere radius (m) of bodies without a scene");
  // clang-format on
}

void addCommonOptions(po::options_description& d) {
  // clang-format off
  d.add_options()
      ("help,h", "print this help")
      ("quiet,q", "no progress output");
  // clang-format on
}

void addPlaneSizeOption(po::options_description& d) {
  d.add_options()("plane-size", po::value<double>()->default_value(0.0),
                  "half edge (m) of the square drawn for a halfspace (default: diagonal of the "
                  "bodies' bounds)");
}

/// The options of a command that reads selected states of .sim files: common, input, state and
/// body selection, and with `withScene` the (optional) scene options.
po::options_description selectionOptions(bool withScene) {
  po::options_description d("options");
  addCommonOptions(d);
  addInputOptions(d);
  addStateOptions(d);
  addBodyOptions(d);
  if (withScene) {
    addSceneOptions(d, false);
  }
  return d;
}

struct Parsed {
  po::variables_map vm;
  std::string usage;
};

/// Parses `args` (after the command name) with the positional arguments `pos`; returns nullopt
/// after printing help.
std::optional<Parsed> parse(const std::vector<std::string>& args, po::options_description& desc,
                            const std::string& usage,
                            const po::positional_options_description& pos) {
  Parsed p;
  std::ostringstream help;
  help << usage << "\n" << desc;
  p.usage = help.str();
  try {
    po::store(po::command_line_parser(args).options(desc).positional(pos).run(), p.vm);
    po::notify(p.vm);
  } catch (const po::error& e) {
    throw UsageError(std::string(e.what()) + "\n\n" + p.usage);
  }
  if (p.vm.count("help")) {
    std::cout << p.usage << "\n";
    return std::nullopt;
  }
  return p;
}

/// Parses `args` (after the command name), positional arguments being input files; returns
/// nullopt after printing help.
std::optional<Parsed> parse(const std::vector<std::string>& args, po::options_description& desc,
                            const std::string& usage) {
  po::positional_options_description pos;
  pos.add("input", -1);
  return parse(args, desc, usage, pos);
}

std::vector<fs::path> inputs(const Parsed& p) {
  if (!p.vm.count("input")) {
    throw UsageError("no input file\n\n" + p.usage);
  }
  std::vector<fs::path> files;
  for (const auto& s : p.vm["input"].as<std::vector<std::string>>()) {
    files.emplace_back(s);
  }
  return files;
}

gc::StateFilter stateFilter(const Parsed& p) {
  gc::StateFilter f;
  f.every = p.vm["every"].as<std::size_t>();
  f.first = p.vm["first"].as<std::size_t>();
  if (p.vm.count("last")) {
    f.last = p.vm["last"].as<std::size_t>();
  }
  if (p.vm.count("t-min")) {
    f.tMin = p.vm["t-min"].as<double>();
  }
  if (p.vm.count("t-max")) {
    f.tMax = p.vm["t-max"].as<double>();
  }
  return f;
}

std::vector<gc::StateRef> selectStates(const Parsed& p, const gc::SimSequence& seq) {
  const auto states = stateFilter(p).apply(seq.states());
  if (states.empty()) {
    throw gc::ConvertError("no state matches the state selection (the input has " +
                           std::to_string(seq.states().size()) + " states)");
  }
  return states;
}

/// Opens the input files as one sequence (warnings to stderr) and returns the selected states.
std::vector<gc::StateRef> openSelectedStates(const Parsed& p, gc::SimSequence& seq) {
  seq.open(inputs(p), !p.vm.count("keep-repeated"));
  for (const auto& w : seq.warnings()) {
    std::fprintf(stderr, "warning: %s\n", w.c_str());
  }
  return selectStates(p, seq);
}

gc::BodySelector bodySelector(const Parsed& p) {
  gc::BodySelector s;
  if (p.vm.count("bodies")) {
    for (const auto& b : p.vm["bodies"].as<std::vector<std::string>>()) {
      s.parse(b);
    }
  }
  if (p.vm.count("groups")) {
    std::string g = p.vm["groups"].as<std::string>();
    for (char& c : g) {
      c = c == ',' ? ' ' : c;
    }
    std::istringstream in(g);
    std::string item;
    while (in >> item) {
      s.parse(item + ":*");
    }
  }
  return s;
}

gc::SceneBodies sceneBodies(const Parsed& p, bool required) {
  const double radius = p.vm.count("radius") ? p.vm["radius"].as<double>() : 0.0;
  if (!p.vm.count("scene")) {
    if (required) {
      throw UsageError("this command needs the scene file (-s SCENE.xml)\n\n" + p.usage);
    }
    return gc::SceneBodies(radius);
  }
  const fs::path media = p.vm.count("media-path") ? p.vm["media-path"].as<std::string>() : "";
  return gc::SceneBodies::load(p.vm["scene"].as<std::string>(), media);
}

std::string output(const Parsed& p) {
  if (!p.vm.count("output")) {
    throw UsageError("no output (-o)\n\n" + p.usage);
  }
  const std::string out = p.vm["output"].as<std::string>();
  const fs::path parent = fs::path(out).parent_path();
  if (!parent.empty()) {
    fs::create_directories(parent);
  }
  return out;
}

/// Progress on stdout over the simulated time of the selected states.
class Progress {
 public:
  Progress(const Parsed& p, const std::vector<gc::StateRef>& states) {
    if (!p.vm.count("quiet") && !states.empty()) {
      reporter_ = std::make_unique<grain::app::ProgressReporter>(states.front().time,
                                                                 states.back().time, stdout, 5.0);
    }
  }
  gc::ProgressFn fn() {
    if (!reporter_) {
      return {};
    }
    return [this](std::size_t done, std::size_t total, double time) {
      last_ = total;
      reporter_->update(time, "state " + std::to_string(done) + "/" + std::to_string(total));
    };
  }
  void finish(const std::string& message) {
    if (reporter_) {
      reporter_->finish(message);
    } else {
      std::printf("%s\n", message.c_str());
    }
  }

 private:
  std::unique_ptr<grain::app::ProgressReporter> reporter_;
  std::size_t last_ = 0;
};

grain::Vec3 triple(const Parsed& p, const char* name) {
  const auto v = gc::parseTriple(p.vm[name].as<std::string>(), std::string("--") + name);
  return grain::Vec3(v[0], v[1], v[2]);
}

// ---- commands ---------------------------------------------------------------------------------

int cmdInfo(const std::vector<std::string>& args) {
  po::options_description d("options");
  addCommonOptions(d);
  // clang-format off
  d.add_options()
      ("input,i", po::value<std::vector<std::string>>()->multitoken(), ".sim files")
      ("times,t", "also list the time of every state");
  // clang-format on
  auto p = parse(args, d,
                 "grain-convert info: bodies, states, time range, extra-bytes type, size and "
                 "truncation of .sim files\n\nusage: grain-convert info [--times] FILE...");
  if (!p) {
    return kExitOk;
  }
  bool first = true;
  for (const fs::path& f : inputs(*p)) {
    const gc::SimFileSummary s = gc::summarize(f, p->vm.count("times") > 0);
    std::cout << (first ? "" : "\n") << gc::formatSummary(s);
    first = false;
  }
  return kExitOk;
}

int cmdSim(const std::vector<std::string>& args) {
  po::options_description d = selectionOptions(false);
  // clang-format off
  d.add_options()
      ("output,o", po::value<std::string>(), "output .sim file (with --split: name pattern, "
       "OUT_00000.sim, ...)")
      ("split", "write one file per state")
      ("keep-order", "keep each state's body order (default: sorted by id)")
      ("overwrite", "replace existing output files");
  // clang-format on
  auto p = parse(args, d,
                 "grain-convert sim: join .sim files, resample states, select bodies, split into "
                 "one file per state; the output is a valid .sim file\n\n"
                 "usage: grain-convert sim FILE... -o OUT.sim [-k N] [--t-min T] [--t-max T] "
                 "[-b SPEC] [--split]");
  if (!p) {
    return kExitOk;
  }
  const std::string out = output(*p);
  gc::SimSequence seq;
  const auto states = openSelectedStates(*p, seq);
  gc::SimExportOptions opt;
  opt.split = p->vm.count("split") > 0;
  opt.keepOrder = p->vm.count("keep-order") > 0;
  opt.overwrite = p->vm.count("overwrite") > 0;
  Progress progress(*p, states);
  const auto files = gc::exportSim(seq, states, bodySelector(*p), out, opt, progress.fn());
  progress.finish(
      "wrote " + std::to_string(states.size()) + " state(s) to " +
      (files.size() == 1 ? files.front().string() : std::to_string(files.size()) + " files"));
  return kExitOk;
}

int cmdVtk(const std::vector<std::string>& args) {
  po::options_description d = selectionOptions(true);
  // clang-format off
  d.add_options()
      ("output,o", po::value<std::string>(), "output folder")
      ("name,n", po::value<std::string>()->default_value("states"), "base name of the files")
      ("ascii", "write ASCII data arrays (default: base64 binary)")
      ("tessellate", "write bodies as triangulated surfaces (default: points with radius "
       "and orientation, for ParaView's glyph filter)")
      ("sphere-subdivisions", po::value<int>()->default_value(2),
       "icosphere refinement of tessellated spheres");
  // clang-format on
  addPlaneSizeOption(d);
  auto p = parse(args, d,
                 "grain-convert vtk: VTK XML series for ParaView: OUT/NAME.pvd, "
                 "OUT/NAME/NAME_<k>.vtu per state and OUT/NAME_static.vtu (static bodies, with "
                 "-s)\n\nusage: grain-convert vtk FILE... -o OUTDIR [-s SCENE.xml] [options]");
  if (!p) {
    return kExitOk;
  }
  const fs::path out = output(*p);
  const gc::SceneBodies bodies = sceneBodies(*p, false);
  gc::SimSequence seq;
  const auto states = openSelectedStates(*p, seq);
  gc::VtkOptions opt;
  opt.binary = !p->vm.count("ascii");
  opt.tessellate = p->vm.count("tessellate") > 0;
  opt.tessellation.sphereSubdivisions = std::clamp(p->vm["sphere-subdivisions"].as<int>(), 0, 5);
  opt.planeHalfSize = p->vm["plane-size"].as<double>();
  if (!bodies.hasScene() && !(bodies.defaultRadius() > 0.0)) {
    std::fprintf(stderr,
                 "warning: no scene (-s) and no --radius: bodies get radius 0 (ParaView glyphs "
                 "need a scale)\n");
  }
  Progress progress(*p, states);
  const fs::path pvd = gc::writeVtkSeries(seq, states, bodySelector(*p), bodies, out,
                                          p->vm["name"].as<std::string>(), opt, progress.fn());
  progress.finish("wrote " + std::to_string(states.size()) + " state(s): " + pvd.string());
  return kExitOk;
}

#ifdef GRAIN_WITH_HDF5
void addHdf5Options(po::options_description& d) {
  // clang-format off
  d.add_options()
      ("deflate", po::value<int>()->default_value(0), "gzip level 0..9 of the state arrays")
      ("chunk-bodies", po::value<std::size_t>()->default_value(65536),
       "bodies per chunk of the state arrays");
  // clang-format on
  addPlaneSizeOption(d);
}

gc::Hdf5Options hdf5Options(const Parsed& p) {
  gc::Hdf5Options o;
  o.deflate = p.vm["deflate"].as<int>();
  o.chunkBodies = p.vm["chunk-bodies"].as<std::size_t>();
  o.planeHalfSize = p.vm["plane-size"].as<double>();
  return o;
}

int cmdHdf5(const std::vector<std::string>& args, bool xdmf) {
  po::options_description d = selectionOptions(true);
  addHdf5Options(d);
  d.add_options()(
      "output,o", po::value<std::string>(),
      xdmf ? "output .xmf file (the HDF5 file gets the same name with .h5)" : "output HDF5 file");
  const std::string usage =
      xdmf ? "grain-convert xdmf: XDMF + HDF5 for ParaView (large runs): OUT.xmf and OUT.h5\n\n"
             "usage: grain-convert xdmf FILE... -o OUT.xmf [-s SCENE.xml] [options]"
           : "grain-convert hdf5: all selected states to one HDF5 file (layout in "
             "docs/convert.md; h5py: f['states/position'][k] is state k)\n\n"
             "usage: grain-convert hdf5 FILE... -o OUT.h5 [-s SCENE.xml] [options]";
  auto p = parse(args, d, usage);
  if (!p) {
    return kExitOk;
  }
  fs::path out = output(*p);
  const gc::SceneBodies bodies = sceneBodies(*p, false);
  gc::SimSequence seq;
  const auto states = openSelectedStates(*p, seq);
  const fs::path h5 = xdmf ? fs::path(out).replace_extension(".h5") : out;
  Progress progress(*p, states);
  gc::writeHdf5States(seq, states, bodySelector(*p), bodies, h5, hdf5Options(*p), progress.fn());
  if (xdmf) {
    gc::writeXdmf(out, h5);
  }
  progress.finish("wrote " + std::to_string(states.size()) + " state(s) to " + h5.string() +
                  (xdmf ? " and " + out.string() : ""));
  return kExitOk;
}

int cmdGrid(const std::vector<std::string>& args) {
  po::options_description d = selectionOptions(true);
  // clang-format off
  d.add_options()
      ("output,o", po::value<std::string>(), "output HDF5 file")
      ("min", po::value<std::string>(), "grid box corner x,y,z (m); required")
      ("max", po::value<std::string>(), "opposite corner x,y,z (m); required")
      ("dims", po::value<std::string>(), "cells nx,ny,nz; required")
      ("samples", po::value<std::uint32_t>()->default_value(3),
       "sample points per cell and axis");
  // clang-format on
  auto p = parse(args, d,
                 "grain-convert grid: velocity, solid fraction and body count on a regular grid "
                 "per state, to HDF5\n\nusage: grain-convert grid FILE... -o OUT.h5 --min X,Y,Z "
                 "--max X,Y,Z --dims NX,NY,NZ [-s SCENE.xml | -r RADIUS]");
  if (!p) {
    return kExitOk;
  }
  const std::string out = output(*p);
  for (const char* k : {"min", "max", "dims"}) {
    if (!p->vm.count(k)) {
      throw UsageError(std::string("missing --") + k + "\n\n" + p->usage);
    }
  }
  gc::GridSpec grid;
  grid.min = triple(*p, "min");
  grid.max = triple(*p, "max");
  const grain::Vec3 dims = triple(*p, "dims");
  for (int a = 0; a < 3; ++a) {
    if (!(dims[a] >= 1.0 && dims[a] <= 1e5 && dims[a] == std::floor(dims[a]))) {
      throw UsageError("--dims needs three integers >= 1\n\n" + p->usage);
    }
    grid.dims[static_cast<std::size_t>(a)] = static_cast<std::uint32_t>(dims[a]);
  }
  grid.samples = p->vm["samples"].as<std::uint32_t>();
  grid.validate();
  const gc::SceneBodies bodies = sceneBodies(*p, false);
  if (!bodies.hasScene() && !(bodies.defaultRadius() > 0.0)) {
    throw UsageError("grid needs the scene (-s) or a body radius (-r)\n\n" + p->usage);
  }
  gc::SimSequence seq;
  const auto states = openSelectedStates(*p, seq);
  Progress progress(*p, states);
  gc::writeGridHdf5(seq, states, bodySelector(*p), bodies, grid, out, progress.fn());
  progress.finish("wrote " + std::to_string(states.size()) + " grid state(s) to " + out);
  return kExitOk;
}
#endif

int cmdAnalyze(const std::vector<std::string>& args) {
  po::options_description d = selectionOptions(true);
  // clang-format off
  d.add_options()
      ("measure", po::value<std::string>(), "crossing | energy | profile | packing | contacts")
      ("output,o", po::value<std::string>(), "output CSV file")
      ("point", po::value<std::string>()->default_value("0,0,0"), "crossing: a point of the "
       "plane (m)")
      ("normal", po::value<std::string>()->default_value("1,0,0"), "crossing: plane normal "
       "pointing to the side counted")
      ("axis", po::value<std::string>()->default_value("0,0,1"), "profile: axis direction")
      ("range", po::value<std::string>(), "profile: lo,hi along the axis (m); required")
      ("bins", po::value<std::size_t>()->default_value(20), "profile: number of bins")
      ("min", po::value<std::string>(), "packing: box corner x,y,z (m); required")
      ("max", po::value<std::string>(), "packing: opposite corner x,y,z (m); required")
      ("window", po::value<std::size_t>()->default_value(0), "contacts: steps per row (0: "
       "about 1000 rows)");
  // clang-format on
  po::positional_options_description pos;
  pos.add("measure", 1).add("input", -1);
  const auto parsed =
      parse(args, d,
            "grain-convert analyze: CSV tables\n\n"
            "usage: grain-convert analyze MEASURE FILE... -o OUT.csv [options]\n\n"
            "measures:\n"
            "  crossing  bodies past a plane over time (inside, crossed cumulative) and the flow\n"
            "            duration Q(0.95) - Q(0.05) (--point, --normal)\n"
            "  energy    kinetic (translational, rotational) and potential energy per state "
            "(needs -s)\n"
            "  profile   mean velocity in bins along an axis per state (--axis, --range, --bins)\n"
            "  packing   packing fraction in a box per state (--min, --max; needs -s or -r)\n"
            "  contacts  contact, iteration and overlap statistics of a run log (FILE = "
            "SimData.dat)\n",
            pos);
  if (!parsed) {
    return kExitOk;
  }
  const Parsed& p = *parsed;
  if (!p.vm.count("measure")) {
    throw UsageError("no measure\n\n" + p.usage);
  }
  const std::string measure = p.vm["measure"].as<std::string>();
  const std::string out = output(p);
  if (measure == "contacts") {
    const auto files = inputs(p);
    if (files.size() != 1) {
      throw UsageError("contacts reads exactly one run log (SimData.dat)\n\n" + p.usage);
    }
    const gc::RunLogTable log = gc::RunLogTable::read(files.front());
    std::vector<std::string> summary;
    const gc::CsvTable t = gc::contactStatistics(log, p.vm["window"].as<std::size_t>(), summary);
    t.write(out);
    for (const auto& s : summary) {
      std::printf("%s\n", s.c_str());
    }
    std::printf("wrote %s\n", out.c_str());
    return kExitOk;
  }
  if (measure != "crossing" && measure != "energy" && measure != "profile" &&
      measure != "packing") {
    throw UsageError("unknown measure '" + measure + "'\n\n" + p.usage);
  }
  const gc::SceneBodies bodies = sceneBodies(p, measure == "energy");
  gc::SimSequence seq;
  const auto states = openSelectedStates(p, seq);
  const std::vector<grain::BodyId> ids =
      bodySelector(p).select(seq.reader(states.front().file).readIds(states.front().index));
  Progress progress(p, states);
  gc::CsvTable table;
  std::string summary;
  if (measure == "crossing") {
    const gc::CrossingResult r = gc::countCrossings(seq, states, ids, triple(p, "point"),
                                                    triple(p, "normal"), progress.fn());
    table = r.table();
    char buf[160];
    std::snprintf(buf, sizeof buf, "Q(0.05) = %.6g s, Q(0.95) = %.6g s, flow duration = %.6g s",
                  r.quantile(0.05), r.quantile(0.95), r.flowDuration());
    summary = buf;
  } else if (measure == "energy") {
    table = gc::energyOverTime(seq, states, ids, bodies, progress.fn());
  } else if (measure == "profile") {
    if (!p.vm.count("range")) {
      throw UsageError("profile needs --range lo,hi\n\n" + p.usage);
    }
    std::string r = p.vm["range"].as<std::string>();
    double lo = 0, hi = 0;
    if (std::sscanf(r.c_str(), "%lf,%lf", &lo, &hi) != 2) {
      throw UsageError("--range needs lo,hi\n\n" + p.usage);
    }
    table = gc::velocityProfile(seq, states, ids, triple(p, "axis"), lo, hi,
                                p.vm["bins"].as<std::size_t>(), progress.fn());
  } else {
    if (!p.vm.count("min") || !p.vm.count("max")) {
      throw UsageError("packing needs --min and --max\n\n" + p.usage);
    }
    table = gc::packingFraction(seq, states, ids, bodies, triple(p, "min"), triple(p, "max"),
                                progress.fn());
  }
  table.write(out);
  progress.finish("wrote " + std::to_string(table.rows.size()) + " row(s) to " + out);
  if (!summary.empty()) {
    std::printf("%s\n", summary.c_str());
  }
  return kExitOk;
}

int cmdRender(const std::vector<std::string>& args) {
  po::options_description d = selectionOptions(true);
  // clang-format off
  d.add_options()
      ("output,o", po::value<std::string>(), "output folder (frame_<k>.png/.pov/.rib), or a "
       ".png file if one state is selected")
      ("format,f", po::value<std::string>()->default_value("png"), "png | pov | rib")
      ("size", po::value<std::string>()->default_value("800x600"), "image size WxH (pixels)")
      ("eye", po::value<std::string>(), "camera position x,y,z (m) (default: fitted to the "
       "first state's bodies)")
      ("target", po::value<std::string>(), "point looked at (default: centre of the bodies)")
      ("up", po::value<std::string>(), "up direction (default: against gravity, else +z)")
      ("view-dir", po::value<std::string>()->default_value("1,-1.6,0.9"), "direction from "
       "the target to a fitted camera")
      ("fov", po::value<double>()->default_value(40.0), "vertical field of view (degrees)")
      ("speed-range", po::value<std::string>(), "speeds lo,hi (m/s) for the colour map "
       "(default: 0 to the largest speed of the selected states)")
      ("supersample", po::value<int>()->default_value(2), "samples per pixel and axis (1..4)")
      ("no-colour-bar", "no colour bar");
  // clang-format on
  addPlaneSizeOption(d);
  auto p = parse(args, d,
                 "grain-convert render: pictures of states, bodies coloured by speed; PNG "
                 "(built-in ray caster), POV-Ray or RenderMan RIB\n\nusage: grain-convert render "
                 "FILE... -o OUT [-s SCENE.xml] [--eye X,Y,Z --target X,Y,Z] [options]");
  if (!p) {
    return kExitOk;
  }
  const fs::path out = output(*p);
  const std::string format = p->vm["format"].as<std::string>();
  if (format != "png" && format != "pov" && format != "rib") {
    throw UsageError("unknown format '" + format + "'\n\n" + p->usage);
  }
  int w = 0, h = 0;
  if (std::sscanf(p->vm["size"].as<std::string>().c_str(), "%dx%d", &w, &h) != 2) {
    throw UsageError("--size needs WxH, e.g. 800x600\n\n" + p->usage);
  }
  const gc::SceneBodies bodies = sceneBodies(*p, false);
  gc::SimSequence seq;
  const auto states = openSelectedStates(*p, seq);
  const gc::BodySelector selector = bodySelector(*p);
  const std::vector<grain::BodyId> ids =
      selector.select(seq.reader(states.front().file).readIds(states.front().index));

  gc::RenderOptions opt;
  const grain::io::SimState first = seq.read(states.front(), ids);
  gc::Bounds bounds = gc::stateBounds(first, bodies);
  grain::Vec3 up = grain::Vec3::UnitZ();
  if (p->vm.count("up")) {
    up = triple(*p, "up");
  } else if (bodies.gravity().norm() > 0.0) {
    up = -bodies.gravity().normalized();
  }
  opt.camera = gc::fitCamera(bounds, triple(*p, "view-dir"), up, p->vm["fov"].as<double>(), w, h);
  if (p->vm.count("target")) {
    opt.camera.target = triple(*p, "target");
  }
  if (p->vm.count("eye")) {
    opt.camera.eye = triple(*p, "eye");
  }
  opt.camera.validate();
  opt.supersample = p->vm["supersample"].as<int>();
  opt.colourBar = !p->vm.count("no-colour-bar");
  if (p->vm.count("speed-range")) {
    if (std::sscanf(p->vm["speed-range"].as<std::string>().c_str(), "%lf,%lf", &opt.speedMin,
                    &opt.speedMax) != 2) {
      throw UsageError("--speed-range needs lo,hi\n\n" + p->usage);
    }
  } else {
    double vmax = 0.0;
    for (const auto& s : states) {
      for (const auto& b : seq.read(s, ids).bodies) {
        vmax = std::max(vmax, b.velocity.norm());
      }
    }
    opt.speedMin = 0.0;
    opt.speedMax = vmax > 0.0 ? vmax : 1.0;
    std::printf("speed colour range 0 .. %g m/s\n", opt.speedMax);
  }
  gc::TessellationOptions tess;
  tess.planeCentre = bounds.valid() ? bounds.centre() : grain::Vec3::Zero();
  tess.planeHalfSize = p->vm["plane-size"].as<double>() > 0.0 ? p->vm["plane-size"].as<double>()
                                                              : std::max(bounds.diagonal(), 1e-3);
  const gc::RenderScene scene = gc::prepareRenderScene(bodies, tess);

  const bool single = states.size() == 1 && out.extension() == "." + format;
  if (!single) {
    fs::create_directories(out);
  }
  Progress progress(*p, states);
  auto fn = progress.fn();
  for (std::size_t k = 0; k < states.size(); ++k) {
    const grain::io::SimState st = k == 0 ? first : seq.read(states[k], ids);
    char name[32];
    std::snprintf(name, sizeof name, "frame_%05zu", k);
    const fs::path file = single ? out : out / (std::string(name) + "." + format);
    if (format == "png") {
      gc::writePng(gc::renderState(st, bodies, scene, opt), file);
    } else if (format == "pov") {
      gc::writePovRay(st, bodies, scene, opt, file);
    } else {
      gc::writeRib(st, bodies, scene, opt, std::string(name) + ".tif", file);
    }
    if (fn) {
      fn(k + 1, states.size(), st.time);
    }
  }
  progress.finish("wrote " + std::to_string(states.size()) + " " + format + " file(s) to " +
                  out.string());
  return kExitOk;
}

const char* kUsage =
    "grain-convert: post-processing of grain/GRSF .sim files\n\n"
    "usage: grain-convert COMMAND [options] [FILE...]\n"
    "       grain-convert COMMAND --help\n\n"
    "commands:\n"
    "  info      bodies, states, time range, extra-bytes type, size, truncation\n"
    "  sim       join, resample, select bodies, split; writes .sim\n"
    "  vtk       ParaView series: VTK XML .vtu per state + .pvd\n"
#ifdef GRAIN_WITH_HDF5
    "  xdmf      ParaView series for large runs: XDMF + one HDF5 file\n"
    "  hdf5      all states to one HDF5 file (h5py)\n"
    "  grid      velocity and solid fraction on a regular grid per state (HDF5)\n"
#endif
    "  analyze   CSV: plane crossings and flow duration, energy, velocity profile, packing\n"
    "            fraction, contact statistics of SimData.dat\n"
    "  render    PNG pictures (built-in), POV-Ray or RenderMan RIB scenes\n";

}  // namespace

int main(int argc, char** argv) {
  grain::app::ignoreFileSizeLimitSignal();  // a file-size limit is a write error, not a kill
  if (argc < 2) {
    std::cerr << kUsage;
    return kExitBadInput;
  }
  const std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::cout << kUsage;
    return kExitOk;
  }
  if (cmd == "--version") {
    std::cout << "grain-convert " << grain::versionString() << "\n";
    return kExitOk;
  }
  const std::vector<std::string> args(argv + 2, argv + argc);
  try {
    if (cmd == "info") {
      return cmdInfo(args);
    }
    if (cmd == "sim") {
      return cmdSim(args);
    }
    if (cmd == "vtk") {
      return cmdVtk(args);
    }
#ifdef GRAIN_WITH_HDF5
    if (cmd == "xdmf") {
      return cmdHdf5(args, true);
    }
    if (cmd == "hdf5") {
      return cmdHdf5(args, false);
    }
    if (cmd == "grid") {
      return cmdGrid(args);
    }
#endif
    if (cmd == "analyze") {
      return cmdAnalyze(args);
    }
    if (cmd == "render") {
      return cmdRender(args);
    }
    std::cerr << "grain-convert: unknown command '" << cmd << "'\n\n" << kUsage;
    return kExitBadInput;
  } catch (const UsageError& e) {
    std::cerr << "grain-convert " << cmd << ": " << e.what() << "\n";
    return kExitBadInput;
  } catch (const grain::io::SceneError& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  } catch (const grain::io::SimFileError& e) {
    std::cerr << "grain-convert " << cmd << ": " << e.what() << "\n";
    return kExitBadInput;
  } catch (const gc::ConvertError& e) {
    std::cerr << "grain-convert " << cmd << ": " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "grain-convert " << cmd << ": " << e.what() << "\n";
    return kExitFailure;
  }
}
