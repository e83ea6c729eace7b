// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <filesystem>
#include <vector>

#include <grain/convert/scene_bodies.hpp>
#include <grain/convert/sequence.hpp>

namespace grain::convert {

/// A regular grid of nx x ny x nz cells filling the axis-aligned box [min, max] (m, I frame).
struct GridSpec {
  Vec3 min = Vec3::Zero();
  Vec3 max = Vec3::Ones();
  std::array<std::uint32_t, 3> dims{10, 10, 10};
  /// Sample points per cell and axis (s^3 points per cell) for the solid fraction and the
  /// velocity.
  std::uint32_t samples = 3;

  Vec3 cellSize() const { return (max - min).cwiseQuotient(Vec3(dims[0], dims[1], dims[2])); }
  std::size_t cellCount() const { return static_cast<std::size_t>(dims[0]) * dims[1] * dims[2]; }
  /// Flat index of cell (i, j, k): (i ny + j) nz + k (C order, as in the HDF5 file).
  std::size_t index(std::size_t i, std::size_t j, std::size_t k) const {
    return (i * dims[1] + j) * dims[2] + k;
  }
  /// Throws ConvertError for an empty box, zero dimensions or zero samples.
  void validate() const;
};

/// Fields of one state on a grid (flat arrays in GridSpec::index order).
struct GridFields {
  /// Fraction of each cell's sample points inside a body (0..1).
  std::vector<double> solidFraction;
  /// Mean rigid-body velocity v + omega x (x - r_S) over the cell's sample points inside
  /// bodies (m/s, I frame; 3 per cell, 0 in empty cells).
  std::vector<double> velocity;
  /// Bodies whose centre lies in the cell.
  std::vector<std::uint32_t> bodyCount;
};

/// Samples one state. Spheres, boxes and capsules use their exact shape (from the scene);
/// other shapes and bodies without a scene their sphere of SceneBodies::radius(). A sample
/// point inside two bodies (overlap) counts for the first.
GridFields sampleGrid(const GridSpec& grid, const io::SimState& state, const SceneBodies& bodies);

/// Writes the grid fields of the selected states to one HDF5 file ("grain-grid" layout,
/// docs/convert.md). Needs GRAIN_WITH_HDF5.
void writeGridHdf5(SimSequence& seq, const std::vector<StateRef>& states,
                   const BodySelector& selector, const SceneBodies& bodies, const GridSpec& grid,
                   const std::filesystem::path& file, const ProgressFn& progress = {});

}  // namespace grain::convert
