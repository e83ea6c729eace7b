// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <string>

#include <grain/core/common/error.hpp>

namespace grain::io {

/// Error in a scene file. what() is "FILE:LINE: ELEMENT-PATH: message", where ELEMENT-PATH
/// names the element below the root, e.g.
/// `scene.xml:12: SceneObjects/RigidBodies[name="beads"]/Geometry/Sphere: attribute 'radius'
/// must be > 0 (got -1)`. The line is 0 (and omitted) when the error concerns the whole file;
/// the path is empty (and omitted) for errors that precede the element tree.
class SceneError : public grain::Error {
 public:
  SceneError(std::string file, std::size_t line, std::string path, std::string message);

  const std::string& file() const { return file_; }
  /// 1-based line number, 0 if unknown.
  std::size_t line() const { return line_; }
  /// Element path below the root, e.g. "SceneSettings/TimeStepperSettings".
  const std::string& path() const { return path_; }
  /// The message without file, line and path.
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  std::size_t line_;
  std::string path_;
  std::string message_;
};

}  // namespace grain::io
