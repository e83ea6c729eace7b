// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <grain/convert/scene_bodies.hpp>
#include <grain/convert/sequence.hpp>

/// Analyses of .sim files and run logs (grain-convert analyze); results as CSV tables.
namespace grain::convert {

/// A table of numbers with named columns and optional "# key = value" comment lines.
struct CsvTable {
  std::vector<std::string> comments;  ///< written first, each as "# <text>"
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;

  /// Writes comma-separated values (numbers with up to 12 significant digits, exact integers
  /// as integers). Throws ConvertError.
  void write(const std::filesystem::path& file) const;
  /// Index of a column; throws ConvertError if absent.
  std::size_t column(const std::string& name) const;
};

/// Bodies past a plane over time: n(t) = bodies with (r_S - point) . normal >= 0 at t
/// ("inside", the thesis' n_{b,S}), and the cumulative count of bodies that have been past the
/// plane at some state up to t ("crossed", non-decreasing).
struct CrossingResult {
  std::vector<double> time;
  std::vector<std::size_t> inside;
  std::vector<std::size_t> crossed;
  std::size_t bodies = 0;  ///< n_b, the selected bodies
  /// Q(f): first time at which crossed/n_b reaches f, linearly interpolated between states;
  /// NaN if never reached.
  double quantile(double f) const;
  /// Flow duration Q(0.95) - Q(0.05) (s), NaN if either is undefined.
  double flowDuration() const { return quantile(0.95) - quantile(0.05); }
  CsvTable table() const;
};

CrossingResult countCrossings(SimSequence& seq, const std::vector<StateRef>& states,
                              const std::vector<BodyId>& ids, const Vec3& point, const Vec3& normal,
                              const ProgressFn& progress = {});

/// Kinetic (translational, rotational) and potential energy of the selected bodies per state
/// (J); needs masses and inertias from the scene. Columns: time, kinetic_translational,
/// kinetic_rotational, kinetic, potential, total. Potential = -m g . r_S.
CsvTable energyOverTime(SimSequence& seq, const std::vector<StateRef>& states,
                        const std::vector<BodyId>& ids, const SceneBodies& bodies,
                        const ProgressFn& progress = {});

/// Mean velocity in bins of s = axis . r_S over [lo, hi) (m). One row per state and bin:
/// time, bin, s (bin centre), count, vx, vy, vz, speed (means over the bodies in the bin, 0
/// if none).
CsvTable velocityProfile(SimSequence& seq, const std::vector<StateRef>& states,
                         const std::vector<BodyId>& ids, const Vec3& axis, double lo, double hi,
                         std::size_t bins, const ProgressFn& progress = {});

/// Volume (m^3) of the part of a sphere (centre c, radius r) inside the box [min, max],
/// by Gauss-Legendre quadrature split at the kinks (relative error < 1e-6).
double sphereBoxVolume(const Vec3& c, double r, const Vec3& min, const Vec3& max);

/// Packing fraction in the box [min, max]: solid volume inside / box volume per state. Spheres
/// (and bodies without a scene, as spheres) count with their exact part inside the box; other
/// shapes with their whole volume if their centre is inside. Columns: time, bodies (centres
/// inside), solid_volume, packing_fraction.
CsvTable packingFraction(SimSequence& seq, const std::vector<StateRef>& states,
                         const std::vector<BodyId>& ids, const SceneBodies& bodies, const Vec3& min,
                         const Vec3& max, const ProgressFn& progress = {});

/// A run log (SimData.dat of grain or GRSF): tab-separated numbers under a "# " header line.
struct RunLogTable {
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;
  /// Reads the file; throws ConvertError (missing file, no header, wrong column count).
  static RunLogTable read(const std::filesystem::path& file);
  /// Index of the first column whose name (without the " [unit]") equals one of `names`, or
  /// -1.
  std::ptrdiff_t find(std::initializer_list<const char*> names) const;
};

/// Contact statistics of a run log in windows of `every` steps (0: about 1000 rows): time
/// (end of the window), steps, contacts_mean, contacts_max, iterations_mean, iterations_max,
/// not_converged, max_overlap. `summary` receives "key = value" lines for the whole run.
CsvTable contactStatistics(const RunLogTable& log, std::size_t every,
                           std::vector<std::string>& summary);

}  // namespace grain::convert
