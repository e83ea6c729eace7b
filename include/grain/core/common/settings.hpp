// SPDX-License-Identifier: MIT
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include <grain/core/common/error.hpp>

/// Settings described once. A settings struct lists its members in a `describe(Visitor&)`
/// function template beside its declaration: for each member the name it has in scene files,
/// whether a scene must give it, its admissible range (Bound), unit, documentation and, for
/// enumerations, the names of the values (enumNames). The default is the member's value in a
/// default-constructed struct and is not restated. Every user of the settings is driven from
/// that one description: the core's range checks (checkBounds), and in grain_io the scene schema
/// rows (hence schemas/scene.xsd and docs/scene-format.md), the scene reader's mapping and checks
/// and the effective configuration. docs/architecture.md#settings shows how to add a member.
///
/// A description:
///
///   template <class V>
///   static constexpr void describe(V&& v) {
///     using S = InclusionSolverSettings;
///     v(settings::field<&S::alphaSorProx>("alphaSORProx").required()
///           .withBound(settings::Bound::OpenZeroTwo).withDoc("SOR relaxation factor"));
///   }
///
/// A visitor is any callable taking each settings::Field in turn.
namespace grain::settings {

/// Admissible range of a numeric value (per component for vectors and lists).
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

/// Whether a scalar value lies within the bound (vector bounds: always true here).
constexpr bool withinBound(Bound b, double v) {
  switch (b) {
    case Bound::Positive:
      return v > 0.0;
    case Bound::NonNegative:
      return v >= 0.0;
    case Bound::UnitInterval:
      return v >= 0.0 && v <= 1.0;
    case Bound::OpenZeroTwo:
      return v > 0.0 && v < 2.0;
    case Bound::AtLeastOne:
      return v >= 1.0;
    default:
      return true;
  }
}

/// The bound as messages and documentation state it: "> 0", "in (0, 2)", ... ("" for None).
constexpr std::string_view boundText(Bound b) {
  switch (b) {
    case Bound::None:
      return "";
    case Bound::Positive:
      return "> 0";
    case Bound::NonNegative:
      return ">= 0";
    case Bound::UnitInterval:
      return "in [0, 1]";
    case Bound::OpenZeroTwo:
      return "in (0, 2)";
    case Bound::AtLeastOne:
      return ">= 1";
    case Bound::NonZeroVector:
      return "a non-zero vector";
    case Bound::PositiveVector:
      return "positive in every component";
    case Bound::NonZeroComponents:
      return "non-zero in every component";
  }
  return "?";
}

/// Whether and how a member appears in scene files.
enum class Use : std::uint8_t {
  Required,  ///< the scene must give it (the struct's default serves programs only)
  Optional,  ///< absent: the default of the default-constructed struct
  Derived,   ///< optional, without a default: absent means "not given", the reader decides
  Internal,  ///< not a scene attribute: described for its range check only
};

/// One name of an enumeration value. A value may have several names (aliases of the scene
/// format); the one not marked alias is the value's name (toString).
template <class E>
struct EnumName {
  E value;
  std::string_view name;
  bool alias = false;  ///< another spelling of a value named before or after
};

/// The names of an enumeration's values: found by argument-dependent lookup of
/// `enumNames(E{})`, declared beside the enumeration, returning a span of EnumName<E>.
template <class E>
constexpr std::span<const EnumName<E>> namesOf() {
  return enumNames(E{});
}

/// The name of an enumeration value (not an alias), "?" for a value without name.
template <class E>
constexpr std::string_view nameOf(E value) {
  for (const EnumName<E>& n : namesOf<E>()) {
    if (n.value == value && !n.alias) {
      return n.name;
    }
  }
  return "?";
}

/// The value of a name (exact spelling); false if there is none.
template <class E>
constexpr bool valueOf(std::string_view name, E& value) {
  for (const EnumName<E>& n : namesOf<E>()) {
    if (n.name == name) {
      value = n.value;
      return true;
    }
  }
  return false;
}

/// One described member of settings struct S, of type T.
template <class S, class T>
struct Field {
  using Struct = S;
  using Value = T;

  std::string_view name;    ///< attribute name in scene files (Internal: the member's name)
  T& (*ref)(S&) = nullptr;  ///< the member
  Use use = Use::Optional;
  Bound bound = Bound::None;
  std::string_view unit = {};  ///< SI unit ("" for dimensionless or non-numeric values)
  std::string_view doc = {};
  /// Enumerations: values of the scene format grain does not implement yet ('|'-separated).
  std::string_view unsupported = {};
  /// The element of the scene that holds the attribute, if not the struct's own element (e.g.
  /// threadCount of InclusionSolverSettings sits on TimeStepperSettings).
  std::string_view element = {};

  constexpr const T& of(const S& s) const { return ref(const_cast<S&>(s)); }
  constexpr T& of(S& s) const { return ref(s); }

  constexpr Field required() const {
    return with([](Field& f) { f.use = Use::Required; });
  }
  constexpr Field derived() const {
    return with([](Field& f) { f.use = Use::Derived; });
  }
  constexpr Field internal() const {
    return with([](Field& f) { f.use = Use::Internal; });
  }
  constexpr Field withBound(Bound b) const {
    return with([b](Field& f) { f.bound = b; });
  }
  constexpr Field withUnit(std::string_view u) const {
    return with([u](Field& f) { f.unit = u; });
  }
  constexpr Field withDoc(std::string_view d) const {
    return with([d](Field& f) { f.doc = d; });
  }
  constexpr Field withUnsupported(std::string_view values) const {
    return with([values](Field& f) { f.unsupported = values; });
  }
  constexpr Field in(std::string_view elementName) const {
    return with([elementName](Field& f) { f.element = elementName; });
  }

 private:
  template <class F>
  constexpr Field with(F&& change) const {
    Field f = *this;
    change(f);
    return f;
  }
};

namespace detail {
template <class M>
struct MemberOf;
template <class S, class T>
struct MemberOf<T S::*> {
  using Struct = S;
  using Value = T;
};
}  // namespace detail

/// The Field of a data member: settings::field<&S::member>("sceneName").
template <auto Member>
constexpr auto field(std::string_view name) {
  using M = detail::MemberOf<decltype(Member)>;
  using S = typename M::Struct;
  using T = typename M::Value;
  return Field<S, T>{.name = name, .ref = [](S& s) -> T& { return s.*Member; }};
}

/// The Field of a member of a member: settings::field<&S::inner, &Inner::member>("name").
template <auto Outer, auto Member>
constexpr auto field(std::string_view name) {
  using O = detail::MemberOf<decltype(Outer)>;
  using M = detail::MemberOf<decltype(Member)>;
  using S = typename O::Struct;
  using T = typename M::Value;
  return Field<S, T>{.name = name, .ref = [](S& s) -> T& { return (s.*Outer).*Member; }};
}

/// Checks every bounded scalar member of `s` against its Bound (finite for real numbers), in
/// the order of the description; throws grain::Error "NAME must be BOUND" for the first that
/// is out of range (NAME the scene name of the member).
template <class S>
void checkBounds(const S& s) {
  S::describe([&s](const auto& f) {
    using T = typename std::remove_cvref_t<decltype(f)>::Value;
    if (f.bound == Bound::None) {
      return;
    }
    if constexpr (std::is_floating_point_v<T>) {
      const T v = f.of(s);
      GRAIN_REQUIRE(std::isfinite(v) && withinBound(f.bound, v),
                    std::string(f.name) + " must be " + std::string(boundText(f.bound)));
    } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      GRAIN_REQUIRE(withinBound(f.bound, static_cast<double>(f.of(s))),
                    std::string(f.name) + " must be " + std::string(boundText(f.bound)));
    }
  });
}

}  // namespace grain::settings
