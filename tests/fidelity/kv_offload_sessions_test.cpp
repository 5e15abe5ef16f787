// KV offloading end to end on multi-turn sessions (sim/replica/kv_offload.h): with a GPU cache too
// small to keep the conversations' histories and a CPU tier that holds them all, every later turn
// gets its whole history back — from the GPU or from the tier — exactly as with an unbounded GPU
// cache: floor((H − 1) / 16) · 16 tokens of a history of H tokens.
#include <catch2/catch.hpp>

#include <cstdint>

#include "sim/cluster/simulation.h"

namespace servesim::sim {
namespace {

SimulationConfig small_gpu_sessions(double offload_gib) {
  SimulationConfig c;
  c.model = "llama-3.1-8b";
  c.gpu = "h100-sxm";
  c.calibration = "none";
  c.engine.vllm_version = "0.15";
  c.engine.max_model_len = 2048;
  c.engine.num_gpu_blocks_override = 150;  // 2,400 tokens: a few histories of up to 950
  c.engine.kv_offloading_size = offload_gib;
  c.workload.multi_turn = true;
  c.workload.num_prompts = 20;  // conversations
  c.workload.num_turns = 4;
  c.workload.think_time = 2.0;
  c.workload.request_rate = 4;
  c.workload.random_input_len = 200;  // new message per turn (range ratio 0: exact)
  c.workload.random_output_len = 50;
  c.workload.seed = 11;
  return c;
}

// Σ over turns of the closed-form hit: turn k (k >= 1) has a history H = 250·k.
int64_t closed_form_hits(int64_t conversations) {
  int64_t per = 0;
  for (int64_t k = 1; k < 4; ++k) per += (250 * k - 1) / 16 * 16;
  return conversations * per;
}

TEST_CASE("KV offload: a tier that holds every history brings each one back in full",
          "[fidelity][offload]") {
  const SimulationConfig on = small_gpu_sessions(64);
  const SimulationResult r = run_simulation(on, prepare_deployment(on));
  REQUIRE(r.metrics.completed == 80);
  int64_t cached = 0;
  for (const auto& rec : r.records) cached += rec.cached_prompt_tokens;
  const ReplicaStats& s = r.replica_stats.at(0);
  // At each request's first admission, the two tiers together give the closed form (the
  // counters also count re-admissions after a preemption, hence >=).
  CHECK(cached == closed_form_hits(20));
  CHECK(s.prefix_hit_tokens + s.offload.hit_tokens >= closed_form_hits(20));
  CHECK(s.offload.hit_tokens > 0);
  CHECK(s.offload.evicted_blocks == 0);
  // Each load copied its blocks at the host link's rate: Σ copy time = blocks · bytes / bandwidth
  // (latency 0 in the catalog).
  const PreparedDeployment p = prepare_deployment(on);
  CHECK(s.offload.load_s ==
        Approx(double(s.offload.loaded_blocks) * p.engine.kv_offload_block_bytes /
               p.engine.kv_offload_link.bandwidth_bytes_per_s));

  // Without the tier the small GPU cache loses part of the histories.
  const SimulationConfig off = small_gpu_sessions(0);
  const SimulationResult g = run_simulation(off, prepare_deployment(off));
  REQUIRE(g.metrics.completed == 80);
  CHECK(g.replica_stats.at(0).prefix_hit_tokens < closed_form_hits(20));
  CHECK(g.replica_stats.at(0).offload.hit_tokens == 0);
}

}  // namespace
}  // namespace servesim::sim
