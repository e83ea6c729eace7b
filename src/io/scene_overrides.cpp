// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cctype>
#include <cstring>
#include <vector>

#include <pugixml.hpp>

#include <grain/core/common/error.hpp>
#include <grain/io/scene_error.hpp>
#include <grain/io/scene_overrides.hpp>

namespace grain::io {

namespace {

/// A change of the text: replace [offset, offset + length) by `text`.
struct Edit {
  std::size_t offset = 0;
  std::size_t length = 0;
  std::string text;
};

std::string escapeAttribute(std::string_view value, char quote) {
  std::string out;
  for (const char c : value) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '\n':
        out += "&#10;";
        break;
      case '\r':
        out += "&#13;";
        break;
      case '\t':
        out += "&#9;";
        break;
      case '"':
        out += quote == '"' ? "&quot;" : "\"";
        break;
      case '\'':
        out += quote == '\'' ? "&apos;" : "'";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::size_t lineOfOffset(std::string_view text, std::size_t offset) {
  return 1 + static_cast<std::size_t>(
                 std::count(text.begin(), text.begin() + std::min(offset, text.size()), '\n'));
}

/// Applies one override.
std::string applyOne(const std::string& text, const std::string& displayName,
                     const SceneOverride& o) {
  const auto fail = [&](const std::string& message) -> SceneError {
    return SceneError(displayName, 0, "", "--set '" + o.argument + "': " + message);
  };
  std::vector<char> buffer(text.begin(), text.end());
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed =
      doc.load_buffer_inplace(buffer.data(), buffer.size(), pugi::parse_default);
  if (!parsed || !doc.document_element()) {
    const std::size_t line =
        parsed.offset >= 0 ? lineOfOffset(text, static_cast<std::size_t>(parsed.offset)) : 0;
    throw SceneError(
        displayName, line, "",
        std::string("malformed XML: ") + (parsed ? "no root element" : parsed.description()));
  }
  const char* const begin = buffer.data();
  const auto offsetOf = [&](const char* p) -> std::size_t {
    if (p < begin || p >= begin + buffer.size()) {
      throw fail("cannot locate the selected node in the file");
    }
    return static_cast<std::size_t>(p - begin);
  };
  const pugi::xml_node root = doc.document_element();

  pugi::xpath_node_set nodes;
  try {
    const pugi::xpath_query query(o.xpath.c_str());
    nodes = query.evaluate_node_set(root);
  } catch (const pugi::xpath_exception& e) {
    throw fail(std::string("invalid XPath: ") + e.what());
  }

  std::vector<Edit> edits;
  for (const pugi::xpath_node& n : nodes) {
    if (const pugi::xml_attribute a = n.attribute()) {
      const std::size_t start = offsetOf(a.value());
      const char quote = start > 0 ? text[start - 1] : '\0';
      const std::size_t end = text.find(quote, start);
      if ((quote != '"' && quote != '\'') || end == std::string::npos) {
        throw fail("cannot locate the value of attribute '" + std::string(a.name()) + "'");
      }
      edits.push_back({start, end - start, escapeAttribute(o.value, quote)});
    } else if (n.node().type() == pugi::node_element) {
      throw fail("the XPath selects element <" + std::string(n.node().name()) + "> on line " +
                 std::to_string(lineOfOffset(text, offsetOf(n.node().name()))) +
                 ", not attributes (end it with /@name)");
    } else {
      throw fail("the XPath selects something other than attributes");
    }
  }

  if (edits.empty()) {
    // "P/@name" (or "@name") where no element of P has the attribute: add it.
    const std::size_t at = o.xpath.rfind('@');
    const std::string name = at == std::string::npos ? std::string() : o.xpath.substr(at + 1);
    const bool plainName = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    });
    const bool endsWithAttribute = plainName && (at == 0 || o.xpath[at - 1] == '/');
    if (endsWithAttribute) {
      const std::string prefix = at == 0 ? std::string(".") : o.xpath.substr(0, at - 1);
      pugi::xpath_node_set elements;
      try {
        elements = pugi::xpath_query(prefix.c_str()).evaluate_node_set(root);
      } catch (const pugi::xpath_exception&) {
        // No elements: reported below.
      }
      for (const pugi::xpath_node& n : elements) {
        if (n.node().type() != pugi::node_element) {
          continue;
        }
        const std::size_t nameEnd = offsetOf(n.node().name()) + std::strlen(n.node().name());
        edits.push_back({nameEnd, 0, " " + name + "=\"" + escapeAttribute(o.value, '"') + "\""});
      }
    }
  }
  if (edits.empty()) {
    throw fail("the XPath matches nothing");
  }
  std::sort(edits.begin(), edits.end(),
            [](const Edit& a, const Edit& b) { return a.offset > b.offset; });
  std::string out = text;
  for (const Edit& e : edits) {
    out.replace(e.offset, e.length, e.text);
  }
  return out;
}

}  // namespace

SceneOverride parseSceneOverride(std::string_view argument) {
  int depth = 0;
  char quote = '\0';
  for (std::size_t i = 0; i < argument.size(); ++i) {
    const char c = argument[i];
    if (quote != '\0') {
      quote = c == quote ? '\0' : quote;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[') {
      ++depth;
    } else if (c == ']') {
      --depth;
    } else if (c == '=' && depth == 0) {
      SceneOverride o;
      o.xpath = std::string(argument.substr(0, i));
      o.value = std::string(argument.substr(i + 1));
      o.argument = std::string(argument);
      GRAIN_REQUIRE(!o.xpath.empty(), "--set '" + o.argument + "': the XPath is empty");
      return o;
    }
  }
  throw Error("--set '" + std::string(argument) + "': expected XPATH=VALUE");
}

std::string applySceneOverrides(std::string_view text, const std::string& displayName,
                                std::span<const SceneOverride> overrides) {
  std::string out(text);
  for (const SceneOverride& o : overrides) {
    out = applyOne(out, displayName, o);
  }
  return out;
}

}  // namespace grain::io
