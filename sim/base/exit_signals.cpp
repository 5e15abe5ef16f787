#include "sim/base/exit_signals.h"

#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>

#include "sim/base/error.h"

namespace servesim {
namespace {

// Slot states: free, being filled or emptied by a thread, holding a path the handler may unlink.
constexpr int kFree = 0, kBusy = 1, kReady = 2;
struct TempSlot {
  std::atomic<int> state{kFree};
  char path[PATH_MAX];
};
TempSlot g_temps[TempFileRegistration::kMaxTempFiles];

// Lock-free atomics only: the handler reads and writes them.
std::atomic<bool> g_defer_alive{false};
std::atomic<bool> g_interrupted{false};
std::atomic<int> g_signal{0};

void remove_registered_temps() {
  for (TempSlot& s : g_temps) {
    if (s.state.load() == kReady) ::unlink(s.path);
  }
}

extern "C" void on_exit_signal(int sig) {
  if (g_defer_alive.load() && g_signal.load() == 0) {
    g_signal.store(sig);
    g_interrupted.store(true);
    return;
  }
  remove_registered_temps();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install(struct sigaction* previous_int, struct sigaction* previous_term) {
  struct sigaction action {};
  action.sa_handler = on_exit_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  ::sigaction(SIGINT, &action, previous_int);
  ::sigaction(SIGTERM, &action, previous_term);
}

}  // namespace

void install_exit_signal_handlers() { install(nullptr, nullptr); }

DeferredExit::DeferredExit() {
  if (g_defer_alive.exchange(true)) {
    throw InternalError("DeferredExit: only one may be alive at a time");
  }
  g_signal.store(0);
  g_interrupted.store(false);
  auto* previous = new struct sigaction[2];
  install(&previous[0], &previous[1]);
  previous_ = previous;
}

DeferredExit::~DeferredExit() {
  auto* previous = static_cast<struct sigaction*>(previous_);
  ::sigaction(SIGINT, &previous[0], nullptr);
  ::sigaction(SIGTERM, &previous[1], nullptr);
  delete[] previous;
  g_defer_alive.store(false);
}

const std::atomic<bool>* DeferredExit::flag() const { return &g_interrupted; }

int DeferredExit::signal_number() const { return g_signal.load(); }

std::string DeferredExit::signal_name() const {
  switch (signal_number()) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "";
  }
}

TempFileRegistration::TempFileRegistration(const std::string& path) {
  if (path.size() >= PATH_MAX) return;
  for (int i = 0; i < kMaxTempFiles; ++i) {
    int expected = kFree;
    if (g_temps[i].state.compare_exchange_strong(expected, kBusy)) {
      std::memcpy(g_temps[i].path, path.c_str(), path.size() + 1);
      g_temps[i].state.store(kReady);
      slot_ = i;
      return;
    }
  }
}

TempFileRegistration::~TempFileRegistration() {
  if (slot_ >= 0) g_temps[slot_].state.store(kFree);
}

}  // namespace servesim
