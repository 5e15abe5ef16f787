// Data and expert parallelism (docs/semantics.md "Data and expert parallelism",
// docs/cost_model.md §3.2.1): an MoE model's DP ranks end every step together at the slowest
// rank's time; a dense model's ranks are independent; the group's MoE part and its all-gathers in
// closed form; the memory plan of expert sharding.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <vector>

#include "models/memory_planner.h"
#include "models/roofline_cost_model.h"
#include "sim/cluster/simulation.h"
#include "workloads/trace_workload.h"

namespace servesim::sim {
namespace {

// Two requests at t = 0: A (2,000-token prompt) then B (16 tokens), 2 output tokens each.
workloads::TraceWorkload two_requests() {
  std::vector<workloads::RequestSpec> r(2);
  r[0].id = 0;
  r[0].prompt_tokens = 2000;
  r[0].output_tokens = 2;
  r[1].id = 1;
  r[1].prompt_tokens = 16;
  r[1].output_tokens = 2;
  return workloads::TraceWorkload(r);
}

models::BatchShape prefill(int64_t q) {
  models::BatchShape s;
  s.prefill_seqs = 1;
  s.prefill_tokens = q;
  s.prefill_attn_work = static_cast<double>(q) * (q / 2.0);
  s.sampled_seqs = 1;
  return s;
}

SimulationConfig dp_config(const std::string& model, bool ep) {
  SimulationConfig c;
  c.model = model;
  c.gpu = "h100-sxm";
  c.data_parallel_size = 2;
  c.enable_expert_parallel = ep;
  return c;
}

// DeepSeek-R1 (FP8) on 8 x H200 as DP 8 + EP.
SimulationConfig deepseek_r1_dp8_ep() {
  SimulationConfig c;
  c.model = "deepseek-r1";
  c.gpu = "h200";
  c.data_parallel_size = 8;
  c.enable_expert_parallel = true;
  return c;
}

TEST_CASE("MoE data parallelism: both ranks' first step ends at the slowest rank's time",
          "[fidelity][dp]") {
  // vLLM's DP load balancer sends A to rank 0 (both empty: the lowest rank) and B to rank 1
  // (rank 0 scores waiting·4 + running = 4). Both start a step at t = 0 and join one round:
  //   own(X) = estimate(prefill X) (its host and device parts, not overlapped: the first step)
  //          + dp_group_moe_s(2000 + 16)  (the routed experts of the group's 2,016 tokens)
  //   step   = max(own(A), own(B)) = own(A); both first tokens come out then.
  for (bool ep : {false, true}) {
    INFO("expert parallel " << ep);
    const SimulationConfig c = dp_config("qwen3-30b-a3b", ep);
    const PreparedDeployment p = prepare_deployment(c);
    REQUIRE(p.deployment.dp_coupled());
    workloads::TraceWorkload w = two_requests();
    const SimulationResult r = run_simulation(c, p, w);
    const auto& roofline = dynamic_cast<const models::RooflineCostModel&>(*p.cost);
    const double moe = roofline.dp_group_moe_s(2016);
    CHECK(moe > 0);
    const double own_a = p.cost->estimate(prefill(2000)).total_s + moe;
    const double own_b = p.cost->estimate(prefill(16)).total_s + moe;
    REQUIRE(own_a > own_b);
    const SimTime end = r.records[0].arrival + SimTime::from_seconds_ceil(std::max(own_a, own_b));
    CHECK(r.records[0].replica == 0);
    CHECK(r.records[1].replica == 1);
    CHECK(r.records[0].first_token == end);
    CHECK(r.records[1].first_token == end);  // B waited for A's rank
  }
}

TEST_CASE("dense data parallelism: independent ranks behind one load balancer", "[fidelity][dp]") {
  // Llama-3.1-8B: no MoE layer couples the ranks, so B's first token comes after its own
  // prefill alone, not after A's.
  const SimulationConfig c = dp_config("llama-3.1-8b", false);
  const PreparedDeployment p = prepare_deployment(c);
  REQUIRE_FALSE(p.deployment.dp_coupled());
  workloads::TraceWorkload w = two_requests();
  const SimulationResult r = run_simulation(c, p, w);
  CHECK(r.records[1].replica == 1);
  CHECK(r.records[1].first_token ==
        r.records[1].arrival + SimTime::from_seconds_ceil(p.cost->estimate(prefill(16)).total_s));
  CHECK(r.records[0].first_token ==
        r.records[0].arrival + SimTime::from_seconds_ceil(p.cost->estimate(prefill(2000)).total_s));
}

TEST_CASE("the DP group's MoE part: experts on the busiest GPU plus two all-gathers per MoE layer",
          "[fidelity][dp]") {
  // DeepSeek-R1 on 8 x H200, DP 8 + EP: per MoE layer (58 of 61), the routed experts of G group
  // tokens on the busiest GPU plus an all-gather and a reduce-scatter of the group's hidden states
  // (G x 7168 x 2 bytes) over the 8 ranks on NVLink (α–β ring: 7 steps, 7/8 of the bytes at the
  // link bandwidth), at least their bandwidth bound.
  const SimulationConfig c = deepseek_r1_dp8_ep();
  const PreparedDeployment p = prepare_deployment(c);
  const auto& m = dynamic_cast<const models::RooflineCostModel&>(*p.cost);
  const hardware::LinkSpec& nvlink = p.deployment.gpu.scale_up;
  for (double g : {8.0, 512.0, 8192.0}) {
    const double bytes = g * 7168 * 2;
    const double gather = 7 * nvlink.latency_s + 7.0 / 8 * bytes / nvlink.bandwidth_bytes_per_s;
    CHECK(gather >= 7.0 / 8 * bytes / nvlink.bandwidth_bytes_per_s);
    CHECK_THAT(m.dp_group_moe_s(g),
               Catch::Matchers::WithinRel(58 * (m.routed_experts_s(g) + 2 * gather), 1e-12));
  }
  // Expert parallelism: the busiest GPU's share grows with the load but stays under all of it.
  CHECK(m.routed_experts_s(4096) > m.routed_experts_s(512));
  CHECK(m.dp_group_moe_s(0) == 0);
}

TEST_CASE("a routing skew slows the busiest EP rank, and skew 0 is the uniform router",
          "[fidelity][dp]") {
  // DeepSeek-R1, DP 8 + EP: --moe-routing-skew puts the popular experts on rank 0
  // (models/moe_routing.h), so its routed experts take longer than under uniform routing, more so
  // for a larger skew; without the flag (skew 0) the step is the uniform router's.
  SimulationConfig c = deepseek_r1_dp8_ep();
  const PreparedDeployment uniform = prepare_deployment(c);
  c.moe_routing_skew = 0.5;
  const PreparedDeployment mild = prepare_deployment(c);
  c.moe_routing_skew = 1.5;
  const PreparedDeployment strong = prepare_deployment(c);
  const auto& u = dynamic_cast<const models::RooflineCostModel&>(*uniform.cost);
  const auto& a = dynamic_cast<const models::RooflineCostModel&>(*mild.cost);
  const auto& b = dynamic_cast<const models::RooflineCostModel&>(*strong.cost);
  for (double g : {512.0, 8192.0}) {
    INFO(g << " group tokens");
    CHECK(a.routed_experts_s(g) > u.routed_experts_s(g));
    CHECK(b.routed_experts_s(g) > a.routed_experts_s(g));
  }
  CHECK(uniform.deployment.moe_routing_skew == 0);
}

TEST_CASE("memory plan: experts spread over TP x DP, the rest per DP rank", "[fidelity][dp]") {
  // DeepSeek-R1 (FP8) on H200: TP 8 vs DP 8 + EP hold the same routed-expert bytes per GPU; DP 8
  // keeps attention, the dense and shared MLPs and both embeddings whole on every rank:
  //   Δweights = 61·(attn(1) − attn(8))·1 B + (3·dense + 58·shared)·(7/8)·1 B
  //            + 2·V·h·2 B·(7/8)
  //            + 61·(128 − 16) heads·256·512·2 B   (the dequantized kv_b_proj of fp8 MLA,
  //                                                  models/memory_planner.h)
  const SimulationConfig dp8 = deepseek_r1_dp8_ep();
  SimulationConfig tp8 = dp8;
  tp8.data_parallel_size = 1;
  tp8.enable_expert_parallel = false;
  tp8.tensor_parallel_size = 8;
  const PreparedDeployment a = prepare_deployment(tp8);
  const PreparedDeployment b = prepare_deployment(dp8);
  const models::ModelSpec& m = a.deployment.model;
  const double shared = 3.0 * 7168 * 2048;
  const double delta = 61 * (m.attention_params_per_rank(1) - m.attention_params_per_rank(8)) +
                       (3 * m.dense_mlp_params() + 58 * shared) * 7 / 8 +
                       2.0 * 129280 * 7168 * 2 * 7 / 8 + 61.0 * (128 - 16) * 256 * 512 * 2;
  CHECK_THAT(b.memory.weight_bytes - a.memory.weight_bytes,
             Catch::Matchers::WithinRel(delta, 1e-9));
  CHECK(b.memory.kv_bytes_per_token == a.memory.kv_bytes_per_token);  // MLA: the same latent
}

TEST_CASE("data parallelism: refusals name the flag", "[fidelity][dp]") {
  SimulationConfig c;
  c.model = "llama-3.1-8b";
  c.enable_expert_parallel = true;
  CHECK_THROWS_WITH(prepare_deployment(c), Catch::Contains("--enable-expert-parallel") &&
                                               Catch::Contains("no MoE experts"));
  c.enable_expert_parallel = false;
  c.data_parallel_size = 0;
  CHECK_THROWS_WITH(prepare_deployment(c), Catch::Contains("--data-parallel-size: 0"));
  c.data_parallel_size = 2;
  c.pipeline_parallel_size = 2;
  CHECK_THROWS_WITH(prepare_deployment(c), Catch::Contains("not modelled"));
  SimulationConfig q;
  q.model = "mixtral-8x7b";
  q.tensor_parallel_size = 1;
  q.data_parallel_size = 3;
  q.enable_expert_parallel = true;
  CHECK_THROWS_WITH(prepare_deployment(q), Catch::Contains("do not split evenly over TP x DP = 3"));
}

}  // namespace
}  // namespace servesim::sim
