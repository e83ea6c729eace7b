// SPDX-License-Identifier: MIT
// libFuzzer harness of the .sim reader (grain::io::SimFileReader): the input is a whole .sim
// file. Every way grain-convert and restarts read a file is exercised; a malformed file must
// end in SimFileError (grain::Error), never in a crash, an uncaught exception or a huge
// allocation.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <grain/core/common/error.hpp>
#include <grain/io/sim_file.hpp>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = grain::fuzz::writeScratch(data, size, "input.sim");
  try {
    grain::io::SimFileReader reader;
    reader.open(path);
    (void)reader.truncationWarning();
    const std::vector<double> times = reader.readTimes();
    if (reader.stateCount() == 0) {
      return 0;
    }
    grain::io::SimState first = reader.readState(0);
    const std::vector<grain::BodyId> ids = reader.readIds(reader.stateCount() - 1);
    grain::io::SimState last;
    reader.readState(reader.stateCount() - 1, last, false);
    // Bodies by id: the ids of the last state, one absent id and a repeated one.
    std::vector<grain::BodyId> wanted(ids.begin(), ids.begin() + (ids.size() > 3 ? 3 : 0));
    wanted.push_back(0xdeadbeefcafeULL);
    (void)reader.readBodies(0, wanted, true);
    (void)reader.readSpecific(grain::io::StateSelector::Time, times[times.size() / 2]);
    (void)reader.readSpecific(grain::io::StateSelector::Last);
    first.sortById();
  } catch (const grain::Error&) {
    // The clear error the reader promises for a malformed file.
  }
  return 0;
}
