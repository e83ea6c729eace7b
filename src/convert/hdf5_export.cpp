// SPDX-License-Identifier: MIT
#include <cstdio>
#include <fstream>

#include <grain/convert/hdf5_export.hpp>

#include "hdf5_util.hpp"

namespace grain::convert {

namespace {

template <class T>
std::vector<T> readAll(hid_t loc, const std::string& name, std::vector<hsize_t>& dims) {
  h5::Dataset ds(h5::checkId(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), "opening " + name));
  h5::Space space(h5::checkId(H5Dget_space(ds.get()), "dataspace"));
  dims.resize(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space.get())));
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  hsize_t n = 1;
  for (const hsize_t d : dims) {
    n *= d;
  }
  std::vector<T> v(n);
  if (n > 0) {
    h5::check(H5Dread(ds.get(), h5::nativeType<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()),
              "reading " + name);
  }
  return v;
}

bool exists(hid_t loc, const std::string& path) {
  return H5Lexists(loc, path.c_str(), H5P_DEFAULT) > 0;
}

}  // namespace

void writeHdf5States(SimSequence& seq, const std::vector<StateRef>& states,
                     const BodySelector& selector, const SceneBodies& bodies,
                     const std::filesystem::path& file, const Hdf5Options& options,
                     const ProgressFn& progress) {
  if (states.empty()) {
    throw ConvertError("no state selected");
  }
  if (options.deflate < 0 || options.deflate > 9) {
    throw ConvertError("the deflate level must be 0..9");
  }
  const StateRef& first = states.front();
  const std::vector<BodyId> ids = selector.select(seq.reader(first.file).readIds(first.index));
  const hsize_t nb = ids.size();
  const hsize_t ns = states.size();
  const io::AdditionalBytesType type = seq.header().additionalType;
  const bool hasRank = type != io::AdditionalBytesType::Nothing;
  const bool hasOverlap = type == io::AdditionalBytesType::ProcessMaterialOverlap ||
                          type == io::AdditionalBytesType::ProcessOverlap ||
                          type == io::AdditionalBytesType::ProcessMaterialOverlapGeomId;
  const bool hasGeomId = type == io::AdditionalBytesType::ProcessMaterialOverlapGeomId;

  h5::File f = h5::createFile(file);
  const hid_t root = f.get();
  h5::setAttribute(root, "format", std::string("grain-states"));
  h5::setScalarAttribute<std::uint32_t>(root, "version", 1);
  std::string sources;
  for (std::size_t k = 0; k < seq.fileCount(); ++k) {
    sources += (k ? "\n" : "") + seq.reader(k).path().string();
  }
  h5::setAttribute(root, "source_files", sources);
  h5::setScalarAttribute<std::uint32_t>(root, "additional_bytes_type",
                                        static_cast<std::uint32_t>(type));
  h5::setScalarAttribute<std::uint64_t>(root, "n_bodies", nb);
  h5::setScalarAttribute<std::uint64_t>(root, "n_states", ns);

  // Per-body constants.
  {
    h5::Group g = h5::createGroup(root, "bodies");
    std::vector<std::uint32_t> group(nb), number(nb);
    std::vector<std::int32_t> groupIndex(nb);
    std::vector<std::uint8_t> shape(nb);
    std::vector<double> radius(nb), mass(nb);
    for (std::size_t i = 0; i < nb; ++i) {
      group[i] = bodyGroup(ids[i]);
      number[i] = bodyNumber(ids[i]);
      groupIndex[i] = static_cast<std::int32_t>(bodies.groupIndex(ids[i]));
      shape[i] = bodies.shapeCode(ids[i]);
      radius[i] = bodies.radius(ids[i]);
      const auto mp = bodies.massProperties(ids[i]);
      mass[i] = mp ? mp->first : 0.0;
    }
    h5::writeDataset<std::uint64_t>(g.get(), "id", ids, {nb});
    h5::writeDataset<std::uint32_t>(g.get(), "group", group, {nb});
    h5::writeDataset<std::uint32_t>(g.get(), "number", number, {nb});
    h5::writeDataset<std::int32_t>(g.get(), "group_index", groupIndex, {nb});
    h5::writeDataset<std::uint8_t>(g.get(), "shape", shape, {nb});
    h5::writeDataset<double>(g.get(), "radius", radius, {nb});
    h5::writeDataset<double>(g.get(), "mass", mass, {nb});
  }

  // Per-state arrays.
  h5::Group sg = h5::createGroup(root, "states");
  const hsize_t cb = std::max<hsize_t>(1, std::min<hsize_t>(nb, options.chunkBodies));
  auto make3 = [&](const std::string& name, hsize_t comps) {
    return h5::createDataset<double>(sg.get(), name, {ns, nb, comps}, {1, cb, comps},
                                     options.deflate);
  };
  h5::Dataset dPos = make3("position", 3);
  h5::Dataset dQuat = make3("orientation", 4);
  h5::Dataset dVel = make3("velocity", 3);
  h5::Dataset dOmegaK = make3("omega_body", 3);
  h5::Dataset dOmega = make3("angular_velocity", 3);
  h5::Dataset dSpeed =
      h5::createDataset<double>(sg.get(), "speed", {ns, nb}, {1, cb}, options.deflate);
  h5::Dataset dMaterial =
      h5::createDataset<std::uint32_t>(sg.get(), "material", {ns, nb}, {1, cb}, options.deflate);
  h5::Dataset dRank, dOverlap, dGeom;
  if (hasRank) {
    dRank = h5::createDataset<std::uint32_t>(sg.get(), "process_rank", {ns, nb}, {1, cb},
                                             options.deflate);
  }
  if (hasOverlap) {
    dOverlap = h5::createDataset<double>(sg.get(), "overlap", {ns, nb}, {1, cb}, options.deflate);
  }
  if (hasGeomId) {
    dGeom = h5::createDataset<std::uint32_t>(sg.get(), "geometry_id", {ns, nb}, {1, cb},
                                             options.deflate);
  }

  std::vector<double> time(ns);
  std::vector<std::uint32_t> sourceFile(ns);
  std::vector<std::uint64_t> sourceState(ns);
  std::vector<double> pos(3 * nb), quat(4 * nb), vel(3 * nb), omegaK(3 * nb), omega(3 * nb),
      speed(nb), overlap(nb);
  std::vector<std::uint32_t> material(nb), rank(nb), geom(nb);
  Bounds firstBounds;
  for (std::size_t k = 0; k < ns; ++k) {
    const io::SimState st = seq.read(states[k], ids);
    if (k == 0) {
      firstBounds = stateBounds(st, bodies);
    }
    time[k] = st.time;
    sourceFile[k] = static_cast<std::uint32_t>(states[k].file);
    sourceState[k] = states[k].index;
    for (std::size_t i = 0; i < nb; ++i) {
      const io::SimBodyState& b = st.bodies[i];
      const Vec4 q = b.orientation.coeffs();
      const Vec3 w = b.orientation * b.omegaBody;
      for (int c = 0; c < 3; ++c) {
        pos[3 * i + c] = b.position[c];
        vel[3 * i + c] = b.velocity[c];
        omegaK[3 * i + c] = b.omegaBody[c];
        omega[3 * i + c] = w[c];
      }
      for (int c = 0; c < 4; ++c) {
        quat[4 * i + c] = q[c];
      }
      speed[i] = b.velocity.norm();
      material[i] = bodies.material(b.id, b.additional.material);
      rank[i] = b.additional.processRank;
      overlap[i] = b.additional.overlapTotal;
      geom[i] = b.additional.globalGeomId;
    }
    h5::writeSlice<double>(dPos, k, pos);
    h5::writeSlice<double>(dQuat, k, quat);
    h5::writeSlice<double>(dVel, k, vel);
    h5::writeSlice<double>(dOmegaK, k, omegaK);
    h5::writeSlice<double>(dOmega, k, omega);
    h5::writeSlice<double>(dSpeed, k, speed);
    h5::writeSlice<std::uint32_t>(dMaterial, k, material);
    if (hasRank) {
      h5::writeSlice<std::uint32_t>(dRank, k, rank);
    }
    if (hasOverlap) {
      h5::writeSlice<double>(dOverlap, k, overlap);
    }
    if (hasGeomId) {
      h5::writeSlice<std::uint32_t>(dGeom, k, geom);
    }
    if (progress) {
      progress(k + 1, states.size(), st.time);
    }
  }
  h5::writeDataset<double>(root, "time", time, {ns});
  h5::writeDataset<std::uint32_t>(root, "source_file", sourceFile, {ns});
  h5::writeDataset<std::uint64_t>(root, "source_state", sourceState, {ns});

  if (options.staticGeometry && bodies.hasScene()) {
    TessellationOptions tess = options.tessellation;
    tess.planeCentre = firstBounds.valid() ? firstBounds.centre() : Vec3::Zero();
    tess.planeHalfSize = options.planeHalfSize > 0.0 ? options.planeHalfSize
                                                     : std::max<Real>(firstBounds.diagonal(), 1e-3);
    std::vector<std::size_t> indices;
    const SurfaceMesh mesh = triangulateStaticBodies(bodies.scene(), tess, indices);
    if (!indices.empty()) {
      h5::Group g = h5::createGroup(root, "static");
      std::vector<double> v;
      for (const Vec3& p : mesh.vertices) {
        v.insert(v.end(), {p.x(), p.y(), p.z()});
      }
      std::vector<std::uint32_t> tri;
      for (const auto& t : mesh.triangles) {
        tri.insert(tri.end(), t.begin(), t.end());
      }
      const BodyStorage& sb = bodies.scene().system.bodies;
      std::vector<std::uint64_t> owner(mesh.owner.size());
      std::vector<std::uint32_t> mat(mesh.owner.size());
      for (std::size_t t = 0; t < mesh.owner.size(); ++t) {
        owner[t] = sb.ids()[indices[mesh.owner[t]]];
        mat[t] = sb.materials()[indices[mesh.owner[t]]];
      }
      h5::writeDataset<double>(g.get(), "vertices", v, {mesh.vertices.size(), 3});
      h5::writeDataset<std::uint32_t>(g.get(), "triangles", tri, {mesh.triangles.size(), 3});
      h5::writeDataset<std::uint64_t>(g.get(), "id", owner, {mesh.owner.size()});
      h5::writeDataset<std::uint32_t>(g.get(), "material", mat, {mesh.owner.size()});
    }
  }
  h5::check(H5Fflush(root, H5F_SCOPE_GLOBAL), "flush");
}

void writeXdmf(const std::filesystem::path& file, const std::filesystem::path& h5File) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  h5::File f(H5Fopen(h5File.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!f.valid()) {
    throw ConvertError(h5File.string() + ": cannot open the HDF5 file");
  }
  std::vector<hsize_t> dims;
  const std::vector<double> time = readAll<double>(f.get(), "/time", dims);
  readAll<std::uint8_t>(f.get(), "/bodies/shape", dims);
  const hsize_t nb = dims.empty() ? 0 : dims[0];
  const hsize_t ns = time.size();
  const std::string h5 = h5File.filename().string();

  std::string x;
  x += "<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n";
  x += "<Xdmf Version=\"3.0\">\n<Domain>\n";
  x += "<Grid Name=\"bodies\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  const std::string snb = std::to_string(nb);
  const std::string sns = std::to_string(ns);
  auto slab = [&](hsize_t k, const std::string& path, hsize_t comps, const std::string& number,
                  int precision) {
    const std::string c = std::to_string(comps);
    std::string s = "<DataItem ItemType=\"HyperSlab\" Dimensions=\"" + snb +
                    (comps > 1 ? " " + c : "") + "\" Type=\"HyperSlab\">\n";
    if (comps > 1) {
      s += "<DataItem Dimensions=\"3 3\" Format=\"XML\">" + std::to_string(k) + " 0 0 1 1 1 1 " +
           snb + " " + c + "</DataItem>\n";
      s += "<DataItem Dimensions=\"" + sns + " " + snb + " " + c;
    } else {
      s += "<DataItem Dimensions=\"3 2\" Format=\"XML\">" + std::to_string(k) + " 0 1 1 1 " + snb +
           "</DataItem>\n";
      s += "<DataItem Dimensions=\"" + sns + " " + snb;
    }
    s += "\" NumberType=\"" + number + "\" Precision=\"" + std::to_string(precision) +
         "\" Format=\"HDF\">" + h5 + ":" + path + "</DataItem>\n</DataItem>\n";
    return s;
  };
  auto whole = [&](const std::string& path, const std::string& number, int precision) {
    return "<DataItem Dimensions=\"" + snb + "\" NumberType=\"" + number + "\" Precision=\"" +
           std::to_string(precision) + "\" Format=\"HDF\">" + h5 + ":" + path + "</DataItem>\n";
  };
  const bool hasRank = exists(f.get(), "/states/process_rank");
  const bool hasOverlap = exists(f.get(), "/states/overlap");
  for (hsize_t k = 0; k < ns; ++k) {
    char t[40];
    std::snprintf(t, sizeof t, "%.17g", time[k]);
    x += "<Grid Name=\"state_" + std::to_string(k) + "\" GridType=\"Uniform\">\n";
    x += std::string("<Time Value=\"") + t + "\"/>\n";
    x += "<Topology TopologyType=\"Polyvertex\" NumberOfElements=\"" + snb +
         "\" NodesPerElement=\"1\"/>\n";
    x += "<Geometry GeometryType=\"XYZ\">\n" + slab(k, "/states/position", 3, "Float", 8) +
         "</Geometry>\n";
    auto attr = [&](const std::string& name, const std::string& kind, const std::string& item) {
      x += "<Attribute Name=\"" + name + "\" AttributeType=\"" + kind + "\" Center=\"Node\">\n" +
           item + "</Attribute>\n";
    };
    attr("id", "Scalar", whole("/bodies/id", "UInt", 8));
    attr("group", "Scalar", whole("/bodies/group", "UInt", 4));
    attr("radius", "Scalar", whole("/bodies/radius", "Float", 8));
    attr("shape", "Scalar", whole("/bodies/shape", "UChar", 1));
    attr("material", "Scalar", slab(k, "/states/material", 1, "UInt", 4));
    attr("velocity", "Vector", slab(k, "/states/velocity", 3, "Float", 8));
    attr("angular_velocity", "Vector", slab(k, "/states/angular_velocity", 3, "Float", 8));
    attr("speed", "Scalar", slab(k, "/states/speed", 1, "Float", 8));
    if (hasRank) {
      attr("process_rank", "Scalar", slab(k, "/states/process_rank", 1, "UInt", 4));
    }
    if (hasOverlap) {
      attr("overlap", "Scalar", slab(k, "/states/overlap", 1, "Float", 8));
    }
    x += "</Grid>\n";
  }
  x += "</Grid>\n";
  if (exists(f.get(), "/static")) {
    readAll<std::uint32_t>(f.get(), "/static/triangles", dims);
    const std::string nt = std::to_string(dims[0]);
    readAll<double>(f.get(), "/static/vertices", dims);
    const std::string nv = std::to_string(dims[0]);
    x += "<Grid Name=\"static\" GridType=\"Uniform\">\n";
    x += "<Topology TopologyType=\"Triangle\" NumberOfElements=\"" + nt + "\">\n";
    x += "<DataItem Dimensions=\"" + nt +
         " 3\" NumberType=\"UInt\" Precision=\"4\" Format=\"HDF\">" + h5 +
         ":/static/triangles</DataItem>\n</Topology>\n";
    x += "<Geometry GeometryType=\"XYZ\">\n<DataItem Dimensions=\"" + nv +
         " 3\" NumberType=\"Float\" Precision=\"8\" Format=\"HDF\">" + h5 +
         ":/static/vertices</DataItem>\n</Geometry>\n";
    x += "<Attribute Name=\"material\" AttributeType=\"Scalar\" Center=\"Cell\">\n<DataItem "
         "Dimensions=\"" +
         nt + "\" NumberType=\"UInt\" Precision=\"4\" Format=\"HDF\">" + h5 +
         ":/static/material</DataItem>\n</Attribute>\n";
    x += "</Grid>\n";
  }
  x += "</Domain>\n</Xdmf>\n";
  std::ofstream out(file, std::ios::trunc);
  out << x;
  if (!out) {
    throw ConvertError(file.string() + ": cannot write");
  }
}

}  // namespace grain::convert
