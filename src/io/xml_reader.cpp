// SPDX-License-Identifier: MIT
#include "io/xml_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace grain::io::detail {

namespace {

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && isSpace(s.front())) {
    s.remove_prefix(1);
  }
  while (!s.empty() && isSpace(s.back())) {
    s.remove_suffix(1);
  }
  return s;
}

/// Splits "a|b|c" into its parts.
std::vector<std::string_view> splitBar(std::string_view s) {
  std::vector<std::string_view> parts;
  while (!s.empty()) {
    const auto bar = s.find('|');
    parts.push_back(s.substr(0, bar));
    if (bar == std::string_view::npos) {
      break;
    }
    s.remove_prefix(bar + 1);
  }
  return parts;
}

bool contains(std::string_view barList, std::string_view value) {
  const auto parts = splitBar(barList);
  return std::find(parts.begin(), parts.end(), value) != parts.end();
}

std::string joinComma(const std::vector<std::string_view>& parts) {
  std::string s;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    s += (i ? ", " : "");
    s += parts[i];
  }
  return s;
}

std::string inQuotes(std::string_view s) {
  return "'" + std::string(s) + "'";
}

}  // namespace

// ---- value parsing ----------------------------------------------------------------------------

std::optional<Real> parseReal(std::string_view text) {
  text = trim(text);
  if (!text.empty() && text.front() == '+') {
    text.remove_prefix(1);
  }
  if (text.empty()) {
    return std::nullopt;
  }
  double v = 0.0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

std::optional<std::uint32_t> parseUnsigned(std::string_view text) {
  text = trim(text);
  if (!text.empty() && text.front() == '+') {
    text.remove_prefix(1);
  }
  if (text.empty()) {
    return std::nullopt;
  }
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || v > 0xffffffffull) {
    return std::nullopt;
  }
  return static_cast<std::uint32_t>(v);
}

std::optional<Vec3> parseVector3(std::string_view text) {
  Vec3 v;
  int n = 0;
  text = trim(text);
  while (!text.empty()) {
    std::size_t end = 0;
    while (end < text.size() && !isSpace(text[end])) {
      ++end;
    }
    if (n == 3) {
      return std::nullopt;
    }
    const auto x = parseReal(text.substr(0, end));
    if (!x) {
      return std::nullopt;
    }
    v[n++] = *x;
    text = trim(text.substr(end));
  }
  if (n != 3) {
    return std::nullopt;
  }
  return v;
}

std::optional<bool> parseBoolean(std::string_view text) {
  text = trim(text);
  if (text == "true" || text == "1") {
    return true;
  }
  if (text == "false" || text == "0") {
    return false;
  }
  return std::nullopt;
}

// ---- XmlDocument ------------------------------------------------------------------------------

XmlDocument::XmlDocument(const std::filesystem::path& file, std::string displayName)
    : displayName_(std::move(displayName)) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw SceneError(displayName_, 0, "", "cannot open the scene file");
  }
  buffer_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) {
    throw SceneError(displayName_, 0, "", "cannot read the scene file");
  }
  lineStarts_.push_back(0);
  for (std::size_t i = 0; i < buffer_.size(); ++i) {
    if (buffer_[i] == '\n') {
      lineStarts_.push_back(i + 1);
    }
  }
  // Parsing in place keeps names and values at their offsets in buffer_, which gives attribute
  // line numbers (pugixml itself only reports element offsets).
  const pugi::xml_parse_result result =
      doc_.load_buffer_inplace(buffer_.data(), buffer_.size(), pugi::parse_default);
  if (!result) {
    fail(lineOfOffset(result.offset), "", std::string("malformed XML: ") + result.description());
  }
  if (!doc_.document_element()) {
    fail(0, "", "malformed XML: no root element");
  }
}

std::size_t XmlDocument::lineOfOffset(std::ptrdiff_t offset) const {
  if (offset < 0) {
    return 0;
  }
  const auto it =
      std::upper_bound(lineStarts_.begin(), lineStarts_.end(), static_cast<std::size_t>(offset));
  return static_cast<std::size_t>(it - lineStarts_.begin());
}

std::size_t XmlDocument::lineOf(pugi::xml_node node) const {
  return lineOfOffset(node.offset_debug());
}

std::size_t XmlDocument::lineOf(pugi::xml_attribute attr, pugi::xml_node owner) const {
  if (attr) {
    const char* p = attr.name();
    const char* begin = buffer_.data();
    if (p >= begin && p < begin + buffer_.size()) {
      return lineOfOffset(p - begin);
    }
  }
  return lineOf(owner);
}

void XmlDocument::fail(std::size_t line, const std::string& path,
                       const std::string& message) const {
  throw SceneError(displayName_, line, path, message);
}

// ---- Element ----------------------------------------------------------------------------------

Element::Element(const XmlDocument& doc, Diagnostics& diag, pugi::xml_node node, std::string path)
    : doc_(&doc), diag_(&diag), node_(node), path_(std::move(path)), spec_(nullptr) {
  const auto specs = schema::elementsNamed(node.name());
  if (specs.empty()) {
    fail("element '" + std::string(node.name()) + "' is not part of the format");
  }
  const schema::ElementSpec& first = specs.front();
  if (first.variantAttribute.empty()) {
    spec_ = &first;
  } else {
    const pugi::xml_attribute a = node.attribute(std::string(first.variantAttribute).c_str());
    if (!a) {
      fail("missing required attribute " + inQuotes(first.variantAttribute));
    }
    const std::string_view value = trim(a.value());
    std::vector<std::string_view> known;
    for (const schema::ElementSpec& s : specs) {
      if (s.variantValue == value) {
        if (!s.implemented) {
          failAt(first.variantAttribute, "<" + std::string(first.name) + " " +
                                             std::string(first.variantAttribute) + "=\"" +
                                             std::string(value) + "\"> is not supported yet");
        }
        spec_ = &s;
      }
      if (s.implemented) {
        known.push_back(s.variantValue);
      }
    }
    if (spec_ == nullptr) {
      failAt(first.variantAttribute, "attribute " + inQuotes(first.variantAttribute) +
                                         " has unknown value " + inQuotes(value) +
                                         " (expected one of: " + joinComma(known) + ")");
    }
  }
  checkAttributes();
  checkChildren();
}

void Element::checkAttributes() const {
  const bool isRoot = node_.parent().type() == pugi::node_document;
  for (const pugi::xml_attribute a : node_.attributes()) {
    const std::string_view n = a.name();
    if (isRoot && (n == "xmlns" || n.starts_with("xmlns:") || n.starts_with("xsi:"))) {
      continue;
    }
    const schema::AttributeSpec* s = schema::findAttribute(*spec_, n);
    if (s == nullptr) {
      std::vector<std::string_view> allowed;
      for (const schema::AttributeSpec& as : spec_->attributes) {
        allowed.push_back(as.name);
      }
      std::string msg = "attribute " + inQuotes(n) + " is not part of the format";
      msg += allowed.empty() ? " (this element has no attributes)"
                             : " (allowed: " + joinComma(allowed) + ")";
      doc_->fail(doc_->lineOf(a, node_), path_, msg);
    }
    if (s->use == schema::AttrUse::Ignored) {
      diag_->ignored.push_back(path_ + "@" + std::string(n));
    }
  }
}

void Element::checkChildren() const {
  std::vector<std::uint32_t> counts(spec_->children.size(), 0);
  for (const pugi::xml_node c : node_.children()) {
    if (c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) {
      doc_->fail(doc_->lineOf(c), path_,
                 "unexpected text " + inQuotes(trim(c.value())) + " inside <" +
                     std::string(spec_->name) + ">");
    }
    if (c.type() != pugi::node_element) {
      continue;  // comments, processing instructions
    }
    const std::string_view n = c.name();
    const auto it = std::find_if(spec_->children.begin(), spec_->children.end(),
                                 [&](const schema::ChildSpec& cs) { return cs.name == n; });
    if (it == spec_->children.end()) {
      std::vector<std::string_view> allowed;
      for (const schema::ChildSpec& cs : spec_->children) {
        allowed.push_back(cs.name);
      }
      std::string msg = "element " + inQuotes(n) + " is not part of the format here";
      msg += allowed.empty() ? " (<" + std::string(spec_->name) + "> has no child elements)"
                             : " (allowed: " + joinComma(allowed) + ")";
      doc_->fail(doc_->lineOf(c), childPath(c), msg);
    }
    const auto k = static_cast<std::size_t>(it - spec_->children.begin());
    if (++counts[k] > it->maxOccurs) {
      doc_->fail(doc_->lineOf(c), childPath(c),
                 "element " + inQuotes(n) + " may appear at most " + std::to_string(it->maxOccurs) +
                     " time(s) in <" + std::string(spec_->name) + ">");
    }
    if (it->use == schema::ChildUse::Unsupported) {
      const bool empty = !c.first_attribute() && !c.find_child([](pugi::xml_node x) {
        return x.type() == pugi::node_element || x.type() == pugi::node_pcdata;
      });
      if (!empty) {
        doc_->fail(doc_->lineOf(c), childPath(c),
                   "element " + inQuotes(n) + " is not supported yet");
      }
      diag_->ignored.push_back(childPath(c));
    }
  }
  for (std::size_t k = 0; k < counts.size(); ++k) {
    if (counts[k] < spec_->children[k].minOccurs) {
      fail("missing required element " + inQuotes(spec_->children[k].name));
    }
  }
}

std::string Element::childPath(pugi::xml_node child) const {
  std::string p = path_.empty() ? std::string() : path_ + "/";
  const std::string_view n = child.name();
  p += n;
  const auto it = std::find_if(spec_->children.begin(), spec_->children.end(),
                               [&](const schema::ChildSpec& cs) { return cs.name == n; });
  const std::string nameStr(n);
  const bool repeated = (it != spec_->children.end() && it->maxOccurs > 1) ||
                        child.previous_sibling(nameStr.c_str()) ||
                        child.next_sibling(nameStr.c_str());
  if (n == "RigidBodies" && child.attribute("name")) {
    p += "[name=\"" + std::string(child.attribute("name").value()) + "\"]";
  } else if (repeated) {
    std::size_t index = 1;
    for (pugi::xml_node s = child.previous_sibling(nameStr.c_str()); s;
         s = s.previous_sibling(nameStr.c_str())) {
      ++index;
    }
    p += "[" + std::to_string(index) + "]";
  }
  return p;
}

const schema::AttributeSpec& Element::attrSpec(std::string_view attr) const {
  const schema::AttributeSpec* s = schema::findAttribute(*spec_, attr);
  if (s == nullptr) {
    throw std::logic_error("scene reader: attribute '" + std::string(attr) +
                           "' is not in the table of <" + std::string(spec_->name) + ">");
  }
  return *s;
}

bool Element::has(std::string_view attr) const {
  (void)attrSpec(attr);
  return static_cast<bool>(node_.attribute(std::string(attr).c_str()));
}

std::optional<std::string> Element::text(std::string_view attr) const {
  const schema::AttributeSpec& s = attrSpec(attr);
  const pugi::xml_attribute a = node_.attribute(std::string(attr).c_str());
  if (a) {
    return std::string(trim(a.value()));
  }
  if (s.use == schema::AttrUse::Required) {
    fail("missing required attribute " + inQuotes(attr));
  }
  if (!s.defaultValue.empty()) {
    return std::string(s.defaultValue);
  }
  return std::nullopt;
}

namespace {
[[noreturn]] void noDefault(std::string_view element, std::string_view attr) {
  throw std::logic_error("scene reader: optional attribute '" + std::string(attr) + "' of <" +
                         std::string(element) + "> has no default; use the optional getter");
}

bool withinBound(schema::Bound b, Real v) {
  switch (b) {
    case schema::Bound::Positive:
      return v > 0.0;
    case schema::Bound::NonNegative:
      return v >= 0.0;
    case schema::Bound::UnitInterval:
      return v >= 0.0 && v <= 1.0;
    case schema::Bound::OpenZeroTwo:
      return v > 0.0 && v < 2.0;
    case schema::Bound::AtLeastOne:
      return v >= 1.0;
    default:
      return true;
  }
}
}  // namespace

std::optional<Real> Element::optionalReal(std::string_view attr) const {
  const auto t = text(attr);
  if (!t) {
    return std::nullopt;
  }
  const auto v = parseReal(*t);
  if (!v) {
    failAt(attr, "attribute " + inQuotes(attr) + " must be a number (got " + inQuotes(*t) + ")");
  }
  const schema::Bound b = attrSpec(attr).bound;
  if (!withinBound(b, *v)) {
    failAt(attr, "attribute " + inQuotes(attr) + " must be " + std::string(schema::toString(b)) +
                     " (got " + *t + ")");
  }
  return v;
}

Real Element::real(std::string_view attr) const {
  const auto v = optionalReal(attr);
  if (!v) {
    noDefault(spec_->name, attr);
  }
  return *v;
}

std::optional<std::uint32_t> Element::optionalInteger(std::string_view attr) const {
  const auto t = text(attr);
  if (!t) {
    return std::nullopt;
  }
  const auto v = parseUnsigned(*t);
  if (!v) {
    failAt(attr, "attribute " + inQuotes(attr) + " must be a non-negative integer (got " +
                     inQuotes(*t) + ")");
  }
  const schema::Bound b = attrSpec(attr).bound;
  if (!withinBound(b, static_cast<Real>(*v))) {
    failAt(attr, "attribute " + inQuotes(attr) + " must be " + std::string(schema::toString(b)) +
                     " (got " + *t + ")");
  }
  return v;
}

std::uint32_t Element::integer(std::string_view attr) const {
  const auto v = optionalInteger(attr);
  if (!v) {
    noDefault(spec_->name, attr);
  }
  return *v;
}

bool Element::boolean(std::string_view attr) const {
  const auto t = text(attr);
  if (!t) {
    noDefault(spec_->name, attr);
  }
  const auto v = parseBoolean(*t);
  if (!v) {
    failAt(attr, "attribute " + inQuotes(attr) + " must be true, false, 1 or 0 (got " +
                     inQuotes(*t) + ")");
  }
  return *v;
}

Vec3 Element::vector3(std::string_view attr) const {
  const auto t = text(attr);
  if (!t) {
    noDefault(spec_->name, attr);
  }
  const auto v = parseVector3(*t);
  if (!v) {
    failAt(attr,
           "attribute " + inQuotes(attr) + " must be three numbers (got " + inQuotes(*t) + ")");
  }
  const schema::Bound b = attrSpec(attr).bound;
  bool ok = true;
  if (b == schema::Bound::NonZeroVector) {
    ok = v->norm() > 0.0;
  } else if (b == schema::Bound::PositiveVector) {
    ok = (v->array() > 0.0).all();
  } else if (b == schema::Bound::NonZeroComponents) {
    ok = (v->array() != 0.0).all();
  }
  if (!ok) {
    failAt(attr, "attribute " + inQuotes(attr) + " must be " + std::string(schema::toString(b)) +
                     " (got " + *t + ")");
  }
  return *v;
}

std::string Element::string(std::string_view attr) const {
  const auto t = text(attr);
  if (!t) {
    noDefault(spec_->name, attr);
  }
  return *t;
}

std::string Element::enumeration(std::string_view attr) const {
  const auto t = text(attr);
  if (!t) {
    noDefault(spec_->name, attr);
  }
  const schema::AttributeSpec& s = attrSpec(attr);
  if (contains(s.values, *t)) {
    return *t;
  }
  if (contains(s.unsupportedValues, *t)) {
    failAt(attr,
           "value " + inQuotes(*t) + " of attribute " + inQuotes(attr) + " is not supported yet");
  }
  failAt(attr, "attribute " + inQuotes(attr) + " has unknown value " + inQuotes(*t) +
                   " (expected one of: " + joinComma(splitBar(s.values)) + ")");
}

std::vector<Element> Element::children(std::string_view childName) const {
  std::vector<Element> out;
  const std::string name(childName);  // the range below keeps a pointer to it
  for (const pugi::xml_node c : node_.children(name.c_str())) {
    out.emplace_back(*doc_, *diag_, c, childPath(c));
  }
  return out;
}

std::optional<Element> Element::child(std::string_view childName) const {
  const pugi::xml_node c = node_.child(std::string(childName).c_str());
  if (!c) {
    return std::nullopt;
  }
  return Element(*doc_, *diag_, c, childPath(c));
}

void Element::fail(const std::string& message) const {
  doc_->fail(line(), path_, message);
}

void Element::failAt(std::string_view attr, const std::string& message) const {
  const pugi::xml_attribute a = node_.attribute(std::string(attr).c_str());
  doc_->fail(doc_->lineOf(a, node_), path_, message);
}

void Element::warn(const std::string& message) const {
  std::string s = doc_->displayName() + ":" + std::to_string(line()) + ": ";
  if (!path_.empty()) {
    s += path_ + ": ";
  }
  diag_->warnings.push_back(s + message);
}

void Element::markIgnored() const {
  diag_->ignored.push_back(path_);
}

}  // namespace grain::io::detail
