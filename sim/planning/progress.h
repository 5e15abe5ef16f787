// Interactive long work: a progress bar with an ETA.
//
// ProgressBar contract:
//  - Draws "label [#####.....] done/total  elapsed 1.2s  ETA 3.4s" on one line of `out`,
//    redrawn in place with '\r', at most every 100 ms plus once at finish(). It never writes when
//    constructed with out == nullptr, so a command builds it with
//    `ProgressBar bar(n, "sweep", ProgressBar::terminal_stream(err));` and it stays quiet when
//    stderr is a file or a pipe (or when `err` is not std::cerr, as in tests).
//  - advance() is thread-safe (called from parallel_for workers). The ETA is elapsed × remaining
//    / done (work units are assumed to cost about the same); before the first unit it shows "?".
//  - finish() (also called by the destructor) draws the final state and ends the line. The bar's
//    text never goes to stdout and never into result files: wall time is not reproducible.
//
// Ctrl-C and SIGTERM during a study: servesim::DeferredExit (sim/base/exit_signals.h).
#ifndef SERVESIM_SIM_PLANNING_PROGRESS_H_
#define SERVESIM_SIM_PLANNING_PROGRESS_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <ostream>
#include <string>

namespace servesim::planning {

class ProgressBar {
 public:
  // `out` == nullptr: a silent bar (every method is a cheap no-op apart from counting).
  ProgressBar(int64_t total, std::string label, std::ostream* out);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // `err` when it is std::cerr and file descriptor 2 is a terminal (isatty), else nullptr.
  static std::ostream* terminal_stream(std::ostream& err);

  void advance(int64_t units = 1);
  void finish();
  int64_t done() const { return done_.load(); }

  // The line drawn for `done` of `total` after `elapsed_s` (no '\r'); exposed for tests.
  static std::string render(const std::string& label, int64_t done, int64_t total, double elapsed_s,
                            int width = 30);

 private:
  void draw(bool final_draw);

  const int64_t total_;
  const std::string label_;
  std::ostream* out_;
  std::atomic<int64_t> done_{0};
  std::mutex mutex_;  // guards drawing and last_draw_
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  bool drawn_ = false;
  bool finished_ = false;
};

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_PROGRESS_H_
