#include "sim/serve/worker_pool.h"

#include <system_error>
#include <utility>

namespace servesim::serve {

WorkerPool::WorkerPool(size_t max_threads) : max_threads_(max_threads) {}

WorkerPool::~WorkerPool() { shutdown(); }

void WorkerPool::enqueue(std::function<void()> fn) {
  std::unique_lock<std::mutex> lock(mu_);
  jobs_.push_back(std::move(fn));
  // A free thread takes it; otherwise a new one, within the budget.
  if (jobs_.size() > free_ && threads_.size() < max_threads_) {
    try {
      threads_.emplace_back([this] { work(); });
      ++free_;
      ++started_;
    } catch (const std::system_error&) {
      ++start_failures_;  // out of threads: the job waits for a running one
    }
  }
  lock.unlock();
  cv_.notify_one();
}

void WorkerPool::work() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return !jobs_.empty() || shutdown_; });
    if (jobs_.empty()) return;  // shutting down, nothing left
    std::function<void()> fn = std::move(jobs_.front());
    jobs_.pop_front();
    --free_;
    lock.unlock();
    fn();
    lock.lock();
    ++free_;
  }
}

void WorkerPool::shutdown() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    shutdown_ = true;
  }
  cv_.notify_all();
  // Threads are started only by enqueue, which cpp-httplib calls from its accept loop; that
  // loop has ended when it calls shutdown, so the list no longer grows.
  {
    std::lock_guard<std::mutex> lock(mu_);
    threads.swap(threads_);
  }
  for (std::thread& t : threads) t.join();
}

size_t WorkerPool::threads_started() const {
  std::lock_guard<std::mutex> lock(mu_);
  return started_;
}

size_t WorkerPool::thread_start_failures() const {
  std::lock_guard<std::mutex> lock(mu_);
  return start_failures_;
}

}  // namespace servesim::serve
