// SPDX-License-Identifier: MIT
#pragma once

namespace grain::app {

/// Installs handlers for SIGINT, SIGTERM and SIGUSR2 (GRSF's batch-system signal) that only
/// record the signal; the run loop polls stopRequested() between steps, finishes the current
/// state, flushes and closes its files.
void installStopHandlers();
/// True once one of the signals arrived.
bool stopRequested();
/// The signal that arrived (0 if none).
int stopSignal();

}  // namespace grain::app
