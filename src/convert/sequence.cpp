// SPDX-License-Identifier: MIT
#include <algorithm>
#include <array>
#include <charconv>
#include <sstream>

#include <grain/convert/sequence.hpp>

namespace grain::convert {

void SimSequence::open(const std::vector<std::filesystem::path>& files, bool skipRepeatedStates) {
  if (files.empty()) {
    throw ConvertError("no input .sim file");
  }
  readers_.clear();
  states_.clear();
  for (std::size_t f = 0; f < files.size(); ++f) {
    auto r = std::make_unique<io::SimFileReader>();
    r->open(files[f]);
    if (!readers_.empty() && r->header().nSimBodies != readers_.front()->header().nSimBodies) {
      throw ConvertError(files[f].string() + ": has " + std::to_string(r->header().nSimBodies) +
                         " bodies per state, " + files.front().string() + " has " +
                         std::to_string(readers_.front()->header().nSimBodies));
    }
    const std::vector<double> times = r->readTimes();
    for (std::size_t k = 0; k < times.size(); ++k) {
      if (skipRepeatedStates && f > 0 && !states_.empty() && states_.back().file != f &&
          times[k] <= states_.back().time) {
        continue;
      }
      states_.push_back({f, k, times[k]});
    }
    readers_.push_back(std::move(r));
  }
}

std::vector<std::string> SimSequence::warnings() const {
  std::vector<std::string> w;
  for (const auto& r : readers_) {
    if (r->truncated()) {
      w.push_back(r->truncationWarning());
    }
  }
  return w;
}

io::SimState SimSequence::read(const StateRef& s) {
  return readers_.at(s.file)->readState(s.index);
}

io::SimState SimSequence::read(const StateRef& s, const std::vector<BodyId>& ids) {
  return readers_.at(s.file)->readBodies(s.index, ids);
}

std::vector<StateRef> StateFilter::apply(const std::vector<StateRef>& states) const {
  if (every == 0) {
    throw ConvertError("the state increment must be >= 1");
  }
  std::vector<StateRef> out;
  std::size_t taken = 0;
  for (std::size_t k = first; k < states.size(); ++k) {
    if (last && k > *last) {
      break;
    }
    const double t = states[k].time;
    if ((tMin && t < *tMin) || (tMax && t > *tMax)) {
      continue;
    }
    if (taken++ % every == 0) {
      out.push_back(states[k]);
    }
  }
  return out;
}

namespace {

std::uint64_t parseUnsigned(std::string_view s, const std::string& item) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) {
    throw ConvertError("body selection: '" + item + "' is not of the form G:N, G:N-M, G:* or ID");
  }
  return v;
}

std::uint32_t parseU32(std::string_view s, const std::string& item) {
  const std::uint64_t v = parseUnsigned(s, item);
  if (v > 0xffffffffu) {
    throw ConvertError("body selection: '" + item + "': number too large for 32 bits");
  }
  return static_cast<std::uint32_t>(v);
}

}  // namespace

void BodySelector::parse(const std::string& text) {
  std::string t = text;
  std::replace(t.begin(), t.end(), ',', ' ');
  std::istringstream in(t);
  std::string item;
  while (in >> item) {
    const auto colon = item.find(':');
    if (colon != std::string::npos) {
      const std::uint32_t g = parseU32(std::string_view(item).substr(0, colon), item);
      const std::string_view rest = std::string_view(item).substr(colon + 1);
      if (rest == "*") {
        addGroup(g);
        continue;
      }
      const auto dash = rest.find('-');
      const std::uint32_t lo = parseU32(rest.substr(0, dash), item);
      const std::uint32_t hi =
          dash == std::string_view::npos ? lo : parseU32(rest.substr(dash + 1), item);
      if (hi < lo) {
        throw ConvertError("body selection: '" + item + "': empty range");
      }
      addRange(makeBodyId(g, lo), makeBodyId(g, hi));
    } else {
      const auto dash = item.find('-');
      const std::string_view s(item);
      const std::uint64_t lo = parseUnsigned(s.substr(0, dash), item);
      const std::uint64_t hi =
          dash == std::string::npos ? lo : parseUnsigned(s.substr(dash + 1), item);
      if (hi < lo) {
        throw ConvertError("body selection: '" + item + "': empty range");
      }
      addRange(lo, hi);
    }
  }
}

void BodySelector::addGroup(std::uint32_t group) {
  addRange(makeBodyId(group, 0), makeBodyId(group, 0xffffffffu));
}

void BodySelector::addRange(BodyId lo, BodyId hi) {
  ranges_.emplace_back(lo, hi);
}

bool BodySelector::contains(BodyId id) const {
  if (ranges_.empty()) {
    return true;
  }
  return std::any_of(ranges_.begin(), ranges_.end(),
                     [id](const auto& r) { return id >= r.first && id <= r.second; });
}

std::vector<BodyId> BodySelector::select(std::vector<BodyId> ids) const {
  std::sort(ids.begin(), ids.end());
  std::vector<BodyId> out;
  out.reserve(ids.size());
  for (const BodyId id : ids) {
    if (contains(id)) {
      out.push_back(id);
    }
  }
  if (out.empty()) {
    throw ConvertError("the body selection matches none of the file's " +
                       std::to_string(ids.size()) + " bodies");
  }
  return out;
}

std::array<double, 3> parseTriple(const std::string& text, const std::string& what) {
  std::string t = text;
  std::replace(t.begin(), t.end(), ',', ' ');
  std::istringstream in(t);
  std::array<double, 3> v{};
  std::string rest;
  if (!(in >> v[0] >> v[1] >> v[2]) || (in >> rest)) {
    throw ConvertError(what + ": expected three numbers \"x,y,z\", got \"" + text + "\"");
  }
  return v;
}

}  // namespace grain::convert
