// WorkerPool: cpp-httplib's task queue for `servesim serve`, one thread per open connection,
// started when a connection needs one and kept for the next, up to a budget.
//
// cpp-httplib 0.11 serves each connection on one thread for its whole life (a stream holds its
// thread until [DONE]), and its own ThreadPool starts all of its threads at once. This pool
// starts a thread only when a connection is accepted while none is idle, so --threads can be
// large (the most streams held at once) at no cost until the streams come: an idle server has
// no worker threads, one holding N streams has N. A connection accepted while all `max_threads`
// are busy waits in the queue until one finishes; so does one accepted when the system refuses
// a new thread (counted: thread_start_failures).
#ifndef SERVESIM_SIM_SERVE_WORKER_POOL_H_
#define SERVESIM_SIM_SERVE_WORKER_POOL_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <httplib.h>

namespace servesim::serve {

class WorkerPool : public httplib::TaskQueue {
 public:
  explicit WorkerPool(size_t max_threads);
  ~WorkerPool() override;
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void enqueue(std::function<void()> fn) override;
  // Runs the queued connections, then joins every thread.
  void shutdown() override;

  // Threads started so far (each stays until shutdown), and starts the system refused.
  size_t threads_started() const;
  size_t thread_start_failures() const;

 private:
  void work();

  const size_t max_threads_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  size_t free_ = 0;  // threads started and not running a connection
  size_t started_ = 0;
  size_t start_failures_ = 0;
  bool shutdown_ = false;
};

}  // namespace servesim::serve

#endif  // SERVESIM_SIM_SERVE_WORKER_POOL_H_
