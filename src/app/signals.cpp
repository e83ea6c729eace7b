// SPDX-License-Identifier: MIT
#include <csignal>

#include <grain/app/signals.hpp>

namespace grain::app {

namespace {
volatile std::sig_atomic_t gSignal = 0;

extern "C" void onStopSignal(int sig) {
  gSignal = sig;
}
}  // namespace

void installStopHandlers() {
  struct sigaction action {};
  action.sa_handler = onStopSignal;
  sigemptyset(&action.sa_mask);
  // Reads and writes in progress go on: the loop polls the flag between steps.
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGUSR2, &action, nullptr);
}

void ignoreFileSizeLimitSignal() {
  struct sigaction action {};
  action.sa_handler = SIG_IGN;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  sigaction(SIGXFSZ, &action, nullptr);
}

bool stopRequested() {
  return gSignal != 0;
}

int stopSignal() {
  return gSignal;
}

}  // namespace grain::app
