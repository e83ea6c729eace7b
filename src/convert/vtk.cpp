// SPDX-License-Identifier: MIT
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>

#include <grain/convert/vtk.hpp>

namespace grain::convert {

namespace {

const char* typeName(VtkType t) {
  switch (t) {
    case VtkType::UInt8:
      return "UInt8";
    case VtkType::Int32:
      return "Int32";
    case VtkType::UInt32:
      return "UInt32";
    case VtkType::Int64:
      return "Int64";
    case VtkType::UInt64:
      return "UInt64";
    case VtkType::Float64:
      return "Float64";
  }
  return "?";
}

template <class T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

void appendAscii(std::string& out, VtkType type, const unsigned char* p) {
  char buf[40];
  switch (type) {
    case VtkType::UInt8:
      std::snprintf(buf, sizeof buf, "%u", static_cast<unsigned>(*p));
      break;
    case VtkType::Int32:
      std::snprintf(buf, sizeof buf, "%d", load<std::int32_t>(p));
      break;
    case VtkType::UInt32:
      std::snprintf(buf, sizeof buf, "%u", load<std::uint32_t>(p));
      break;
    case VtkType::Int64:
      std::snprintf(buf, sizeof buf, "%" PRId64, load<std::int64_t>(p));
      break;
    case VtkType::UInt64:
      std::snprintf(buf, sizeof buf, "%" PRIu64, load<std::uint64_t>(p));
      break;
    case VtkType::Float64:
      std::snprintf(buf, sizeof buf, "%.17g", load<double>(p));
      break;
  }
  out += buf;
}

std::size_t sizeOf(VtkType t) {
  switch (t) {
    case VtkType::UInt8:
      return 1;
    case VtkType::Int32:
    case VtkType::UInt32:
      return 4;
    default:
      return 8;
  }
}

}  // namespace

std::string base64Encode(std::span<const unsigned char> bytes) {
  static const char* table = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const std::uint32_t v = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    out += table[(v >> 18) & 63];
    out += table[(v >> 12) & 63];
    out += table[(v >> 6) & 63];
    out += table[v & 63];
  }
  if (i + 1 == bytes.size()) {
    const std::uint32_t v = bytes[i] << 16;
    out += table[(v >> 18) & 63];
    out += table[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == bytes.size()) {
    const std::uint32_t v = (bytes[i] << 16) | (bytes[i + 1] << 8);
    out += table[(v >> 18) & 63];
    out += table[(v >> 12) & 63];
    out += table[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

void VtuWriter::add(std::vector<Array>& to, const std::string& name, VtkType type, const void* data,
                    std::size_t count, std::size_t size, int components) {
  Array a;
  a.name = name;
  a.type = type;
  a.components = components;
  a.count = count;
  a.bytes.resize(count * size);
  if (count > 0) {
    std::memcpy(a.bytes.data(), data, count * size);
  }
  to.push_back(std::move(a));
}

void VtuWriter::setPoints(std::span<const Vec3> points) {
  std::vector<double> xyz;
  xyz.reserve(3 * points.size());
  for (const Vec3& p : points) {
    xyz.insert(xyz.end(), {p.x(), p.y(), p.z()});
  }
  std::vector<Array> tmp;
  add(tmp, "Points", VtkType::Float64, xyz.data(), xyz.size(), sizeof(double), 3);
  points_ = std::move(tmp.front());
  nPoints_ = points.size();
}

void VtuWriter::setVertexCells() {
  std::vector<std::int64_t> conn(nPoints_);
  std::vector<std::int64_t> off(nPoints_);
  for (std::size_t i = 0; i < nPoints_; ++i) {
    conn[i] = static_cast<std::int64_t>(i);
    off[i] = static_cast<std::int64_t>(i + 1);
  }
  const std::vector<std::uint8_t> types(nPoints_, 1);  // VTK_VERTEX
  std::vector<Array> tmp;
  add(tmp, "connectivity", VtkType::Int64, conn.data(), conn.size(), 8, 1);
  add(tmp, "offsets", VtkType::Int64, off.data(), off.size(), 8, 1);
  add(tmp, "types", VtkType::UInt8, types.data(), types.size(), 1, 1);
  connectivity_ = std::move(tmp[0]);
  offsets_ = std::move(tmp[1]);
  types_ = std::move(tmp[2]);
  nCells_ = nPoints_;
}

void VtuWriter::setTriangles(std::span<const std::array<std::uint32_t, 3>> triangles) {
  std::vector<std::int64_t> conn;
  conn.reserve(3 * triangles.size());
  std::vector<std::int64_t> off(triangles.size());
  for (std::size_t i = 0; i < triangles.size(); ++i) {
    for (const std::uint32_t v : triangles[i]) {
      conn.push_back(v);
    }
    off[i] = static_cast<std::int64_t>(3 * (i + 1));
  }
  const std::vector<std::uint8_t> types(triangles.size(), 5);  // VTK_TRIANGLE
  std::vector<Array> tmp;
  add(tmp, "connectivity", VtkType::Int64, conn.data(), conn.size(), 8, 1);
  add(tmp, "offsets", VtkType::Int64, off.data(), off.size(), 8, 1);
  add(tmp, "types", VtkType::UInt8, types.data(), types.size(), 1, 1);
  connectivity_ = std::move(tmp[0]);
  offsets_ = std::move(tmp[1]);
  types_ = std::move(tmp[2]);
  nCells_ = triangles.size();
}

void VtuWriter::writeArray(std::string& out, const Array& a) const {
  out += "<DataArray type=\"";
  out += typeName(a.type);
  out += "\" Name=\"" + a.name + "\"";
  if (a.components != 1) {
    out += " NumberOfComponents=\"" + std::to_string(a.components) + "\"";
  }
  out += binary_ ? " format=\"binary\">\n" : " format=\"ascii\">\n";
  if (binary_) {
    std::vector<unsigned char> block(8 + a.bytes.size());
    const std::uint64_t n = a.bytes.size();
    std::memcpy(block.data(), &n, 8);
    if (!a.bytes.empty()) {
      std::memcpy(block.data() + 8, a.bytes.data(), a.bytes.size());
    }
    out += base64Encode(block);
  } else {
    const std::size_t size = sizeOf(a.type);
    for (std::size_t i = 0; i < a.count; ++i) {
      if (i > 0) {
        out += (i % static_cast<std::size_t>(a.components) == 0) ? '\n' : ' ';
      }
      appendAscii(out, a.type, a.bytes.data() + i * size);
    }
  }
  out += "\n</DataArray>\n";
}

void VtuWriter::write(const std::filesystem::path& file) const {
  std::string out;
  out += "<?xml version=\"1.0\"?>\n";
  out +=
      "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" "
      "header_type=\"UInt64\">\n<UnstructuredGrid>\n";
  out += "<Piece NumberOfPoints=\"" + std::to_string(nPoints_) + "\" NumberOfCells=\"" +
         std::to_string(nCells_) + "\">\n";
  out += "<PointData>\n";
  for (const auto& a : pointData_) {
    writeArray(out, a);
  }
  out += "</PointData>\n<CellData>\n";
  for (const auto& a : cellData_) {
    writeArray(out, a);
  }
  out += "</CellData>\n<Points>\n";
  writeArray(out, points_);
  out += "</Points>\n<Cells>\n";
  writeArray(out, connectivity_);
  writeArray(out, offsets_);
  writeArray(out, types_);
  out += "</Cells>\n</Piece>\n</UnstructuredGrid>\n</VTKFile>\n";
  std::ofstream f(file, std::ios::binary | std::ios::trunc);
  f << out;
  if (!f) {
    throw ConvertError(file.string() + ": cannot write");
  }
}

bool writeStaticVtu(const io::SceneDescription& scene, const TessellationOptions& tessellation,
                    bool binary, const std::filesystem::path& file) {
  std::vector<std::size_t> indices;
  const SurfaceMesh mesh = triangulateStaticBodies(scene, tessellation, indices);
  if (indices.empty()) {
    return false;
  }
  const BodyStorage& b = scene.system.bodies;
  std::vector<std::uint64_t> id(mesh.owner.size());
  std::vector<std::uint32_t> material(mesh.owner.size());
  std::vector<std::uint8_t> shape(mesh.owner.size());
  for (std::size_t t = 0; t < mesh.owner.size(); ++t) {
    const std::size_t i = indices[mesh.owner[t]];
    id[t] = b.ids()[i];
    material[t] = b.materials()[i];
    shape[t] = static_cast<std::uint8_t>(scene.system.shapes.type(b.shapes()[i]));
  }
  VtuWriter w(binary);
  w.setPoints(mesh.vertices);
  w.setTriangles(mesh.triangles);
  w.addCellData<std::uint64_t>("id", id);
  w.addCellData<std::uint32_t>("material", material);
  w.addCellData<std::uint8_t>("shape", shape);
  w.write(file);
  return true;
}

std::filesystem::path writeVtkSeries(SimSequence& seq, const std::vector<StateRef>& states,
                                     const BodySelector& selector, const SceneBodies& bodies,
                                     const std::filesystem::path& dir, const std::string& name,
                                     const VtkOptions& options, const ProgressFn& progress) {
  namespace fs = std::filesystem;
  if (states.empty()) {
    throw ConvertError("no state selected");
  }
  fs::create_directories(dir / name);
  const StateRef& first = states.front();
  const std::vector<BodyId> ids = selector.select(seq.reader(first.file).readIds(first.index));
  const io::AdditionalBytesType type = seq.header().additionalType;
  const bool hasRank = type != io::AdditionalBytesType::Nothing;
  const bool hasOverlap = type == io::AdditionalBytesType::ProcessMaterialOverlap ||
                          type == io::AdditionalBytesType::ProcessOverlap ||
                          type == io::AdditionalBytesType::ProcessMaterialOverlapGeomId;
  const bool hasGeomId = type == io::AdditionalBytesType::ProcessMaterialOverlapGeomId;

  TessellationOptions tess = options.tessellation;
  bool staticWritten = false;
  const std::string staticName = name + "_static.vtu";

  // Per-body constants.
  const std::size_t n = ids.size();
  std::vector<std::uint32_t> group(n), number(n);
  std::vector<std::int32_t> groupIndex(n);
  std::vector<std::uint8_t> shape(n);
  std::vector<double> radius(n);
  std::vector<SurfaceMesh> bodyMesh;
  for (std::size_t i = 0; i < n; ++i) {
    group[i] = bodyGroup(ids[i]);
    number[i] = bodyNumber(ids[i]);
    groupIndex[i] = static_cast<std::int32_t>(bodies.groupIndex(ids[i]));
    shape[i] = bodies.shapeCode(ids[i]);
    radius[i] = bodies.radius(ids[i]);
  }

  std::string pvd =
      "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"1.0\" "
      "byte_order=\"LittleEndian\" header_type=\"UInt64\">\n<Collection>\n";
  std::vector<double> pos, quat, vel, omega, speed, overlap;
  std::vector<std::uint32_t> material, rank, geomId;
  for (std::size_t k = 0; k < states.size(); ++k) {
    const io::SimState st = seq.read(states[k], ids);
    if (k == 0 && bodies.hasScene()) {
      const Bounds bb = stateBounds(st, bodies);
      tess.planeCentre = bb.valid() ? bb.centre() : Vec3::Zero();
      tess.planeHalfSize =
          options.planeHalfSize > 0.0 ? options.planeHalfSize : std::max<Real>(bb.diagonal(), 1e-3);
      staticWritten = writeStaticVtu(bodies.scene(), tess, options.binary, dir / staticName);
    }
    std::vector<Vec3> points(n);
    pos.resize(3 * n);
    quat.resize(4 * n);
    vel.resize(3 * n);
    omega.resize(3 * n);
    speed.resize(n);
    overlap.resize(n);
    material.resize(n);
    rank.resize(n);
    geomId.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const io::SimBodyState& b = st.bodies[i];
      points[i] = b.position;
      const Vec4 q = b.orientation.coeffs();
      for (int c = 0; c < 4; ++c) {
        quat[4 * i + c] = q[c];
      }
      const Vec3 w = b.orientation * b.omegaBody;  // I frame
      for (int c = 0; c < 3; ++c) {
        vel[3 * i + c] = b.velocity[c];
        omega[3 * i + c] = w[c];
      }
      speed[i] = b.velocity.norm();
      material[i] = bodies.material(b.id, b.additional.material);
      rank[i] = b.additional.processRank;
      overlap[i] = b.additional.overlapTotal;
      geomId[i] = b.additional.globalGeomId;
    }
    VtuWriter w(options.binary);
    if (!options.tessellate) {
      w.setPoints(points);
      w.setVertexCells();
      w.addPointData<std::uint64_t>("id", ids);
      w.addPointData<std::uint32_t>("group", group);
      w.addPointData<std::uint32_t>("number", number);
      w.addPointData<std::int32_t>("group_index", groupIndex);
      w.addPointData<std::uint32_t>("material", material);
      w.addPointData<std::uint8_t>("shape", shape);
      w.addPointData<double>("radius", radius);
      w.addPointData<double>("orientation", quat, 4);
      w.addPointData<double>("velocity", vel, 3);
      w.addPointData<double>("angular_velocity", omega, 3);
      w.addPointData<double>("speed", speed);
      if (hasRank) {
        w.addPointData<std::uint32_t>("process_rank", rank);
      }
      if (hasOverlap) {
        w.addPointData<double>("overlap", overlap);
      }
      if (hasGeomId) {
        w.addPointData<std::uint32_t>("geometry_id", geomId);
      }
    } else {
      if (bodyMesh.empty()) {
        bodyMesh.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
          const Shape* s = bodies.shape(ids[i]);
          bodyMesh[i] = triangulate(s ? *s : Shape(Sphere{radius[i]}), tess);
        }
      }
      SurfaceMesh all;
      for (std::size_t i = 0; i < n; ++i) {
        all.append(bodyMesh[i], st.bodies[i].orientation.toRotationMatrix(), points[i],
                   static_cast<std::uint32_t>(i));
      }
      // Per-triangle copies of the per-body values.
      auto expand = [&](const auto& v, int comps) {
        using T = typename std::decay_t<decltype(v)>::value_type;
        std::vector<T> out;
        out.reserve(all.owner.size() * static_cast<std::size_t>(comps));
        for (const std::uint32_t o : all.owner) {
          for (int c = 0; c < comps; ++c) {
            out.push_back(v[static_cast<std::size_t>(comps) * o + static_cast<std::size_t>(c)]);
          }
        }
        return out;
      };
      w.setPoints(all.vertices);
      w.setTriangles(all.triangles);
      w.addCellData<std::uint64_t>("id", expand(ids, 1));
      w.addCellData<std::uint32_t>("group", expand(group, 1));
      w.addCellData<std::uint32_t>("number", expand(number, 1));
      w.addCellData<std::int32_t>("group_index", expand(groupIndex, 1));
      w.addCellData<std::uint32_t>("material", expand(material, 1));
      w.addCellData<std::uint8_t>("shape", expand(shape, 1));
      w.addCellData<double>("radius", expand(radius, 1));
      w.addCellData<double>("velocity", expand(vel, 3), 3);
      w.addCellData<double>("angular_velocity", expand(omega, 3), 3);
      w.addCellData<double>("speed", expand(speed, 1));
    }
    char file[64];
    std::snprintf(file, sizeof file, "_%05zu.vtu", k);
    const std::string rel = name + "/" + name + file;
    w.write(dir / rel);
    char t[40];
    std::snprintf(t, sizeof t, "%.17g", st.time);
    pvd += std::string("<DataSet timestep=\"") + t + "\" part=\"0\" file=\"" + rel + "\"/>\n";
    if (staticWritten) {
      pvd +=
          std::string("<DataSet timestep=\"") + t + "\" part=\"1\" file=\"" + staticName + "\"/>\n";
    }
    if (progress) {
      progress(k + 1, states.size(), st.time);
    }
  }
  pvd += "</Collection>\n</VTKFile>\n";
  const fs::path pvdFile = dir / (name + ".pvd");
  std::ofstream f(pvdFile, std::ios::trunc);
  f << pvd;
  if (!f) {
    throw ConvertError(pvdFile.string() + ": cannot write");
  }
  return pvdFile;
}

}  // namespace grain::convert
