#include "sim/base/parallel.h"

#include <catch2/catch.hpp>

#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace servesim {
namespace {

TEST_CASE("parallel_for runs every job once, whatever the thread count", "[parallel]") {
  for (int jobs : {1, 2, 8}) {
    std::vector<int> hits(1000, 0);
    REQUIRE(parallel_for(1000, jobs, [&](int64_t i) { hits[i] += 1; }) == 1000);
    for (int h : hits) REQUIRE(h == 1);
  }
}

TEST_CASE("parallel_for rethrows the first failing job's exception", "[parallel]") {
  REQUIRE_THROWS_WITH(parallel_for(100, 4,
                                   [](int64_t i) {
                                     if (i == 37) throw std::runtime_error("job 37");
                                   }),
                      "job 37");
}

TEST_CASE("parallel_for stops starting jobs once cancelled", "[parallel]") {
  std::atomic<bool> cancel{false};
  const int64_t done = parallel_for(
      100, 1,
      [&](int64_t i) {
        if (i == 9) cancel = true;
      },
      &cancel);
  REQUIRE(done == 10);
}

TEST_CASE("WorkShare runs every shared task once, on the jobs' threads and the idle ones",
          "[parallel]") {
  // 3 jobs on up to 5 threads: with 5, two threads have no job and only help. Job j shares
  // 1 + 20·j tasks (a one-task batch runs on its own thread without being published).
  for (int threads : {1, 2, 5}) {
    WorkShare share;
    std::vector<std::vector<int>> hits = {std::vector<int>(1, 0), std::vector<int>(21, 0),
                                          std::vector<int>(41, 0)};
    REQUIRE(parallel_for(
                3, threads,
                [&](int64_t j) {
                  share.run(static_cast<int64_t>(hits[j].size()),
                            [&](int64_t i) { hits[j][i] += 1; });
                },
                nullptr, &share) == 3);
    for (const auto& job : hits) {
      for (int h : job) REQUIRE(h == 1);
    }
  }
}

TEST_CASE("a thread without a job runs the shared tasks of the job still running", "[parallel]") {
  // One job, two threads: the job's thread claims task 0 first, and task 0 returns only once
  // task 1 has finished, which only the helping thread can run (a missing helper would hang).
  WorkShare share;
  std::mutex m;
  std::condition_variable cv;
  bool second_done = false;
  std::thread::id owner, other;
  parallel_for(
      1, 2,
      [&](int64_t) {
        owner = std::this_thread::get_id();
        share.run(2, [&](int64_t i) {
          std::unique_lock<std::mutex> lock(m);
          if (i == 1) {
            other = std::this_thread::get_id();
            second_done = true;
            cv.notify_all();
          } else {
            cv.wait(lock, [&] { return second_done; });
          }
        });
      },
      nullptr, &share);
  REQUIRE(second_done);
  REQUIRE(other != owner);
}

TEST_CASE("WorkShare rethrows the lowest failing task's exception after all tasks ran",
          "[parallel]") {
  WorkShare share;
  std::atomic<int> ran{0};
  auto job = [&](int64_t) {
    share.run(20, [&](int64_t i) {
      ran.fetch_add(1);
      if (i == 7 || i == 12) throw std::runtime_error("task " + std::to_string(i));
    });
  };
  REQUIRE_THROWS_WITH(parallel_for(1, 2, job, nullptr, &share), "task 7");
  REQUIRE(ran.load() == 20);
}

}  // namespace
}  // namespace servesim
