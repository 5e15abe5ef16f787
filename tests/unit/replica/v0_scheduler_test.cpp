// vLLM V0's prefill-first scheduler and multi-step scheduling (sim/replica/replica.h, "V0
// scheduler"; vllm/core/scheduler.py _schedule_default, vLLM 0.6), on a cost model simple enough
// to compute by hand: step time = 1 ms + 10 µs per scheduled token.
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "hardware/gpu_spec.h"
#include "models/model_spec.h"
#include "sim/base/error.h"
#include "sim/engine/simulator.h"
#include "sim/replica/engine_request.h"
#include "sim/replica/replica.h"
#include "tests/unit/replica/replica_harness.h"

namespace servesim::sim {
namespace {

using testing::AffineCost;
using testing::Counter;
using testing::Harness;
using testing::step_time;

// A resolved V0 config without chunked prefill, as resolve_engine_config gives it.
EngineConfig v0_config(int max_num_seqs, int budget, int scheduler_steps = 1) {
  EngineConfig c;
  c.vllm_version = "0.6";
  c.enable_chunked_prefill = 0;
  c.num_scheduler_steps = scheduler_steps;
  c.max_num_seqs = max_num_seqs;
  c.max_num_batched_tokens = budget;
  c.block_size = 16;
  c.enable_prefix_caching = false;
  c.max_model_len = budget;
  c.async_scheduling = 0;
  return c;
}

TEST_CASE("V0: an admitted prompt runs in a prefill-only step and the decoders wait",
          "[replica][v0]") {
  // Request 0 (100 tokens, 10 out) starts alone: prefill 2 ms, then 1.01 ms decode steps.
  // Request 1 (50 tokens) arrives at 3 ms, during request 0's first decode step (2 .. 3.01 ms).
  // At 3.01 ms V0 admits it: a 50-token prefill-only step (1.5 ms) in which request 0 gets no
  // token. Then both decode together (1.02 ms per step). Under V1's loop the prefill would share
  // a step with request 0's decode (51 tokens).
  Harness h(v0_config(8, 2048), 1000, 2);
  h.add(0, 100, 10);
  h.add_at(SimTime::from_seconds_ceil(3e-3), 1, 50, 3);
  h.sim.run();
  const SimTime t1 = step_time(100) + step_time(1);  // request 0's first decode ends
  REQUIRE(h.records[1].first_token == t1 + step_time(50));
  // Request 1: two tokens more, each in a step shared with request 0.
  REQUIRE(h.records[1].last_token == t1 + step_time(50) + step_time(2) + step_time(2));
  // Request 0: 10 tokens = 1 prefill + 9 decode steps, one prefill step (request 1's) between.
  SimTime end0 = t1 + step_time(50) + step_time(2) + step_time(2);
  for (int i = 0; i < 6; ++i) end0 += step_time(1);  // 1 + 2 decodes so far, 6 left alone
  REQUIRE(h.records[0].last_token == end0);
  REQUIRE(h.replica->stats().peak_step_tokens == 100);
  REQUIRE(h.observer.done == 2);
}

TEST_CASE("V0: a prompt is never split, one that does not fit the rest of the budget waits",
          "[replica][v0]") {
  // Budget 1,000: prompts of 600 and 500 tokens arrive together. The first is admitted whole
  // (600); the second does not fit the remaining 400 and waits for the next step, which is a
  // prefill step again (prefills first): 500 tokens. Then both decode.
  Harness h(v0_config(8, 1000), 1000, 2);
  h.add(0, 600, 2);
  h.add(1, 500, 2);
  h.sim.run();
  REQUIRE(h.records[0].first_token == step_time(600));
  REQUIRE(h.records[1].first_token == step_time(600) + step_time(500));
  REQUIRE(h.records[0].last_token == step_time(600) + step_time(500) + step_time(2));
  REQUIRE(h.records[1].last_token == h.records[0].last_token);
  REQUIRE(h.replica->stats().peak_step_tokens == 600);
  REQUIRE(h.replica->stats().steps == 3);
}

TEST_CASE("V0: admission keeps the block manager's watermark free (N-1 blocks run, N wait)",
          "[replica][v0]") {
  // 500 blocks: watermark int(0.01 · 500) = 5. A prompt may take at most 495 blocks.
  // 495 · 16 = 7,920 tokens (495 blocks) is admitted; 7,921 tokens (496 blocks) never is.
  SECTION("495 blocks") {
    Harness h(v0_config(8, 16000), 500, 1);
    h.add(0, 7920, 1);
    h.sim.run();
    REQUIRE(h.records[0].completed);
    REQUIRE(h.records[0].first_token == step_time(7920));
  }
  SECTION("496 blocks") {
    Harness h(v0_config(8, 16000), 500, 1);
    h.add(0, 7921, 1);
    h.sim.run();
    REQUIRE(h.records[0].failed);
    REQUIRE(h.observer.done == 1);
  }
}

TEST_CASE("multi-step: an arrival waits for the end of the decode block", "[replica][v0]") {
  // num_scheduler_steps 4. Request 0 (100 tokens, 20 out): prefill step [0, 2 ms), then decode
  // blocks of 4 steps of 1.01 ms from 2 ms: [2, 6.04), [6.04, 10.08), ... Request 1 arrives at
  // 3 ms, inside the first block: it is admitted at 6.04 ms (block end), not at 3.01 ms as with
  // single steps.
  for (int steps : {1, 4}) {
    INFO("num_scheduler_steps " << steps);
    Harness h(v0_config(8, 2048, steps), 1000, 2);
    h.add(0, 100, 20);
    h.add_at(SimTime::from_seconds_ceil(3e-3), 1, 50, 2);
    h.sim.run();
    const int decode_steps_before = steps == 1 ? 1 : 4;
    SimTime admitted = step_time(100);
    for (int i = 0; i < decode_steps_before; ++i) admitted += step_time(1);
    REQUIRE(h.records[1].first_token == admitted + step_time(50));
    REQUIRE(h.records[1].completed);
    REQUIRE(h.records[0].completed);
  }
}

TEST_CASE("multi-step: a block ends early when its requests have finished", "[replica][v0]") {
  // One request, 6 tokens out, blocks of 4: prefill, then 5 decode steps (4 + 1); the engine
  // does not run the second block's other 3 steps, and the next arrival is admitted at once.
  Harness h(v0_config(8, 2048, 4), 1000, 2);
  h.add(0, 100, 6);
  SimTime end0 = step_time(100);
  for (int i = 0; i < 5; ++i) end0 += step_time(1);
  h.add_at(end0 + SimTime::from_seconds_ceil(1e-3), 1, 50, 1);
  h.sim.run();
  REQUIRE(h.records[0].last_token == end0);
  REQUIRE(h.replica->stats().steps == 7);
  REQUIRE(h.records[1].first_token == end0 + SimTime::from_seconds_ceil(1e-3) + step_time(50));
}

TEST_CASE("multi-step: a request that finishes inside a block keeps its row to the block's end",
          "[replica][v0]") {
  // Blocks of 4. A (3 tokens out) and B (10) are prefilled together (200 tokens), then decode
  // from step 1. A's last token comes at step 2; steps 3 and 4 still carry its dead row (2 rows,
  // 1.02 ms, not 1.01); from step 5 (a new block) B runs alone.
  Harness h(v0_config(8, 2048, 4), 1000, 2);
  h.add(0, 100, 3);
  h.add(1, 100, 10);
  h.sim.run();
  const SimTime prefill = step_time(200);
  REQUIRE(h.records[0].last_token == prefill + step_time(2) + step_time(2));
  SimTime end_b = prefill;
  for (int i = 0; i < 4; ++i) end_b += step_time(2);
  for (int i = 0; i < 5; ++i) end_b += step_time(1);
  REQUIRE(h.records[1].last_token == end_b);
  REQUIRE(h.replica->stats().scheduled_seqs == 2 + 4 * 2 + 5);
}

hardware::GpuSpec a100() {
  hardware::GpuSpec g;
  g.name = "a100-80gb";
  g.memory_bytes = 80.0 * double(1ull << 30);
  return g;
}
models::ModelSpec model_with_context(int64_t n) {
  models::ModelSpec m;
  m.max_position_embeddings = n;
  return m;
}

TEST_CASE("V0 rows: chunked prefill on only above 32K context, the budget covers a whole prompt",
          "[replica][v0][version]") {
  EngineRequest c;
  c.vllm_version = "0.6";
  // EngineArgs.create_engine_config: use_long_context = max_model_len > 32K.
  c.max_model_len = 32768;
  EngineConfig r = resolve_engine_config(c, a100(), model_with_context(131072));
  CHECK(r.enable_chunked_prefill == 0);
  CHECK(r.max_num_batched_tokens == 32768);  // SchedulerConfig: max(max_model_len, 2048)
  c.max_model_len = 32769;
  r = resolve_engine_config(c, a100(), model_with_context(131072));
  CHECK(r.enable_chunked_prefill == 1);
  CHECK(r.max_num_batched_tokens == 2048);
  c.max_model_len = 1024;
  r = resolve_engine_config(c, a100(), model_with_context(131072));
  CHECK(r.max_num_batched_tokens == 2048);
  // V1 rows: always chunked.
  c.vllm_version = "0.8";
  CHECK(resolve_engine_config(c, a100(), model_with_context(4096)).enable_chunked_prefill == 1);
}

TEST_CASE("V0 scheduler flags: what vLLM refuses, servesim refuses", "[replica][v0][version]") {
  const models::ModelSpec m = model_with_context(4096);
  EngineRequest c;
  c.vllm_version = "0.19";
  c.enable_chunked_prefill = 0;
  CHECK_THROWS_WITH(resolve_engine_config(c, a100(), m),
                    Catch::Contains("--no-enable-chunked-prefill") && Catch::Contains("V0"));
  c.vllm_version = "0.19";
  c.enable_chunked_prefill = std::nullopt;
  c.num_scheduler_steps = 8;
  CHECK_THROWS_WITH(resolve_engine_config(c, a100(), m), Catch::Contains("--num-scheduler-steps"));
  c.vllm_version = "0.6";
  c.enable_chunked_prefill = 1;  // arg_utils: "Chunked prefill is not supported with multi-step"
  CHECK_THROWS_WITH(resolve_engine_config(c, a100(), m),
                    Catch::Contains("--num-scheduler-steps") && Catch::Contains("chunked"));
  c.enable_chunked_prefill = 0;
  CHECK(resolve_engine_config(c, a100(), m).num_scheduler_steps == 8);
  c.num_scheduler_steps = 0;
  CHECK_THROWS_WITH(resolve_engine_config(c, a100(), m), Catch::Contains("--num-scheduler-steps"));
  c.num_scheduler_steps = 1;
  c.max_num_batched_tokens = 2048;  // < max_model_len 4096 without chunking: vLLM will not start
  CHECK_THROWS_WITH(resolve_engine_config(c, a100(), m),
                    Catch::Contains("--max-num-batched-tokens: 2048") &&
                        Catch::Contains("--max-model-len (4096)"));
}

}  // namespace
}  // namespace servesim::sim
