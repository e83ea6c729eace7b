// SPDX-License-Identifier: MIT
#include <grain/io/scene_error.hpp>

namespace grain::io {

namespace {
std::string formatSceneError(const std::string& file, std::size_t line, const std::string& path,
                             const std::string& message) {
  std::string s = file;
  if (line > 0) {
    s += ":" + std::to_string(line);
  }
  s += ": ";
  if (!path.empty()) {
    s += path + ": ";
  }
  s += message;
  return s;
}
}  // namespace

SceneError::SceneError(std::string file, std::size_t line, std::string path, std::string message)
    : grain::Error(formatSceneError(file, line, path, message)),
      file_(std::move(file)),
      line_(line),
      path_(std::move(path)),
      message_(std::move(message)) {}

}  // namespace grain::io
