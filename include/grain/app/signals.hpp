// SPDX-License-Identifier: MIT
#pragma once

namespace grain::app {

/// Installs handlers for SIGINT, SIGTERM and SIGUSR2 (GRSF's batch-system signal) that only
/// record the signal; the run loop polls stopRequested() between steps, finishes the current
/// state, flushes and closes its files. Installed before the output folder is made, so that a
/// signal during start-up (after the scene was read) still ends with the initial state written
/// and exit code 3 instead of a half-made record.
void installStopHandlers();
/// Ignores SIGXFSZ, so that writing past a file-size limit (ulimit -f) fails with EFBIG and the
/// program reports which file it could not write, instead of being killed without a message.
void ignoreFileSizeLimitSignal();
/// True once one of the signals arrived.
bool stopRequested();
/// The signal that arrived (0 if none).
int stopSignal();

}  // namespace grain::app
