// parallel_for: run n independent jobs on up to `jobs` threads.
//
// Jobs are handed out in index order from an atomic counter; each writes only its own result
// slot, so results do not depend on the thread count or timing (determinism). A job that throws
// stops the hand-out; the first exception (lowest index among those thrown) is rethrown after all
// running jobs finish. `cancel` (optional) is polled between jobs: when it becomes true no new job
// starts, and parallel_for returns normally — finished jobs keep their results.
//
// WorkShare: leaf tasks that every thread of a study may run, so that no core idles while work is
// left. A thread running a study job (a plan candidate) hands its independent simulations (the
// seeds of one probe) to WorkShare::run(); it runs them itself and, while it waits for one that
// another thread took, runs other jobs' tasks. parallel_for(..., share) sends a worker that finds
// no job left to WorkShare::help() until every worker is out of jobs, instead of letting it exit:
// the last candidate's simulations are then spread over all the threads. Which thread runs a task
// never changes its result (each writes its own slot), so results stay deterministic.
#ifndef SERVESIM_SIM_BASE_PARALLEL_H_
#define SERVESIM_SIM_BASE_PARALLEL_H_

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace servesim {

// Threads to use for `jobs` = 0 ("all cores").
inline int default_jobs() { return std::max(1u, std::thread::hardware_concurrency()); }

class WorkShare {
 public:
  // Calls fn(i) for i in [0, n) on this thread and on threads in help(); returns when all have
  // finished. Tasks must not wait for other tasks (they are leaves). The exception of the lowest
  // failed index is rethrown after all tasks finish; the others still run.
  void run(int64_t n, const std::function<void(int64_t)>& fn) {
    if (n <= 0) return;
    Batch batch;
    batch.fn = &fn;
    batch.n = n;
    std::unique_lock<std::mutex> lock(mutex_);
    if (n > 1) {
      open_.push_back(&batch);
      wake_.notify_all();
    }
    while (batch.finished < n) {
      Batch* b = nullptr;
      if (batch.next < n) {
        b = &batch;  // own tasks first
      } else if (!open_.empty()) {
        b = open_.front();  // others' tasks while one of ours runs elsewhere
      }
      if (b != nullptr) {
        run_one(b, lock);
      } else {
        wake_.wait(lock);
      }
    }
    if (batch.error) std::rethrow_exception(batch.error);
  }

  // Runs tasks of run() calls until close().
  void help() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      if (!open_.empty()) {
        run_one(open_.front(), lock);
      } else if (closed_) {
        return;
      } else {
        wake_.wait(lock);
      }
    }
  }

  void close() {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    wake_.notify_all();
  }

 private:
  struct Batch {
    const std::function<void(int64_t)>* fn = nullptr;
    int64_t n = 0;
    int64_t next = 0;      // guarded by mutex_
    int64_t finished = 0;  // guarded by mutex_
    int64_t error_index = INT64_MAX;
    std::exception_ptr error;
  };

  // Claims b's next task and runs it unlocked. REQUIRES: lock held, b->next < b->n.
  void run_one(Batch* b, std::unique_lock<std::mutex>& lock) {
    const int64_t i = b->next++;
    if (b->next == b->n) {  // fully claimed (a one-task batch was never published)
      const auto it = std::find(open_.begin(), open_.end(), b);
      if (it != open_.end()) open_.erase(it);
    }
    lock.unlock();
    std::exception_ptr error;
    try {
      (*b->fn)(i);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error && i < b->error_index) {
      b->error_index = i;
      b->error = error;
    }
    ++b->finished;
    wake_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Batch*> open_;  // batches with unclaimed tasks, oldest first
  bool closed_ = false;
};

// Calls fn(i) for i in [0, n). Returns the number of jobs that ran to completion. With `share`,
// a worker out of jobs helps in share->help() until every worker is (then share is closed).
inline int64_t parallel_for(int64_t n, int jobs, const std::function<void(int64_t)>& fn,
                            const std::atomic<bool>* cancel = nullptr, WorkShare* share = nullptr) {
  if (jobs <= 0) jobs = default_jobs();
  // Threads beyond the jobs are idle, unless they can help with shared tasks.
  if (share == nullptr) jobs = static_cast<int>(std::min<int64_t>(jobs, std::max<int64_t>(n, 1)));
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::exception_ptr error;
  int64_t error_index = INT64_MAX;
  std::atomic<int> busy{jobs};
  auto jobs_loop = [&]() {
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
  auto worker = [&]() {
    jobs_loop();
    if (share == nullptr) return;
    if (busy.fetch_sub(1) == 1) {
      share->close();
    } else {
      share->help();
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
