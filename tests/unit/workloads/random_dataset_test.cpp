// vLLM's `random` dataset: length ranges, sampling, shared prefix.
#include "workloads/random_dataset.h"

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
