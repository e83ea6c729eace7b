// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <grain/core/bodies/body_id.hpp>
#include <grain/core/common/error.hpp>
#include <grain/io/sim_file.hpp>

/// Post-processing of .sim files: selections, format conversion, analysis and pictures
/// (the library behind grain-convert; docs/convert.md).
namespace grain::convert {

/// Bad options or input of a conversion (the message says what and where).
class ConvertError : public grain::Error {
 public:
  explicit ConvertError(const std::string& what) : grain::Error(what) {}
};

/// Progress callback: `done` of `total` states, the last one at `time` (s).
using ProgressFn = std::function<void(std::size_t done, std::size_t total, double time)>;

/// One state of a SimSequence.
struct StateRef {
  std::size_t file = 0;   ///< index of the file in the sequence
  std::size_t index = 0;  ///< state index within that file
  double time = 0.0;      ///< s
};

/// Several .sim files read as one sequence of states, in the order given (e.g. the files of a
/// run continued several times). All files must have the same number of bodies.
class SimSequence {
 public:
  /// Opens the files and reads their state times. With `skipRepeatedStates`, a state of a
  /// later file whose time is not after the last state taken so far is left out (a continued
  /// run starts with the state its predecessor ended with). Throws io::SimFileError or
  /// ConvertError.
  void open(const std::vector<std::filesystem::path>& files, bool skipRepeatedStates = true);

  /// All states in sequence order.
  const std::vector<StateRef>& states() const { return states_; }
  std::size_t fileCount() const { return readers_.size(); }
  io::SimFileReader& reader(std::size_t file) { return *readers_[file]; }
  /// Header of the first file.
  const io::SimFileHeader& header() const { return readers_.front()->header(); }
  /// Truncation warnings of the files (empty strings left out).
  std::vector<std::string> warnings() const;

  /// The whole state.
  io::SimState read(const StateRef& s);
  /// The listed bodies of the state, in the listed order (keyed by id); throws if one is
  /// missing.
  io::SimState read(const StateRef& s, const std::vector<BodyId>& ids);

 private:
  std::vector<std::unique_ptr<io::SimFileReader>> readers_;
  std::vector<StateRef> states_;
};

/// Which states of a sequence to use: those with index in [first, last] and time in
/// [tMin, tMax], then every `every`-th of them starting with the first.
struct StateFilter {
  std::size_t first = 0;
  std::optional<std::size_t> last;  ///< inclusive; none: up to the last state
  std::optional<double> tMin;       ///< s
  std::optional<double> tMax;       ///< s
  std::size_t every = 1;            ///< >= 1

  /// The selected states; throws ConvertError if every == 0.
  std::vector<StateRef> apply(const std::vector<StateRef>& states) const;
};

/// Which bodies to use, by id. Empty: all bodies.
///
/// Text form (parse): items separated by commas or blanks, each
///   G:N        body number N of group G          e.g. 0:17
///   G:N-M      numbers N..M of group G            e.g. 0:0-99
///   G:*        the whole group G                  e.g. 2:*
///   ID, ID-ID  raw 64-bit ids (group << 32 | number) and inclusive ranges of them
class BodySelector {
 public:
  /// Adds the items of `text`; throws ConvertError naming a malformed item.
  void parse(const std::string& text);
  /// Adds a whole group.
  void addGroup(std::uint32_t group);
  /// Adds an inclusive id range.
  void addRange(BodyId lo, BodyId hi);
  bool selectsAll() const { return ranges_.empty(); }
  bool contains(BodyId id) const;
  /// The ids of `ids` that are selected, sorted; throws ConvertError if none is.
  std::vector<BodyId> select(std::vector<BodyId> ids) const;

 private:
  std::vector<std::pair<BodyId, BodyId>> ranges_;
};

/// Parses "x,y,z" or "x y z" into three numbers; throws ConvertError naming `what`.
std::array<double, 3> parseTriple(const std::string& text, const std::string& what);

}  // namespace grain::convert
