// expected_max_group_rows against a Monte Carlo of the router: tokens pick top-k distinct experts
// uniformly, experts split into equal groups (one per GPU under expert parallelism).
#include "models/moe_routing.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

namespace servesim::models {
namespace {

// Mean over `trials` of the largest group's rows.
double monte_carlo_max(int tokens, int top_k, int experts, int groups, int trials) {
  std::mt19937_64 rng(12345);
  std::vector<int> ids(static_cast<size_t>(experts));
  double sum = 0;
  for (int t = 0; t < trials; ++t) {
    std::vector<int> rows(static_cast<size_t>(groups), 0);
    for (int i = 0; i < tokens; ++i) {
      std::iota(ids.begin(), ids.end(), 0);
      for (int j = 0; j < top_k; ++j) {  // k distinct picks: a partial Fisher-Yates shuffle
        std::uniform_int_distribution<int> pick(j, experts - 1);
        std::swap(ids[static_cast<size_t>(j)], ids[static_cast<size_t>(pick(rng))]);
        ++rows[static_cast<size_t>(ids[static_cast<size_t>(j)] / (experts / groups))];
      }
    }
    sum += *std::max_element(rows.begin(), rows.end());
  }
  return sum / trials;
}

TEST_CASE("busiest expert group: closed form against a Monte Carlo of the router",
          "[models][moe]") {
  // One group: every row. k = E: every token in every group.
  CHECK(expected_max_group_rows(100, 8, 256, 1) == 800);
  CHECK(expected_max_group_rows(0, 8, 256, 8) == 0);
  CHECK(expected_max_group_rows(10, 8, 8, 8) == 10);  // each token hits each group once
  struct Case {
    int tokens, top_k, experts, groups;
    double tolerance;
  };
  // DeepSeek-V3 under EP 8 and EP 32, Qwen3-235B under EP 8, Mixtral under EP 4, from decode
  // batches to prefill chunks. The normal order statistic is within 4 % from 64 tokens up and
  // within 12 % at one token (a discrete count of at most k).
  for (const Case c :
       {Case{1, 8, 256, 8, 0.12}, Case{16, 8, 256, 8, 0.06}, Case{64, 8, 256, 8, 0.04},
        Case{256, 8, 256, 8, 0.03}, Case{2048, 8, 256, 8, 0.02}, Case{256, 8, 256, 32, 0.04},
        Case{512, 8, 128, 8, 0.03}, Case{512, 2, 8, 4, 0.03}}) {
    INFO(c.tokens << " tokens, top-" << c.top_k << " of " << c.experts << ", " << c.groups
                  << " groups");
    const double mc = monte_carlo_max(c.tokens, c.top_k, c.experts, c.groups, 400);
    const double model = expected_max_group_rows(c.tokens, c.top_k, c.experts, c.groups);
    CHECK(model == Approx(mc).epsilon(c.tolerance));
    CHECK(model >= static_cast<double>(c.tokens) * c.top_k / c.groups);  // at least the mean
  }
}

}  // namespace
}  // namespace servesim::models
