// SPDX-License-Identifier: MIT
// The scene-format tables are consistent (they drive the reader and the generated schema).
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <grain/io/scene_schema.hpp>

namespace grain::io::schema {
namespace {

TEST(SceneSchema, RootFirstAndSameNamesAndParentsAdjacent) {
  const auto all = elements();
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front().name, "DynamicsSystem");
  EXPECT_EQ(all.front().parent, "");
  std::set<std::string_view> closedNames;
  std::set<std::pair<std::string_view, std::string_view>> closedPairs;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i > 0 && all[i].name != all[i - 1].name) {
      closedNames.insert(all[i - 1].name);
    }
    if (i > 0 && (all[i].name != all[i - 1].name || all[i].parent != all[i - 1].parent)) {
      closedPairs.emplace(all[i - 1].name, all[i - 1].parent);
    }
    EXPECT_EQ(closedNames.count(all[i].name), 0u) << all[i].name << " is split in the table";
    EXPECT_EQ(closedPairs.count({all[i].name, all[i].parent}), 0u)
        << all[i].parent << "/" << all[i].name << " is split in the table";
  }
  EXPECT_EQ(elementsNamed("Sphere").size(), 4u);
  EXPECT_EQ(elementsIn("Sphere", "Geometry").size(), 2u);
  EXPECT_EQ(elementsIn("Sphere", "GlobalGeometries").size(), 2u);
  EXPECT_EQ(elementsIn("InclusionSolverSettings", "MPISettings").size(), 1u);
  EXPECT_TRUE(elementsIn("Sphere", "SceneSettings").empty());
  EXPECT_TRUE(elementsNamed("NoSuchElement").empty());
}

TEST(SceneSchema, AttributesAreWellFormed) {
  for (const ElementSpec& e : elements()) {
    std::set<std::string_view> names;
    for (const AttributeSpec& a : e.attributes) {
      EXPECT_TRUE(names.insert(a.name).second) << e.name << "@" << a.name << " twice";
      if (a.use != AttrUse::Optional) {
        EXPECT_TRUE(a.defaultValue.empty()) << e.name << "@" << a.name;
      }
      if (!a.defaultValue.empty()) {
        EXPECT_TRUE(acceptsValue(a, a.defaultValue))
            << e.name << "@" << a.name << " default '" << a.defaultValue << "'";
      }
      if (a.type == AttrType::Enumeration) {
        EXPECT_FALSE(a.values.empty()) << e.name << "@" << a.name;
      } else {
        EXPECT_TRUE(a.values.empty() && a.unsupportedValues.empty()) << e.name << "@" << a.name;
      }
    }
  }
}

TEST(SceneSchema, VariantsCarryTheirDiscriminator) {
  for (const ElementSpec& e : elements()) {
    const auto same = elementsIn(e.name, e.parent);
    ASSERT_FALSE(same.empty()) << e.name;
    EXPECT_EQ(e.variantAttribute, same.front().variantAttribute) << e.name;
    if (e.variantAttribute.empty()) {
      EXPECT_EQ(same.size(), 1u) << e.parent << "/" << e.name;
      continue;
    }
    if (!e.implemented) {
      continue;
    }
    const AttributeSpec* d = findAttribute(e, e.variantAttribute);
    ASSERT_NE(d, nullptr) << e.name;
    EXPECT_EQ(d->use, AttrUse::Required);
    EXPECT_TRUE(acceptsValue(*d, e.variantValue)) << e.name << " " << e.variantValue;
  }
}

// The XML schema merges the variants of an element (XSD 1.0 cannot select content by an
// attribute value), so an attribute must have one type, bound and value set in all of them.
TEST(SceneSchema, SameAttributeAgreesAcrossVariants) {
  for (const ElementSpec& e : elements()) {
    for (const ElementSpec& other : elementsIn(e.name, e.parent)) {
      for (const AttributeSpec& a : e.attributes) {
        const AttributeSpec* b = findAttribute(other, a.name);
        if (b == nullptr) {
          continue;
        }
        EXPECT_EQ(a.type, b->type) << e.name << "@" << a.name;
        EXPECT_EQ(a.bound, b->bound) << e.name << "@" << a.name;
        EXPECT_EQ(a.values, b->values) << e.name << "@" << a.name;
        EXPECT_EQ(a.unsupportedValues, b->unsupportedValues) << e.name << "@" << a.name;
      }
    }
  }
}

TEST(SceneSchema, ChildrenReferToElementsInThatParent) {
  std::set<std::pair<std::string_view, std::string_view>> referenced;
  for (const ElementSpec& e : elements()) {
    std::set<std::string_view> names;
    for (const ChildSpec& c : e.children) {
      EXPECT_TRUE(names.insert(c.name).second) << e.name << "/" << c.name << " twice";
      EXPECT_LE(c.minOccurs, c.maxOccurs) << e.name << "/" << c.name;
      if (c.use == ChildUse::Parse) {
        EXPECT_FALSE(elementsIn(c.name, e.name).empty()) << e.name << "/" << c.name;
        referenced.emplace(c.name, e.name);
      }
    }
    if (e.exactlyOneChild) {
      for (const ChildSpec& c : e.children) {
        EXPECT_EQ(c.minOccurs, 0u) << e.name << "/" << c.name;
        EXPECT_EQ(c.maxOccurs, 1u) << e.name << "/" << c.name;
      }
    }
  }
  for (const ElementSpec& e : elements()) {
    if (e.name != "DynamicsSystem") {
      EXPECT_EQ(referenced.count({e.name, e.parent}), 1u)
          << e.parent << "/" << e.name << " is unreachable";
    }
  }
}

TEST(SceneSchema, AcceptsValue) {
  const AttributeSpec* radius = findAttribute(elementsIn("Sphere", "Geometry").front(), "radius");
  ASSERT_NE(radius, nullptr);
  EXPECT_TRUE(acceptsValue(*radius, "0.5"));
  EXPECT_TRUE(acceptsValue(*radius, ".5"));
  EXPECT_TRUE(acceptsValue(*radius, "+5e-1"));
  EXPECT_TRUE(acceptsValue(*radius, " 1 "));
  EXPECT_FALSE(acceptsValue(*radius, "0"));
  EXPECT_FALSE(acceptsValue(*radius, "-1"));
  EXPECT_FALSE(acceptsValue(*radius, "nan"));
  EXPECT_FALSE(acceptsValue(*radius, "inf"));
  EXPECT_FALSE(acceptsValue(*radius, "1 2"));
  EXPECT_FALSE(acceptsValue(*radius, "1m"));
  const AttributeSpec* normal =
      findAttribute(elementsIn("Halfspace", "Geometry").front(), "normal");
  ASSERT_NE(normal, nullptr);
  EXPECT_TRUE(acceptsValue(*normal, "0 0 1"));
  EXPECT_TRUE(acceptsValue(*normal, "  0\t0\n-1 "));
  EXPECT_FALSE(acceptsValue(*normal, "0 0 0"));
  EXPECT_FALSE(acceptsValue(*normal, "0 0 1 0"));
  EXPECT_FALSE(acceptsValue(*normal, "0,0,1"));
}

TEST(SceneSchema, ListAndIdValues) {
  const auto& random = elementsIn("Sphere", "Geometry")[1];
  const AttributeSpec* intervals = findAttribute(random, "intervals");
  const AttributeSpec* densities = findAttribute(random, "densities");
  ASSERT_TRUE(intervals && densities);
  EXPECT_TRUE(acceptsValue(*intervals, "1e-3 2e-3\n 3e-3"));
  EXPECT_FALSE(acceptsValue(*intervals, "0 1"));
  EXPECT_FALSE(acceptsValue(*intervals, ""));
  EXPECT_TRUE(acceptsValue(*densities, "0 1"));
  EXPECT_FALSE(acceptsValue(*densities, "1 -1"));
  EXPECT_EQ(checkValue(*densities, "1 -1"),
            "attribute 'densities' must be >= 0 in every entry (got 1 -1)");
  const AttributeSpec* set =
      findAttribute(elementsIn("Set", "GlobalSelectiveIds").front(), "value");
  const AttributeSpec* range =
      findAttribute(elementsIn("Range", "GlobalSelectiveIds").front(), "value");
  ASSERT_TRUE(set && range);
  EXPECT_TRUE(acceptsValue(*set, "0,0 0,9  1,3"));
  EXPECT_FALSE(acceptsValue(*set, "0,0 0, 9"));
  EXPECT_FALSE(acceptsValue(*set, "0;0"));
  EXPECT_FALSE(acceptsValue(*set, "-1,0"));
  EXPECT_TRUE(acceptsValue(*range, "0,0 0,100"));
  EXPECT_FALSE(acceptsValue(*range, "0,0"));
  EXPECT_FALSE(acceptsValue(*range, "0,0 0,1 0,2"));
  const AttributeSpec* dim =
      findAttribute(elementsIn("Topology", "ProcessTopology")[0], "dimension");
  ASSERT_NE(dim, nullptr);
  EXPECT_TRUE(acceptsValue(*dim, "2 2 1"));
  EXPECT_FALSE(acceptsValue(*dim, "2 0 1"));
  EXPECT_FALSE(acceptsValue(*dim, "2 1.5 1"));
}

TEST(SceneSchema, PlaceholdersAreNamed) {
  const AttributeSpec* file =
      findAttribute(elementsIn("GlobalInitialCondition", "SceneSettings").front(), "file");
  ASSERT_NE(file, nullptr);
  EXPECT_EQ(checkValue(*file, "${Job:simFile}"),
            "attribute 'file' contains the unfilled placeholder '${Job:simFile}' (replace it in "
            "the file or with grain-sim --set)");
  EXPECT_TRUE(acceptsValue(*file, "$HOME/a{b}.sim"));  // only "${" starts a placeholder
  const AttributeSpec* radius = findAttribute(elementsIn("Sphere", "Geometry").front(), "radius");
  EXPECT_EQ(checkValue(*radius, "${r}"),
            "attribute 'radius' contains the unfilled placeholder '${r}' (replace it in the file "
            "or with grain-sim --set)");
}

TEST(SceneSchema, ClosestName) {
  const std::vector<std::string_view> names = {"radius", "distribute", "minRadius", "maxRadius"};
  EXPECT_EQ(closestName("radus", names), "radius");
  EXPECT_EQ(closestName("RADIUS", names), "radius");
  EXPECT_EQ(closestName("distribut", names), "distribute");
  EXPECT_EQ(closestName("maxradius", names), "maxRadius");
  EXPECT_EQ(closestName("color", names), "");
  EXPECT_EQ(closestName("distributeBodies", names), "distribute");
  EXPECT_EQ(closestName("rad", names), "radius");
  EXPECT_EQ(closestName("Scene", std::vector<std::string_view>{"SceneSettings", "SceneObjects"}),
            "");  // ambiguous
  EXPECT_EQ(closestName("x", std::vector<std::string_view>{}), "");
}

}  // namespace
}  // namespace grain::io::schema
