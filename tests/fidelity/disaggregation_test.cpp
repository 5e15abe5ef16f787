// Disaggregated prefill/decode (sim/cluster/pd_simulation.h) against closed forms: one request's
// TTFT is its prefill step + the KV transfer + the decode instance's one-token step; requests,
// tokens and transferred bytes are conserved; a run is deterministic; with every prompt under the
// local-prefill threshold a 1P:1D run is the aggregated single replica exactly.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>

#include "sim/base/error.h"
#include "sim/cluster/pd_simulation.h"
#include "sim/cluster/simulation.h"

namespace servesim::sim {
namespace {

SimTime step(const models::CostModel& cost, const models::BatchShape& s) {
  return std::max(SimTime::from_ns(1), SimTime::from_seconds_ceil(cost.estimate(s).total_s));
}

SimulationConfig pd_config(int prefill, int decode) {
  SimulationConfig c;
  c.calibration = "none";         // no client overhead: TTFT is the engine's alone
  c.engine.async_scheduling = 0;  // step times add up with no host/device overlap
  c.prefill_replicas = prefill;
  c.decode_replicas = decode;
  return c;
}

TEST_CASE("P/D: one request's TTFT is prefill step + KV transfer + one decode step",
          "[fidelity][pd]") {
  // P = 1000 prompt tokens, O = 32 output tokens, Llama-3.1-8B on H100, pools joined by
  // InfiniBand NDR (35.9 GB/s per GPU, α = 19.1 µs; TP 1 on both sides: one lane).
  //   prefill instance: one step of P tokens (attention work P·P/2), samples the discarded token;
  //   transfer: P · kv_bytes_per_token bytes at 35.9 GB/s, then α;
  //   decode instance: one step computing the last prompt token (q = 1 after c = P − 1), which
  //   samples token 1 (TTFT), then O − 1 decode steps at contexts P … P + O − 2.
  // Each part is rounded up to the ns as the simulator's clock does: exact to 2 ns.
  const int P = 1000, O = 32;
  SimulationConfig c = pd_config(1, 1);
  c.kv_transfer_link = "infiniband-ndr";
  c.workload.num_prompts = 1;
  c.workload.random_input_len = P;
  c.workload.random_output_len = O;
  const PreparedDeployment p = prepare_deployment(c);
  REQUIRE(p.pd != nullptr);
  const SimulationResult r = run_simulation(c, p);
  const auto& rec = r.records[0];
  REQUIRE(rec.completed);

  models::BatchShape pre;
  pre.prefill_seqs = 1;
  pre.prefill_tokens = P;
  pre.prefill_attn_work = double(P) * (P / 2.0);
  pre.sampled_seqs = 1;
  const double bytes = double(P) * p.pd->kv_bytes_per_token;
  CHECK(p.pd->kv_bytes_per_token == double(p.memory.kv_bytes_per_token));  // TP 1
  CHECK(p.pd->instance_bandwidth == 35.9e9);
  const SimTime transfer = SimTime::from_ns(int64_t(std::ceil(bytes / 35.9e9 * 1e9))) +
                           SimTime::from_seconds_ceil(19.1e-6);
  models::BatchShape last;
  last.prefill_seqs = 1;
  last.prefill_tokens = 1;
  last.prefill_attn_work = 1.0 * ((P - 1) + 0.5);
  last.prefill_context_tokens = P - 1;
  last.sampled_seqs = 1;
  const SimTime ttft = step(*p.pd->prefill->cost, pre) + transfer + step(*p.cost, last);
  CHECK(std::llabs((rec.first_token - rec.arrival).ns() - ttft.ns()) <= 2);

  SimTime e2e = rec.first_token;
  for (int j = 1; j < O; ++j) {
    models::BatchShape d;
    d.decode_seqs = 1;
    d.decode_context_tokens = P + j - 1;
    d.sampled_seqs = 1;
    e2e += step(*p.cost, d);
  }
  CHECK(rec.last_token == e2e);

  const nlohmann::json& s = r.disaggregation;
  CHECK(s["kv_transfer"]["transfers"] == 1);
  CHECK(s["kv_transfer"]["bytes"].get<double>() == bytes);
  CHECK(s["phases_ms"]["transfer"]["mean"].get<double>() ==
        Approx(transfer.seconds() * 1e3).epsilon(1e-9));
}

TEST_CASE("P/D: requests, tokens and KV bytes are conserved and runs are deterministic",
          "[fidelity][pd]") {
  // 2P:3D, 300 requests at 30 req/s with varied lengths (range ratio 0.5), prefix caching off:
  //   every request completes on a decode instance and crossed one link;
  //   prefill pool scheduled tokens = Σ prompts (one step each, no cache, no preemption there);
  //   transferred bytes = Σ prompts × kv_bytes_per_token (no decode-side hits without caching);
  //   decode tokens = Σ outputs (one recomputed prompt token + O − 1 decodes) + recomputation
  //   after preemptions (none at this load: checked).
  SimulationConfig c = pd_config(2, 3);
  c.engine.enable_prefix_caching = false;
  c.workload.num_prompts = 300;
  c.workload.request_rate = 30;
  c.workload.random_input_len = 2000;
  c.workload.random_output_len = 200;
  c.workload.random_range_ratio = 0.5;
  const PreparedDeployment p = prepare_deployment(c);
  const SimulationResult r = run_simulation(c, p);
  int64_t prompts = 0, outputs = 0;
  for (const auto& rec : r.records) {
    REQUIRE(rec.completed);
    REQUIRE(rec.replica >= 0);
    REQUIRE(rec.replica < 3);
    prompts += rec.prompt_tokens;
    outputs += rec.output_tokens;
  }
  const nlohmann::json& s = r.disaggregation;
  CHECK(s["remote_prefills"] == 300);
  CHECK(s["local_prefills"] == 0);
  CHECK(s["kv_transfer"]["transfers"] == 300);
  CHECK(s["kv_transfer"]["bytes"].get<double>() == double(prompts) * p.pd->kv_bytes_per_token);
  CHECK(s["prefill"]["scheduled_tokens"] == prompts);
  REQUIRE(s["decode"]["preemptions"] == 0);
  CHECK(s["decode"]["scheduled_tokens"] == outputs);
  CHECK(r.metrics.completed == 300);
  CHECK(r.metrics.total_output_tokens == outputs);
  // Utilisations are fractions of the run.
  for (const char* pool : {"prefill", "decode"}) {
    CHECK(s[pool]["busy_fraction"].get<double>() > 0);
    CHECK(s[pool]["busy_fraction"].get<double>() <= 1);
  }
  CHECK(s["kv_transfer"]["link_utilization_max"].get<double>() <= 1);

  const SimulationResult again = run_simulation(c, p);
  CHECK(servesim_summary(c, p, again).dump() == servesim_summary(c, p, r).dump());
  for (size_t i = 0; i < r.records.size(); ++i) {
    REQUIRE(again.records[i].first_token == r.records[i].first_token);
    REQUIRE(again.records[i].last_token == r.records[i].last_token);
  }
}

TEST_CASE("P/D: decode-side prefix hits are not transferred", "[fidelity][pd]") {
  // Requests share a 1024-token prefix: the decode instance caches it after the first transfer,
  // so each later transfer carries only the prompt less its decode-side hit. Bytes =
  // Σ (prompt − cached_prompt_tokens) × kv_bytes_per_token, and less than Σ prompt × that.
  SimulationConfig c = pd_config(1, 1);
  c.workload.num_prompts = 50;
  c.workload.request_rate = 5;
  c.workload.random_input_len = 512;
  c.workload.random_prefix_len = 1024;
  c.workload.random_output_len = 16;
  const PreparedDeployment p = prepare_deployment(c);
  const SimulationResult r = run_simulation(c, p);
  int64_t pulled = 0, prompts = 0;
  for (const auto& rec : r.records) {
    REQUIRE(rec.completed);
    pulled += rec.prompt_tokens - rec.cached_prompt_tokens;
    prompts += rec.prompt_tokens;
  }
  const double bytes = r.disaggregation["kv_transfer"]["bytes"].get<double>();
  CHECK(bytes == double(pulled) * p.pd->kv_bytes_per_token);
  CHECK(pulled < prompts);
}

TEST_CASE("P/D: with every prompt under the local threshold, 1P:1D is one aggregated replica",
          "[fidelity][pd]") {
  // Conditional disaggregation: prompts of at most 600 tokens, threshold 100000: every request is
  // prefilled on the decode instance, nothing crosses the link, and the decode instance serves
  // exactly what a single aggregated replica serves.
  SimulationConfig agg;
  agg.calibration = "none";
  agg.workload.num_prompts = 200;
  agg.workload.request_rate = 20;
  agg.workload.random_input_len = 400;
  agg.workload.random_range_ratio = 0.5;
  SimulationConfig pd = agg;
  pd.prefill_replicas = 1;
  pd.decode_replicas = 1;
  pd.pd_local_prefill_threshold = 100000;
  const SimulationResult a = run_simulation(agg, prepare_deployment(agg));
  const SimulationResult b = run_simulation(pd, prepare_deployment(pd));
  CHECK(b.disaggregation["local_prefills"] == 200);
  CHECK(b.disaggregation["kv_transfer"]["transfers"] == 0);
  REQUIRE(a.records.size() == b.records.size());
  for (size_t i = 0; i < a.records.size(); ++i) {
    REQUIRE(a.records[i].first_token == b.records[i].first_token);
    REQUIRE(a.records[i].last_token == b.records[i].last_token);
  }
}

TEST_CASE("P/D: a full decode instance makes transfers wait for blocks, and frees them all",
          "[fidelity][pd]") {
  // A decode instance of 400 blocks (6400 tokens) and prompts of 2000-3000 tokens: at most two
  // prompts' KV fit, so later requests wait at admission (vLLM reserves the blocks before the
  // transfer starts) — the admission wait is well above a step — yet every request completes
  // and the blocks all come back (a drained run holds none).
  SimulationConfig c = pd_config(2, 1);
  c.engine.num_gpu_blocks_override = 400;  // both pools (the engine flags are shared)
  c.engine.max_model_len = 4096;
  c.engine.enable_prefix_caching = false;
  c.workload.num_prompts = 40;
  c.workload.request_rate = 20;
  c.workload.random_input_len = 2500;
  c.workload.random_range_ratio = 0.2;
  c.workload.random_output_len = 100;
  c.kv_transfer_link = "ethernet-tcp";  // one NIC per node: bandwidth counted once
  const PreparedDeployment p = prepare_deployment(c);
  CHECK(p.pd->link_shared_per_node);
  CHECK(p.pd->instance_bandwidth == p.pd->link.bandwidth_bytes_per_s);
  const SimulationResult r = run_simulation(c, p);
  for (const auto& rec : r.records) REQUIRE(rec.completed);
  CHECK(r.replica_stats[0].used_blocks_now == 0);
  CHECK(r.replica_stats[0].peak_used_blocks <= 400);
  const nlohmann::json& w = r.disaggregation["phases_ms"]["decode_admission_wait"];
  CHECK(w["p99"].get<double>() > 1000.0);  // seconds of waiting for a decoder to finish
  CHECK(r.disaggregation["kv_transfer"]["transfers"] == 40);
}

TEST_CASE("P/D: heterogeneous pools take each pool's GPU and TP", "[fidelity][pd]") {
  // H200 prefill at TP1 feeding H100 decode at TP2: TP 2 is a multiple of 1 (NIXL's rule); the
  // link has one lane (the prefill side's), the bytes are the decode side's per GPU x 2.
  SimulationConfig c = pd_config(1, 1);
  c.prefill_gpu = "h200";
  c.decode_gpu = "h100-sxm";
  c.decode_tensor_parallel_size = 2;
  c.kv_transfer_link = "infiniband-ndr";
  c.workload.num_prompts = 20;
  const PreparedDeployment p = prepare_deployment(c);
  CHECK(p.pd->prefill->deployment.gpu.name == "h200");
  CHECK(p.pd->prefill->deployment.tensor_parallel_size == 1);
  CHECK(p.deployment.gpu.name == "h100-sxm");
  CHECK(p.deployment.tensor_parallel_size == 2);
  CHECK(p.pd->instance_bandwidth == 35.9e9);
  CHECK(p.pd->kv_bytes_per_token == 2.0 * double(p.memory.kv_bytes_per_token));
  const SimulationResult r = run_simulation(c, p);
  CHECK(r.metrics.completed == 20);
  const nlohmann::json s = servesim_summary(c, p, r);
  CHECK(s["config"]["prefill_gpu"] == "h200");
  CHECK(s["config"]["decode_tensor_parallel_size"] == 2);
  CHECK(s["disaggregation"]["prefill"]["gpus"] == 1);
  CHECK(s["disaggregation"]["decode"]["gpus"] == 2);
}

TEST_CASE("P/D: bad combinations are refused by name", "[fidelity][pd]") {
  auto refused = [](SimulationConfig c, const std::string& flag) {
    try {
      prepare_deployment(c);
    } catch (const ConfigError& e) {
      return std::string(e.what()).find(flag) != std::string::npos;
    }
    return false;
  };
  SimulationConfig one = pd_config(1, 0);
  CHECK(refused(one, "--decode-replicas"));
  SimulationConfig tp = pd_config(1, 1);
  tp.prefill_tensor_parallel_size = 2;
  tp.decode_tensor_parallel_size = 1;
  CHECK(refused(tp, "--decode-tensor-parallel-size"));
  SimulationConfig nv = pd_config(5, 5);
  nv.kv_transfer_link = "nvlink";
  CHECK(refused(nv, "--kv-transfer-link nvlink"));  // 10 GPUs > one node's 8
  SimulationConfig alone;
  alone.prefill_gpu = "h200";
  CHECK(refused(alone, "--prefill-gpu"));
  SimulationConfig replicas = pd_config(1, 1);
  replicas.num_replicas = 2;
  CHECK(refused(replicas, "--num-replicas"));
  SimulationConfig link = pd_config(1, 1);
  link.kv_transfer_link = "carrier-pigeon";
  CHECK_THROWS_AS(prepare_deployment(link), ConfigError);
}

}  // namespace
}  // namespace servesim::sim
