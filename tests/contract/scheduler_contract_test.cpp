// Contract tests: promises the engine keeps on any run, checked on randomised configurations.
#include <catch2/catch.hpp>

#include <string>

#include "sim/cluster/simulation.h"

namespace servesim::sim {
namespace {

SimulationConfig small_run(uint64_t seed) {
  SimulationConfig c;
  c.model = "llama-3.1-8b";
  c.gpu = "a100-80gb";
  c.workload.num_prompts = 400;
  c.workload.request_rate = 30;
  c.workload.random_input_len = 600;
  c.workload.random_output_len = 120;
  c.workload.random_range_ratio = 0.9;
  c.workload.seed = seed;
  return c;
}

// Runs `c` and checks every promise that must hold whatever the configuration.
void check_contract(const SimulationConfig& c) {
  const PreparedDeployment p = prepare_deployment(c);
  const SimulationResult r = run_simulation(c, p);
  const ReplicaStats& s = r.replica_stats.at(0);
  INFO("seed " << c.workload.seed << " max_num_seqs " << p.engine.max_num_seqs << " budget "
               << p.engine.max_num_batched_tokens << " blocks " << p.memory.num_blocks);
  // Limits are never exceeded.
  REQUIRE(s.peak_running <= p.engine.max_num_seqs);
  REQUIRE(s.peak_step_tokens <= p.engine.max_num_batched_tokens);
  REQUIRE(s.peak_used_blocks <= p.memory.num_blocks);
  // Conservation: every request that arrived completed or failed; every token was emitted once;
  // all KV blocks came back.
  int64_t completed = 0, failed = 0, latency_ns = 0;
  for (const auto& rec : r.records) {
    REQUIRE(rec.completed != rec.failed);
    completed += rec.completed;
    failed += rec.failed;
    if (!rec.completed) continue;
    int64_t tokens = 0;
    for (const auto& seg : rec.segments) tokens += seg.tokens();
    REQUIRE(tokens == rec.output_tokens);
    REQUIRE(rec.first_token >= rec.arrival);
    REQUIRE(rec.last_token >= rec.first_token);
    latency_ns += (rec.last_token - rec.arrival).ns();
  }
  REQUIRE(completed + failed == static_cast<int64_t>(r.records.size()));
  REQUIRE(s.used_blocks_now == 0);
  // Little's law, exactly: the time integral of requests in the replica equals the sum of their
  // times in it (L·T = λ·W·T), both in integer nanoseconds.
  REQUIRE(s.outstanding_ns == latency_ns);
}

TEST_CASE("limits, conservation and Little's law hold on random runs", "[contract]") {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SimulationConfig c = small_run(seed);
    SECTION("defaults, seed " + std::to_string(seed)) { check_contract(c); }
    SECTION("tight KV forces preemptions, seed " + std::to_string(seed)) {
      c.engine.num_gpu_blocks_override = 400;  // 6,400 tokens: a few requests at a time
      c.engine.max_model_len = 4096;
      check_contract(c);
    }
    SECTION("small budget and seq cap, seed " + std::to_string(seed)) {
      c.engine.max_num_seqs = 7;
      c.engine.max_num_batched_tokens = 64;
      check_contract(c);
    }
    SECTION("long-prefill threshold and priority policy, seed " + std::to_string(seed)) {
      c.engine.long_prefill_token_threshold = 100;
      c.engine.scheduling_policy = "priority";
      c.engine.num_gpu_blocks_override = 500;
      c.engine.max_model_len = 4096;
      check_contract(c);
    }
    SECTION("shared prefixes with prefix caching, seed " + std::to_string(seed)) {
      c.workload.dataset_name = "generated-shared-prefix";
      c.workload.gsp_num_groups = 8;
      c.workload.gsp_prompts_per_group = 40;
      c.workload.gsp_system_prompt_len = 700;
      c.workload.gsp_question_len = 50;
      c.workload.gsp_output_len = 40;
      c.engine.num_gpu_blocks_override = 600;
      c.engine.max_model_len = 4096;
      check_contract(c);
    }
    SECTION("closed loop, seed " + std::to_string(seed)) {
      c.max_concurrency = 5;
      c.workload.request_rate = std::numeric_limits<double>::infinity();
      check_contract(c);
    }
    // V0's prefill-first scheduler (chunked prefill off below 32K context) and multi-step.
    SECTION("V0 prefill-first with tight KV, seed " + std::to_string(seed)) {
      c.engine.vllm_version = "0.6";
      c.engine.max_model_len = 4096;
      c.engine.num_gpu_blocks_override = 400;
      check_contract(c);
    }
    SECTION("V0 multi-step, priority policy, tight KV, seed " + std::to_string(seed)) {
      c.engine.vllm_version = "0.7";
      c.engine.max_model_len = 4096;
      c.engine.enable_chunked_prefill = 0;
      c.engine.num_scheduler_steps = 1 + static_cast<int>(seed) * 3;
      c.engine.scheduling_policy = "priority";
      c.engine.num_gpu_blocks_override = 350;
      check_contract(c);
    }
    SECTION("V0 multi-step closed loop with few seats, seed " + std::to_string(seed)) {
      c.engine.vllm_version = "0.6";
      c.engine.max_model_len = 2048;
      c.engine.max_num_seqs = 7;
      c.engine.num_scheduler_steps = 8;
      c.max_concurrency = 12;
      c.workload.request_rate = std::numeric_limits<double>::infinity();
      check_contract(c);
    }
  }
}

TEST_CASE("tight KV preempts and recomputes, and every request still completes", "[contract]") {
  SimulationConfig c = small_run(7);
  c.engine.num_gpu_blocks_override = 200;
  c.engine.max_model_len = 3200;
  const PreparedDeployment p = prepare_deployment(c);
  const SimulationResult r = run_simulation(c, p);
  REQUIRE(r.replica_stats[0].preemptions > 0);
  REQUIRE(r.metrics.completed == c.workload.num_prompts);
  int64_t preempted = 0;
  for (const auto& rec : r.records) preempted += rec.preemptions;
  REQUIRE(preempted == r.replica_stats[0].preemptions);
}

TEST_CASE("closed loop never has more than max-concurrency requests outstanding", "[contract]") {
  SimulationConfig c = small_run(3);
  c.max_concurrency = 4;
  const PreparedDeployment p = prepare_deployment(c);
  const SimulationResult r = run_simulation(c, p);
  REQUIRE(r.replica_stats[0].peak_running <= 4);
  REQUIRE(r.metrics.max_concurrent_requests <= 4);
}

TEST_CASE("requests over max-model-len fail with vLLM's reason and the run goes on", "[contract]") {
  SimulationConfig c = small_run(5);
  c.engine.max_model_len = 1000;  // input up to 1140 + output up to 228: many are too long
  const PreparedDeployment p = prepare_deployment(c);
  const SimulationResult r = run_simulation(c, p);
  REQUIRE(r.metrics.failed > 0);
  REQUIRE(r.metrics.completed > 0);
  REQUIRE(r.metrics.completed + r.metrics.failed == c.workload.num_prompts);
  for (const auto& rec : r.records) {
    const bool too_long = rec.prompt_tokens + rec.output_tokens > 1000;
    REQUIRE(rec.failed == too_long);
    if (too_long)
      REQUIRE(rec.error.find("maximum context length is 1000 tokens") != std::string::npos);
  }
}

}  // namespace
}  // namespace servesim::sim

namespace servesim::sim {
namespace {

TEST_CASE("the calibration shipped for a GPU applies by default, none turns it off",
          "[contract][calibration]") {
  // Expectations: h100-sxm has hardware/calibration/h100-sxm.json, whose step overhead and
  // efficiencies differ from the catalog's. Since the measured elementwise kernels (338af7f) its
  // serving fit is step_overhead_s only and it carries no client TTFT constant (the fit put it at
  // 0, its bound), so the client TTFT overhead is checked on a100-80gb, whose shipped profile
  // still has one (0.0148 s). rtx-4090 has no shipped profile.
  SimulationConfig c;
  c.model = "llama-3.1-8b";
  c.gpu = "h100-sxm";
  const PreparedDeployment shipped = prepare_deployment(c);
  REQUIRE(shipped.calibration_source.find("hardware/calibration/h100-sxm.json") !=
          std::string::npos);
  REQUIRE(shipped.client_ttft_overhead_s == 0);
  c.calibration = "none";
  const PreparedDeployment none = prepare_deployment(c);
  REQUIRE(none.calibration_source.empty());
  REQUIRE(none.client_ttft_overhead_s == 0);
  models::BatchShape d;
  d.decode_seqs = 8;
  d.decode_context_tokens = 8000;
  d.sampled_seqs = 8;
  REQUIRE(shipped.cost->estimate(d).total_s != none.cost->estimate(d).total_s);

  c.gpu = "a100-80gb";
  c.calibration = "";
  const PreparedDeployment a100 = prepare_deployment(c);
  REQUIRE(a100.calibration_source.find("hardware/calibration/a100-80gb.json") != std::string::npos);
  REQUIRE(a100.client_ttft_overhead_s > 0);
  c.calibration = "none";
  const PreparedDeployment a100_none = prepare_deployment(c);
  REQUIRE(a100_none.calibration_source.empty());
  REQUIRE(a100_none.client_ttft_overhead_s == 0);
  REQUIRE(a100.cost->estimate(d).total_s != a100_none.cost->estimate(d).total_s);

  c.gpu = "rtx-4090";
  c.calibration = "";
  c.engine.max_model_len = 8192;
  REQUIRE(prepare_deployment(c).calibration_source.empty());
}

}  // namespace
}  // namespace servesim::sim
