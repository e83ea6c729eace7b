// SPDX-License-Identifier: MIT
// The scene-format tables are consistent (they drive the reader and the generated schema).
#include <set>
#include <string>

#include <gtest/gtest.h>

#include <grain/io/scene_schema.hpp>

namespace grain::io::schema {
namespace {

TEST(SceneSchema, RootFirstAndSameNamesAdjacent) {
  const auto all = elements();
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front().name, "DynamicsSystem");
  std::set<std::string_view> closed;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i > 0 && all[i].name != all[i - 1].name) {
      closed.insert(all[i - 1].name);
    }
    EXPECT_EQ(closed.count(all[i].name), 0u) << all[i].name << " is split in the table";
  }
  EXPECT_EQ(elementsNamed("Sphere").size(), 2u);
  EXPECT_TRUE(elementsNamed("NoSuchElement").empty());
}

TEST(SceneSchema, AttributesAreWellFormed) {
  for (const ElementSpec& e : elements()) {
    std::set<std::string_view> names;
    for (const AttributeSpec& a : e.attributes) {
      EXPECT_TRUE(names.insert(a.name).second) << e.name << "@" << a.name << " twice";
      if (a.use == AttrUse::Required) {
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
    const auto same = elementsNamed(e.name);
    EXPECT_EQ(e.variantAttribute, same.front().variantAttribute) << e.name;
    if (e.variantAttribute.empty()) {
      EXPECT_EQ(same.size(), 1u) << e.name;
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

TEST(SceneSchema, ChildrenReferToElements) {
  std::set<std::string_view> referenced;
  for (const ElementSpec& e : elements()) {
    for (const ChildSpec& c : e.children) {
      EXPECT_LE(c.minOccurs, c.maxOccurs) << e.name << "/" << c.name;
      if (c.use == ChildUse::Parse) {
        EXPECT_FALSE(elementsNamed(c.name).empty()) << e.name << "/" << c.name;
        referenced.insert(c.name);
      }
    }
  }
  for (const ElementSpec& e : elements()) {
    if (e.name != "DynamicsSystem") {
      EXPECT_EQ(referenced.count(e.name), 1u) << e.name << " is unreachable";
    }
  }
}

TEST(SceneSchema, AcceptsValue) {
  const AttributeSpec* radius = findAttribute(elementsNamed("Sphere").front(), "radius");
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
  const AttributeSpec* normal = findAttribute(elementsNamed("Halfspace").front(), "normal");
  ASSERT_NE(normal, nullptr);
  EXPECT_TRUE(acceptsValue(*normal, "0 0 1"));
  EXPECT_TRUE(acceptsValue(*normal, "  0\t0\n-1 "));
  EXPECT_FALSE(acceptsValue(*normal, "0 0 0"));
  EXPECT_FALSE(acceptsValue(*normal, "0 0 1 0"));
  EXPECT_FALSE(acceptsValue(*normal, "0,0,1"));
}

}  // namespace
}  // namespace grain::io::schema
