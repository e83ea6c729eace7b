// SPDX-License-Identifier: MIT
#include <grain/convert/grid.hpp>

#include "hdf5_util.hpp"

namespace grain::convert {

void writeGridHdf5(SimSequence& seq, const std::vector<StateRef>& states,
                   const BodySelector& selector, const SceneBodies& bodies, const GridSpec& grid,
                   const std::filesystem::path& file, const ProgressFn& progress) {
  grid.validate();
  if (states.empty()) {
    throw ConvertError("no state selected");
  }
  const StateRef& first = states.front();
  const std::vector<BodyId> ids = selector.select(seq.reader(first.file).readIds(first.index));
  const hsize_t ns = states.size();
  const hsize_t nx = grid.dims[0], ny = grid.dims[1], nz = grid.dims[2];
  h5::File f = h5::createFile(file);
  const hid_t root = f.get();
  h5::setAttribute(root, "format", std::string("grain-grid"));
  h5::setScalarAttribute<std::uint32_t>(root, "version", 1);
  {
    h5::Group g = h5::createGroup(root, "grid");
    const double mn[3] = {grid.min.x(), grid.min.y(), grid.min.z()};
    const double mx[3] = {grid.max.x(), grid.max.y(), grid.max.z()};
    const Vec3 cs = grid.cellSize();
    const double cell[3] = {cs.x(), cs.y(), cs.z()};
    h5::writeDataset<double>(g.get(), "min_point", mn, {3});
    h5::writeDataset<double>(g.get(), "max_point", mx, {3});
    h5::writeDataset<double>(g.get(), "cell_size", cell, {3});
    h5::writeDataset<std::uint32_t>(g.get(), "dimensions", grid.dims, {3});
    h5::setScalarAttribute<std::uint32_t>(g.get(), "samples_per_axis", grid.samples);
    const char* axes[3] = {"x", "y", "z"};
    for (int a = 0; a < 3; ++a) {
      std::vector<double> c(grid.dims[static_cast<std::size_t>(a)]);
      for (std::size_t i = 0; i < c.size(); ++i) {
        c[i] = grid.min[a] + (static_cast<double>(i) + 0.5) * cs[a];
      }
      h5::writeDataset<double>(g.get(), axes[a], c, {c.size()});
    }
  }
  h5::Dataset dVel =
      h5::createDataset<double>(root, "velocity", {ns, nx, ny, nz, 3}, {1, nx, ny, nz, 3});
  h5::Dataset dFrac =
      h5::createDataset<double>(root, "solid_fraction", {ns, nx, ny, nz}, {1, nx, ny, nz});
  h5::Dataset dCount =
      h5::createDataset<std::uint32_t>(root, "body_count", {ns, nx, ny, nz}, {1, nx, ny, nz});
  std::vector<double> time(ns);
  for (std::size_t k = 0; k < ns; ++k) {
    const io::SimState st = seq.read(states[k], ids);
    time[k] = st.time;
    const GridFields g = sampleGrid(grid, st, bodies);
    h5::writeSlice<double>(dVel, k, g.velocity);
    h5::writeSlice<double>(dFrac, k, g.solidFraction);
    h5::writeSlice<std::uint32_t>(dCount, k, g.bodyCount);
    if (progress) {
      progress(k + 1, states.size(), st.time);
    }
  }
  h5::writeDataset<double>(root, "time", time, {ns});
}

}  // namespace grain::convert
