// The replica's BatchShape for a model with sliding-window layers (Replica::start_step): the
// windowed prefill sums come from models::windowed_attn_work and min(c, W), with W from
// EngineConfig::attention_window (the model's, not the cost model's); a model without a window
// leaves them 0. The cost model records every shape it is asked about (step time 1 ms + 10 µs
// per token: tests/unit/replica/replica_harness.h).
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <vector>

#include "sim/engine/simulator.h"
#include "sim/replica/replica.h"
#include "tests/unit/replica/replica_harness.h"

namespace servesim::sim {
namespace {

using testing::Harness;

// One request of `prompt` tokens and 2 outputs, 256-token budget: the prompt in 256-token chunks.
std::vector<models::BatchShape> run(int64_t window, int32_t prompt) {
  EngineConfig cfg;
  cfg.max_num_seqs = 8;
  cfg.max_num_batched_tokens = 256;
  cfg.block_size = 16;
  cfg.enable_prefix_caching = false;
  cfg.max_model_len = 1 << 20;
  cfg.attention_window = window;
  Harness h(cfg, 200, 1);
  h.add(0, prompt, 2);
  h.sim.run();
  REQUIRE(h.records[0].completed);
  return h.cost.shapes;
}

TEST_CASE("replica: a sliding-window model's prefill chunks carry the windowed sums",
          "[replica][swa]") {
  // Expectations (W = 128): a 1,000-token prompt runs as chunks (c, q) = (0, 256), (256, 256),
  // (512, 256), (768, 232), then one decode. Chunk k has prefill_window_attn_work =
  // windowed_attn_work(c, q, 128) (first chunk: 128²/2 + 128·128 = 24,576; later ones q·128) and
  // prefill_window_context_tokens = min(c, 128); the full sums are q·(c + q/2) and c as before.
  const std::vector<models::BatchShape> shapes = run(128, 1000);
  const std::vector<std::pair<int64_t, int64_t>> chunks = {
      {0, 256}, {256, 256}, {512, 256}, {768, 232}};
  REQUIRE(shapes.size() == chunks.size() + 1);
  for (size_t i = 0; i < chunks.size(); ++i) {
    const auto [c, q] = chunks[i];
    const models::BatchShape& s = shapes[i];
    INFO("chunk " << i);
    CHECK(s.prefill_tokens == q);
    CHECK(s.prefill_context_tokens == c);
    CHECK(s.prefill_attn_work == static_cast<double>(q) * (static_cast<double>(c) + q / 2.0));
    CHECK(s.prefill_window_attn_work ==
          models::windowed_attn_work(static_cast<double>(c), static_cast<double>(q), 128));
    CHECK(s.prefill_window_context_tokens == std::min<int64_t>(c, 128));
  }
  CHECK(shapes[0].prefill_window_attn_work == 24576);
  CHECK(shapes[1].prefill_window_attn_work == 256 * 128);
  CHECK(shapes[3].prefill_window_attn_work == 232 * 128);
  // The decode step: one sequence of 1,000 tokens of context, no prefill sums.
  CHECK(shapes[4].decode_context_tokens == 1000);
  CHECK(shapes[4].prefill_window_attn_work == 0);
  CHECK(shapes[4].prefill_window_context_tokens == 0);
}

TEST_CASE("replica: a model without a window leaves the windowed sums 0", "[replica][swa]") {
  // Expectations: the same run with attention_window = 0: every shape's windowed sums are 0,
  // the full ones as above.
  const std::vector<models::BatchShape> shapes = run(0, 1000);
  REQUIRE(shapes.size() == 5);
  for (const models::BatchShape& s : shapes) {
    CHECK(s.prefill_window_attn_work == 0);
    CHECK(s.prefill_window_context_tokens == 0);
  }
  CHECK(shapes[0].prefill_attn_work == 256 * 128.0);
}

}  // namespace
}  // namespace servesim::sim
