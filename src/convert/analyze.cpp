// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <grain/convert/analyze.hpp>

namespace grain::convert {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string formatNumber(double x) {
  char buf[40];
  if (std::isfinite(x) && x == std::round(x) && std::abs(x) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", x);
  } else {
    std::snprintf(buf, sizeof buf, "%.12g", x);
  }
  return buf;
}

/// 16-point Gauss-Legendre nodes and weights on [-1, 1].
constexpr double kGaussX[8] = {0.0950125098376374, 0.2816035507792589, 0.4580167776572274,
                               0.6178762444026438, 0.7554044083550030, 0.8656312023878318,
                               0.9445750230732326, 0.9894009349916499};
constexpr double kGaussW[8] = {0.1894506104550685, 0.1826034150449236, 0.1691565193950025,
                               0.1495959888165767, 0.1246289712555339, 0.0951585116824928,
                               0.0622535239386479, 0.0271524594117541};

/// Integral of f over [a, b], split at the sorted `cuts` inside it.
template <class F>
double integrate(F&& f, double a, double b, std::vector<double> cuts) {
  if (!(b > a)) {
    return 0.0;
  }
  cuts.push_back(a);
  cuts.push_back(b);
  std::sort(cuts.begin(), cuts.end());
  double sum = 0.0;
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
    const double lo = std::max(a, cuts[k]);
    const double hi = std::min(b, cuts[k + 1]);
    if (!(hi > lo)) {
      continue;
    }
    const double m = 0.5 * (lo + hi);
    const double h = 0.5 * (hi - lo);
    for (int i = 0; i < 8; ++i) {
      sum += kGaussW[i] * (f(m - h * kGaussX[i]) + f(m + h * kGaussX[i])) * h;
    }
  }
  return sum;
}

/// Area of the disk (centre (cx, cy), radius rho) inside [x0, x1] x [y0, y1], exactly: between
/// the x where the circle crosses y0 or y1 the chord is clipped the same way, and each piece has
/// the antiderivative of sqrt(rho^2 - x^2).
double diskRectArea(double cx, double cy, double rho, double x0, double x1, double y0, double y1) {
  if (rho <= 0.0) {
    return 0.0;
  }
  const double a = std::max(x0, cx - rho);
  const double b = std::min(x1, cx + rho);
  if (!(b > a)) {
    return 0.0;
  }
  // Integral of the half chord h(x) = sqrt(rho^2 - (x - cx)^2).
  auto halfChordIntegral = [&](double x) {
    const double u = std::clamp((x - cx) / rho, -1.0, 1.0);
    return 0.5 * rho * rho * (u * std::sqrt(1.0 - u * u) + std::asin(u));
  };
  std::vector<double> cuts = {a, b};
  for (const double y : {y0, y1}) {
    const double dy = y - cy;
    if (std::abs(dy) < rho) {
      const double w = std::sqrt(rho * rho - dy * dy);
      for (const double x : {cx - w, cx + w}) {
        if (x > a && x < b) {
          cuts.push_back(x);
        }
      }
    }
  }
  std::sort(cuts.begin(), cuts.end());
  double area = 0.0;
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
    const double lo = cuts[k];
    const double hi = cuts[k + 1];
    if (!(hi > lo)) {
      continue;
    }
    const double m = 0.5 * (lo + hi);
    const double hm = std::sqrt(std::max(0.0, rho * rho - (m - cx) * (m - cx)));
    const bool topClipped = cy + hm > y1;     // upper end is y1, else cy + h
    const bool bottomClipped = cy - hm < y0;  // lower end is y0, else cy - h
    if ((topClipped ? y1 : cy + hm) <= (bottomClipped ? y0 : cy - hm)) {
      continue;  // the chord misses the rectangle here
    }
    const double hInt = halfChordIntegral(hi) - halfChordIntegral(lo);
    const double len = hi - lo;
    const double upper = topClipped ? y1 * len : cy * len + hInt;
    const double lower = bottomClipped ? y0 * len : cy * len - hInt;
    area += upper - lower;
  }
  return area;
}

}  // namespace

void CsvTable::write(const std::filesystem::path& file) const {
  std::ofstream out(file, std::ios::trunc);
  for (const auto& c : comments) {
    out << "# " << c << '\n';
  }
  for (std::size_t i = 0; i < columns.size(); ++i) {
    out << (i ? "," : "") << columns[i];
  }
  out << '\n';
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      out << (i ? "," : "") << formatNumber(row[i]);
    }
    out << '\n';
  }
  if (!out) {
    throw ConvertError(file.string() + ": cannot write");
  }
}

std::size_t CsvTable::column(const std::string& name) const {
  const auto it = std::find(columns.begin(), columns.end(), name);
  if (it == columns.end()) {
    throw ConvertError("no column " + name);
  }
  return static_cast<std::size_t>(it - columns.begin());
}

double CrossingResult::quantile(double f) const {
  if (bodies == 0) {
    return kNaN;
  }
  const double nb = static_cast<double>(bodies);
  for (std::size_t k = 0; k < time.size(); ++k) {
    const double fk = static_cast<double>(crossed[k]) / nb;
    if (fk >= f) {
      if (k == 0) {
        return time[0];
      }
      const double fp = static_cast<double>(crossed[k - 1]) / nb;
      return time[k - 1] + (f - fp) / (fk - fp) * (time[k] - time[k - 1]);
    }
  }
  return kNaN;
}

CsvTable CrossingResult::table() const {
  CsvTable t;
  t.comments.push_back("bodies = " + std::to_string(bodies));
  t.comments.push_back("Q(0.05) = " + formatNumber(quantile(0.05)) + " s");
  t.comments.push_back("Q(0.95) = " + formatNumber(quantile(0.95)) + " s");
  t.comments.push_back("flow_duration = " + formatNumber(flowDuration()) + " s");
  t.columns = {"time", "inside", "crossed", "fraction_crossed"};
  for (std::size_t k = 0; k < time.size(); ++k) {
    t.rows.push_back(
        {time[k], static_cast<double>(inside[k]), static_cast<double>(crossed[k]),
         bodies ? static_cast<double>(crossed[k]) / static_cast<double>(bodies) : 0.0});
  }
  return t;
}

CrossingResult countCrossings(SimSequence& seq, const std::vector<StateRef>& states,
                              const std::vector<BodyId>& ids, const Vec3& point, const Vec3& normal,
                              const ProgressFn& progress) {
  if (!(normal.norm() > 0.0)) {
    throw ConvertError("crossing: the plane normal must not be zero");
  }
  const Vec3 n = normal.normalized();
  CrossingResult r;
  r.bodies = ids.size();
  std::vector<std::uint8_t> has(ids.size(), 0);
  std::size_t crossed = 0;
  for (std::size_t k = 0; k < states.size(); ++k) {
    const io::SimState st = seq.read(states[k], ids);
    std::size_t inside = 0;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if ((st.bodies[i].position - point).dot(n) >= 0.0) {
        ++inside;
        if (!has[i]) {
          has[i] = 1;
          ++crossed;
        }
      }
    }
    r.time.push_back(st.time);
    r.inside.push_back(inside);
    r.crossed.push_back(crossed);
    if (progress) {
      progress(k + 1, states.size(), st.time);
    }
  }
  return r;
}

CsvTable energyOverTime(SimSequence& seq, const std::vector<StateRef>& states,
                        const std::vector<BodyId>& ids, const SceneBodies& bodies,
                        const ProgressFn& progress) {
  if (!bodies.hasScene()) {
    throw ConvertError("energy needs the scene file (-s) for masses and inertias");
  }
  std::vector<double> mass(ids.size());
  std::vector<Vec3> inertia(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto mp = bodies.massProperties(ids[i]);
    if (!mp) {
      throw ConvertError("energy: body " + formatBodyId(ids[i]) + " is not in the scene");
    }
    mass[i] = mp->first;
    inertia[i] = mp->second;
  }
  const Vec3 g = bodies.gravity();
  CsvTable t;
  t.columns = {"time", "kinetic_translational", "kinetic_rotational", "kinetic", "potential",
               "total"};
  for (std::size_t k = 0; k < states.size(); ++k) {
    const io::SimState st = seq.read(states[k], ids);
    double et = 0.0, er = 0.0, ep = 0.0;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const io::SimBodyState& b = st.bodies[i];
      et += 0.5 * mass[i] * b.velocity.squaredNorm();
      er += 0.5 * b.omegaBody.dot(inertia[i].cwiseProduct(b.omegaBody));
      ep -= mass[i] * g.dot(b.position);
    }
    t.rows.push_back({st.time, et, er, et + er, ep, et + er + ep});
    if (progress) {
      progress(k + 1, states.size(), st.time);
    }
  }
  return t;
}

CsvTable velocityProfile(SimSequence& seq, const std::vector<StateRef>& states,
                         const std::vector<BodyId>& ids, const Vec3& axis, double lo, double hi,
                         std::size_t bins, const ProgressFn& progress) {
  if (!(hi > lo) || bins == 0) {
    throw ConvertError("profile: needs lo < hi and at least one bin");
  }
  if (!(axis.norm() > 0.0)) {
    throw ConvertError("profile: the axis must not be zero");
  }
  const Vec3 a = axis.normalized();
  const double w = (hi - lo) / static_cast<double>(bins);
  CsvTable t;
  t.columns = {"time", "bin", "s", "count", "vx", "vy", "vz", "speed"};
  std::vector<double> count(bins), speed(bins);
  std::vector<Vec3> v(bins);
  for (std::size_t k = 0; k < states.size(); ++k) {
    const io::SimState st = seq.read(states[k], ids);
    std::fill(count.begin(), count.end(), 0.0);
    std::fill(speed.begin(), speed.end(), 0.0);
    std::fill(v.begin(), v.end(), Vec3::Zero());
    for (const auto& b : st.bodies) {
      const double s = a.dot(b.position);
      if (s < lo || s >= hi) {
        continue;
      }
      const auto bin = std::min(bins - 1, static_cast<std::size_t>((s - lo) / w));
      count[bin] += 1.0;
      v[bin] += b.velocity;
      speed[bin] += b.velocity.norm();
    }
    for (std::size_t i = 0; i < bins; ++i) {
      const double c = count[i];
      const Vec3 m = c > 0 ? Vec3(v[i] / c) : Vec3::Zero();
      t.rows.push_back({st.time, static_cast<double>(i), lo + (static_cast<double>(i) + 0.5) * w, c,
                        m.x(), m.y(), m.z(), c > 0 ? speed[i] / c : 0.0});
    }
    if (progress) {
      progress(k + 1, states.size(), st.time);
    }
  }
  return t;
}

double sphereBoxVolume(const Vec3& c, double r, const Vec3& min, const Vec3& max) {
  if (!(r > 0.0)) {
    return 0.0;
  }
  const Vec3 lo = c - Vec3::Constant(r);
  const Vec3 hi = c + Vec3::Constant(r);
  if ((lo.array() >= min.array()).all() && (hi.array() <= max.array()).all()) {
    return 4.0 / 3.0 * kPi * r * r * r;
  }
  if ((hi.array() <= min.array()).any() || (lo.array() >= max.array()).any()) {
    return 0.0;
  }
  auto area = [&](double z) {
    const double dz = z - c.z();
    const double rho2 = r * r - dz * dz;
    return rho2 > 0.0
               ? diskRectArea(c.x(), c.y(), std::sqrt(rho2), min.x(), max.x(), min.y(), max.y())
               : 0.0;
  };
  // area(z) has kinks where the circle of radius rho(z) touches an edge line or a corner.
  std::vector<double> cuts;
  std::vector<double> dist;
  for (const double x : {min.x(), max.x()}) {
    dist.push_back(std::abs(x - c.x()));
    for (const double y : {min.y(), max.y()}) {
      dist.push_back(std::hypot(x - c.x(), y - c.y()));
    }
  }
  for (const double y : {min.y(), max.y()}) {
    dist.push_back(std::abs(y - c.y()));
  }
  for (const double d : dist) {
    if (d < r) {
      const double dz = std::sqrt(r * r - d * d);
      cuts.push_back(c.z() - dz);
      cuts.push_back(c.z() + dz);
    }
  }
  return integrate(area, std::max(min.z(), c.z() - r), std::min(max.z(), c.z() + r), cuts);
}

CsvTable packingFraction(SimSequence& seq, const std::vector<StateRef>& states,
                         const std::vector<BodyId>& ids, const SceneBodies& bodies, const Vec3& min,
                         const Vec3& max, const ProgressFn& progress) {
  if (!((max.array() > min.array()).all())) {
    throw ConvertError("packing: the box needs min < max in every coordinate");
  }
  if (!bodies.hasScene() && !(bodies.defaultRadius() > 0.0)) {
    throw ConvertError("packing needs the scene file (-s) or a body radius (--radius)");
  }
  const double boxVolume = (max - min).prod();
  CsvTable t;
  t.columns = {"time", "bodies", "solid_volume", "packing_fraction"};
  for (std::size_t k = 0; k < states.size(); ++k) {
    const io::SimState st = seq.read(states[k], ids);
    double volume = 0.0;
    std::size_t inside = 0;
    for (const auto& b : st.bodies) {
      const bool centreInside =
          (b.position.array() >= min.array()).all() && (b.position.array() < max.array()).all();
      inside += centreInside ? 1 : 0;
      const Shape* s = bodies.shape(b.id);
      if (s == nullptr || std::holds_alternative<Sphere>(*s)) {
        volume += sphereBoxVolume(b.position, bodies.radius(b.id), min, max);
      } else if (centreInside) {
        volume += bodies.volume(b.id);
      }
    }
    t.rows.push_back({st.time, static_cast<double>(inside), volume, volume / boxVolume});
    if (progress) {
      progress(k + 1, states.size(), st.time);
    }
  }
  return t;
}

RunLogTable RunLogTable::read(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) {
    throw ConvertError(file.string() + ": cannot open the run log");
  }
  RunLogTable t;
  std::string line;
  std::size_t lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (line.empty()) {
      continue;
    }
    if (line.rfind("#", 0) == 0) {
      if (t.columns.empty()) {
        std::string h = line.substr(1);
        if (!h.empty() && h[0] == ' ') {
          h.erase(0, 1);
        }
        std::istringstream hs(h);
        std::string name;
        while (std::getline(hs, name, '\t')) {
          t.columns.push_back(name);
        }
      }
      continue;
    }
    if (t.columns.empty()) {
      throw ConvertError(file.string() + ":" + std::to_string(lineNo) +
                         ": data before the '# ' header line");
    }
    std::vector<double> row;
    std::istringstream ls(line);
    std::string cell;
    while (std::getline(ls, cell, '\t')) {
      row.push_back(std::strtod(cell.c_str(), nullptr));
    }
    if (row.size() != t.columns.size()) {
      // A run killed while writing may leave a partial last line.
      if (in.peek() == std::char_traits<char>::eof()) {
        break;
      }
      throw ConvertError(file.string() + ":" + std::to_string(lineNo) + ": " +
                         std::to_string(row.size()) + " values, the header names " +
                         std::to_string(t.columns.size()));
    }
    t.rows.push_back(std::move(row));
  }
  if (t.columns.empty()) {
    throw ConvertError(file.string() + ": no '# ' header line");
  }
  return t;
}

std::ptrdiff_t RunLogTable::find(std::initializer_list<const char*> names) const {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    std::string base = columns[i];
    const auto bracket = base.find(" [");
    if (bracket != std::string::npos) {
      base.erase(bracket);
    }
    for (const char* n : names) {
      if (base == n) {
        return static_cast<std::ptrdiff_t>(i);
      }
    }
  }
  return -1;
}

CsvTable contactStatistics(const RunLogTable& log, std::size_t every,
                           std::vector<std::string>& summary) {
  const auto cTime = log.find({"SimulationTime"});
  const auto cContacts = log.find({"nContacts"});
  const auto cIter = log.find({"nIterations", "nGlobalIterations"});
  const auto cConv = log.find({"Converged"});
  const auto cOverlap = log.find({"MaxOverlap"});
  if (cTime < 0 || cContacts < 0) {
    throw ConvertError("run log: needs the columns SimulationTime and nContacts");
  }
  if (every == 0) {
    every = std::max<std::size_t>(1, (log.rows.size() + 999) / 1000);
  }
  auto value = [](const std::vector<double>& row, std::ptrdiff_t c) {
    return c >= 0 ? row[static_cast<std::size_t>(c)] : 0.0;
  };
  CsvTable t;
  t.columns = {"time",          "steps",           "contacts_mean",
               "contacts_max",  "iterations_mean", "iterations_max",
               "not_converged", "max_overlap"};
  double totalContacts = 0, maxContacts = 0, totalIter = 0, maxIter = 0, notConv = 0,
         maxOverlap = 0;
  for (std::size_t start = 0; start < log.rows.size(); start += every) {
    const std::size_t end = std::min(log.rows.size(), start + every);
    double sc = 0, mc = 0, si = 0, mi = 0, nc = 0, mo = 0;
    for (std::size_t k = start; k < end; ++k) {
      const auto& row = log.rows[k];
      const double c = value(row, cContacts);
      const double it = value(row, cIter);
      sc += c;
      mc = std::max(mc, c);
      si += it;
      mi = std::max(mi, it);
      nc += (cConv >= 0 && value(row, cConv) == 0.0) ? 1.0 : 0.0;
      mo = std::max(mo, value(row, cOverlap));
    }
    const double n = static_cast<double>(end - start);
    t.rows.push_back({value(log.rows[end - 1], cTime), n, sc / n, mc, si / n, mi, nc, mo});
    totalContacts += sc;
    maxContacts = std::max(maxContacts, mc);
    totalIter += si;
    maxIter = std::max(maxIter, mi);
    notConv += nc;
    maxOverlap = std::max(maxOverlap, mo);
  }
  const double steps = static_cast<double>(log.rows.size());
  summary.clear();
  summary.push_back("steps = " + formatNumber(steps));
  summary.push_back("contacts_mean = " + formatNumber(steps > 0 ? totalContacts / steps : 0.0));
  summary.push_back("contacts_max = " + formatNumber(maxContacts));
  summary.push_back("iterations_mean = " + formatNumber(steps > 0 ? totalIter / steps : 0.0));
  summary.push_back("iterations_max = " + formatNumber(maxIter));
  summary.push_back("not_converged_steps = " + formatNumber(notConv));
  summary.push_back("max_overlap = " + formatNumber(maxOverlap) + " m");
  t.comments = summary;
  return t;
}

}  // namespace grain::convert
