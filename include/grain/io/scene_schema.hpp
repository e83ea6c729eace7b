// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <grain/core/common/settings.hpp>

/// The scene format as data: every element grain reads, its attributes (name, type, whether
/// required, default, admissible range, unit) and its child elements. The attributes of the
/// settings structs and of the elements that build bodies are generated from their descriptions
/// (describe() beside each struct, grain/core/common/settings.hpp); the variant attributes and
/// the few keys no struct holds are written in src/io/scene_schema.cpp. The scene reader checks
/// files against these tables, and the XML schema (schemas/scene.xsd) and the format reference
/// (docs/scene-format.md) are generated from them (sceneSchemaXsd, sceneFormatMarkdown), so each
/// attribute is defined in exactly one place.
namespace grain::io::schema {

/// Value type of an attribute.
enum class AttrType : std::uint8_t {
  Real,            ///< one finite floating-point number
  Integer,         ///< unsigned 32-bit integer
  Boolean,         ///< true | false | 1 | 0
  Vector3,         ///< three whitespace-separated numbers
  IntegerVector3,  ///< three whitespace-separated unsigned integers
  RealList,        ///< one or more whitespace-separated numbers
  BodyIdList,      ///< one or more body ids "group,number", whitespace-separated
  BodyIdRange,     ///< exactly two body ids "group,number": first and one past the last
  Enumeration,     ///< one of AttributeSpec::values
  String,          ///< free text (names, file paths)
};

/// Whether an attribute must be given.
enum class AttrUse : std::uint8_t {
  Required,  ///< missing -> error
  Optional,  ///< missing -> AttributeSpec::defaultValue (or "not given" if that is empty)
  Ignored,   ///< accepted for compatibility with existing scene files, has no effect; reported
             ///< in SceneDescription::ignored when present (its value is still checked)
};

/// Admissible range of a numeric attribute (per component for vectors and lists), checked when
/// the file is read: the bounds of the settings descriptions (grain/core/common/settings.hpp).
using Bound = grain::settings::Bound;

/// One attribute of an element.
struct AttributeSpec {
  std::string_view name;
  AttrType type = AttrType::String;
  AttrUse use = AttrUse::Optional;
  /// Text of the default value for Optional attributes ("" = no default: the attribute is
  /// either derived by the reader or only needed in some cases, see doc).
  std::string_view defaultValue = {};
  Bound bound = Bound::None;
  /// Enumeration: accepted values separated by '|'.
  std::string_view values = {};
  /// Enumeration: values of the format that grain does not implement yet ('|'-separated);
  /// they are rejected with a "not supported yet" message instead of "unknown value".
  std::string_view unsupportedValues = {};
  /// SI unit of the value ("" for dimensionless or non-numeric values).
  std::string_view unit = {};
  std::string_view doc = {};
};

/// How the reader treats a child element.
enum class ChildUse : std::uint8_t {
  Parse,        ///< read by grain
  IgnoredGui,   ///< used only by a graphical front end (Visualization): any content accepted,
                ///< not read, reported in SceneDescription::ignored
  Unsupported,  ///< part of the format, not implemented yet: error "not supported yet"
                ///< (an empty element without attributes is accepted and reported as ignored)
};

/// A child element that may appear in an element, how often, and how it is treated.
struct ChildSpec {
  std::string_view name;
  std::uint32_t minOccurs = 0;
  std::uint32_t maxOccurs = 1;  ///< kUnbounded for no limit
  ChildUse use = ChildUse::Parse;
};

/// ChildSpec::maxOccurs without limit.
inline constexpr std::uint32_t kUnbounded = 0xffffffffu;

/// One element in one parent, or one variant of it whose content depends on a discriminating
/// attribute (e.g. Sphere with distribute="uniform").
struct ElementSpec {
  std::string_view name;
  /// Name of the parent element ("" for the root). Elements of the same name in different
  /// parents (Sphere in Geometry and in GlobalGeometries) have separate specifications.
  std::string_view parent = {};
  /// Discriminating attribute ("" if the element has no variants) and this variant's value.
  std::string_view variantAttribute = {};
  std::string_view variantValue = {};
  /// false: a variant of the format that grain does not implement yet.
  bool implemented = true;
  std::span<const AttributeSpec> attributes = {};
  std::span<const ChildSpec> children = {};
  /// Exactly one of the children must be present (Geometry, GlobalSelectiveIds).
  bool exactlyOneChild = false;
  /// Description. For an element with variants, that of the first variant describes the
  /// element, those of the others their variant.
  std::string_view doc = {};
};

/// The namespace of scene files (targetNamespace of the schema).
inline constexpr std::string_view kNamespace = "SceneFile";

/// Every element specification, root ("DynamicsSystem") first. Specifications of the same
/// element name are adjacent, and among them those of the same parent.
std::span<const ElementSpec> elements();

/// All specifications with this element name (every parent, every variant).
std::span<const ElementSpec> elementsNamed(std::string_view name);

/// The specifications of element `name` inside element `parent` (several for elements with
/// variants; empty if the element may not appear there).
std::span<const ElementSpec> elementsIn(std::string_view name, std::string_view parent);

/// The attribute `name` of `spec`, or nullptr.
const AttributeSpec* findAttribute(const ElementSpec& spec, std::string_view name);

/// Checks `text` as a value of the attribute (placeholder, type, bound, enumeration values).
/// Returns "" if it is valid, else the reason, e.g. "must be > 0 (got -1)" (to be prefixed
/// with "attribute 'x' ").
std::string checkValue(const AttributeSpec& spec, std::string_view text);

/// Whether `text` is a valid value of the attribute: checkValue(spec, text).empty().
bool acceptsValue(const AttributeSpec& spec, std::string_view text);

/// The candidate closest to `word` (Levenshtein distance, case-insensitive), if it is close
/// enough to be a likely misspelling (distance <= max(1, |word| / 3)), else the only candidate
/// that is a prefix of `word` or starts with it (at least 3 characters, ignoring case); ""
/// otherwise.
std::string_view closestName(std::string_view word, std::span<const std::string_view> candidates);

/// Names for generated documentation ("real", "> 0", ...).
std::string_view toString(AttrType t);
std::string_view toString(Bound b);

/// The XML schema (XSD 1.0, targetNamespace "SceneFile") generated from the tables: the
/// content of schemas/scene.xsd.
std::string sceneSchemaXsd();

/// The format reference (Markdown) generated from the tables: the content of
/// docs/scene-format.md.
std::string sceneFormatMarkdown();

/// The parts of a '|'-separated list ("a|b|c" -> {"a", "b", "c"}), as the tables store enum
/// values; views into `s`.
std::vector<std::string_view> splitBar(std::string_view s);

}  // namespace grain::io::schema
