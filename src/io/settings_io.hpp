// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <grain/core/bodies/body_id.hpp>
#include <grain/core/common/settings.hpp>
#include <grain/core/math/types.hpp>
#include <grain/io/scene_schema.hpp>

#include "io/xml_reader.hpp"

/// The scene format's side of the settings descriptions (grain/core/common/settings.hpp,
/// private to grain_io): schema rows generated from a struct's description, and the reading of
/// its members from an element. Both visit the same description, so the name, default, range,
/// unit, documentation and enumeration names of an attribute are written once, beside the
/// struct.
namespace grain::io::detail {

template <class T>
constexpr bool kIsIntegerVector3 = std::is_same_v<T, std::array<std::uint32_t, 3>>;
template <class T>
constexpr bool kIsBodyIdList = std::is_same_v<T, std::vector<BodyId>>;
template <class T>
constexpr bool kIsBodyIdRange = std::is_same_v<T, std::pair<BodyId, BodyId>>;

/// The attribute type of a member type (std::optional<T>: that of T, for attributes whose
/// absence means "not given").
template <class T>
constexpr schema::AttrType attrTypeOf() {
  if constexpr (settings::detail::IsOptional<T>::value) {
    return attrTypeOf<typename T::value_type>();
  } else if constexpr (std::is_same_v<T, bool>) {
    return schema::AttrType::Boolean;
  } else if constexpr (std::is_enum_v<T>) {
    return schema::AttrType::Enumeration;
  } else if constexpr (std::is_floating_point_v<T>) {
    return schema::AttrType::Real;
  } else if constexpr (std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::uint64_t>) {
    return schema::AttrType::Integer;
  } else if constexpr (std::is_same_v<T, Vec3>) {
    return schema::AttrType::Vector3;
  } else if constexpr (kIsIntegerVector3<T>) {
    return schema::AttrType::IntegerVector3;
  } else if constexpr (std::is_same_v<T, std::vector<Real>>) {
    return schema::AttrType::RealList;
  } else if constexpr (std::is_same_v<T, std::string>) {
    return schema::AttrType::String;
  } else if constexpr (kIsBodyIdList<T>) {
    return schema::AttrType::BodyIdList;
  } else if constexpr (kIsBodyIdRange<T>) {
    return schema::AttrType::BodyIdRange;
  } else {
    static_assert(sizeof(T) == 0, "no scene attribute type for this member type");
  }
}

/// A member's value as scene text (defaults of the schema, the effective configuration).
template <class T>
std::string textOf(const T& v) {
  if constexpr (settings::detail::IsOptional<T>::value) {
    return v ? textOf(*v) : std::string();
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else if constexpr (std::is_enum_v<T>) {
    return std::string(settings::nameOf(v));
  } else if constexpr (std::is_floating_point_v<T>) {
    // Shortest form, exponent without leading zeros as scenes write it ("1e-8", not "1e-08").
    std::string text = formatReal(v);
    const std::size_t e = text.find('e');
    if (e != std::string::npos) {
      std::size_t digits = e + 1;
      if (digits < text.size() && (text[digits] == '-' || text[digits] == '+')) {
        ++digits;
      }
      while (digits + 1 < text.size() && text[digits] == '0') {
        text.erase(digits, 1);
      }
    }
    return text;
  } else if constexpr (std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::uint64_t>) {
    return std::to_string(v);
  } else if constexpr (std::is_same_v<T, Vec3>) {
    return formatReal(v.x()) + " " + formatReal(v.y()) + " " + formatReal(v.z());
  } else if constexpr (std::is_same_v<T, std::vector<Real>>) {
    std::string text;
    for (const Real x : v) {
      text += (text.empty() ? "" : " ") + formatReal(x);
    }
    return text;
  } else if constexpr (std::is_same_v<T, std::string>) {
    return v;
  } else if constexpr (kIsBodyIdList<T>) {
    std::string text;
    for (const BodyId id : v) {
      text += (text.empty() ? "" : " ") + formatBodyId(id);
    }
    return text;
  } else if constexpr (kIsBodyIdRange<T>) {
    return formatBodyId(v.first) + " " + formatBodyId(v.second);
  } else {
    return std::to_string(v[0]) + " " + std::to_string(v[1]) + " " + std::to_string(v[2]);
  }
}

/// The scene names of an enumeration's values, '|'-separated, aliases included.
template <class E>
std::string enumValuesText() {
  std::string out;
  for (const settings::EnumName<E>& n : settings::namesOf<E>()) {
    out += (out.empty() ? "" : "|");
    out += n.name;
  }
  return out;
}

/// Schema rows of one element, owning the text they point to (generated defaults and
/// enumeration value lists). Rows are added in order; rows() is valid once all are added.
class GeneratedAttributes {
 public:
  GeneratedAttributes() = default;
  // Moved, never copied: the rows point into texts_.
  GeneratedAttributes(const GeneratedAttributes&) = delete;
  GeneratedAttributes& operator=(const GeneratedAttributes&) = delete;
  GeneratedAttributes(GeneratedAttributes&&) = default;
  GeneratedAttributes& operator=(GeneratedAttributes&&) = default;

  /// Adds a hand-written row (attributes that are not a settings member).
  GeneratedAttributes& add(const schema::AttributeSpec& row) {
    rows_.push_back(row);
    return *this;
  }

  /// Adds the rows of the scene attributes S::describe lists for `element` ("": the struct's own
  /// element), in the order of the description, after the rows added so far, or before row
  /// `at` (to keep an element's attributes in the order of the scene format).
  template <class S>
  GeneratedAttributes& add(std::string_view element = {}, std::size_t at = kAppend) {
    const S defaults{};
    std::vector<schema::AttributeSpec> added;
    S::describe([&](const auto& f) {
      using T = typename std::remove_cvref_t<decltype(f)>::Value;
      if (f.use == settings::Use::Internal || f.element != element) {
        return;
      }
      schema::AttributeSpec row{.name = f.name,
                                .type = attrTypeOf<T>(),
                                .bound = f.bound,
                                .unsupportedValues = f.unsupported,
                                .unit = f.unit,
                                .doc = f.doc};
      switch (f.use) {
        case settings::Use::Required:
          row.use = schema::AttrUse::Required;
          break;
        case settings::Use::Ignored:
          row.use = schema::AttrUse::Ignored;
          break;
        case settings::Use::Optional:
          row.use = schema::AttrUse::Optional;
          row.defaultValue = keep(textOf(f.value(defaults)));
          break;
        default:
          row.use = schema::AttrUse::Optional;
          break;
      }
      if constexpr (std::is_enum_v<T>) {
        row.values = keep(enumValuesText<T>());
      }
      added.push_back(row);
    });
    rows_.insert(rows_.begin() + static_cast<std::ptrdiff_t>(std::min(at, rows_.size())),
                 added.begin(), added.end());
    return *this;
  }

  static constexpr std::size_t kAppend = static_cast<std::size_t>(-1);

  /// The row named `name` (to adjust a generated row for one element, e.g. its doc).
  schema::AttributeSpec& row(std::string_view name) {
    for (schema::AttributeSpec& r : rows_) {
      if (r.name == name) {
        return r;
      }
    }
    throw std::logic_error("scene schema: no generated attribute '" + std::string(name) + "'");
  }

  /// Makes the row an attribute this element (variant) accepts without effect.
  GeneratedAttributes& ignore(std::string_view name, std::string_view doc) {
    schema::AttributeSpec& r = row(name);
    r.use = schema::AttrUse::Ignored;
    r.defaultValue = {};
    r.unit = {};
    r.doc = doc;
    return *this;
  }

  /// Removes the row (an attribute this element variant does not have).
  GeneratedAttributes& remove(std::string_view name) {
    std::erase_if(rows_, [&](const schema::AttributeSpec& r) { return r.name == name; });
    return *this;
  }

  /// Stores `text` for the lifetime of the rows.
  std::string_view keep(std::string text) { return texts_.emplace_back(std::move(text)); }

  std::span<const schema::AttributeSpec> rows() const { return rows_; }

 private:
  std::deque<std::string> texts_;  // stable addresses
  std::vector<schema::AttributeSpec> rows_;
};

/// The value of attribute `name` of `e` as a T (std::optional<T>: the T); `v` is the member's
/// value before (an enumeration keeps it if the name is unknown, which the rows exclude).
template <class T>
T readValue(const Element& e, std::string_view name, T v) {
  if constexpr (settings::detail::IsOptional<T>::value) {
    using U = typename T::value_type;
    return readValue<U>(e, name, v.value_or(U{}));
  } else if constexpr (std::is_same_v<T, bool>) {
    return e.boolean(name);
  } else if constexpr (std::is_enum_v<T>) {
    if (!settings::valueOf(e.enumeration(name), v)) {
      e.failAt(name, "attribute '" + std::string(name) + "' has an unknown value");
    }
    return v;
  } else if constexpr (std::is_floating_point_v<T>) {
    return e.real(name);
  } else if constexpr (std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::uint64_t>) {
    return e.integer(name);  // scene integers are 32-bit
  } else if constexpr (std::is_same_v<T, Vec3>) {
    return e.vector3(name);
  } else if constexpr (std::is_same_v<T, std::vector<Real>>) {
    return e.realList(name);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return e.string(name);
  } else if constexpr (kIsBodyIdList<T>) {
    return e.bodyIds(name);
  } else if constexpr (kIsBodyIdRange<T>) {
    const std::vector<BodyId> ids = e.bodyIds(name);  // two, checked against the row
    return {ids[0], ids[1]};
  } else {
    return e.integerVector3(name);
  }
}

/// Reads into `s` the members S::describe lists for `element` ("": the element `e` itself):
/// a Required one must be present, an Optional one absent takes the default of the row (the
/// struct's default; a member whose default has no text, as an empty name, is left as it is),
/// a Derived one absent leaves the member as it is, and one that this
/// element (variant) lacks or accepts without effect (Ignored) is not read. Values were checked
/// against the rows (type, range, enumeration names) when `e` was constructed. Then a field
/// required in some cases (requiredWhen; derived or optional elsewhere) that is absent where its
/// condition holds is an error at the element: "missing required attribute 'minPoint' (required
/// with buildMode=\"predefined\")".
template <class S>
void readSettings(const Element& e, S& s, std::string_view element = {}) {
  // The row of a member this element reads, or null.
  const auto rowOf = [&](const auto& f) -> const schema::AttributeSpec* {
    if (f.use == settings::Use::Internal || f.use == settings::Use::Ignored ||
        f.element != element) {
      return nullptr;
    }
    const schema::AttributeSpec* row = schema::findAttribute(e.spec(), f.name);
    return row != nullptr && row->use != schema::AttrUse::Ignored ? row : nullptr;
  };
  S::describe([&](const auto& f) {
    using T = typename std::remove_cvref_t<decltype(f)>::Value;
    const schema::AttributeSpec* row = rowOf(f);
    if (row != nullptr &&
        (e.has(f.name) || (f.use != settings::Use::Derived && !row->defaultValue.empty()) ||
         f.use == settings::Use::Required)) {
      f.assign(s, readValue<T>(e, f.name, f.value(s)));
    }
  });
  S::describe([&](const auto& f) {
    if (f.requiredIf != nullptr && rowOf(f) != nullptr && !e.has(f.name) && f.requiredIf(s)) {
      e.fail("missing required attribute '" + std::string(f.name) + "' (required " +
             std::string(f.requiredCase) + ")");
    }
  });
}

/// An S (default-constructed) with the members `e` gives read into it (readSettings).
template <class S>
S read(const Element& e, std::string_view element = {}) {
  S s{};
  readSettings(e, s, element);
  return s;
}

/// Checks the relations S::relations lists for `element` ("": the element `e` itself), as the
/// core does (settings::checkRelations), and reports the first that does not hold at its
/// attribute: "attribute 'minIter' must be <= maxIter (got 200 > 100)", the values as the scene
/// gives them (the default if absent); vectors "... in every component (got 0 0 0 < 0 0 1)".
template <class S>
void checkRelations(const Element& e, const S& s, std::string_view element = {}) {
  if constexpr (settings::HasRelations<S>) {
    S::relations([&](const auto& r) {
      if (r.element != element || r.holds(s)) {
        return;
      }
      using T = typename std::remove_cvref_t<decltype(r)>::Value;
      const auto text = [&](std::string_view name, const T& v) {
        return e.has(name) ? e.string(name) : textOf(v);
      };
      // "(got 200 > 100)"; vectors with the operator some component fails.
      const std::string op = " " + std::string(settings::orderText(r.order, true)) + " ";
      e.failAt(r.name, "attribute '" + r.requirement().insert(r.name.size(), "'") + " (got " +
                           text(r.name, r.of(s)) + op + text(r.other, r.otherOf(s)) + ")");
    });
  }
}

}  // namespace grain::io::detail
