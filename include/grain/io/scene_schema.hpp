// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

/// The scene format as data: every element grain reads, its attributes (name, type, whether
/// required, default, admissible range) and its child elements. The scene reader checks files
/// against these tables, and the XML schema and the format reference are generated from them,
/// so each attribute is defined in exactly one place.
namespace grain::io::schema {

/// Value type of an attribute.
enum class AttrType : std::uint8_t {
  Real,         ///< one finite floating-point number
  Integer,      ///< unsigned 32-bit integer
  Boolean,      ///< true | false | 1 | 0
  Vector3,      ///< three whitespace-separated numbers
  Enumeration,  ///< one of AttributeSpec::values
  String,       ///< free text (names, file paths)
};

/// Whether an attribute must be given.
enum class AttrUse : std::uint8_t {
  Required,  ///< missing -> error
  Optional,  ///< missing -> AttributeSpec::defaultValue (or "not given" if that is empty)
  Ignored,   ///< accepted for compatibility with existing scene files, has no effect; reported
             ///< in SceneDescription::ignored when present
};

/// Admissible range of a numeric attribute, checked when the value is read.
enum class Bound : std::uint8_t {
  None,
  Positive,           ///< > 0
  NonNegative,        ///< >= 0
  UnitInterval,       ///< in [0, 1]
  OpenZeroTwo,        ///< in (0, 2) (relaxation factors)
  AtLeastOne,         ///< integer >= 1
  NonZeroVector,      ///< vector of non-zero length (directions, normals, axes)
  PositiveVector,     ///< every component > 0 (extents)
  NonZeroComponents,  ///< every component != 0 (scale factors; negative ones mirror)
};

/// One attribute of an element.
struct AttributeSpec {
  std::string_view name;
  AttrType type = AttrType::String;
  AttrUse use = AttrUse::Optional;
  /// Text of the default value for Optional attributes ("" = no default: the reader derives
  /// the value, see doc).
  std::string_view defaultValue = {};
  Bound bound = Bound::None;
  /// Enumeration: accepted values separated by '|'.
  std::string_view values = {};
  /// Enumeration: values of the format that grain does not implement yet ('|'-separated);
  /// they are rejected with a "not supported yet" message instead of "unknown value".
  std::string_view unsupportedValues = {};
  std::string_view doc = {};
};

/// How the reader treats a child element.
enum class ChildUse : std::uint8_t {
  Parse,        ///< read by grain
  IgnoredGui,   ///< used only by a graphical front end (Visualization): accepted, not read
  ReadLater,    ///< part of the format, read by another part of grain (MPISettings)
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

/// One element, or one variant of an element whose content depends on a discriminating
/// attribute (e.g. Sphere with distribute="uniform").
struct ElementSpec {
  std::string_view name;
  /// Discriminating attribute ("" if the element has no variants) and this variant's value.
  std::string_view variantAttribute = {};
  std::string_view variantValue = {};
  /// false: a variant of the format that grain does not implement yet.
  bool implemented = true;
  std::span<const AttributeSpec> attributes = {};
  std::span<const ChildSpec> children = {};
  std::string_view doc = {};
};

/// Every element specification, root ("DynamicsSystem") first.
std::span<const ElementSpec> elements();

/// The specifications with this element name (several for elements with variants).
std::span<const ElementSpec> elementsNamed(std::string_view name);

/// The attribute `name` of `spec`, or nullptr.
const AttributeSpec* findAttribute(const ElementSpec& spec, std::string_view name);

/// Whether `text` is a valid value of the attribute (type, bound and enumeration values).
bool acceptsValue(const AttributeSpec& spec, std::string_view text);

/// Names for generated documentation ("real", "> 0", ...).
std::string_view toString(AttrType t);
std::string_view toString(Bound b);

}  // namespace grain::io::schema
