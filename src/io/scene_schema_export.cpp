// SPDX-License-Identifier: MIT
#include <grain/io/scene_schema.hpp>

namespace grain::io::schema {

std::string sceneSchemaXsd() {
  return {};
}

std::string sceneFormatMarkdown() {
  return {};
}

}  // namespace grain::io::schema
