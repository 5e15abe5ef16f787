// Qwen3-Next simulated end to end: the resolved hybrid KV layout (vLLM's block size, 12 layers a
// block, three state groups, prefix caching off), the memory plan's blocks, every block back
// after a drained run, and the admission bound: a pool of N sequences' blocks runs N at once,
// one block less runs N − 1 (docs/models.md, "Qwen3-Next").
#include <catch2/catch.hpp>

#include <limits>
#include <string>

#include "models/linear_attention.h"
#include "sim/cluster/simulation.h"

namespace servesim::sim {
namespace {

const char* const kQwen3Next = "tests/data/frontier_configs/qwen3-next-80b-a3b.json";

SimulationConfig qwen3_next_on_h100_tp4() {
  SimulationConfig c;
  c.model = kQwen3Next;
  c.gpu = "h100-sxm";
  c.tensor_parallel_size = 4;
  c.calibration = "none";
  c.workload.num_prompts = 40;
  c.workload.request_rate = 4.0;
  c.workload.random_input_len = 2000;
  c.workload.random_output_len = 100;
  return c;
}

TEST_CASE("Qwen3-Next on 4 x H100: hybrid layout, memory plan, blocks returned",
          "[contract][linear_attention]") {
  // Expectations (models/linear_attention.h): at TP 4 one attention token of one layer is
  // 2 · 1 · 256 · 2 = 1,024 bytes and a layer's state 274,432 bytes, so the block size is
  // 16 · ⌈274,432 / 16,384⌉ = 272; 12 layers a block; 3 state groups; prefix caching off.
  const SimulationConfig c = qwen3_next_on_h100_tp4();
  const PreparedDeployment p = prepare_deployment(c);
  CHECK(p.engine.block_size == 272);
  CHECK(p.engine.kv_layers_per_block == 12);
  CHECK(p.engine.kv_mamba_groups == 3);
  CHECK_FALSE(p.engine.enable_prefix_caching);
  CHECK(p.memory.kv_bytes_per_token == 12 * 1024);
  CHECK(p.memory.num_blocks == static_cast<int64_t>(p.memory.kv_bytes / (12.0 * 272 * 1024)));
  CHECK(p.memory.kv_tokens == p.memory.num_blocks / 4 * 272);
  const SimulationResult r = run_simulation(c, p);
  const nlohmann::json s = servesim_summary(c, p, r);
  CHECK(s["kv_cache"]["kv_cache_groups"] == 4);
  CHECK(s["kv_cache"]["state_groups"] == 3);
  CHECK(s["kv_cache"]["block_size"] == 272);
  for (const ReplicaStats& st : r.replica_stats) {
    CHECK(st.used_blocks_now == 0);  // the state blocks came back with the tables
    CHECK(st.peak_used_blocks > 0);
  }
  for (const auto& rec : r.records) CHECK(rec.completed);
}

TEST_CASE("Qwen3-Next admission: N sequences' blocks hold N, one block less N - 1",
          "[contract][linear_attention]") {
  // 30 prompts of 2,000 tokens arrive at once with a budget for all of them in one step; each
  // needs ⌈2000 / 272⌉ = 8 attention blocks and 3 state blocks at admission: 11 blocks. With
  // 10 · 11 blocks, 10 run at once; with 10 · 11 − 1, 9.
  for (const int64_t blocks : {int64_t{110}, int64_t{109}}) {
    SimulationConfig c = qwen3_next_on_h100_tp4();
    c.workload.num_prompts = 30;
    c.workload.request_rate = std::numeric_limits<double>::infinity();
    c.workload.random_output_len = 1;
    c.engine.max_num_batched_tokens = 65536;
    c.engine.num_gpu_blocks_override = blocks;
    c.engine.max_model_len = 4096;  // ⌈4096 / 272⌉ + 3 = 19 blocks: vLLM's start-up check passes
    const PreparedDeployment p = prepare_deployment(c);
    const SimulationResult r = run_simulation(c, p);
    REQUIRE(r.replica_stats.size() == 1);
    CHECK(r.replica_stats[0].peak_running == blocks / 11);
    CHECK(r.replica_stats[0].peak_used_blocks <= blocks);
    for (const auto& rec : r.records) CHECK(rec.completed);
  }
}

}  // namespace
}  // namespace servesim::sim
