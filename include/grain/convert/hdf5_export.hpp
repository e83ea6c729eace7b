// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <vector>

#include <grain/convert/scene_bodies.hpp>
#include <grain/convert/sequence.hpp>

/// HDF5 output (only in builds with GRAIN_WITH_HDF5). Layouts: docs/convert.md.
namespace grain::convert {

/// Options of grain-convert hdf5 / xdmf.
struct Hdf5Options {
  int deflate = 0;  ///< gzip level 0..9 (0: none) of the per-state datasets
  /// Bodies per chunk of the per-state datasets (a chunk is one state x this many bodies).
  std::size_t chunkBodies = 65536;
  /// Also write the static bodies (triangulated) under /static (needs a scene).
  bool staticGeometry = true;
  TessellationOptions tessellation;
  Real planeHalfSize = 0.0;  ///< halfspace patches (m); <= 0: diagonal of the first state
};

/// Writes the selected states and bodies to one HDF5 file ("grain-states" layout, version 1):
/// /time, /bodies/*, /states/* as chunked [state, body(, component)] arrays, /static/*.
/// Bodies are sorted by id and looked up by id in every state. Throws ConvertError.
void writeHdf5States(SimSequence& seq, const std::vector<StateRef>& states,
                     const BodySelector& selector, const SceneBodies& bodies,
                     const std::filesystem::path& file, const Hdf5Options& options,
                     const ProgressFn& progress = {});

/// Writes `file` (.xmf) describing the states of an HDF5 file written by writeHdf5States for
/// ParaView: a temporal collection of point grids (one per state, data read as hyperslabs) and
/// the static triangles. `h5File` is referenced relative to the .xmf file's folder.
void writeXdmf(const std::filesystem::path& file, const std::filesystem::path& h5File);

}  // namespace grain::convert
