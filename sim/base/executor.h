// JobExecutor: where the independent simulations of a study run — threads of this process, the
// ranks of an MPI job, or one shard of a job array — behind one interface, so that sweep, plan,
// compare, validate and calibrate have a single code path.
//
// Contract:
//  - A study describes one loop of n independent jobs as a JobLoop: `compute(i)` returns job i's
//    result as bytes (a pure function of i and of state every process holds: the same command
//    line gives the same state everywhere); `accept(i, bytes)` folds a result into the study.
//  - `skip(i)` (optional) is asked, on the process that hands jobs out and in index order, just
//    before job i would start; true means job i is not run (sweep's early stop). It may depend on
//    results accepted so far, so which jobs run may depend on timing; a study whose output must
//    not depend on it discards results above its cut afterwards (sweep does).
//  - `accept` and `skip` are never called concurrently with each other (compute may run
//    concurrently with both). accept is called once per job that ran, in any order; a study must
//    make its state independent of that order (results go to slots indexed by i).
//  - Every process of a distributed executor calls run() with the same loops in the same order
//    (SPMD), and when run() returns every process has accepted the same set of results, so all of
//    them continue identically (plan's and calibrate's next rounds are computed everywhere).
//  - A job that throws stops the hand-out; run() rethrows on every process the error of the
//    lowest-indexed failed job (ConfigError stays ConfigError), after the running jobs finish.
//  - `cancel` (may be null) is polled before each job starts; finished jobs keep their results.
//  - `tick` (optional) is called once per job run or skipped, on the handing-out process only
//    (progress bars).
// Returns the number of jobs accepted.
#ifndef SERVESIM_SIM_BASE_EXECUTOR_H_
#define SERVESIM_SIM_BASE_EXECUTOR_H_

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/base/parallel.h"

namespace servesim {

struct JobLoop {
  int64_t n = 0;
  std::function<std::string(int64_t)> compute;
  std::function<void(int64_t, std::string&&)> accept;
  std::function<bool(int64_t)> skip;  // optional
  std::function<void()> tick;         // optional
};

class JobExecutor {
 public:
  virtual ~JobExecutor() = default;
  virtual int64_t run(const JobLoop& loop, const std::atomic<bool>* cancel) = 0;
  // True when jobs run in other processes too (then a job should use one thread: the ranks
  // already fill the cores).
  virtual bool distributed() const { return false; }
};

// Threads of this process: parallel_for with `jobs` threads (0 = all cores). With `share`, a
// thread out of jobs helps with the tasks the running jobs hand to it (parallel.h).
class ThreadExecutor final : public JobExecutor {
 public:
  explicit ThreadExecutor(int jobs, WorkShare* share = nullptr) : jobs_(jobs), share_(share) {}
  int64_t run(const JobLoop& loop, const std::atomic<bool>* cancel) override {
    std::mutex mutex;  // serialises skip, accept and tick (the contract above)
    int64_t accepted = 0;
    parallel_for(
        loop.n, jobs_,
        [&](int64_t i) {
          {
            std::lock_guard<std::mutex> lock(mutex);
            if (loop.skip && loop.skip(i)) {
              if (loop.tick) loop.tick();
              return;
            }
          }
          std::string bytes = loop.compute(i);
          std::lock_guard<std::mutex> lock(mutex);
          loop.accept(i, std::move(bytes));
          ++accepted;
          if (loop.tick) loop.tick();
        },
        cancel, share_);
    return accepted;
  }

 private:
  int jobs_;
  WorkShare* share_;
};

// A job's result travels as CBOR: exact doubles (NaN and infinities included), compact.
inline std::string to_job_bytes(const nlohmann::json& j) {
  const std::vector<std::uint8_t> v = nlohmann::json::to_cbor(j);
  return std::string(v.begin(), v.end());
}
inline nlohmann::json from_job_bytes(const std::string& bytes) {
  return nlohmann::json::from_cbor(bytes);
}

// Runs `loop` on `executor`, or on `jobs` threads of this process when executor is null.
inline int64_t run_jobs(JobExecutor* executor, int jobs, const JobLoop& loop,
                        const std::atomic<bool>* cancel) {
  if (executor != nullptr) return executor->run(loop, cancel);
  ThreadExecutor local(jobs);
  return local.run(loop, cancel);
}

}  // namespace servesim

#endif  // SERVESIM_SIM_BASE_EXECUTOR_H_
