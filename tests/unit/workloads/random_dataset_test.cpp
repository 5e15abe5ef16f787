// vLLM's `random` dataset: length ranges, sampling, shared prefix.
#include "workloads/random_dataset.h"
#include <algorithm>
#include "workloads/arrival_process.h"
#include "workloads/workload.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <map>

namespace servesim::workloads {

TEST_CASE("length ranges use vLLM's floor/ceil bounds", "[workloads]") {
  // Expectations (vllm/benchmarks/datasets.py get_sampling_params):
  // [floor(L(1-r)), ceil(L(1+r))], output low raised to 1.
  CHECK(vllm_random_length_range(1024, 0.0, 0) == LengthRange{1024, 1024});
  CHECK(vllm_random_length_range(10, 0.5, 0) == LengthRange{5, 15});
  CHECK(vllm_random_length_range(1024, 0.25, 0) == LengthRange{768, 1280});
  // Binary floating point, as in Python: 100 * 0.9 == 90.0, but 100 * 1.1 == 110.00000000000001.
  CHECK(vllm_random_length_range(100, 0.1, 0) == LengthRange{90, 111});
  // Output: floor(1 * 0.5) = 0 is raised to 1, the upper bound ceil(1.5) = 2 stays.
  CHECK(vllm_random_length_range(1, 0.5, 1) == LengthRange{1, 2});
  CHECK(vllm_random_length_range(3, 0.9, 0) == LengthRange{0, 6});  // floor(0.3)=0, ceil(5.7)=6
}

TEST_CASE("sampled lengths cover the whole range, both ends included", "[workloads]") {
  // Expectations: L_in = 10, L_out = 20, r = 0.5 -> inputs uniform on [5, 15] (11 values),
  // outputs on [10, 30] (21 values). With 30k draws each value is expected ~2700 / ~1400 times,
  // so missing one has probability < 1e-300; counts lie within 5 binomial std of n/k.
  RandomDatasetParams p;
  p.num_prompts = 30'000;
  p.input_len = 10;
  p.output_len = 20;
  p.range_ratio = 0.5;
  RandomDataset ds(p, 3);
  REQUIRE(ds.input_range() == LengthRange{5, 15});
  REQUIRE(ds.output_range() == LengthRange{10, 30});
  std::map<int, int> in_counts, out_counts;
  for (int64_t i = 0; i < ds.size(); ++i) {
    const RequestSpec r = ds.next();
    REQUIRE(r.prompt_tokens >= 5);
    REQUIRE(r.prompt_tokens <= 15);
    REQUIRE(r.output_tokens >= 10);
    REQUIRE(r.output_tokens <= 30);
    REQUIRE(r.prefix_group == -1);
    REQUIRE(r.prefix_tokens == 0);
    ++in_counts[r.prompt_tokens];
    ++out_counts[r.output_tokens];
  }
  CHECK(in_counts.size() == 11);
  CHECK(in_counts.begin()->first == 5);
  CHECK(in_counts.rbegin()->first == 15);
  CHECK(out_counts.size() == 21);
  CHECK(out_counts.begin()->first == 10);
  CHECK(out_counts.rbegin()->first == 30);
  const auto check_uniform = [](const std::map<int, int>& counts, double n) {
    const double k = static_cast<double>(counts.size());
    const double sd = std::sqrt(n * (1 / k) * (1 - 1 / k));
    for (const auto& [len, count] : counts) {
      INFO("length " << len);
      CHECK(std::abs(count - n / k) <= 5 * sd);
    }
  };
  check_uniform(in_counts, 30'000);
  check_uniform(out_counts, 30'000);
}

TEST_CASE("range ratio 0 gives exactly the configured lengths", "[workloads]") {
  RandomDatasetParams p;
  p.num_prompts = 1000;
  p.input_len = 777;
  p.output_len = 33;
  RandomDataset ds(p, 1);
  for (int64_t i = 0; i < ds.size(); ++i) {
    const RequestSpec r = ds.next();
    REQUIRE(r.prompt_tokens == 777);
    REQUIRE(r.output_tokens == 33);
  }
}

TEST_CASE("random prefix: one shared prefix prepended to every prompt", "[workloads]") {
  // Expectations: prompt = P + input len; prefix_group 0 and prefix_tokens P on every request.
  RandomDatasetParams p;
  p.num_prompts = 2000;
  p.input_len = 100;
  p.range_ratio = 0.2;
  p.prefix_len = 64;
  RandomDataset ds(p, 8);
  for (int64_t i = 0; i < ds.size(); ++i) {
    const RequestSpec r = ds.next();
    REQUIRE(r.prefix_group == 0);
    REQUIRE(r.prefix_tokens == 64);
    REQUIRE(r.prompt_tokens >= 64 + 80);
    REQUIRE(r.prompt_tokens <= 64 + 120);
  }
}

TEST_CASE("input and output lengths come from independent streams", "[workloads]") {
  // Changing the output length must not move any input length.
  RandomDatasetParams a;
  a.num_prompts = 500;
  a.range_ratio = 0.5;
  RandomDatasetParams b = a;
  b.output_len = 900;
  RandomDataset da(a, 21), db(b, 21);
  bool outputs_differ = false;
  for (int64_t i = 0; i < a.num_prompts; ++i) {
    const RequestSpec ra = da.next(), rb = db.next();
    REQUIRE(ra.prompt_tokens == rb.prompt_tokens);
    outputs_differ = outputs_differ || ra.output_tokens != rb.output_tokens;
  }
  CHECK(outputs_differ);
}

}  // namespace servesim::workloads

namespace servesim::workloads {
namespace {

TEST_CASE("legacy random lengths: [int(L*r), L], r = 0 read as the old default 1",
          "[workloads][version]") {
  // benchmark_serving.py <= 0.8: np.random.randint(int(L * r), L + 1).
  CHECK(legacy_random_length_range(1024, 0.5, 0) == LengthRange{512, 1024});
  CHECK(legacy_random_length_range(100, 0.333, 0) == LengthRange{33, 100});  // int() truncates
  CHECK(legacy_random_length_range(1024, 0.0, 0) == LengthRange{1024, 1024});
  CHECK(legacy_random_length_range(1024, 1.0, 0) == LengthRange{1024, 1024});
  CHECK(legacy_random_length_range(3, 0.1, 1) == LengthRange{1, 3});  // output >= 1
  WorkloadConfig c;
  c.num_prompts = 2000;
  c.random_input_len = 1000;
  c.random_output_len = 100;
  c.random_range_ratio = 0.5;
  c.random_range_rule = "legacy";
  auto w = make_workload(c);
  int64_t lo = 1 << 30, hi = 0;
  while (auto s = w->next()) {
    lo = std::min<int64_t>(lo, s->prompt_tokens);
    hi = std::max<int64_t>(hi, s->prompt_tokens);
  }
  CHECK(lo >= 500);
  CHECK(hi == 1000);  // 2000 draws from 501 values: the top is hit (miss probability < 1e-1)
  c.random_range_rule = "both";
  CHECK_THROWS_WITH(make_workload(c), Catch::Contains("--random-range-rule"));
  c.random_range_rule = "symmetric";
  c.random_range_ratio = 1.0;
  CHECK_THROWS_WITH(make_workload(c), Catch::Contains("--random-range-ratio"));
  c.random_range_rule = "legacy";
  CHECK_NOTHROW(make_workload(c));  // r = 1 is the legacy default
}

TEST_CASE("arrivals without rescale: first at t = 0, then the raw cumulated gaps",
          "[workloads][version]") {
  // Older benchmark_serving.py get_request: yield, then sleep one gap.
  const auto raw = arrival_times_s(50, 4.0, 1.0, "poisson", 3, false);
  const auto scaled = arrival_times_s(50, 4.0, 1.0, "poisson", 3, true);
  CHECK(raw[0] == 0.0);
  RngStream rng(3, kArrivalStreamName);
  PoissonArrivals p(4.0);
  double t = 0;
  for (size_t i = 0; i < raw.size(); ++i) {
    CHECK(raw[i] == t);
    t += p.next_gap_s(rng);
  }
  CHECK(scaled.back() == Approx(50 / 4.0).epsilon(1e-12));
  // Constant arrivals: i / rate without rescale, (i + 1) / rate with it.
  CHECK(arrival_times_s(3, 2.0, 1.0, "constant", 0, false) == std::vector<double>{0.0, 0.5, 1.0});
}

}  // namespace
}  // namespace servesim::workloads
