// SPDX-License-Identifier: MIT
#include <cmath>

#include <grain/convert/grid.hpp>

namespace grain::convert {

void GridSpec::validate() const {
  if (!((max.array() > min.array()).all())) {
    throw ConvertError("grid: the box needs min < max in every coordinate");
  }
  if (dims[0] == 0 || dims[1] == 0 || dims[2] == 0) {
    throw ConvertError("grid: every dimension must be >= 1");
  }
  if (samples == 0) {
    throw ConvertError("grid: samples per cell and axis must be >= 1");
  }
}

namespace {

/// Inside test of a point given in the body frame K.
bool insideShape(const Shape* shape, Real radius, const Vec3& xK) {
  if (shape != nullptr) {
    if (const auto* b = std::get_if<Box>(shape)) {
      return ((xK - b->center).cwiseAbs().array() <= b->halfExtent.array()).all();
    }
    if (const auto* c = std::get_if<Capsule>(shape)) {
      const Vec3 a = c->axis.normalized();
      const Real s = std::clamp(xK.dot(a), -0.5 * c->length, 0.5 * c->length);
      return (xK - s * a).squaredNorm() <= c->radius * c->radius;
    }
    if (const auto* s = std::get_if<Sphere>(shape)) {
      return xK.squaredNorm() <= s->radius * s->radius;
    }
  }
  return xK.squaredNorm() <= radius * radius;
}

}  // namespace

GridFields sampleGrid(const GridSpec& grid, const io::SimState& state, const SceneBodies& bodies) {
  grid.validate();
  const std::size_t nCells = grid.cellCount();
  const std::uint32_t s = grid.samples;
  const std::array<std::size_t, 3> np{static_cast<std::size_t>(grid.dims[0]) * s,
                                      static_cast<std::size_t>(grid.dims[1]) * s,
                                      static_cast<std::size_t>(grid.dims[2]) * s};
  const Vec3 h = grid.cellSize() / static_cast<Real>(s);  // sample spacing
  std::vector<std::uint8_t> taken(np[0] * np[1] * np[2], 0);
  GridFields out;
  out.solidFraction.assign(nCells, 0.0);
  out.velocity.assign(3 * nCells, 0.0);
  out.bodyCount.assign(nCells, 0);
  std::vector<std::uint32_t> hits(nCells, 0);
  const Vec3 cell = grid.cellSize();
  for (const io::SimBodyState& b : state.bodies) {
    // Body centre -> cell count.
    const Vec3 rel = (b.position - grid.min).cwiseQuotient(cell);
    if ((rel.array() >= 0).all() && rel.x() < grid.dims[0] && rel.y() < grid.dims[1] &&
        rel.z() < grid.dims[2]) {
      ++out.bodyCount[grid.index(static_cast<std::size_t>(rel.x()),
                                 static_cast<std::size_t>(rel.y()),
                                 static_cast<std::size_t>(rel.z()))];
    }
    const Shape* shape = bodies.shape(b.id);
    const Real r = bodies.radius(b.id);
    if (!(r > 0.0) || !std::isfinite(r)) {
      continue;
    }
    const Mat3 rot = b.orientation.toRotationMatrix();
    const Vec3 omega = rot * b.omegaBody;
    // Sample points p_i = min + (i + 1/2) h within the body's bounding sphere.
    std::array<std::size_t, 3> lo{}, hi{};
    bool empty = false;
    for (int a = 0; a < 3; ++a) {
      const Real first = std::ceil((b.position[a] - r - grid.min[a]) / h[a] - 0.5);
      const Real last = std::floor((b.position[a] + r - grid.min[a]) / h[a] - 0.5);
      const Real f = std::max<Real>(first, 0.0);
      const Real l = std::min<Real>(last, static_cast<Real>(np[a]) - 1.0);
      if (l < f) {
        empty = true;
        break;
      }
      lo[a] = static_cast<std::size_t>(f);
      hi[a] = static_cast<std::size_t>(l);
    }
    if (empty) {
      continue;
    }
    for (std::size_t i = lo[0]; i <= hi[0]; ++i) {
      for (std::size_t j = lo[1]; j <= hi[1]; ++j) {
        for (std::size_t k = lo[2]; k <= hi[2]; ++k) {
          const std::size_t flat = (i * np[1] + j) * np[2] + k;
          if (taken[flat]) {
            continue;
          }
          const Vec3 p = grid.min + Vec3((i + 0.5) * h.x(), (j + 0.5) * h.y(), (k + 0.5) * h.z());
          const Vec3 d = p - b.position;
          if (!insideShape(shape, r, rot.transpose() * d)) {
            continue;
          }
          taken[flat] = 1;
          const std::size_t c = grid.index(i / s, j / s, k / s);
          ++hits[c];
          const Vec3 v = b.velocity + omega.cross(d);
          for (int a = 0; a < 3; ++a) {
            out.velocity[3 * c + static_cast<std::size_t>(a)] += v[a];
          }
        }
      }
    }
  }
  const double perCell = static_cast<double>(s) * s * s;
  for (std::size_t c = 0; c < nCells; ++c) {
    out.solidFraction[c] = hits[c] / perCell;
    if (hits[c] > 0) {
      for (int a = 0; a < 3; ++a) {
        out.velocity[3 * c + static_cast<std::size_t>(a)] /= hits[c];
      }
    }
  }
  return out;
}

}  // namespace grain::convert
