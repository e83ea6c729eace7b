// SPDX-License-Identifier: MIT
// grain-scene-schema: prints the XML schema or the format reference of scene files, both
// generated from the format tables of the scene reader.
//
//   grain-scene-schema xsd [OUTPUT]        schemas/scene.xsd
//   grain-scene-schema markdown [OUTPUT]   docs/scene-format.md
//   grain-scene-schema --version           grain's version
//
// Without OUTPUT the text goes to stdout. Exit codes: 0 done, 1 cannot write, 2 bad usage.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>

#include <grain/io/scene_schema.hpp>
#include <grain/io/version.hpp>

int main(int argc, char** argv) {
  const std::string_view usage =
      "usage: grain-scene-schema xsd|markdown [OUTPUT]\n"
      "       grain-scene-schema --version\n"
      "  xsd       the XML schema (XSD 1.0) of scene files\n"
      "  markdown  the scene format reference\n";
  if (argc < 2 || argc > 3) {
    std::cerr << usage;
    return 2;
  }
  const std::string_view what = argv[1];
  std::string text;
  if (what == "xsd") {
    text = grain::io::schema::sceneSchemaXsd();
  } else if (what == "markdown") {
    text = grain::io::schema::sceneFormatMarkdown();
  } else if (what == "-h" || what == "--help") {
    std::cout << usage;
    return 0;
  } else if (what == "--version") {
    std::cout << "grain-scene-schema " << grain::versionString() << "\n";
    return 0;
  } else {
    std::cerr << "grain-scene-schema: unknown output '" << what << "'\n" << usage;
    return 2;
  }
  if (argc == 2) {
    std::cout << text;
    return std::cout ? 0 : 1;
  }
  std::ofstream out(argv[2], std::ios::binary);
  out << text;
  if (!out) {
    std::cerr << "grain-scene-schema: cannot write " << argv[2] << "\n";
    return 1;
  }
  return 0;
}
