// SPDX-License-Identifier: MIT
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <png.h>
#include <string>
#include <vector>

#include <grain/convert/render.hpp>

namespace grain::convert {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string vec(const Vec3& v, const char* open = "<", const char* close = ">") {
  char buf[128];
  std::snprintf(buf, sizeof buf, "%s%.9g, %.9g, %.9g%s", open, v.x(), v.y(), v.z(), close);
  return buf;
}

std::string num(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

/// Grey tone of static bodies, slightly varied by material.
Vec3 staticColour(MaterialId m) {
  const double d = 0.06 * static_cast<double>(m % 4);
  return Vec3(0.72 - d, 0.72 - 0.5 * d, 0.70);
}

// ---- text of the colour bar -------------------------------------------------------------------

constexpr int kGlyphWidth = 5;   // pixels of a glyph at scale 1
constexpr int kGlyphHeight = 7;  // pixels of a glyph at scale 1
constexpr int kGlyphAdvance = 6;

/// A 5x7 glyph: one row per entry from the top, bit 4 the leftmost pixel.
struct Glyph {
  char c;
  std::array<std::uint8_t, kGlyphHeight> rows;
};

/// The characters the colour bar labels need (numbers as printf %g writes them, and the
/// title "speed [m/s]").
constexpr Glyph kGlyphs[] = {
    {'0', {0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e}},
    {'1', {0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e}},
    {'2', {0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f}},
    {'3', {0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e}},
    {'4', {0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02}},
    {'5', {0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e}},
    {'6', {0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e}},
    {'7', {0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}},
    {'8', {0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e}},
    {'9', {0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c}},
    {'.', {0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x0c}},
    {'-', {0x00, 0x00, 0x00, 0x1f, 0x00, 0x00, 0x00}},
    {'+', {0x00, 0x04, 0x04, 0x1f, 0x04, 0x04, 0x00}},
    {'e', {0x00, 0x00, 0x0e, 0x11, 0x1f, 0x10, 0x0e}},
    {'m', {0x00, 0x00, 0x1a, 0x15, 0x15, 0x11, 0x11}},
    {'s', {0x00, 0x00, 0x0f, 0x10, 0x0e, 0x01, 0x1e}},
    {'p', {0x00, 0x00, 0x1e, 0x11, 0x1e, 0x10, 0x10}},
    {'d', {0x01, 0x01, 0x0d, 0x13, 0x11, 0x11, 0x0f}},
    {'/', {0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00}},
    {'[', {0x0e, 0x08, 0x08, 0x08, 0x08, 0x08, 0x0e}},
    {']', {0x0e, 0x02, 0x02, 0x02, 0x02, 0x02, 0x0e}},
};

const Glyph* findGlyph(char c) {
  for (const Glyph& g : kGlyphs) {
    if (g.c == c) {
      return &g;
    }
  }
  return nullptr;  // a space, or a character without a glyph: left blank
}

/// Width in pixels of `text` at `scale`.
int textWidth(const std::string& text, int scale) {
  return text.empty() ? 0 : (static_cast<int>(text.size()) * kGlyphAdvance - 1) * scale;
}

/// A picture in linear RGB ([0, 1] per channel), rows from the top, before gamma.
struct Canvas {
  int width = 0;
  int height = 0;
  std::vector<Vec3> pixels;
  Vec3& at(int x, int y) { return pixels[static_cast<std::size_t>(y) * width + x]; }
  /// Sets the pixels of [x0, x1] x [y0, y1] (clipped) to `colour`, or blends `colour` over
  /// them with weight `alpha`.
  void fill(int x0, int y0, int x1, int y1, const Vec3& colour, double alpha = 1.0) {
    for (int y = std::max(0, y0); y <= std::min(height - 1, y1); ++y) {
      for (int x = std::max(0, x0); x <= std::min(width - 1, x1); ++x) {
        at(x, y) = (1.0 - alpha) * at(x, y) + alpha * colour;
      }
    }
  }
  /// Draws `text` with its top-left corner at (x, y), each glyph pixel a `scale` square.
  void text(int x, int y, const std::string& text, int scale, const Vec3& colour) {
    for (const char c : text) {
      if (const Glyph* g = findGlyph(c)) {
        for (int row = 0; row < kGlyphHeight; ++row) {
          for (int col = 0; col < kGlyphWidth; ++col) {
            if ((g->rows[row] >> (kGlyphWidth - 1 - col)) & 1) {
              fill(x + col * scale, y + row * scale, x + (col + 1) * scale - 1,
                   y + (row + 1) * scale - 1, colour);
            }
          }
        }
      }
      x += kGlyphAdvance * scale;
    }
  }
};

std::string speedLabel(double speed) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", speed);
  return buf;
}

/// The speed colour bar at the right edge: the colour map from speedMin (bottom) to speedMax
/// (top), ticks labelled with the lowest, middle and highest speed, and the title with the
/// unit, on a light panel.
void drawColourBar(Canvas& c, double speedMin, double speedMax) {
  const int scale = std::max(1, (c.height + 150) / 300);  // glyph pixel size: 7 px per 300 px
  const int barX0 = c.width - c.width / 40 - 12;
  const int barX1 = c.width - 12;
  const int barY0 = c.height / 6;
  const int barY1 = c.height - c.height / 6;
  const int glyphH = kGlyphHeight * scale;
  const std::string title = "speed [m/s]";
  const double fractions[3] = {1.0, 0.5, 0.0};  // top to bottom
  std::string labels[3];
  int labelWidth = 0;
  for (int k = 0; k < 3; ++k) {
    labels[k] = speedLabel(speedMin + fractions[k] * (speedMax - speedMin));
    labelWidth = std::max(labelWidth, textWidth(labels[k], scale));
  }
  const int tick = 3 * scale;
  const int gap = 2 * scale;
  const int labelX1 = barX0 - 1 - tick - gap;                // right edge of the labels
  const int titleY = barY0 - glyphH / 2 - 2 * gap - glyphH;  // above the top label
  const int panelX0 = std::min(labelX1 - labelWidth, barX1 - textWidth(title, scale)) - 2 * gap;
  c.fill(panelX0, titleY - 2 * gap, c.width - 4, barY1 + glyphH / 2 + 2 * gap, Vec3::Constant(0.98),
         0.55);
  const Vec3 ink(0.1, 0.1, 0.1);
  c.fill(barX0 - 1, barY0 - 1, barX1, barY1, Vec3::Constant(0.2));
  for (int y = barY0; y < barY1; ++y) {
    c.fill(barX0, y, barX1 - 1, y,
           speedColour(1.0 - static_cast<double>(y - barY0) / (barY1 - barY0)));
  }
  for (int k = 0; k < 3; ++k) {
    const int y = barY0 + static_cast<int>(std::lround((1.0 - fractions[k]) * (barY1 - barY0)));
    c.fill(barX0 - 1 - tick, y - scale / 2, barX0 - 2, y - scale / 2 + scale - 1, ink);
    c.text(labelX1 - textWidth(labels[k], scale), y - glyphH / 2, labels[k], scale, ink);
  }
  c.text(barX1 - textWidth(title, scale), titleY, title, scale, ink);
}

}  // namespace

// ---- PNG --------------------------------------------------------------------------------------

void writePng(const Image& image, const std::filesystem::path& file) {
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  img.width = static_cast<png_uint_32>(image.width);
  img.height = static_cast<png_uint_32>(image.height);
  img.format = PNG_FORMAT_RGB;
  if (!png_image_write_to_file(&img, file.c_str(), 0, image.rgb.data(), 0, nullptr)) {
    throw ConvertError(file.string() + ": cannot write the PNG (" + img.message + ")");
  }
}

Image readPng(const std::filesystem::path& file) {
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&img, file.c_str())) {
    throw ConvertError(file.string() + ": cannot read the PNG (" + img.message + ")");
  }
  img.format = PNG_FORMAT_RGB;
  Image out;
  out.width = static_cast<int>(img.width);
  out.height = static_cast<int>(img.height);
  out.rgb.resize(PNG_IMAGE_SIZE(img));
  if (!png_image_finish_read(&img, nullptr, out.rgb.data(), 0, nullptr)) {
    throw ConvertError(file.string() + ": cannot decode the PNG (" + img.message + ")");
  }
  return out;
}

// ---- camera and colours -----------------------------------------------------------------------

void Camera::frame(Vec3& right, Vec3& trueUp, Vec3& forward) const {
  forward = (target - eye).normalized();
  right = forward.cross(up).normalized();
  trueUp = right.cross(forward);
}

void Camera::validate() const {
  if (!((target - eye).norm() > 0.0)) {
    throw ConvertError("camera: eye and target coincide");
  }
  if (!((target - eye).normalized().cross(up).norm() > 1e-9)) {
    throw ConvertError("camera: the up vector is parallel to the view direction");
  }
  if (width < 1 || height < 1 || width > 16384 || height > 16384) {
    throw ConvertError("camera: the image size must be 1..16384 pixels per side");
  }
  if (!(fovDeg > 0.0 && fovDeg < 179.0)) {
    throw ConvertError("camera: the field of view must be in (0, 179) degrees");
  }
}

Camera fitCamera(const Bounds& bounds, const Vec3& fromDirection, const Vec3& up, double fovDeg,
                 int width, int height) {
  Camera c;
  c.fovDeg = fovDeg;
  c.width = width;
  c.height = height;
  c.up = up.normalized();
  const Vec3 centre = bounds.valid() ? bounds.centre() : Vec3::Zero();
  const double radius = std::max(0.5 * bounds.diagonal(), 1e-3);
  const double halfFov = 0.5 * fovDeg * kPi / 180.0;
  const double aspect = static_cast<double>(width) / height;
  const double fit = std::min(std::tan(halfFov), std::tan(halfFov) * aspect);
  Vec3 dir = fromDirection.normalized();
  if (dir.cross(c.up).norm() < 1e-6) {
    dir = (dir + 0.3 * c.up.unitOrthogonal()).normalized();
  }
  c.target = centre;
  c.eye = centre + dir * (1.05 * radius / std::sin(std::atan(fit)));
  return c;
}

Vec3 speedColour(double t) {
  static const Vec3 stops[5] = {Vec3(0.08, 0.12, 0.50), Vec3(0.15, 0.55, 0.92),
                                Vec3(0.25, 0.78, 0.35), Vec3(0.97, 0.85, 0.18),
                                Vec3(0.85, 0.12, 0.08)};
  if (!std::isfinite(t)) {
    t = 0.0;
  }
  t = std::clamp(t, 0.0, 1.0) * 4.0;
  const int i = std::min(3, static_cast<int>(t));
  const double f = t - i;
  return (1.0 - f) * stops[i] + f * stops[i + 1];
}

// ---- rasterizer -------------------------------------------------------------------------------

RenderScene prepareRenderScene(const SceneBodies& bodies, const TessellationOptions& tessellation) {
  RenderScene s;
  s.tessellation = tessellation;
  if (bodies.hasScene()) {
    s.staticMesh = triangulateStaticBodies(bodies.scene(), tessellation, s.staticBodies);
  }
  return s;
}

std::vector<bool> cutAwayStaticTriangles(const SceneBodies& bodies, const RenderScene& scene,
                                         const Vec3& eye) {
  const SurfaceMesh& m = scene.staticMesh;
  std::vector<bool> cut(m.triangles.size(), false);
  if (!bodies.hasScene()) {
    return cut;
  }
  const auto& sb = bodies.scene().system.bodies;
  const auto& shapes = bodies.scene().system.shapes;
  for (std::size_t t = 0; t < m.triangles.size(); ++t) {
    const Shape& shape = shapes[sb.shapes()[scene.staticBodies[m.owner[t]]]];
    if (!std::holds_alternative<Halfspace>(shape) && !std::holds_alternative<Mesh>(shape)) {
      continue;
    }
    // Halfspace patches wind counter-clockwise seen from the free side.
    const auto& tri = m.triangles[t];
    const Vec3& a = m.vertices[tri[0]];
    const Vec3 n = (m.vertices[tri[1]] - a).cross(m.vertices[tri[2]] - a);
    cut[t] = n.dot(eye - a) < 0.0;
  }
  return cut;
}

namespace {

/// Per-pixel hit: depth along the ray, normal and base colour.
struct Frame {
  int w = 0, h = 0;
  std::vector<double> depth;
  std::vector<Vec3> normal;
  std::vector<Vec3> colour;
  std::vector<Vec3> ray;  // unit ray directions
};

class Rasterizer {
 public:
  Rasterizer(const Camera& cam, int w, int h) : cam_(cam) {
    cam.frame(right_, up_, fwd_);
    f_.w = w;
    f_.h = h;
    const std::size_t n = static_cast<std::size_t>(w) * h;
    f_.depth.assign(n, kInf);
    f_.normal.assign(n, Vec3::Zero());
    f_.colour.assign(n, Vec3::Zero());
    f_.ray.resize(n);
    tanY_ = std::tan(0.5 * cam.fovDeg * kPi / 180.0);
    tanX_ = tanY_ * w / h;
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const double u = (2.0 * (x + 0.5) / w - 1.0) * tanX_;
        const double v = (1.0 - 2.0 * (y + 0.5) / h) * tanY_;
        f_.ray[static_cast<std::size_t>(y) * w + x] = (fwd_ + u * right_ + v * up_).normalized();
      }
    }
  }

  /// Pixel rectangle covering the points (full frame if one is behind the eye).
  bool screenBox(const Vec3* pts, int n, int& x0, int& x1, int& y0, int& y1) const {
    double minX = kInf, maxX = -kInf, minY = kInf, maxY = -kInf;
    for (int i = 0; i < n; ++i) {
      const Vec3 d = pts[i] - cam_.eye;
      const double z = d.dot(fwd_);
      if (z <= 1e-9) {
        x0 = 0;
        y0 = 0;
        x1 = f_.w - 1;
        y1 = f_.h - 1;
        return true;
      }
      const double u = d.dot(right_) / (z * tanX_);
      const double v = d.dot(up_) / (z * tanY_);
      minX = std::min(minX, u);
      maxX = std::max(maxX, u);
      minY = std::min(minY, v);
      maxY = std::max(maxY, v);
    }
    x0 = std::max(0, static_cast<int>(std::floor((minX + 1.0) * 0.5 * f_.w)) - 1);
    x1 = std::min(f_.w - 1, static_cast<int>(std::ceil((maxX + 1.0) * 0.5 * f_.w)) + 1);
    y0 = std::max(0, static_cast<int>(std::floor((1.0 - maxY) * 0.5 * f_.h)) - 1);
    y1 = std::min(f_.h - 1, static_cast<int>(std::ceil((1.0 - minY) * 0.5 * f_.h)) + 1);
    return x0 <= x1 && y0 <= y1;
  }

  void sphere(const Vec3& c, double r, const Vec3& colour) {
    Vec3 corners[8];
    for (int k = 0; k < 8; ++k) {
      corners[k] = c + r * Vec3((k & 1) ? 1 : -1, (k & 2) ? 1 : -1, (k & 4) ? 1 : -1);
    }
    int x0, x1, y0, y1;
    if (!screenBox(corners, 8, x0, x1, y0, y1)) {
      return;
    }
    const Vec3 oc = cam_.eye - c;
    const double cc = oc.squaredNorm() - r * r;
    for (int y = y0; y <= y1; ++y) {
      for (int x = x0; x <= x1; ++x) {
        const std::size_t p = static_cast<std::size_t>(y) * f_.w + x;
        const Vec3& d = f_.ray[p];
        const double b = oc.dot(d);
        const double disc = b * b - cc;
        if (disc < 0.0) {
          continue;
        }
        const double t = -b - std::sqrt(disc);
        if (t <= 0.0 || t >= f_.depth[p]) {
          continue;
        }
        f_.depth[p] = t;
        f_.normal[p] = (cam_.eye + t * d - c) / r;
        f_.colour[p] = colour;
      }
    }
  }

  void triangle(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& colour) {
    const Vec3 pts[3] = {a, b, c};
    int x0, x1, y0, y1;
    if (!screenBox(pts, 3, x0, x1, y0, y1)) {
      return;
    }
    const Vec3 e1 = b - a;
    const Vec3 e2 = c - a;
    Vec3 n = e1.cross(e2);
    if (!(n.norm() > 0.0)) {
      return;
    }
    n.normalize();
    const Vec3 s = cam_.eye - a;
    for (int y = y0; y <= y1; ++y) {
      for (int x = x0; x <= x1; ++x) {
        const std::size_t p = static_cast<std::size_t>(y) * f_.w + x;
        const Vec3& d = f_.ray[p];
        const Vec3 pv = d.cross(e2);
        const double det = e1.dot(pv);
        if (std::abs(det) < 1e-300) {
          continue;
        }
        const double inv = 1.0 / det;
        const double u = s.dot(pv) * inv;
        if (u < 0.0 || u > 1.0) {
          continue;
        }
        const Vec3 qv = s.cross(e1);
        const double v = d.dot(qv) * inv;
        if (v < 0.0 || u + v > 1.0) {
          continue;
        }
        const double t = e2.dot(qv) * inv;
        if (t <= 0.0 || t >= f_.depth[p]) {
          continue;
        }
        f_.depth[p] = t;
        f_.normal[p] = n.dot(d) > 0.0 ? Vec3(-n) : n;  // two-sided
        f_.colour[p] = colour;
      }
    }
  }

  Frame& frame() { return f_; }

 private:
  const Camera& cam_;
  Vec3 right_, up_, fwd_;
  double tanX_ = 1.0, tanY_ = 1.0;
  Frame f_;
};

}  // namespace

Image renderState(const io::SimState& state, const SceneBodies& bodies, const RenderScene& scene,
                  const RenderOptions& options) {
  options.camera.validate();
  const int ss = std::clamp(options.supersample, 1, 4);
  const int w = options.camera.width * ss;
  const int h = options.camera.height * ss;
  Rasterizer r(options.camera, w, h);
  const double range = options.speedMax - options.speedMin;

  // Static bodies, without the walls between the camera and the bodies.
  const auto& sm = scene.staticMesh;
  const std::vector<bool> cut = cutAwayStaticTriangles(bodies, scene, options.camera.eye);
  for (std::size_t t = 0; t < sm.triangles.size(); ++t) {
    if (cut[t]) {
      continue;
    }
    const auto& tri = sm.triangles[t];
    const MaterialId m =
        bodies.hasScene()
            ? bodies.scene().system.bodies.materials()[scene.staticBodies[sm.owner[t]]]
            : 0;
    r.triangle(sm.vertices[tri[0]], sm.vertices[tri[1]], sm.vertices[tri[2]], staticColour(m));
  }
  // Simulated bodies.
  std::map<const Shape*, SurfaceMesh> meshes;
  for (const auto& b : state.bodies) {
    const double speed = b.velocity.norm();
    const Vec3 colour = speedColour(range > 0.0 ? (speed - options.speedMin) / range : 0.0);
    const Shape* s = bodies.shape(b.id);
    if (s == nullptr || std::holds_alternative<Sphere>(*s)) {
      r.sphere(b.position, bodies.radius(b.id), colour);
      continue;
    }
    auto it = meshes.find(s);
    if (it == meshes.end()) {
      it = meshes.emplace(s, triangulate(*s, scene.tessellation)).first;
    }
    const Mat3 rot = b.orientation.toRotationMatrix();
    const SurfaceMesh& m = it->second;
    for (const auto& tri : m.triangles) {
      r.triangle(rot * m.vertices[tri[0]] + b.position, rot * m.vertices[tri[1]] + b.position,
                 rot * m.vertices[tri[2]] + b.position, colour);
    }
  }

  // Shading.
  Frame& f = r.frame();
  const Vec3 light = options.lightDirection.normalized();
  std::vector<Vec3> lit(f.depth.size());
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const std::size_t p = static_cast<std::size_t>(y) * w + x;
      if (!std::isfinite(f.depth[p])) {
        const double g = static_cast<double>(y) / h;
        lit[p] = (1.0 - g) * Vec3(0.93, 0.95, 0.98) + g * Vec3(0.78, 0.83, 0.90);
        continue;
      }
      const Vec3& n = f.normal[p];
      const Vec3 view = -f.ray[p];
      const double diffuse = std::max(0.0, n.dot(light));
      const Vec3 half = (light + view).normalized();
      const double spec = diffuse > 0.0 ? std::pow(std::max(0.0, n.dot(half)), 40.0) : 0.0;
      lit[p] = (0.28 + 0.72 * diffuse) * f.colour[p] + Vec3::Constant(0.25 * spec);
    }
  }
  Canvas canvas;
  canvas.width = options.camera.width;
  canvas.height = options.camera.height;
  canvas.pixels.resize(static_cast<std::size_t>(canvas.width) * canvas.height);
  for (int y = 0; y < canvas.height; ++y) {
    for (int x = 0; x < canvas.width; ++x) {
      Vec3 sum = Vec3::Zero();
      for (int j = 0; j < ss; ++j) {
        for (int i = 0; i < ss; ++i) {
          sum += lit[static_cast<std::size_t>(y * ss + j) * w + (x * ss + i)];
        }
      }
      canvas.at(x, y) = sum / (ss * ss);
    }
  }
  if (options.colourBar && canvas.width >= 64 && canvas.height >= 64) {
    drawColourBar(canvas, options.speedMin, options.speedMax);
  }
  Image img;
  img.width = canvas.width;
  img.height = canvas.height;
  img.rgb.resize(3 * canvas.pixels.size());
  for (std::size_t p = 0; p < canvas.pixels.size(); ++p) {
    for (int k = 0; k < 3; ++k) {
      // sRGB-like gamma for a less flat look.
      const double v = std::pow(std::clamp(canvas.pixels[p][k], 0.0, 1.0), 1.0 / 1.4);
      img.rgb[3 * p + k] = static_cast<std::uint8_t>(std::lround(255.0 * v));
    }
  }
  return img;
}

// ---- POV-Ray and RIB export -------------------------------------------------------------------

void writePovRay(const io::SimState& state, const SceneBodies& bodies, const RenderScene& scene,
                 const RenderOptions& options, const std::filesystem::path& file) {
  const Camera& cam = options.camera;
  cam.validate();
  Vec3 right, up, fwd;
  cam.frame(right, up, fwd);
  const double aspect = static_cast<double>(cam.width) / cam.height;
  const double hfov =
      2.0 * std::atan(std::tan(0.5 * cam.fovDeg * kPi / 180.0) * aspect) * 180.0 / kPi;
  std::ofstream o(file, std::ios::trunc);
  o << "// grain state at t = " << num(state.time) << " s, " << state.bodies.size() << " bodies\n";
  o << "// render: povray +W" << cam.width << " +H" << cam.height << " +A "
    << file.filename().string() << "\n#version 3.7;\nglobal_settings { assumed_gamma 1.0 }\n";
  o << "background { color rgb <0.93, 0.95, 0.98> }\n";
  // right -x*aspect makes POV-Ray's left-handed system right-handed.
  o << "camera { perspective location " << vec(cam.eye) << " sky " << vec(up) << " up y right -x*"
    << num(aspect) << " angle " << num(hfov) << " look_at " << vec(cam.target) << " }\n";
  const double dist = (cam.eye - cam.target).norm();
  o << "light_source { " << vec(cam.target + 3.0 * dist * options.lightDirection.normalized())
    << " color rgb 1 }\n";
  o << "light_source { " << vec(cam.eye) << " color rgb 0.3 shadowless }\n";
  o << "#declare StaticTexture = texture { pigment { color rgb <0.72, 0.72, 0.70> } finish { "
       "diffuse 0.8 } }\n";
  // Static bodies: halfspaces as planes, everything else as a triangle mesh.
  if (bodies.hasScene()) {
    const auto& sb = bodies.scene().system.bodies;
    const auto& shapes = bodies.scene().system.shapes;
    std::vector<bool> isPlane(scene.staticBodies.size(), false);
    const std::vector<bool> cut = cutAwayStaticTriangles(bodies, scene, cam.eye);
    std::vector<bool> planeCut(scene.staticBodies.size(), false);
    for (std::size_t t = 0; t < cut.size(); ++t) {
      planeCut[scene.staticMesh.owner[t]] = planeCut[scene.staticMesh.owner[t]] || cut[t];
    }
    for (std::size_t k = 0; k < scene.staticBodies.size(); ++k) {
      const std::size_t i = scene.staticBodies[k];
      if (const auto* hs = std::get_if<Halfspace>(&shapes[sb.shapes()[i]])) {
        isPlane[k] = true;
        if (planeCut[k]) {
          continue;
        }
        const Vec3 n = (sb.orientations()[i] * hs->normal).normalized();
        o << "plane { " << vec(n) << ", " << num(n.dot(sb.positions()[i]))
          << " texture { StaticTexture } }\n";
      }
    }
    bool any = false;
    for (std::size_t t = 0; t < scene.staticMesh.triangles.size(); ++t) {
      if (isPlane[scene.staticMesh.owner[t]] || cut[t]) {
        continue;
      }
      if (!any) {
        o << "mesh {\n";
        any = true;
      }
      const auto& tri = scene.staticMesh.triangles[t];
      o << "  triangle { " << vec(scene.staticMesh.vertices[tri[0]]) << ", "
        << vec(scene.staticMesh.vertices[tri[1]]) << ", " << vec(scene.staticMesh.vertices[tri[2]])
        << " }\n";
    }
    if (any) {
      o << "  texture { StaticTexture }\n}\n";
    }
  }
  const double range = options.speedMax - options.speedMin;
  for (const auto& b : state.bodies) {
    const Vec3 c = speedColour(range > 0.0 ? (b.velocity.norm() - options.speedMin) / range : 0.0);
    const std::string tex =
        " texture { pigment { color rgb " + vec(c) + " } finish { phong 0.4 diffuse 0.8 } }";
    const Shape* s = bodies.shape(b.id);
    if (s == nullptr || std::holds_alternative<Sphere>(*s)) {
      o << "sphere { " << vec(b.position) << ", " << num(bodies.radius(b.id)) << tex << " }\n";
      continue;
    }
    const SurfaceMesh m = triangulate(*s, scene.tessellation);
    const Mat3 rot = b.orientation.toRotationMatrix();
    o << "mesh {\n";
    for (const auto& tri : m.triangles) {
      o << "  triangle { " << vec(rot * m.vertices[tri[0]] + b.position) << ", "
        << vec(rot * m.vertices[tri[1]] + b.position) << ", "
        << vec(rot * m.vertices[tri[2]] + b.position) << " }\n";
    }
    o << tex << "\n}\n";
  }
  if (!o) {
    throw ConvertError(file.string() + ": cannot write");
  }
}

void writeRib(const io::SimState& state, const SceneBodies& bodies, const RenderScene& scene,
              const RenderOptions& options, const std::string& imageName,
              const std::filesystem::path& file) {
  const Camera& cam = options.camera;
  cam.validate();
  Vec3 right, up, fwd;
  cam.frame(right, up, fwd);
  std::ofstream o(file, std::ios::trunc);
  o << "##RenderMan RIB\n# grain state at t = " << num(state.time) << " s, " << state.bodies.size()
    << " bodies\nversion 3.04\n";
  o << "Display \"" << imageName << "\" \"file\" \"rgb\"\n";
  o << "Format " << cam.width << " " << cam.height << " 1\n";
  // RenderMan's fov is that of the shorter image side.
  const double aspect = static_cast<double>(cam.width) / cam.height;
  const double tanY = std::tan(0.5 * cam.fovDeg * kPi / 180.0);
  const double fov = aspect >= 1.0 ? cam.fovDeg : 2.0 * std::atan(tanY * aspect) * 180.0 / kPi;
  o << "Projection \"perspective\" \"fov\" [" << num(fov) << "]\n";
  // World -> camera (x right, y up, z forward; row-vector convention of RIB matrices).
  const Vec3 t(-cam.eye.dot(right), -cam.eye.dot(up), -cam.eye.dot(fwd));
  o << "ConcatTransform [" << num(right.x()) << " " << num(up.x()) << " " << num(fwd.x()) << " 0 "
    << num(right.y()) << " " << num(up.y()) << " " << num(fwd.y()) << " 0 " << num(right.z()) << " "
    << num(up.z()) << " " << num(fwd.z()) << " 0 " << num(t.x()) << " " << num(t.y()) << " "
    << num(t.z()) << " 1]\n";
  o << "WorldBegin\n";
  o << "LightSource \"ambientlight\" 1 \"intensity\" [0.25]\n";
  o << "LightSource \"distantlight\" 2 \"intensity\" [1] \"from\" [0 0 0] \"to\" "
    << vec(-options.lightDirection.normalized(), "[", "]") << "\n";
  auto polygons = [&o](const std::vector<Vec3>& v,
                       const std::vector<std::array<std::uint32_t, 3>>& tris) {
    o << "PointsPolygons [";
    for (std::size_t k = 0; k < tris.size(); ++k) {
      o << (k ? " 3" : "3");
    }
    o << "] [";
    for (std::size_t k = 0; k < tris.size(); ++k) {
      o << (k ? " " : "") << tris[k][0] << " " << tris[k][1] << " " << tris[k][2];
    }
    o << "] \"P\" [";
    for (std::size_t k = 0; k < v.size(); ++k) {
      o << (k ? " " : "") << num(v[k].x()) << " " << num(v[k].y()) << " " << num(v[k].z());
    }
    o << "]\n";
  };
  const std::vector<bool> cut = cutAwayStaticTriangles(bodies, scene, cam.eye);
  std::vector<std::array<std::uint32_t, 3>> staticTriangles;
  for (std::size_t k = 0; k < scene.staticMesh.triangles.size(); ++k) {
    if (!cut[k]) {
      staticTriangles.push_back(scene.staticMesh.triangles[k]);
    }
  }
  if (!staticTriangles.empty()) {
    o << "AttributeBegin\nColor [0.72 0.72 0.7]\nSurface \"matte\"\n";
    polygons(scene.staticMesh.vertices, staticTriangles);
    o << "AttributeEnd\n";
  }
  const double range = options.speedMax - options.speedMin;
  for (const auto& b : state.bodies) {
    const Vec3 c = speedColour(range > 0.0 ? (b.velocity.norm() - options.speedMin) / range : 0.0);
    o << "AttributeBegin\nColor " << vec(c, "[", "]") << "\nSurface \"plastic\"\n";
    const Shape* s = bodies.shape(b.id);
    if (s == nullptr || std::holds_alternative<Sphere>(*s)) {
      const double rad = bodies.radius(b.id);
      o << "Translate " << num(b.position.x()) << " " << num(b.position.y()) << " "
        << num(b.position.z()) << "\nSphere " << num(rad) << " " << num(-rad) << " " << num(rad)
        << " 360\n";
    } else {
      SurfaceMesh m = triangulate(*s, scene.tessellation);
      const Mat3 rot = b.orientation.toRotationMatrix();
      for (Vec3& v : m.vertices) {
        v = rot * v + b.position;
      }
      polygons(m.vertices, m.triangles);
    }
    o << "AttributeEnd\n";
  }
  o << "WorldEnd\n";
  if (!o) {
    throw ConvertError(file.string() + ": cannot write");
  }
}

}  // namespace grain::convert
