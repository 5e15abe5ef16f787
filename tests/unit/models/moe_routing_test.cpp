// expected_max_group_rows against a Monte Carlo of the router: tokens pick top-k distinct experts
// uniformly, experts split into equal groups (one per GPU under expert parallelism).
#include "models/moe_routing.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
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

// Mean over `trials` of the largest group's rows under the skewed router: each token takes the
// top k of log((i + 1)^-skew) + a standard Gumbel draw.
double monte_carlo_skewed_max(int tokens, int top_k, int experts, int groups, double skew,
                              int trials) {
  std::mt19937_64 rng(6789);
  std::extreme_value_distribution<double> gumbel(0.0, 1.0);
  std::vector<int> ids(static_cast<size_t>(experts));
  std::vector<double> score(static_cast<size_t>(experts));
  double sum = 0;
  for (int t = 0; t < trials; ++t) {
    std::vector<int> rows(static_cast<size_t>(groups), 0);
    for (int i = 0; i < tokens; ++i) {
      for (int e = 0; e < experts; ++e) {
        score[static_cast<size_t>(e)] = -skew * std::log(e + 1.0) + gumbel(rng);
      }
      std::iota(ids.begin(), ids.end(), 0);
      std::partial_sort(ids.begin(), ids.begin() + top_k, ids.end(), [&](int a, int b) {
        return score[static_cast<size_t>(a)] > score[static_cast<size_t>(b)];
      });
      for (int j = 0; j < top_k; ++j) {
        ++rows[static_cast<size_t>(ids[static_cast<size_t>(j)] / (experts / groups))];
      }
    }
    sum += *std::max_element(rows.begin(), rows.end());
  }
  return sum / trials;
}

TEST_CASE("skewed routing: inclusion probabilities in closed form at the boundaries",
          "[models][moe]") {
  // skew 0 is the uniform router: k / E each, 1 / g per group, and the busiest group is
  // expected_max_group_rows (the cost model takes that path at skew 0).
  for (double p : skewed_inclusion_probabilities(8, 256, 0.0)) CHECK(p == 8.0 / 256);
  for (double q : skewed_group_shares(8, 256, 8, 0.0)) CHECK(q == Approx(1.0 / 8).epsilon(1e-12));
  // A vanishing skew through the integral: the uniform k / E to the integrator's accuracy.
  for (double p : skewed_inclusion_probabilities(8, 64, 1e-9)) {
    CHECK(p == Approx(8.0 / 64).epsilon(1e-6));
  }
  // Top-1 of log w + Gumbel is a softmax draw: P(i) = w_i / Σ w exactly.
  const std::vector<double> one = skewed_inclusion_probabilities(1, 16, 1.2);
  double z = 0;
  for (int i = 1; i <= 16; ++i) z += std::pow(i, -1.2);
  for (int i = 0; i < 16; ++i) {
    CHECK(one[static_cast<size_t>(i)] == Approx(std::pow(i + 1, -1.2) / z).epsilon(1e-6));
  }
  // k = E: every expert every time. Any k: the probabilities sum to k and fall with the rank.
  for (double p : skewed_inclusion_probabilities(8, 8, 1.0)) CHECK(p == Approx(1.0).epsilon(1e-6));
  const std::vector<double> pi = skewed_inclusion_probabilities(8, 64, 1.0);
  double total = 0;
  for (double p : pi) total += p;
  CHECK(total == Approx(8.0).epsilon(1e-6));
  CHECK(std::is_sorted(pi.rbegin(), pi.rend()));
  // Equal shares through the independent-groups integral: above the mean, below the cap.
  const std::vector<double> equal(8, 1.0 / 8);
  CHECK(expected_max_group_rows(0, 8, 64, equal) == 0);
  CHECK(expected_max_group_rows(256, 8, 64, equal) > 256.0);
  CHECK(expected_max_group_rows(256, 8, 64, equal) < 256.0 * 8);
}

TEST_CASE("skewed routing: the busiest group against a Monte Carlo of the router",
          "[models][moe]") {
  struct Case {
    int tokens, top_k, experts, groups;
    double skew;
  };
  // A Python prototype of the same comparison (300 trials) gave at most 3.4 % at one token and
  // 0.5 % from 16 tokens up; 6 % at one token and 3 % above leave room for the noise of 200
  // trials (the normal approximation of a count of at most k is loosest at one token).
  for (const Case c :
       {Case{1, 8, 64, 8, 1.0}, Case{16, 8, 64, 8, 0.5}, Case{256, 8, 64, 8, 1.0},
        Case{256, 8, 64, 8, 1.5}, Case{512, 2, 8, 4, 1.0}, Case{256, 8, 64, 32, 1.0}}) {
    INFO(c.tokens << " tokens, top-" << c.top_k << " of " << c.experts << ", " << c.groups
                  << " groups, skew " << c.skew);
    const double mc = monte_carlo_skewed_max(c.tokens, c.top_k, c.experts, c.groups, c.skew, 200);
    const double model = expected_max_group_rows(
        c.tokens, c.top_k, c.experts, skewed_group_shares(c.top_k, c.experts, c.groups, c.skew));
    CHECK(model == Approx(mc).epsilon(c.tokens == 1 ? 0.06 : 0.03));
    // Skew loads the hot group beyond the uniform router's busiest group.
    CHECK(model > expected_max_group_rows(c.tokens, c.top_k, c.experts, c.groups));
  }
}

}  // namespace
}  // namespace servesim::models
