// WorkerPool: one thread per connection running at once, started on demand, never more than the
// budget; connections beyond it wait for a thread and all run.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>

#include "sim/serve/worker_pool.h"

using servesim::serve::WorkerPool;

namespace {

// Jobs that hold their thread until released (a stream holding its connection).
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  int running = 0;
  int most_running = 0;
  int finished = 0;
  bool open = false;

  std::function<void()> job() {
    return [this] {
      std::unique_lock<std::mutex> lock(mu);
      ++running;
      most_running = std::max(most_running, running);
      cv.notify_all();
      cv.wait(lock, [&] { return open; });
      --running;
      ++finished;
    };
  }
  // Generous: CI runs this under AddressSanitizer on 2 loaded cores.
  bool wait_running(int n) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(30), [&] { return running == n; });
  }
  void release() {
    std::lock_guard<std::mutex> lock(mu);
    open = true;
    cv.notify_all();
  }
};

}  // namespace

TEST_CASE("worker pool: a thread per job held at once, started only when one is needed",
          "[serve]") {
  WorkerPool pool(8);
  CHECK(pool.threads_started() == 0);  // an idle server has no worker thread
  Gate gate;
  for (int k = 0; k < 5; ++k) pool.enqueue(gate.job());
  REQUIRE(gate.wait_running(5));  // all 5 run at once: none waits behind another
  CHECK(pool.threads_started() == 5);
  gate.release();
  pool.shutdown();
  CHECK(gate.finished == 5);
  CHECK(pool.thread_start_failures() == 0);
}

TEST_CASE("worker pool: jobs beyond the budget wait for a thread, and all of them run", "[serve]") {
  WorkerPool pool(2);
  Gate gate;
  for (int k = 0; k < 5; ++k) pool.enqueue(gate.job());
  REQUIRE(gate.wait_running(2));
  CHECK(pool.threads_started() == 2);
  gate.release();
  pool.shutdown();  // runs the queued jobs before it joins
  CHECK(gate.finished == 5);
  CHECK(gate.most_running == 2);  // never more than the budget at once
  CHECK(pool.threads_started() == 2);
}
