// SPDX-License-Identifier: MIT
// The XML schema and the Markdown format reference, generated from the scene-format tables.
#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <grain/io/scene_schema.hpp>

namespace grain::io::schema {

namespace {

// ---- the tables grouped by element (name within parent) --------------------------------------

/// All specifications of one element in one parent, the union of their attributes and
/// children (in order of first appearance).
struct ElementGroup {
  std::string_view name;
  std::string_view parent;
  std::vector<const ElementSpec*> variants;  ///< implemented ones
  std::vector<const ElementSpec*> all;       ///< including unimplemented ones
  struct MergedAttribute {
    const AttributeSpec* spec = nullptr;  ///< first occurrence
    bool requiredEverywhere = true;
  };
  std::vector<MergedAttribute> attributes;
  std::vector<ChildSpec> children;
  bool exactlyOneChild = false;
};

ElementGroup makeGroup(std::string_view name, std::string_view parent) {
  ElementGroup g;
  g.name = name;
  g.parent = parent;
  for (const ElementSpec& e : elementsIn(name, parent)) {
    g.all.push_back(&e);
    if (e.implemented) {
      g.variants.push_back(&e);
    }
  }
  if (g.variants.empty()) {
    throw std::logic_error("scene schema: <" + std::string(name) + "> has no implemented variant");
  }
  for (const ElementSpec* v : g.variants) {
    g.exactlyOneChild = g.exactlyOneChild || v->exactlyOneChild;
    for (const AttributeSpec& a : v->attributes) {
      auto it = std::find_if(
          g.attributes.begin(), g.attributes.end(),
          [&](const ElementGroup::MergedAttribute& m) { return m.spec->name == a.name; });
      if (it == g.attributes.end()) {
        g.attributes.push_back({&a, true});
        it = g.attributes.end() - 1;
      }
      it->requiredEverywhere = it->requiredEverywhere && a.use == AttrUse::Required;
    }
    for (const ChildSpec& c : v->children) {
      auto it = std::find_if(g.children.begin(), g.children.end(),
                             [&](const ChildSpec& x) { return x.name == c.name; });
      if (it == g.children.end()) {
        g.children.push_back(c);
      } else if (it->minOccurs != c.minOccurs || it->maxOccurs != c.maxOccurs || it->use != c.use) {
        throw std::logic_error("scene schema: child <" + std::string(c.name) + "> of <" +
                               std::string(name) + "> differs between variants");
      }
    }
  }
  // A child missing from some variant is optional in the merged element.
  for (ChildSpec& c : g.children) {
    for (const ElementSpec* v : g.variants) {
      if (std::none_of(v->children.begin(), v->children.end(),
                       [&](const ChildSpec& x) { return x.name == c.name; })) {
        c.minOccurs = 0;
      }
    }
  }
  // An attribute missing from some variant is optional in the merged element.
  for (auto& m : g.attributes) {
    for (const ElementSpec* v : g.variants) {
      if (findAttribute(*v, m.spec->name) == nullptr) {
        m.requiredEverywhere = false;
      }
    }
  }
  return g;
}

/// Element groups in document order: depth-first from the root through the child lists.
std::vector<ElementGroup> groupsInDocumentOrder() {
  std::vector<ElementGroup> out;
  std::set<std::pair<std::string_view, std::string_view>> seen;
  const auto visit = [&](auto&& self, std::string_view name, std::string_view parent) -> void {
    if (!seen.emplace(name, parent).second) {
      return;
    }
    out.push_back(makeGroup(name, parent));
    const std::vector<ChildSpec> children = out.back().children;
    for (const ChildSpec& c : children) {
      if (c.use == ChildUse::Parse) {
        self(self, c.name, name);
      }
    }
  };
  visit(visit, "DynamicsSystem", "");
  return out;
}

/// Whether an element name occurs in more than one parent.
bool nameIsShared(std::string_view name) {
  std::set<std::string_view> parents;
  for (const ElementSpec& e : elementsNamed(name)) {
    parents.insert(e.parent);
  }
  return parents.size() > 1;
}

std::string typeName(std::string_view name, std::string_view parent) {
  return nameIsShared(name) ? std::string(parent) + std::string(name) : std::string(name);
}

std::string xmlEscape(std::string_view s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// ---- XSD --------------------------------------------------------------------------------------

// A number as the reader's parser accepts it (no inf, nan or hexadecimal).
constexpr std::string_view kRealPattern =
    R"([+\-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+\-]?[0-9]+)?)";
// A number whose mantissa has a non-zero digit.
constexpr std::string_view kNonZeroPattern = R"([+\-]?0*\.?0*[1-9].*)";
// A list of numbers with at least one non-zero entry (after whitespace collapsing).
constexpr std::string_view kNonZeroListPattern = R"((\S+ )*[+\-]?0*\.?0*[1-9]\S*( \S+)*)";
// Text without an unfilled "${" placeholder.
constexpr std::string_view kTextPattern = R"(([^$]|$+[^$\{])*$*)";

/// The simple types the attributes use, written once each.
class SimpleTypes {
 public:
  /// Name (with prefix) of the type of `a`, defining it if needed; "" for enumerations (which
  /// are written inline).
  std::string of(const AttributeSpec& a) {
    switch (a.type) {
      case AttrType::Real:
        return real(a.bound);
      case AttrType::Integer:
        return a.bound == Bound::AtLeastOne ? need("positiveUnsigned") : need("unsigned");
      case AttrType::Boolean:
        return "xs:boolean";
      case AttrType::Vector3:
        switch (a.bound) {
          case Bound::NonZeroVector:
            return need("nonZeroVector3");
          case Bound::PositiveVector:
            return need("positiveVector3");
          case Bound::NonZeroComponents:
            return need("nonZeroComponentsVector3");
          default:
            return need("vector3");
        }
      case AttrType::IntegerVector3:
        return need("positiveUnsignedVector3");
      case AttrType::RealList:
        return a.bound == Bound::Positive ? need("positiveRealList") : need("nonNegativeRealList");
      case AttrType::BodyIdList:
        return need("bodyIdList");
      case AttrType::BodyIdRange:
        return need("bodyIdRange");
      case AttrType::Enumeration:
        return {};
      case AttrType::String:
        return need("text");
    }
    return {};
  }

  /// The definitions, in dependency order.
  std::string definitions() const {
    std::string out;
    for (const std::string& n : order_) {
      out += definition(n);
    }
    return out;
  }

 private:
  std::string real(Bound b) {
    switch (b) {
      case Bound::Positive:
        return need("positiveReal");
      case Bound::NonNegative:
        return need("nonNegativeReal");
      case Bound::UnitInterval:
        return need("unitIntervalReal");
      case Bound::OpenZeroTwo:
        return need("relaxationReal");
      case Bound::AtLeastOne:
        return need("atLeastOneReal");
      case Bound::OpenUnitInterval:
        return need("openUnitIntervalReal");
      default:
        return need("real");
    }
  }

  std::string need(const std::string& name) {
    // Dependencies first.
    static const std::map<std::string, std::vector<std::string>> deps = {
        {"positiveReal", {"real"}},
        {"nonNegativeReal", {"real"}},
        {"unitIntervalReal", {"real"}},
        {"relaxationReal", {"real"}},
        {"atLeastOneReal", {"real"}},
        {"openUnitIntervalReal", {"real"}},
        {"nonZeroReal", {"real"}},
        {"positiveUnsigned", {"unsigned"}},
        {"realList", {"real"}},
        {"vector3", {"realList"}},
        {"nonZeroVector3", {"vector3"}},
        {"positiveRealItems", {"positiveReal"}},
        {"positiveRealList", {"positiveRealItems"}},
        {"positiveVector3", {"positiveRealItems"}},
        {"nonZeroRealList", {"nonZeroReal"}},
        {"nonZeroComponentsVector3", {"nonZeroRealList"}},
        {"nonNegativeRealItems", {"nonNegativeReal"}},
        {"nonNegativeRealList", {"nonNegativeRealItems"}},
        {"positiveUnsignedList", {"positiveUnsigned"}},
        {"positiveUnsignedVector3", {"positiveUnsignedList"}},
        {"bodyIdItems", {"bodyId"}},
        {"bodyIdList", {"bodyIdItems"}},
        {"bodyIdRange", {"bodyIdItems"}},
    };
    if (std::find(order_.begin(), order_.end(), name) == order_.end()) {
      if (const auto it = deps.find(name); it != deps.end()) {
        for (const std::string& d : it->second) {
          need(d);
        }
      }
      order_.push_back(name);
    }
    return "sf:" + name;
  }

  static std::string restriction(const std::string& name, const std::string& base,
                                 const std::string& facets, const std::string& doc) {
    return "  <xs:simpleType name=\"" + name + "\">\n    <xs:annotation><xs:documentation>" +
           xmlEscape(doc) + "</xs:documentation></xs:annotation>\n    <xs:restriction base=\"" +
           base + "\">\n" + facets + "    </xs:restriction>\n  </xs:simpleType>\n";
  }
  static std::string list(const std::string& name, const std::string& item,
                          const std::string& doc) {
    return "  <xs:simpleType name=\"" + name + "\">\n    <xs:annotation><xs:documentation>" +
           xmlEscape(doc) + "</xs:documentation></xs:annotation>\n    <xs:list itemType=\"" + item +
           "\"/>\n  </xs:simpleType>\n";
  }
  static std::string facet(const std::string& kind, std::string_view value) {
    return "      <xs:" + kind + " value=\"" + xmlEscape(value) + "\"/>\n";
  }

  static std::string definition(const std::string& n) {
    if (n == "real") {
      return restriction(n, "xs:double", facet("pattern", kRealPattern),
                         "a finite number (no INF or NaN)");
    }
    if (n == "positiveReal") {
      return restriction(n, "sf:real", facet("minExclusive", "0"), "a number > 0");
    }
    if (n == "nonNegativeReal") {
      return restriction(n, "sf:real", facet("minInclusive", "0"), "a number >= 0");
    }
    if (n == "unitIntervalReal") {
      return restriction(n, "sf:real", facet("minInclusive", "0") + facet("maxInclusive", "1"),
                         "a number in [0, 1]");
    }
    if (n == "relaxationReal") {
      return restriction(n, "sf:real", facet("minExclusive", "0") + facet("maxExclusive", "2"),
                         "a number in (0, 2)");
    }
    if (n == "atLeastOneReal") {
      return restriction(n, "sf:real", facet("minInclusive", "1"), "a number >= 1");
    }
    if (n == "openUnitIntervalReal") {
      return restriction(n, "sf:real", facet("minExclusive", "0") + facet("maxExclusive", "1"),
                         "a number in (0, 1)");
    }
    if (n == "nonZeroReal") {
      return restriction(n, "sf:real", facet("pattern", kNonZeroPattern), "a number != 0");
    }
    if (n == "unsigned") {
      return restriction(n, "xs:unsignedInt", facet("pattern", "[+]?[0-9]+"),
                         "an unsigned 32-bit integer");
    }
    if (n == "positiveUnsigned") {
      return restriction(n, "sf:unsigned", facet("minInclusive", "1"), "an integer >= 1");
    }
    if (n == "realList") {
      return list(n, "sf:real", "whitespace-separated numbers");
    }
    if (n == "vector3") {
      return restriction(n, "sf:realList", facet("length", "3"), "three numbers");
    }
    if (n == "nonZeroVector3") {
      return restriction(n, "sf:vector3", facet("pattern", kNonZeroListPattern),
                         "three numbers, not all 0");
    }
    if (n == "positiveRealItems") {
      return list(n, "sf:positiveReal", "numbers > 0");
    }
    if (n == "positiveRealList") {
      return restriction(n, "sf:positiveRealItems", facet("minLength", "1"),
                         "one or more numbers > 0");
    }
    if (n == "positiveVector3") {
      return restriction(n, "sf:positiveRealItems", facet("length", "3"), "three numbers > 0");
    }
    if (n == "nonNegativeRealItems") {
      return list(n, "sf:nonNegativeReal", "numbers >= 0");
    }
    if (n == "nonZeroRealList") {
      return list(n, "sf:nonZeroReal", "numbers != 0");
    }
    if (n == "nonZeroComponentsVector3") {
      return restriction(n, "sf:nonZeroRealList", facet("length", "3"), "three numbers != 0");
    }
    if (n == "nonNegativeRealList") {
      return restriction(n, "sf:nonNegativeRealItems", facet("minLength", "1"),
                         "one or more numbers >= 0");
    }
    if (n == "positiveUnsignedList") {
      return list(n, "sf:positiveUnsigned", "integers >= 1");
    }
    if (n == "positiveUnsignedVector3") {
      return restriction(n, "sf:positiveUnsignedList", facet("length", "3"), "three integers >= 1");
    }
    if (n == "bodyId") {
      return restriction(n, "xs:token", facet("pattern", "[+]?[0-9]+,[+]?[0-9]+"),
                         "a body id \"group,number\"");
    }
    if (n == "bodyIdItems") {
      return list(n, "sf:bodyId", "body ids");
    }
    if (n == "bodyIdList") {
      return restriction(n, "sf:bodyIdItems", facet("minLength", "1"), "one or more body ids");
    }
    if (n == "bodyIdRange") {
      return restriction(n, "sf:bodyIdItems", facet("length", "2"),
                         "two body ids: the first and one past the last");
    }
    if (n == "text") {
      return restriction(n, "xs:string", facet("pattern", kTextPattern),
                         "text without an unfilled ${...} placeholder");
    }
    throw std::logic_error("scene schema: unknown simple type " + n);
  }

  std::vector<std::string> order_;
};

std::string attributeDoc(const AttributeSpec& a) {
  std::string doc(a.doc);
  if (!a.unit.empty()) {
    doc += (doc.empty() ? "" : " ") + std::string("[") + std::string(a.unit) + "]";
  }
  if (!a.defaultValue.empty()) {
    doc += (doc.empty() ? "" : " ") + std::string("(default ") + std::string(a.defaultValue) + ")";
  }
  if (a.use == AttrUse::Ignored) {
    doc = "accepted for compatibility, no effect" + (doc.empty() ? "" : ": " + doc);
  }
  return doc;
}

void writeAttributes(std::ostringstream& out, const ElementGroup& g, SimpleTypes& types) {
  for (const auto& m : g.attributes) {
    const AttributeSpec& a = *m.spec;
    out << "      <xs:attribute name=\"" << a.name << "\"";
    const std::string type = types.of(a);
    if (!type.empty()) {
      out << " type=\"" << type << "\"";
    }
    out << " use=\"" << (m.requiredEverywhere ? "required" : "optional") << "\">\n";
    std::string doc = attributeDoc(a);
    if (!g.variants.front()->variantAttribute.empty() &&
        a.name == g.variants.front()->variantAttribute) {
      // The discriminator: the docs of all variants.
      doc.clear();
      for (const ElementSpec* v : g.variants) {
        const AttributeSpec* d = findAttribute(*v, a.name);
        if (d != nullptr && !d->doc.empty() && doc.find(d->doc) == std::string::npos) {
          doc += (doc.empty() ? "" : "; ") + std::string(d->doc);
        }
      }
    }
    if (!doc.empty()) {
      out << "        <xs:annotation><xs:documentation>" << xmlEscape(doc)
          << "</xs:documentation></xs:annotation>\n";
    }
    if (type.empty()) {
      out << "        <xs:simpleType>\n          <xs:restriction base=\"xs:token\">\n";
      for (const std::string_view v : splitBar(a.values)) {
        out << "            <xs:enumeration value=\"" << xmlEscape(v) << "\"/>\n";
      }
      out << "          </xs:restriction>\n        </xs:simpleType>\n";
    }
    out << "      </xs:attribute>\n";
  }
}

std::string occurs(std::uint32_t minOccurs, std::uint32_t maxOccurs) {
  std::string s;
  if (minOccurs != 1) {
    s += " minOccurs=\"" + std::to_string(minOccurs) + "\"";
  }
  if (maxOccurs != 1) {
    s += " maxOccurs=\"" +
         (maxOccurs == kUnbounded ? std::string("unbounded") : std::to_string(maxOccurs)) + "\"";
  }
  return s;
}

std::string childElement(const ChildSpec& c, std::string_view parent, std::uint32_t minOccurs,
                         std::uint32_t maxOccurs, const std::string& indent) {
  if (c.use == ChildUse::Unsupported) {
    throw std::logic_error("scene schema: unsupported child <" + std::string(c.name) +
                           "> has no schema type");
  }
  const std::string type =
      c.use == ChildUse::IgnoredGui ? std::string("GuiOnly") : typeName(c.name, parent);
  return indent + "<xs:element name=\"" + std::string(c.name) + "\" type=\"sf:" + type + "\"" +
         occurs(minOccurs, maxOccurs) + "/>\n";
}

/// The content model of an element group. XSD 1.0 forms: xs:all for children that appear at
/// most once, a sequence for one kind of child, (U*, (X, U*)?) for one repeated and one single
/// child, a repeated choice for several repeated kinds, a choice for exactly one child.
void writeContent(std::ostringstream& out, const ElementGroup& g) {
  const auto& ch = g.children;
  if (ch.empty()) {
    return;
  }
  const std::string in = "        ";
  if (g.exactlyOneChild) {
    out << "      <xs:choice>\n";
    for (const ChildSpec& c : ch) {
      out << childElement(c, g.name, 1, 1, in);
    }
    out << "      </xs:choice>\n";
    return;
  }
  const bool allSingle =
      std::all_of(ch.begin(), ch.end(), [](const ChildSpec& c) { return c.maxOccurs <= 1; });
  if (allSingle) {
    out << "      <xs:all>\n";
    for (const ChildSpec& c : ch) {
      out << childElement(c, g.name, c.minOccurs, 1, in);
    }
    out << "      </xs:all>\n";
    return;
  }
  if (ch.size() == 1) {
    out << "      <xs:sequence>\n"
        << childElement(ch[0], g.name, ch[0].minOccurs, ch[0].maxOccurs, in)
        << "      </xs:sequence>\n";
    return;
  }
  std::vector<const ChildSpec*> repeated, single;
  for (const ChildSpec& c : ch) {
    (c.maxOccurs == kUnbounded ? repeated : single).push_back(&c);
  }
  if (repeated.size() == 1 && single.size() == 1 && repeated[0]->minOccurs == 0 &&
      single[0]->maxOccurs == 1) {
    const ChildSpec& u = *repeated[0];
    const ChildSpec& x = *single[0];
    out << "      <xs:sequence>\n"
        << childElement(u, g.name, 0, kUnbounded, in) << "        <xs:sequence"
        << occurs(x.minOccurs, 1) << ">\n"
        << childElement(x, g.name, 1, 1, in + "  ")
        << childElement(u, g.name, 0, kUnbounded, in + "  ")
        << "        </xs:sequence>\n      </xs:sequence>\n";
    return;
  }
  if (single.empty() &&
      std::all_of(ch.begin(), ch.end(), [](const ChildSpec& c) { return c.minOccurs == 0; })) {
    out << "      <xs:choice minOccurs=\"0\" maxOccurs=\"unbounded\">\n";
    for (const ChildSpec& c : ch) {
      out << childElement(c, g.name, 1, 1, in);
    }
    out << "      </xs:choice>\n";
    return;
  }
  throw std::logic_error("scene schema: the children of <" + std::string(g.name) +
                         "> have no exact XSD 1.0 content model");
}

// ---- Markdown ---------------------------------------------------------------------------------

std::string mdEscape(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string mdType(const AttributeSpec& a) {
  std::string t(toString(a.type));
  if (a.type == AttrType::Enumeration) {
    std::string values;
    for (const std::string_view v : splitBar(a.values)) {
      values += (values.empty() ? "" : ", ") + std::string("`") + std::string(v) + "`";
    }
    t = "one of " + values;
  }
  if (a.bound != Bound::None) {
    t += " (" + std::string(toString(a.bound)) + ")";
  }
  return t;
}

std::string mdUse(const AttributeSpec& a) {
  switch (a.use) {
    case AttrUse::Required:
      return "required";
    case AttrUse::Optional:
      return "optional";
    case AttrUse::Ignored:
      return "ignored";
  }
  return "";
}

std::string occursText(const ChildSpec& c) {
  if (c.maxOccurs == kUnbounded) {
    return c.minOccurs == 0 ? "any number" : std::to_string(c.minOccurs) + " or more";
  }
  if (c.minOccurs == c.maxOccurs) {
    return "exactly " + std::to_string(c.minOccurs);
  }
  return std::to_string(c.minOccurs) + " to " + std::to_string(c.maxOccurs);
}

std::string pathOf(const ElementGroup& g, const std::vector<ElementGroup>& all) {
  std::string path(g.name);
  std::string_view parent = g.parent;
  while (!parent.empty()) {
    path = std::string(parent) + "/" + path;
    const auto it = std::find_if(all.begin(), all.end(),
                                 [&](const ElementGroup& x) { return x.name == parent; });
    parent = it == all.end() ? std::string_view() : it->parent;
  }
  return path;
}

std::string anchorOf(const std::string& path) {
  std::string a;
  for (const char c : path) {
    if (c == '/') {
      a += '-';
    } else {
      a += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return a;
}

constexpr std::string_view kMarkdownIntro = R"(# Scene file format

<!-- Generated by `grain-scene-schema markdown` from the format tables in src/io/scene_schema.cpp
     and the settings descriptions they include (describe() beside each settings struct,
     docs/architecture.md#settings). Do not edit; a test checks that this file equals the
     generator's output. -->

A grain scene file is an XML document with the root element `DynamicsSystem`. The format is
GRSF's: its scene files load unchanged. This reference lists every element and attribute grain
accepts; the XML schema `schemas/scene.xsd` is generated from the same tables.

## General rules

- **Namespace.** Scene files should declare the default namespace `SceneFile`
  (`<DynamicsSystem xmlns="SceneFile">`), which is the schema's target namespace. grain also
  reads files without it (element names are matched without namespace), but such files cannot
  be validated with the schema.
- **Strictness.** An element or attribute that is not listed here is an error that names the
  file, the line, the element path and the closest valid name ("did you mean ..."). Every value
  is checked against its type and range; a value that still contains a `${...}` placeholder (of
  a job generator) is reported as an unfilled placeholder.
- **Ignored parts.** `Visualization` elements (used only by GRSF's graphical front end; any
  content) and the attributes marked *ignored* below (carried by GRSF's files but without
  effect) are accepted; grain-sim lists them once at start.
- **Defaults.** Optional attributes take the default shown. grain-sim prints the effective
  configuration, with every default and derived value filled in, and writes it beside the
  output as `EffectiveScene.xml`.
- **Overrides.** `grain-sim --set 'XPATH=VALUE'` sets attribute values before the file is read,
  e.g. `--set 'SceneSettings/ContactParameterMap/ContactParameter[1]/@mu=0.3'` (XPath 1.0,
  relative to the root element; every matched attribute is set; an XPath matching nothing is an
  error; `.../@name` of matched elements that lack the attribute adds it). `--print-scene`
  writes the resulting scene and exits.
- **Random values** (random radii, jitter, random global geometry ids) of body k of a
  `RigidBodies` group come from a counter-based stream keyed by the seed and k (see
  `grain/io/body_random.hpp`), so any subset of bodies gets the values of the full scene.
- **Units** are SI; angles in degrees (`deg`) or radians (`rad`) as named. Frames: I is the
  inertial frame, K a body's frame (origin at the centre of mass of simulated bodies).

## What the schema cannot check

The schema is XSD 1.0 (`xmllint --noout --schema schemas/scene.xsd FILE` validates). XSD 1.0
cannot make an element's content depend on an attribute value, so for elements with variants
(e.g. `Sphere distribute="uniform|random"`) it accepts the union of the variants' attributes;
required attributes of single variants, rules between attributes (minimum <= maximum, `deg` or
`rad`, one value per interval, ids defined in `GlobalGeometries`, `.sim` and mesh files that
exist) and the number of `ContactParameterStandard` elements are checked by grain only. Every
other rule (element nesting and counts, attribute names, types and ranges, placeholders) is
checked by both.

## Value types

| type | syntax |
|---|---|
| real | a finite decimal number, e.g. `0.5`, `-1e-3` (no `inf`, `nan`) |
| integer | an unsigned 32-bit integer |
| boolean | `true`, `false`, `1` or `0` |
| vector3 | three whitespace-separated reals, e.g. `0 0 -1` |
| integer vector3 | three whitespace-separated integers |
| real list | one or more whitespace-separated reals |
| body id list | one or more body ids `group,number`, whitespace-separated, e.g. `0,0 0,9 1,3` |
| body id range | two body ids `g1,n1 g2,n2`: the ids from the first up to, not including, the second |
| enumeration | one of the listed words |
| string | any text without `${` |

Body ids are `(groupId, number)`; numbers count from 0 within a group and continue across
`RigidBodies` elements with the same `groupId`.

## Elements
)";

}  // namespace

std::string sceneSchemaXsd() {
  const std::vector<ElementGroup> groups = groupsInDocumentOrder();
  SimpleTypes types;
  std::ostringstream complex;
  for (const ElementGroup& g : groups) {
    complex << "  <xs:complexType name=\"" << typeName(g.name, g.parent) << "\">\n";
    std::string doc;
    for (const ElementSpec* v : g.all) {
      if (!v->doc.empty()) {
        doc += (doc.empty() ? "" : " ") + std::string(v->doc) + ".";
      }
    }
    if (!doc.empty()) {
      complex << "    <xs:annotation><xs:documentation>" << xmlEscape(doc)
              << "</xs:documentation></xs:annotation>\n";
    }
    std::ostringstream body;
    writeContent(body, g);
    writeAttributes(body, g, types);
    // Indentation of the content and attributes: one level below the complexType.
    std::string b = body.str();
    std::string shifted;
    std::istringstream lines(b);
    for (std::string line; std::getline(lines, line);) {
      shifted += line.substr(std::min<std::size_t>(2, line.size())) + "\n";
    }
    complex << shifted << "  </xs:complexType>\n";
  }
  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<!-- XML schema (XSD 1.0) of grain scene files. Generated by `grain-scene-schema xsd` "
         "from the\n"
      << "     format tables in src/io/scene_schema.cpp and the settings descriptions (describe()\n"
      << "     beside each settings struct); do not edit. Reference: docs/scene-format.md. -->\n"
      << "<xs:schema xmlns:xs=\"http://www.w3.org/2001/XMLSchema\" targetNamespace=\"" << kNamespace
      << "\"\n"
      << "           xmlns:sf=\"" << kNamespace
      << "\" elementFormDefault=\"qualified\" attributeFormDefault=\"unqualified\">\n\n"
      << "  <xs:element name=\"DynamicsSystem\" type=\"sf:DynamicsSystem\"/>\n\n"
      << "  <!-- Value types -->\n"
      << types.definitions() << "\n"
      << "  <!-- Content used only by graphical front ends: anything -->\n"
      << "  <xs:complexType name=\"GuiOnly\" mixed=\"true\">\n"
      << "    <xs:sequence>\n"
      << "      <xs:any minOccurs=\"0\" maxOccurs=\"unbounded\" processContents=\"skip\"/>\n"
      << "    </xs:sequence>\n"
      << "    <xs:anyAttribute processContents=\"skip\"/>\n"
      << "  </xs:complexType>\n\n"
      << "  <!-- Elements -->\n"
      << complex.str() << "</xs:schema>\n";
  return out.str();
}

std::string sceneFormatMarkdown() {
  const std::vector<ElementGroup> groups = groupsInDocumentOrder();
  std::ostringstream out;
  out << kMarkdownIntro;
  for (const ElementGroup& g : groups) {
    const std::string path = pathOf(g, groups);
    out << "\n### " << path << "\n\n";
    // The first specification's doc describes the element, those of the others their variant.
    if (!g.all.front()->doc.empty()) {
      out << mdEscape(g.all.front()->doc) << ".\n\n";
    }
    if (!g.children.empty()) {
      out << (g.exactlyOneChild ? "Children (exactly one of them):\n\n" : "Children:\n\n");
      out << "| element | occurs | |\n|---|---|---|\n";
      for (const ChildSpec& c : g.children) {
        std::string link;
        if (c.use == ChildUse::IgnoredGui) {
          link = "GUI only: any content, ignored";
        } else {
          const std::string childPath = path + "/" + std::string(c.name);
          link = "[" + childPath + "](#" + anchorOf(childPath) + ")";
        }
        out << "| `" << c.name << "` | " << (g.exactlyOneChild ? "0 or 1" : occursText(c)) << " | "
            << link << " |\n";
      }
      out << "\n";
    }
    for (const ElementSpec* v : g.all) {
      if (!v->variantValue.empty()) {
        out << "**" << v->variantAttribute << "=\"" << v->variantValue << "\"**"
            << (v->implemented ? "" : ": not supported yet") << "\n\n";
        if (!v->doc.empty() && v != g.all.front()) {
          out << mdEscape(v->doc) << ".\n\n";
        }
      }
      if (!v->implemented) {
        continue;
      }
      if (v->attributes.empty()) {
        if (v->variantValue.empty()) {
          out << "No attributes.\n\n";
        }
        continue;
      }
      out << "| attribute | type | use | default | unit | meaning |\n"
          << "|---|---|---|---|---|---|\n";
      for (const AttributeSpec& a : v->attributes) {
        out << "| `" << a.name << "` | " << mdEscape(mdType(a)) << " | " << mdUse(a) << " | "
            << (a.defaultValue.empty() ? std::string() : "`" + std::string(a.defaultValue) + "`")
            << " | " << a.unit << " | " << mdEscape(a.doc) << " |\n";
      }
      out << "\n";
    }
  }
  return out.str();
}

}  // namespace grain::io::schema
