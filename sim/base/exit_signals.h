// Exit signals: what a run does when Ctrl-C (SIGINT) or a scheduler's time limit (SIGTERM: Slurm,
// Kubernetes) stops it.
//
// Contract:
//  - install_exit_signal_handlers() (main() calls it once): on SIGINT or SIGTERM the temporary
//    files registered with TempFileRegistration are removed and the process then dies of the
//    signal as it would have without a handler (the shell sees exit status 128 + signal). Only
//    async-signal-safe calls run in the handler (unlink, signal, raise).
//  - While a DeferredExit is alive (a study: sweep, plan, compare), the FIRST SIGINT or SIGTERM
//    only sets flag() and records the signal: the study starts no new job, writes what finished
//    (marked interrupted) and returns exit_code(), 128 + the signal. A second signal acts at once
//    as above. The destructor restores the handlers installed before. One DeferredExit may be
//    alive at a time in a process (InternalError otherwise): the handler needs one flag.
//  - TempFileRegistration: while alive, `path` is removed if the process is killed by SIGINT or
//    SIGTERM through the handlers above. At most kMaxTempFiles are registered at once; a path
//    beyond that (or longer than PATH_MAX) is simply not registered.
#ifndef SERVESIM_SIM_BASE_EXIT_SIGNALS_H_
#define SERVESIM_SIM_BASE_EXIT_SIGNALS_H_

#include <atomic>
#include <string>

namespace servesim {

void install_exit_signal_handlers();

class DeferredExit {
 public:
  DeferredExit();
  ~DeferredExit();
  DeferredExit(const DeferredExit&) = delete;
  DeferredExit& operator=(const DeferredExit&) = delete;

  // True once SIGINT or SIGTERM arrived while this guard was alive (parallel_for's `cancel`).
  const std::atomic<bool>* flag() const;
  bool interrupted() const { return flag()->load(); }
  // The signal that arrived (SIGINT or SIGTERM), 0 if none.
  int signal_number() const;
  // 128 + signal_number(): the status a shell reports for a process killed by that signal.
  int exit_code() const { return 128 + signal_number(); }
  // "SIGINT" / "SIGTERM" ("" if none).
  std::string signal_name() const;

 private:
  void* previous_ = nullptr;  // the two struct sigaction installed before (SIGINT, SIGTERM)
};

class TempFileRegistration {
 public:
  static constexpr int kMaxTempFiles = 64;
  explicit TempFileRegistration(const std::string& path);
  ~TempFileRegistration();
  TempFileRegistration(const TempFileRegistration&) = delete;
  TempFileRegistration& operator=(const TempFileRegistration&) = delete;

 private:
  int slot_ = -1;
};

}  // namespace servesim

#endif  // SERVESIM_SIM_BASE_EXIT_SIGNALS_H_
