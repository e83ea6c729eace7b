// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <pugixml.hpp>

#include <grain/core/bodies/body_id.hpp>
#include <grain/core/math/types.hpp>
#include <grain/io/scene_error.hpp>
#include <grain/io/scene_schema.hpp>

/// Table-driven reading of scene XML (private to grain_io): a parsed document that knows line
/// numbers, and Element, which checks one element against its schema::ElementSpec and reads
/// typed attribute values with the bounds of the table.
namespace grain::io::detail {

/// A parsed XML file that maps byte offsets to line numbers.
class XmlDocument {
 public:
  /// Parses the scene text; throws SceneError on XML syntax errors. `displayName` is the file
  /// name used in messages.
  XmlDocument(std::string text, std::string displayName);
  XmlDocument(const XmlDocument&) = delete;
  XmlDocument& operator=(const XmlDocument&) = delete;

  /// The document element (first element child of the document).
  pugi::xml_node root() const { return doc_.document_element(); }
  /// The whole parsed document.
  const pugi::xml_document& document() const { return doc_; }
  const std::string& displayName() const { return displayName_; }
  /// 1-based line of an element.
  std::size_t lineOf(pugi::xml_node node) const;
  /// 1-based line of an attribute (of the element if the attribute's position is unknown).
  std::size_t lineOf(pugi::xml_attribute attr, pugi::xml_node owner) const;
  /// 1-based line of a byte offset.
  std::size_t lineOfOffset(std::ptrdiff_t offset) const;

  [[noreturn]] void fail(std::size_t line, const std::string& path,
                         const std::string& message) const;

 private:
  std::string displayName_;
  std::vector<char> buffer_;  // parsed in place: names and values point into it
  pugi::xml_document doc_;
  std::vector<std::size_t> lineStarts_;
};

/// Collects what a scene contains but grain does not use, and the values it used without them
/// being in the file.
struct Diagnostics {
  std::vector<std::string> ignored;   ///< "path@attribute" or "path" (whole element)
  std::vector<std::string> warnings;  ///< "file:line: path: message"
  /// Per element (pugi node identity): attributes absent from the file with the value the
  /// reader used (defaults and derived values), in the order they were recorded.
  std::unordered_map<const void*, std::vector<std::pair<std::string, std::string>>> resolved;
};

/// One element of the scene, checked against its specification on construction: unknown
/// attributes and child elements, missing or repeated child elements and unsupported children
/// are errors; Ignored attributes are recorded in Diagnostics::ignored.
class Element {
 public:
  /// `spec` is chosen among `schema::elementsIn(node.name(), parent name)` by the
  /// discriminating attribute; an unimplemented variant or unknown discriminator value is an
  /// error. Absent optional attributes with a default are recorded in Diagnostics::resolved.
  Element(const XmlDocument& doc, Diagnostics& diag, pugi::xml_node node, std::string path);

  pugi::xml_node node() const { return node_; }
  const std::string& path() const { return path_; }
  const schema::ElementSpec& spec() const { return *spec_; }
  std::string_view name() const { return spec_->name; }
  std::size_t line() const { return doc_->lineOf(node_); }
  const XmlDocument& document() const { return *doc_; }
  Diagnostics& diagnostics() const { return *diag_; }

  /// Whether the attribute is present in the file.
  bool has(std::string_view attr) const;

  /// Typed values; a missing Optional attribute yields its default, a missing Required one is
  /// an error. The value is checked against the attribute's Bound.
  Real real(std::string_view attr) const;
  std::optional<Real> optionalReal(std::string_view attr) const;
  std::uint32_t integer(std::string_view attr) const;
  std::optional<std::uint32_t> optionalInteger(std::string_view attr) const;
  bool boolean(std::string_view attr) const;
  Vec3 vector3(std::string_view attr) const;
  std::string string(std::string_view attr) const;
  /// Enumeration value; values listed as unsupported are an error.
  std::string enumeration(std::string_view attr) const;
  std::vector<Real> realList(std::string_view attr) const;
  std::array<std::uint32_t, 3> integerVector3(std::string_view attr) const;
  std::vector<BodyId> bodyIds(std::string_view attr) const;

  /// Records the value the reader used for an attribute that is absent from the file (a derived
  /// value, e.g. the default groupId), for the effective configuration.
  void resolve(std::string_view attr, std::string value) const;

  /// Child elements with this name (already checked for count), in document order.
  std::vector<Element> children(std::string_view childName) const;
  std::optional<Element> child(std::string_view childName) const;
  /// All child elements read by grain (not the GUI-only ones), in document order.
  std::vector<Element> allChildren() const;

  /// Error at the element's line.
  [[noreturn]] void fail(const std::string& message) const;
  /// Error at the attribute's line (the element's if the attribute is absent).
  [[noreturn]] void failAt(std::string_view attr, const std::string& message) const;
  /// Records a warning for this element.
  void warn(const std::string& message) const;
  /// Records the whole element as ignored.
  void markIgnored() const;

 private:
  const schema::AttributeSpec& attrSpec(std::string_view attr) const;
  /// Trimmed text of the attribute, or the default; nullopt if absent without default.
  std::optional<std::string> text(std::string_view attr) const;
  void checkAttributes() const;
  void checkChildren() const;
  std::string childPath(pugi::xml_node child) const;

  const XmlDocument* doc_;
  Diagnostics* diag_;
  pugi::xml_node node_;
  std::string path_;
  const schema::ElementSpec* spec_;
};

/// Parses a number, vector or boolean; nullopt if the text is not one.
std::optional<Real> parseReal(std::string_view text);
std::optional<std::uint32_t> parseUnsigned(std::string_view text);
std::optional<Vec3> parseVector3(std::string_view text);
std::optional<bool> parseBoolean(std::string_view text);
std::optional<std::array<std::uint32_t, 3>> parseUnsignedVector3(std::string_view text);
/// One or more whitespace-separated numbers.
std::optional<std::vector<Real>> parseRealList(std::string_view text);
/// One or more whitespace-separated ids "group,number".
std::optional<std::vector<BodyId>> parseBodyIdList(std::string_view text);
/// Text of a number as the effective configuration shows it (shortest round-trip form).
std::string formatReal(Real v);

}  // namespace grain::io::detail
