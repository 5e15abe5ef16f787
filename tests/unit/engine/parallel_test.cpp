#include "sim/base/parallel.h"

#include <catch2/catch.hpp>

#include <stdexcept>

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
      100, 1, [&](int64_t i) { if (i == 9) cancel = true; }, &cancel);
  REQUIRE(done == 10);
}

}  // namespace
}  // namespace servesim
