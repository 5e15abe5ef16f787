// Adapter popularity (workloads/lora_workload.h): the Zipf and uniform laws in closed form, their
// sampled frequencies, the share of requests naming an adapter, and that adding adapters leaves
// the arrivals and lengths as they were.
#include "workloads/lora_workload.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "sim/base/error.h"
#include "sim/base/rng.h"

namespace servesim::workloads {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;

TEST_CASE("Zipf popularity: P(k) = (k+1)^-s / H(N, s)", "[workloads][lora]") {
  // N = 4, s = 1: H = 1 + 1/2 + 1/3 + 1/4 = 25/12, so P = 12/25, 6/25, 4/25, 3/25.
  const AdapterPopularity z(4, "zipf", 1.0);
  CHECK_THAT(z.probability(0), WithinRel(12.0 / 25, 1e-12));
  CHECK_THAT(z.probability(1), WithinRel(6.0 / 25, 1e-12));
  CHECK_THAT(z.probability(2), WithinRel(4.0 / 25, 1e-12));
  CHECK_THAT(z.probability(3), WithinRel(3.0 / 25, 1e-12));
  // Inverse CDF at the interval boundaries: [0, 12/25) -> 0, [12/25, 18/25) -> 1, ...
  CHECK(z.draw(0.0) == 0);
  CHECK(z.draw(0.47) == 0);
  CHECK(z.draw(0.49) == 1);
  CHECK(z.draw(0.73) == 2);
  CHECK(z.draw(0.999999) == 3);
  // s = 0 and the uniform law: 1/N each.
  const AdapterPopularity flat(5, "zipf", 0.0);
  const AdapterPopularity uni(5, "uniform", 3.0);
  for (int k = 0; k < 5; ++k) {
    CHECK_THAT(flat.probability(k), WithinRel(0.2, 1e-12));
    CHECK_THAT(uni.probability(k), WithinRel(0.2, 1e-12));
  }
}

TEST_CASE("sampled adapter frequencies match the Zipf law", "[workloads][lora]") {
  // n draws: each frequency is Binomial(n, p)/n with sd sqrt(p(1-p)/n); 5 sd bounds a correct
  // sampler's deviation except with probability 6e-7 per adapter (and the seed is fixed).
  const int32_t adapters = 20;
  const int64_t n = 200000;
  WorkloadConfig c;
  c.num_prompts = n;
  c.random_input_len = 16;
  c.random_output_len = 4;
  c.num_lora_adapters = adapters;
  c.lora_zipf_exponent = 1.1;
  c.seed = 5;
  auto w = make_workload(c);
  std::vector<int64_t> count(adapters, 0);
  int64_t none = 0;
  while (auto r = w->next()) {
    if (r->lora_adapter < 0) {
      ++none;
    } else {
      REQUIRE(r->lora_adapter < adapters);
      ++count[static_cast<size_t>(r->lora_adapter)];
    }
  }
  CHECK(none == 0);  // --lora-request-fraction 1
  const AdapterPopularity z(adapters, "zipf", 1.1);
  for (int32_t k = 0; k < adapters; ++k) {
    const double p = z.probability(k);
    const double f = static_cast<double>(count[static_cast<size_t>(k)]) / static_cast<double>(n);
    CHECK(std::abs(f - p) <= 5 * std::sqrt(p * (1 - p) / static_cast<double>(n)));
  }
}

TEST_CASE("adapters leave arrivals and lengths as they were, and the fraction names some",
          "[workloads][lora]") {
  WorkloadConfig base;
  base.num_prompts = 20000;
  base.request_rate = 10;
  base.random_range_ratio = 0.5;
  base.seed = 3;
  WorkloadConfig with = base;
  with.num_lora_adapters = 8;
  with.lora_request_fraction = 0.3;
  auto a = make_workload(base);
  auto b = make_workload(with);
  auto b2 = make_workload(with);
  int64_t named = 0;
  while (auto x = a->next()) {
    auto y = b->next();
    auto y2 = b2->next();
    REQUIRE(y.has_value());
    CHECK(x->arrival == y->arrival);
    CHECK(x->prompt_tokens == y->prompt_tokens);
    CHECK(x->output_tokens == y->output_tokens);
    CHECK(x->lora_adapter == -1);
    CHECK(y->lora_adapter == y2->lora_adapter);  // same seed, same adapters
    named += y->lora_adapter >= 0;
  }
  // Binomial(20000, 0.3): sd = sqrt(20000 · 0.21) = 64.8; 5 sd = 324.
  CHECK(std::abs(static_cast<double>(named) - 6000.0) <= 324.0);
}

TEST_CASE("LoRA workload flags are refused by name", "[workloads][lora]") {
  WorkloadConfig c;
  c.num_lora_adapters = 4;
  c.lora_popularity = "pareto";
  CHECK_THROWS_WITH(validate_lora_workload(c), Contains("--lora-popularity") && Contains("zipf"));
  c.lora_popularity = "zipf";
  c.lora_request_fraction = 1.5;
  CHECK_THROWS_WITH(validate_lora_workload(c), Contains("--lora-request-fraction"));
  c.lora_request_fraction = 1;
  c.lora_zipf_exponent = -1;
  CHECK_THROWS_WITH(validate_lora_workload(c), Contains("--lora-zipf-exponent"));
  c.lora_zipf_exponent = 1;
  c.multi_turn = true;
  CHECK_THROWS_WITH(validate_lora_workload(c), Contains("--multi-turn"));
  WorkloadConfig off;
  off.lora_zipf_exponent = 2;
  CHECK_THROWS_WITH(validate_lora_workload(off), Contains("--num-lora-adapters"));
}

}  // namespace
}  // namespace servesim::workloads
