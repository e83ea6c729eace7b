// SPDX-License-Identifier: MIT
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
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
  AtLeastOne,         ///< >= 1 (counts; also reals, as the compatible forces' exponent)
  OpenUnitInterval,   ///< in (0, 1) (fractions that must neither vanish nor be whole)
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
    case Bound::OpenUnitInterval:
      return v > 0.0 && v < 1.0;
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
    case Bound::OpenUnitInterval:
      return "in (0, 1)";
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
  Ignored,   ///< a scene attribute without member: accepted (value checked), reported, not read
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

/// One described member of settings struct S, of type T: a data member (`ref`), or a value that
/// two members hold together, read and written through accessors (`get`, `set`; e.g. the
/// scene's solver `method`, which sets InclusionSolverSettings::method or ::localMethod).
template <class S, class T>
struct Field {
  using Struct = S;
  using Value = T;

  std::string_view name;         ///< attribute name in scene files (Internal: the member's name)
  T& (*ref)(S&) = nullptr;       ///< the member (null for a field of accessors)
  T (*get)(const S&) = nullptr;  ///< accessors: the value
  void (*set)(S&, const T&) = nullptr;  ///< accessors: sets the value
  Use use = Use::Optional;
  Bound bound = Bound::None;
  /// The bound checkBounds applies if it is wider than that of scenes (`bound`): programs may
  /// use values scenes cannot give (LoadBalanceSettings massPointCount 0: the centres only).
  std::optional<Bound> programBound = {};
  std::string_view unit = {};  ///< SI unit ("" for dimensionless or non-numeric values)
  std::string_view doc = {};
  /// Enumerations: values of the scene format grain does not implement yet ('|'-separated).
  std::string_view unsupported = {};
  /// The element of the scene that holds the attribute, if not the struct's own element (e.g.
  /// threadCount of InclusionSolverSettings sits on TimeStepperSettings).
  std::string_view element = {};
  /// Fields the scene must give where `requiredIf` holds (checked after the others are read),
  /// and the case as the message names it: "missing required attribute 'NAME' (required CASE)".
  bool (*requiredIf)(const S&) = nullptr;
  std::string_view requiredCase = {};

  constexpr T value(const S& s) const { return ref != nullptr ? ref(const_cast<S&>(s)) : get(s); }
  constexpr void assign(S& s, const T& v) const {
    if (ref != nullptr) {
      ref(s) = v;
    } else {
      set(s, v);
    }
  }

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
  constexpr Field withProgramBound(Bound b) const {
    return with([b](Field& f) { f.programBound = b; });
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
  /// Required where `condition` holds; elsewhere the field keeps its use: derived() (absent:
  /// not given, as minPoint without buildMode="predefined") or optional (absent: the default).
  /// `when` names the case: "with buildMode=\"predefined\"" gives "(required with
  /// buildMode=\"predefined\")".
  constexpr Field requiredWhen(bool (*condition)(const S&), std::string_view when) const {
    return with([condition, when](Field& f) {
      f.requiredIf = condition;
      f.requiredCase = when;
    });
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

/// A scene attribute of S's element without a member (Use::Ignored): accepted for files of
/// the format that carry it, its value checked as a T (and against the bound), reported as
/// accepted without effect: settings::ignored<S, Real>("minGridSize").
template <class S, class T>
constexpr Field<S, T> ignored(std::string_view name) {
  return Field<S, T>{.name = name, .use = Use::Ignored};
}

/// The Field of a value held by several members, through accessors:
/// settings::field("method", &selectionOf, &select).
template <class S, class T>
constexpr Field<S, T> field(std::string_view name, T (*get)(const S&), void (*set)(S&, const T&)) {
  return Field<S, T>{.name = name, .get = get, .set = set};
}

namespace detail {
template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};

/// Whether a value of type T lies within the bound (reals also finite); vectors (Eigen) and
/// arrays per component, or as a whole for the vector bounds; an empty optional always.
template <class T>
bool within(Bound b, const T& v) {
  if constexpr (IsOptional<T>::value) {
    return !v.has_value() || within(b, *v);
  } else if constexpr (std::is_floating_point_v<T>) {
    return std::isfinite(v) && withinBound(b, v);
  } else if constexpr (std::is_integral_v<T>) {
    return std::is_same_v<T, bool> || withinBound(b, static_cast<double>(v));
  } else if constexpr (std::is_enum_v<T>) {
    return true;
  } else if constexpr (requires { v.allFinite(); }) {  // Eigen vectors
    switch (b) {
      case Bound::NonZeroVector:
        return v.allFinite() && v.norm() > 0;
      case Bound::PositiveVector:
        return v.allFinite() && (v.array() > 0).all();
      case Bound::NonZeroComponents:
        return v.allFinite() && (v.array() != 0).all();
      default:
        for (decltype(v.size()) i = 0; i < v.size(); ++i) {
          if (!within(b, v[i])) {
            return false;
          }
        }
        return true;
    }
  } else {  // arrays of numbers
    for (const auto& x : v) {
      if (!within(b, x)) {
        return false;
      }
    }
    return true;
  }
}

/// " in every component" for a scalar bound of a vector or array, "" otherwise.
template <class T>
constexpr std::string_view componentSuffix(Bound b) {
  if constexpr (IsOptional<T>::value) {
    return componentSuffix<typename T::value_type>(b);
  } else if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
    return "";
  } else {
    const bool vectorBound =
        b == Bound::NonZeroVector || b == Bound::PositiveVector || b == Bound::NonZeroComponents;
    return vectorBound ? "" : " in every component";
  }
}
}  // namespace detail

/// Checks every bounded member of `s` against its Bound (real numbers also finite; vectors and
/// arrays per component, or as a whole for the vector bounds), in the order of the description;
/// throws grain::Error "PREFIXNAME must be BOUND" for the first that is out of range (NAME the
/// scene name of the member, PREFIX e.g. "collision: "; vectors and arrays "... in every
/// component"). A member with a wider bound for programs (withProgramBound) is checked against
/// that one. Flattened: the description then folds into plain comparisons (as cheap as the checks
/// written out; the local solvers check their settings on every solve).
template <class S>
[[gnu::flatten]] void checkBounds(const S& s, std::string_view prefix = {}) {
  S::describe([&s, prefix](const auto& f) {
    using T = typename std::remove_cvref_t<decltype(f)>::Value;
    const Bound b = f.programBound.value_or(f.bound);
    if (b == Bound::None || f.use == Use::Ignored) {
      return;
    }
    GRAIN_REQUIRE(detail::within(b, f.value(s)), std::string(prefix) + std::string(f.name) +
                                                     " must be " + std::string(boundText(b)) +
                                                     std::string(detail::componentSuffix<T>(b)));
  });
}

/// How a member must compare with another (component-wise for vectors).
enum class Order : std::uint8_t { LessEqual, GreaterEqual, Greater };

/// The operator of an order ("<=") and of its negation (">").
constexpr std::string_view orderText(Order o, bool negated = false) {
  switch (o) {
    case Order::LessEqual:
      return negated ? ">" : "<=";
    case Order::GreaterEqual:
      return negated ? "<" : ">=";
    case Order::Greater:
      return negated ? "<=" : ">";
  }
  return "?";
}

/// A check between two members of S: `name` must be ORDER `other` (e.g. minIter <= maxIter),
/// where `applies` holds (always if null). Listed in `S::relations(v)` beside S::describe; the
/// core checks them (checkRelations), and the scene reader reports a violated one at the
/// attribute `name` with the values given.
template <class S, class T>
struct Relation {
  using Struct = S;
  using Value = T;

  std::string_view name;   ///< scene name of the member the message is about
  std::string_view other;  ///< scene name of the member it is compared with
  T& (*ref)(S&) = nullptr;
  T& (*otherRef)(S&) = nullptr;
  Order order = Order::LessEqual;
  bool (*applies)(const S&) = nullptr;
  std::string_view element = {};  ///< as Field::element

  constexpr const T& of(const S& s) const { return ref(const_cast<S&>(s)); }
  constexpr const T& otherOf(const S& s) const { return otherRef(const_cast<S&>(s)); }
  constexpr bool appliesTo(const S& s) const { return applies == nullptr || applies(s); }

  /// Whether the relation holds in `s` (true where it does not apply).
  bool holds(const S& s) const {
    if (!appliesTo(s)) {
      return true;
    }
    if constexpr (std::is_arithmetic_v<T>) {
      return compare(of(s), otherOf(s));
    } else {  // vectors: every component
      for (decltype(of(s).size()) i = 0; i < of(s).size(); ++i) {
        if (!compare(of(s)[i], otherOf(s)[i])) {
          return false;
        }
      }
      return true;
    }
  }

  /// "minIter must be <= maxIter" (vectors: "... in every component").
  std::string requirement() const {
    return std::string(name) + " must be " + std::string(orderText(order)) + " " +
           std::string(other) + (std::is_arithmetic_v<T> ? "" : " in every component");
  }

  constexpr Relation when(bool (*condition)(const S&)) const {
    Relation r = *this;
    r.applies = condition;
    return r;
  }
  constexpr Relation in(std::string_view elementName) const {
    Relation r = *this;
    r.element = elementName;
    return r;
  }

 private:
  template <class U>
  constexpr bool compare(U a, U b) const {
    switch (order) {
      case Order::LessEqual:
        return a <= b;
      case Order::GreaterEqual:
        return a >= b;
      case Order::Greater:
        return a > b;
    }
    return false;
  }
};

/// The Relation "name ORDER other" of two data members of the same type:
/// settings::relation<&S::minIter, &S::maxIter>("minIter", Order::LessEqual, "maxIter").
template <auto Member, auto Other>
constexpr auto relation(std::string_view name, Order order, std::string_view other) {
  using M = detail::MemberOf<decltype(Member)>;
  using S = typename M::Struct;
  using T = typename M::Value;
  static_assert(std::is_same_v<T, typename detail::MemberOf<decltype(Other)>::Value>);
  return Relation<S, T>{.name = name,
                        .other = other,
                        .ref = [](S& s) -> T& { return s.*Member; },
                        .otherRef = [](S& s) -> T& { return s.*Other; },
                        .order = order};
}

/// Whether S lists relations between its members (S::relations).
template <class S>
concept HasRelations = requires {
  S::relations([](const auto&) {});
};

/// Checks the relations S::relations lists, in order; throws grain::Error
/// "PREFIXNAME must be ORDER OTHER" for the first that does not hold.
template <class S>
[[gnu::flatten]] void checkRelations(const S& s, std::string_view prefix = {}) {
  if constexpr (HasRelations<S>) {
    S::relations([&s, prefix](const auto& r) {
      GRAIN_REQUIRE(r.holds(s), std::string(prefix) + r.requirement());
    });
  }
}

/// checkBounds, then checkRelations: every check the description states.
template <class S>
void check(const S& s, std::string_view prefix = {}) {
  checkBounds(s, prefix);
  checkRelations(s, prefix);
}

}  // namespace grain::settings
