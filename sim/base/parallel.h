// parallel_for: run n independent jobs on up to `jobs` threads.
//
// Jobs are handed out in index order from an atomic counter; each writes only its own result
// slot, so results do not depend on the thread count or timing (determinism). A job that throws
// stops the hand-out; the first exception (lowest index among those thrown) is rethrown after all
// running jobs finish. `cancel` (optional) is polled between jobs: when it becomes true no new job
// starts, and parallel_for returns normally — finished jobs keep their results.
#ifndef SERVESIM_SIM_BASE_PARALLEL_H_
#define SERVESIM_SIM_BASE_PARALLEL_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace servesim {

// Threads to use for `jobs` = 0 ("all cores").
inline int default_jobs() { return std::max(1u, std::thread::hardware_concurrency()); }

// Calls fn(i) for i in [0, n). Returns the number of jobs that ran to completion.
inline int64_t parallel_for(int64_t n, int jobs, const std::function<void(int64_t)>& fn,
                            const std::atomic<bool>* cancel = nullptr) {
  if (jobs <= 0) jobs = default_jobs();
  jobs = static_cast<int>(std::min<int64_t>(jobs, std::max<int64_t>(n, 1)));
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::exception_ptr error;
  int64_t error_index = INT64_MAX;
  auto worker = [&]() {
    for (;;) {
      if (failed.load() || (cancel != nullptr && cancel->load())) return;
      const int64_t i = next.fetch_add(1);
      if (i >= n) return;
      try {
        fn(i);
        done.fetch_add(1);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (i < error_index) {
          error_index = i;
          error = std::current_exception();
        }
        failed.store(true);
      }
    }
  };
  if (jobs == 1) {
    worker();
  } else {
    std::vector<std::thread> threads;
    threads.reserve(static_cast<size_t>(jobs));
    for (int t = 0; t < jobs; ++t) threads.emplace_back(worker);
    for (auto& t : threads) t.join();
  }
  if (error) std::rethrow_exception(error);
  return done.load();
}

}  // namespace servesim

#endif  // SERVESIM_SIM_BASE_PARALLEL_H_
