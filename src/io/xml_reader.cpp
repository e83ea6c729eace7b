// SPDX-License-Identifier: MIT
#include "io/xml_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
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

namespace {
/// Splits at whitespace.
std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  text = trim(text);
  while (!text.empty()) {
    std::size_t end = 0;
    while (end < text.size() && !isSpace(text[end])) {
      ++end;
    }
    out.push_back(text.substr(0, end));
    text = trim(text.substr(end));
  }
  return out;
}
}  // namespace

std::optional<std::array<std::uint32_t, 3>> parseUnsignedVector3(std::string_view text) {
  const auto w = words(text);
  if (w.size() != 3) {
    return std::nullopt;
  }
  std::array<std::uint32_t, 3> v{};
  for (std::size_t i = 0; i < 3; ++i) {
    const auto x = parseUnsigned(w[i]);
    if (!x) {
      return std::nullopt;
    }
    v[i] = *x;
  }
  return v;
}

std::optional<std::vector<Real>> parseRealList(std::string_view text) {
  const auto w = words(text);
  if (w.empty()) {
    return std::nullopt;
  }
  std::vector<Real> v;
  for (const std::string_view x : w) {
    const auto r = parseReal(x);
    if (!r) {
      return std::nullopt;
    }
    v.push_back(*r);
  }
  return v;
}

std::optional<std::vector<BodyId>> parseBodyIdList(std::string_view text) {
  const auto w = words(text);
  if (w.empty()) {
    return std::nullopt;
  }
  std::vector<BodyId> v;
  for (const std::string_view x : w) {
    const auto comma = x.find(',');
    if (comma == std::string_view::npos) {
      return std::nullopt;
    }
    const auto g = parseUnsigned(x.substr(0, comma));
    const auto n = parseUnsigned(x.substr(comma + 1));
    // parseUnsigned trims; inside one word there is no whitespace, so "1, 2" is two words.
    if (!g || !n || x.substr(0, comma).empty() || x.substr(comma + 1).empty()) {
      return std::nullopt;
    }
    v.push_back(makeBodyId(*g, *n));
  }
  return v;
}

std::string formatReal(Real v) {
  char buf[32];
  const auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, ptr) : std::to_string(v);
}

// ---- XmlDocument ------------------------------------------------------------------------------

XmlDocument::XmlDocument(std::string text, std::string displayName)
    : displayName_(std::move(displayName)) {
  buffer_.assign(text.begin(), text.end());
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

namespace {
std::string didYouMean(std::string_view word, const std::vector<std::string_view>& candidates) {
  const std::string_view near = schema::closestName(word, candidates);
  return near.empty() ? std::string() : "; did you mean " + inQuotes(near) + "?";
}
}  // namespace

Element::Element(const XmlDocument& doc, Diagnostics& diag, pugi::xml_node node, std::string path)
    : doc_(&doc), diag_(&diag), node_(node), path_(std::move(path)), spec_(nullptr) {
  const std::string_view parentName = node.parent().name();
  const auto specs = schema::elementsIn(node.name(), parentName);
  if (specs.empty()) {
    fail("element '" + std::string(node.name()) + "' is not part of the format here");
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
      if (const auto* d = schema::findAttribute(first, first.variantAttribute)) {
        // The attribute's own check gives the message (placeholder, did you mean, ...).
        const std::string msg = schema::checkValue(*d, value);
        if (!msg.empty()) {
          failAt(first.variantAttribute, msg);
        }
      }
      failAt(first.variantAttribute, "attribute " + inQuotes(first.variantAttribute) +
                                         " has unknown value " + inQuotes(value) +
                                         " (expected one of: " + joinComma(known) + ")");
    }
  }
  checkAttributes();
  checkChildren();
  for (const schema::AttributeSpec& a : spec_->attributes) {
    if (a.use == schema::AttrUse::Optional && !a.defaultValue.empty() &&
        !node_.attribute(std::string(a.name).c_str())) {
      resolve(a.name, std::string(a.defaultValue));
    }
  }
}

void Element::checkAttributes() const {
  const bool isRoot = node_.parent().type() == pugi::node_document;
  for (const pugi::xml_attribute a : node_.attributes()) {
    const std::string_view n = a.name();
    if (isRoot && n == "xmlns" && std::string_view(a.value()) != schema::kNamespace) {
      doc_->fail(doc_->lineOf(a, node_), path_,
                 "the default namespace must be '" + std::string(schema::kNamespace) + "' (got '" +
                     a.value() + "')");
    }
    if (isRoot && (n == "xmlns" || n.starts_with("xmlns:") || n.starts_with("xsi:"))) {
      continue;
    }
    const schema::AttributeSpec* s = schema::findAttribute(*spec_, n);
    if (s == nullptr) {
      std::vector<std::string_view> allowed;
      for (const schema::AttributeSpec& as : spec_->attributes) {
        allowed.push_back(as.name);
      }
      // An attribute of another variant of this element?
      std::string otherVariants;
      if (!spec_->variantAttribute.empty()) {
        for (const schema::ElementSpec& v : schema::elementsIn(spec_->name, spec_->parent)) {
          if (&v != spec_ && schema::findAttribute(v, n) != nullptr) {
            otherVariants += (otherVariants.empty() ? "" : " or ") +
                             std::string(v.variantAttribute) + "=\"" + std::string(v.variantValue) +
                             "\"";
          }
        }
      }
      std::string msg;
      if (!otherVariants.empty()) {
        msg = "attribute " + inQuotes(n) + " is not allowed with " +
              std::string(spec_->variantAttribute) + "=\"" + std::string(spec_->variantValue) +
              "\" (it belongs to " + otherVariants + ")";
      } else {
        msg = "attribute " + inQuotes(n) + " is not part of the format" + didYouMean(n, allowed);
      }
      msg += allowed.empty() ? " (this element has no attributes)"
                             : " (allowed: " + joinComma(allowed) + ")";
      doc_->fail(doc_->lineOf(a, node_), path_, msg);
    }
    const std::string msg = schema::checkValue(*s, a.value());
    if (!msg.empty()) {
      doc_->fail(doc_->lineOf(a, node_), path_, msg);
    }
    if (s->use == schema::AttrUse::Ignored) {
      diag_->ignored.push_back(path_ + "@" + std::string(n));
    }
  }
}

void Element::checkChildren() const {
  std::vector<std::uint32_t> counts(spec_->children.size(), 0);
  std::vector<std::string_view> allowed;
  for (const schema::ChildSpec& cs : spec_->children) {
    allowed.push_back(cs.name);
  }
  std::size_t parsedChildren = 0;
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
      std::string msg;
      const auto elsewhere = schema::elementsNamed(n);
      if (!elsewhere.empty() && !didYouMean(n, allowed).empty()) {
        msg = "element " + inQuotes(n) + " is not part of the format here" + didYouMean(n, allowed);
      } else if (!elsewhere.empty()) {
        msg = "element " + inQuotes(n) + " is not allowed in <" + std::string(spec_->name) +
              "> (it belongs in <" + std::string(elsewhere.front().parent) + ">)";
      } else {
        msg = "element " + inQuotes(n) + " is not part of the format here" + didYouMean(n, allowed);
      }
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
    if (it->use == schema::ChildUse::IgnoredGui) {
      diag_->ignored.push_back(childPath(c));
      continue;
    }
    ++parsedChildren;
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
  if (spec_->exactlyOneChild && parsedChildren != 1) {
    std::vector<std::string_view> parsed;
    for (const schema::ChildSpec& cs : spec_->children) {
      if (cs.use == schema::ChildUse::Parse) {
        parsed.push_back(cs.name);
      }
    }
    fail("<" + std::string(spec_->name) + "> needs exactly one of " + joinComma(parsed) + " (got " +
         std::to_string(parsedChildren) + ")");
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

[[noreturn]] void badTable(std::string_view element, std::string_view attr) {
  throw std::logic_error("scene reader: value of attribute '" + std::string(attr) + "' of <" +
                         std::string(element) + "> does not parse as its table type");
}
}  // namespace

// Values present in the file were checked by checkAttributes, defaults by the table tests; the
// getters only convert.

std::optional<Real> Element::optionalReal(std::string_view attr) const {
  const auto t = text(attr);
  if (!t) {
    return std::nullopt;
  }
  const auto v = parseReal(*t);
  if (!v) {
    badTable(spec_->name, attr);
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
    badTable(spec_->name, attr);
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
    badTable(spec_->name, attr);
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
    badTable(spec_->name, attr);
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
  return *t;
}

std::vector<Real> Element::realList(std::string_view attr) const {
  const auto t = text(attr);
  if (!t) {
    noDefault(spec_->name, attr);
  }
  auto v = parseRealList(*t);
  if (!v) {
    badTable(spec_->name, attr);
  }
  return std::move(*v);
}

std::array<std::uint32_t, 3> Element::integerVector3(std::string_view attr) const {
  const auto t = text(attr);
  if (!t) {
    noDefault(spec_->name, attr);
  }
  const auto v = parseUnsignedVector3(*t);
  if (!v) {
    badTable(spec_->name, attr);
  }
  return *v;
}

std::vector<BodyId> Element::bodyIds(std::string_view attr) const {
  const auto t = text(attr);
  if (!t) {
    noDefault(spec_->name, attr);
  }
  auto v = parseBodyIdList(*t);
  if (!v) {
    badTable(spec_->name, attr);
  }
  return std::move(*v);
}

void Element::resolve(std::string_view attr, std::string value) const {
  if (node_.attribute(std::string(attr).c_str())) {
    return;
  }
  auto& list = diag_->resolved[node_.internal_object()];
  for (auto& [name, v] : list) {
    if (name == attr) {
      v = std::move(value);
      return;
    }
  }
  list.emplace_back(std::string(attr), std::move(value));
}

std::vector<Element> Element::children(std::string_view childName) const {
  std::vector<Element> out;
  const std::string name(childName);  // the range below keeps a pointer to it
  for (const pugi::xml_node c : node_.children(name.c_str())) {
    out.emplace_back(*doc_, *diag_, c, childPath(c));
  }
  return out;
}

std::vector<Element> Element::allChildren() const {
  std::vector<Element> out;
  for (const pugi::xml_node c : node_.children()) {
    if (c.type() != pugi::node_element) {
      continue;
    }
    const auto it = std::find_if(spec_->children.begin(), spec_->children.end(),
                                 [&](const schema::ChildSpec& cs) { return cs.name == c.name(); });
    if (it != spec_->children.end() && it->use == schema::ChildUse::Parse) {
      out.emplace_back(*doc_, *diag_, c, childPath(c));
    }
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
