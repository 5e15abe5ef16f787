// Workload = arrivals x dataset, and the validation of every flag.
#include "workloads/workload.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "sim/base/error.h"

namespace servesim::workloads {
namespace {

std::vector<RequestSpec> drain(const WorkloadConfig& config) {
  auto workload = make_workload(config);
  std::vector<RequestSpec> out;
  while (auto r = workload->next()) {
    out.push_back(*r);
  }
  CHECK(static_cast<int64_t>(out.size()) == workload->size());
  CHECK_FALSE(workload->next().has_value());
  return out;
}

bool same(const RequestSpec& a, const RequestSpec& b) {
  return a.id == b.id && a.arrival == b.arrival && a.prompt_tokens == b.prompt_tokens &&
         a.output_tokens == b.output_tokens && a.prefix_group == b.prefix_group &&
         a.prefix_tokens == b.prefix_tokens && a.priority == b.priority;
}

WorkloadConfig poisson_random(double rate, int64_t n) {
  WorkloadConfig c;
  c.request_rate = rate;
  c.num_prompts = n;
  c.random_range_ratio = 0.5;
  c.seed = 17;
  return c;
}

}  // namespace

TEST_CASE("requests come in arrival order with ids 0..N-1", "[workloads]") {
  // Expectations: N requests; id i is the i-th handed out; arrivals nondecreasing; the last at
  // N/rate (vLLM's rescale) = 1000/25 = 40 s, rounded up to the nanosecond; arrivals are
  // arrival_times_s converted once with SimTime::from_seconds_ceil.
  const WorkloadConfig c = poisson_random(25.0, 1000);
  const std::vector<RequestSpec> reqs = drain(c);
  REQUIRE(reqs.size() == 1000);
  const std::vector<double> times =
      arrival_times_s(c.num_prompts, c.request_rate, c.burstiness, c.arrival_process, c.seed);
  for (size_t i = 0; i < reqs.size(); ++i) {
    REQUIRE(reqs[i].id == static_cast<int64_t>(i));
    REQUIRE(reqs[i].arrival == SimTime::from_seconds_ceil(times[i]));
    if (i > 0) {
      REQUIRE(reqs[i].arrival >= reqs[i - 1].arrival);
    }
  }
  CHECK(std::abs(reqs.back().arrival.ns() - 40'000'000'000) <= 1);
  CHECK(reqs.front().arrival > SimTime::zero());
}

TEST_CASE("request rate inf: every request at t = 0", "[workloads]") {
  WorkloadConfig c;  // default rate is inf, as in vllm bench serve
  c.num_prompts = 300;
  for (const RequestSpec& r : drain(c)) {
    REQUIRE(r.arrival == SimTime::zero());
  }
}

TEST_CASE("same config and seed give the same workload, another seed another one", "[workloads]") {
  WorkloadConfig c = poisson_random(4.0, 3000);
  c.burstiness = 0.5;
  const auto a = drain(c);
  const auto b = drain(c);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    REQUIRE(same(a[i], b[i]));
  }
  c.seed = 18;
  const auto d = drain(c);
  int arrivals_equal = 0, prompts_equal = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    arrivals_equal += a[i].arrival == d[i].arrival;
    prompts_equal += a[i].prompt_tokens == d[i].prompt_tokens;
  }
  CHECK(arrivals_equal < 10);
  CHECK(prompts_equal < 100);  // 1025 possible values: ~3 coincidences expected
}

TEST_CASE("changing the output length moves no arrival and no prompt length", "[workloads]") {
  WorkloadConfig c = poisson_random(9.0, 2000);
  const auto a = drain(c);
  c.random_output_len = 4000;
  c.random_range_ratio = 0.5;
  const auto b = drain(c);
  for (size_t i = 0; i < a.size(); ++i) {
    REQUIRE(a[i].arrival == b[i].arrival);
    REQUIRE(a[i].prompt_tokens == b[i].prompt_tokens);
  }
}

TEST_CASE("generated-shared-prefix ignores --num-prompts and gets vLLM arrivals", "[workloads]") {
  WorkloadConfig c;
  c.dataset_name = "generated-shared-prefix";
  c.num_prompts = 5;  // ignored, as in SGLang: groups x prompts_per_group requests
  c.gsp_num_groups = 8;
  c.gsp_prompts_per_group = 4;
  c.request_rate = 16.0;
  auto workload = make_workload(c);
  CHECK(workload->size() == 32);
  const auto reqs = drain(c);
  REQUIRE(reqs.size() == 32);
  CHECK(std::abs(reqs.back().arrival.ns() - 2'000'000'000) <= 1);  // 32 / 16 s
  std::vector<int> per_group(8, 0);
  for (const auto& r : reqs) {
    ++per_group[static_cast<size_t>(r.prefix_group)];
  }
  for (int n : per_group) {
    CHECK(n == 4);
  }
}

TEST_CASE("a million requests stream without materialising them", "[workloads][slow]") {
  // Expectations: 1M Poisson arrivals at 1000/s end at exactly 1000 s; ids run to 999999.
  WorkloadConfig c = poisson_random(1000.0, 1'000'000);
  auto workload = make_workload(c);
  RequestSpec last;
  int64_t count = 0;
  while (auto r = workload->next()) {
    last = *r;
    ++count;
  }
  CHECK(count == 1'000'000);
  CHECK(last.id == 999'999);
  CHECK(std::abs(last.arrival.ns() - 1'000'000'000'000) <= 1);
}

TEST_CASE("validation names the flag, the value and what was expected", "[workloads]") {
  using Catch::Matchers::Contains;
  using Catch::Matchers::Equals;
  const WorkloadConfig ok = poisson_random(10.0, 100);
  REQUIRE_NOTHROW(validate(ok));
  REQUIRE_NOTHROW(validate(WorkloadConfig{}));

  SECTION("--random-range-ratio: [0, 1), boundaries at 0 and just below 1") {
    WorkloadConfig c = ok;
    c.random_range_ratio = 1.5;
    CHECK_THROWS_WITH(validate(c), Equals("--random-range-ratio: 1.5 is out of range; "
                                          "expected a value in [0, 1)"));
    c.random_range_ratio = 1.0;
    CHECK_THROWS_AS(validate(c), ConfigError);
    c.random_range_ratio = -0.1;
    CHECK_THROWS_WITH(validate(c), Contains("--random-range-ratio"));
    c.random_range_ratio = std::nan("");
    CHECK_THROWS_WITH(validate(c), Contains("--random-range-ratio"));
    c.random_range_ratio = 0.0;
    CHECK_NOTHROW(validate(c));
    c.random_range_ratio = 0.999;
    CHECK_NOTHROW(validate(c));
  }
  SECTION("--random-output-len >= 1") {
    WorkloadConfig c = ok;
    c.random_output_len = 0;
    CHECK_THROWS_WITH(validate(c), Contains("--random-output-len: 0"));
    c.random_output_len = 1;
    CHECK_NOTHROW(validate(c));
  }
  SECTION("--random-input-len: the shortest prompt (prefix + floor(L(1-r))) must be >= 1") {
    WorkloadConfig c = ok;
    c.random_input_len = -1;
    CHECK_THROWS_WITH(validate(c), Contains("--random-input-len"));
    c.random_input_len = 1;
    c.random_range_ratio = 0.5;  // floor(0.5) = 0 tokens, no prefix
    CHECK_THROWS_WITH(validate(c), Contains("--random-input-len: 1 is too small"));
    c.random_prefix_len = 1;  // as vLLM: a prefix makes it valid
    CHECK_NOTHROW(validate(c));
    c.random_prefix_len = -1;
    CHECK_THROWS_WITH(validate(c), Contains("--random-prefix-len"));
    c.random_prefix_len = 0;
    c.random_input_len = 2;  // floor(1.0) = 1 token
    CHECK_NOTHROW(validate(c));
    c.random_input_len = std::numeric_limits<int32_t>::max();
    CHECK_THROWS_WITH(validate(c), Contains("--random-input-len"));
  }
  SECTION("--num-prompts >= 1") {
    WorkloadConfig c = ok;
    c.num_prompts = 0;
    CHECK_THROWS_WITH(validate(c), Equals("--num-prompts: 0 is out of range; "
                                          "expected an integer >= 1"));
    c.num_prompts = 1;
    CHECK_NOTHROW(validate(c));
  }
  SECTION("--request-rate > 0 or inf") {
    WorkloadConfig c = ok;
    for (double bad : {0.0, -2.0, std::nan("")}) {
      c.request_rate = bad;
      CHECK_THROWS_WITH(validate(c), Contains("--request-rate"));
    }
    c.request_rate = std::numeric_limits<double>::infinity();
    CHECK_NOTHROW(validate(c));
    c.request_rate = 1e-12;  // 100 requests would span 1e14 s
    CHECK_THROWS_WITH(validate(c), Contains("--request-rate"));
  }
  SECTION("--burstiness > 0") {
    WorkloadConfig c = ok;
    for (double bad : {0.0, -1.0, std::nan("")}) {
      c.burstiness = bad;
      CHECK_THROWS_WITH(validate(c), Contains("--burstiness"));
    }
    c.burstiness = 0.01;
    CHECK_NOTHROW(validate(c));
    c.burstiness = std::numeric_limits<double>::infinity();  // vLLM: constant 1/rate
    CHECK_NOTHROW(validate(c));
  }
  SECTION("--arrival-process poisson|constant; burstiness only applies to poisson") {
    WorkloadConfig c = ok;
    c.arrival_process = "uniform";
    CHECK_THROWS_WITH(validate(c), Contains("--arrival-process: \"uniform\""));
    c.arrival_process = "constant";
    CHECK_NOTHROW(validate(c));
    c.burstiness = 4.0;
    CHECK_THROWS_WITH(validate(c), Contains("--burstiness: 4 has no effect"));
  }
  SECTION("--dataset-name") {
    WorkloadConfig c = ok;
    c.dataset_name = "hf";  // vLLM's HuggingFace datasets need text: not supported
    CHECK_THROWS_WITH(validate(c), Contains("--dataset-name: \"hf\""));
    c.dataset_name = "sharegpt";
    CHECK_NOTHROW(validate(c));
    c.dataset_name = "sharegpt-multiturn";
    CHECK_NOTHROW(validate(c));
  }
  SECTION("--gsp-* lengths and counts >= 1") {
    WorkloadConfig c = ok;
    c.dataset_name = "generated-shared-prefix";
    CHECK_NOTHROW(validate(c));
    c.gsp_num_groups = 0;
    CHECK_THROWS_WITH(validate(c), Contains("--gsp-num-groups: 0"));
    c.gsp_num_groups = 1;
    c.gsp_prompts_per_group = 0;
    CHECK_THROWS_WITH(validate(c), Contains("--gsp-prompts-per-group"));
    c.gsp_prompts_per_group = 1;
    c.gsp_system_prompt_len = 0;
    CHECK_THROWS_WITH(validate(c), Contains("--gsp-system-prompt-len"));
    c.gsp_system_prompt_len = 1;
    c.gsp_question_len = 0;
    CHECK_THROWS_WITH(validate(c), Contains("--gsp-question-len"));
    c.gsp_question_len = 1;
    c.gsp_output_len = 0;
    CHECK_THROWS_WITH(validate(c), Contains("--gsp-output-len"));
    c.gsp_output_len = 1;
    CHECK_NOTHROW(validate(c));
  }
  SECTION("make_workload validates") {
    WorkloadConfig c = ok;
    c.random_range_ratio = 2.0;
    CHECK_THROWS_AS(make_workload(c), ConfigError);
  }
}

}  // namespace servesim::workloads
