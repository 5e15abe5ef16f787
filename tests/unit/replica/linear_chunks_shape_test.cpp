// The replica's BatchShape for a model with Gated DeltaNet layers (Replica::start_step): each
// prefill chunk of q tokens adds ⌈q / 64⌉ to prefill_linear_chunks, the chunks vLLM's
// chunk_gated_delta_rule runs it in (models/linear_attention.h); a model without such layers
// (EngineConfig::kv_mamba_groups 0) leaves the count 0. The cost model records every shape it is
// asked about (step time 1 ms + 10 µs per token: tests/unit/replica/replica_harness.h).
#include <catch2/catch.hpp>

#include <vector>

#include "sim/engine/simulator.h"
#include "sim/replica/replica.h"
#include "tests/unit/replica/replica_harness.h"

namespace servesim::sim {
namespace {

using testing::Harness;

// One request of `prompt` tokens and 2 outputs with a 100-token budget: the prompt in chunks of
// 100 tokens. `mamba_groups` state groups (each a block held from admission).
std::vector<models::BatchShape> run(int mamba_groups, int32_t prompt) {
  EngineConfig cfg;
  cfg.max_num_seqs = 8;
  cfg.max_num_batched_tokens = 100;
  cfg.block_size = 16;
  cfg.enable_prefix_caching = false;
  cfg.max_model_len = 1 << 20;
  cfg.kv_mamba_groups = mamba_groups;
  Harness h(cfg, 200, 1);
  h.add(0, prompt, 2);
  h.sim.run();
  REQUIRE(h.records[0].completed);
  return h.cost.shapes;
}

TEST_CASE("replica: a DeltaNet model's prefill chunks count chunk_gated_delta_rule's chunks",
          "[replica][linear_attention]") {
  // Expectations: a 257-token prompt runs as chunks of 100, 100 and 57 tokens, then one decode
  // step. ⌈100 / 64⌉ = 2, ⌈57 / 64⌉ = 1; the decode step has no prefill and counts none (it
  // runs the recurrent form).
  const std::vector<models::BatchShape> shapes = run(3, 257);
  REQUIRE(shapes.size() == 4);
  const std::vector<std::pair<int64_t, int64_t>> expected = {{100, 2}, {100, 2}, {57, 1}};
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO("chunk " << i);
    CHECK(shapes[i].prefill_tokens == expected[i].first);
    CHECK(shapes[i].prefill_linear_chunks == expected[i].second);
  }
  CHECK(shapes[3].prefill_seqs == 0);
  CHECK(shapes[3].decode_seqs == 1);
  CHECK(shapes[3].prefill_linear_chunks == 0);
  // At the boundary: a 64-token prompt is one chunk, a 65-token one two.
  const std::vector<models::BatchShape> b64 = run(3, 64);
  CHECK(b64[0].prefill_linear_chunks == 1);
  const std::vector<models::BatchShape> b65 = run(3, 65);
  CHECK(b65[0].prefill_linear_chunks == 2);
}

TEST_CASE("replica: a model without DeltaNet layers leaves the chunk count 0",
          "[replica][linear_attention]") {
  const std::vector<models::BatchShape> shapes = run(0, 257);
  REQUIRE(shapes.size() == 4);
  for (const models::BatchShape& s : shapes) CHECK(s.prefill_linear_chunks == 0);
  CHECK(shapes[0].prefill_tokens == 100);
}

}  // namespace
}  // namespace servesim::sim
