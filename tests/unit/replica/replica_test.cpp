// Replica tests on a cost model simple enough to compute by hand:
//   step time = 1 ms + 10 µs per scheduled token (prefill or decode).
#include "sim/replica/replica.h"

#include <catch2/catch.hpp>

#include <numeric>
#include <vector>

#include "sim/engine/simulator.h"
#include "tests/unit/replica/replica_harness.h"

namespace servesim::sim {
namespace {

using testing::AffineCost;
using testing::config;
using testing::Counter;
using testing::Harness;
using testing::step_time;

int64_t emitted_tokens(const metrics::RequestRecord& r) {
  int64_t n = 0;
  for (const auto& s : r.segments) n += s.tokens();
  return n;
}

TEST_CASE("one request on an idle replica finishes at the sum of its step times", "[replica]") {
  // Expectations: step 0 prefills 100 tokens (1 ms + 100·10 µs = 2 ms) and emits token 1;
  // steps 1..9 decode one token each (1.01 ms). TTFT = 2 ms, E2E = 2 + 9·1.01 = 11.09 ms.
  Harness h(config(8, 512), 100, 1);
  h.add(0, 100, 10);
  h.sim.run();
  const auto& r = h.records[0];
  REQUIRE(r.completed);
  REQUIRE(r.first_token == step_time(100));
  SimTime expected_end = step_time(100);
  for (int i = 0; i < 9; ++i) expected_end += step_time(1);
  REQUIRE(r.last_token == expected_end);
  REQUIRE(emitted_tokens(r) == 10);
  REQUIRE(h.replica->stats().steps == 10);
  REQUIRE(h.observer.done == 1);
}

TEST_CASE("a single-token output finishes at its first token", "[replica]") {
  Harness h(config(8, 512), 100, 1);
  h.add(0, 40, 1);
  h.sim.run();
  REQUIRE(h.records[0].first_token == h.records[0].last_token);
  REQUIRE(h.records[0].last_token == step_time(40));
}

TEST_CASE("chunked prefill splits a long prompt into budget-sized steps", "[replica]") {
  // Expectations: 1000 prompt tokens with a 256-token budget take ceil(1000/256) = 4 steps of
  // 256, 256, 256 and 232 tokens; the first token comes at the end of the 4th.
  Harness h(config(8, 256), 200, 1);
  h.add(0, 1000, 2);
  h.sim.run();
  const SimTime ttft = step_time(256) + step_time(256) + step_time(256) + step_time(232);
  REQUIRE(h.records[0].first_token == ttft);
  REQUIRE(h.records[0].last_token == ttft + step_time(1));
  REQUIRE(h.replica->stats().steps == 5);
  REQUIRE(h.replica->stats().peak_step_tokens == 256);
}

TEST_CASE("the long-prefill threshold caps each request's chunk", "[replica]") {
  EngineConfig c = config(8, 2048);
  c.long_prefill_token_threshold = 300;
  Harness h(c, 200, 1);
  h.add(0, 1000, 1);
  h.sim.run();
  // 300 + 300 + 300 + 100.
  REQUIRE(h.records[0].first_token ==
          step_time(300) + step_time(300) + step_time(300) + step_time(100));
}

TEST_CASE("decodes and a new prefill share the token budget", "[replica]") {
  // Budget 64: request 0 (prompt 16) decodes while request 1 (prompt 200) arrives; every later
  // step carries request 0's decode token plus a 63-token chunk of request 1.
  Harness h(config(8, 64), 200, 2);
  h.add(0, 16, 50);
  h.sim.run(SimTime::zero());  // let the first step start with request 0 only
  h.add(1, 200, 2);
  h.sim.run();
  REQUIRE(h.replica->stats().peak_step_tokens == 64);
  REQUIRE(h.records[1].completed);
  REQUIRE(h.records[0].completed);
}

TEST_CASE("max_num_seqs caps the running set at N", "[replica]") {
  // Expectations: with max_num_seqs 3, five requests at t=0 → the first step admits exactly 3.
  Harness h(config(3, 4096), 1000, 5);
  for (int i = 0; i < 5; ++i) h.add(i, 32, 20);
  h.sim.run();
  REQUIRE(h.replica->stats().peak_running == 3);
  REQUIRE(h.records[0].first_token == step_time(96));
  REQUIRE(h.records[3].first_token > h.records[2].last_token - SimTime::from_ns(1));
  for (const auto& r : h.records) REQUIRE(emitted_tokens(r) == 20);
}

TEST_CASE("preemption happens exactly when the KV cache runs out", "[replica]") {
  // In details: 10 blocks of 16 tokens; two requests with 64-token prompts (4 blocks each) and
  // long outputs. Decode step j (j >= 1) computes token 64 + j - 1, so each request needs
  // ceil((64 + j) / 16) blocks: 5 for j = 1..16 (10 in all: fits), 6 for j = 17 (12 > 10).
  // Expectations: no preemption before decode step 17 (step index 17); at step 17 the last
  // running request (1) is preempted (FCFS) and recomputed later; both finish every token.
  Harness h(config(8, 1024), 10, 2);
  h.add(0, 64, 40);
  h.add(1, 64, 40);
  h.sim.run();
  const auto& a = h.records[0];
  const auto& b = h.records[1];
  REQUIRE(a.preemptions == 0);
  REQUIRE(b.preemptions == 1);
  // Request 1 emitted tokens at steps 0..16 (17 tokens), then was preempted at step 17.
  REQUIRE(b.segments.size() == 2);
  REQUIRE(b.segments[0].first_step == 0);
  REQUIRE(b.segments[0].last_step == 16);
  REQUIRE(emitted_tokens(a) == 40);
  REQUIRE(emitted_tokens(b) == 40);
  REQUIRE(h.replica->stats().preemptions == 1);
  REQUIRE(h.replica->kv().num_used_blocks() == 0);
  // Request 1 can only come back once request 0 has finished and released its blocks: it needs
  // ceil(81 / 16) = 6 blocks to recompute 81 tokens, and request 0 holds up to 7.
  REQUIRE(b.segments[1].first_step > a.segments.back().last_step);
}

TEST_CASE("at N-1 blocks short of the boundary there is no preemption", "[replica]") {
  // Same as above with 12 blocks: both requests fit until ceil((64 + j)/16) = 7 (j = 33).
  // Outputs of 33 tokens need decode steps up to j = 32 only: no preemption at all.
  Harness h(config(8, 1024), 12, 2);
  h.add(0, 64, 33);
  h.add(1, 64, 33);
  h.sim.run();
  REQUIRE(h.replica->stats().preemptions == 0);
  // One more output token crosses the boundary at j = 33.
  Harness h2(config(8, 1024), 12, 2);
  h2.add(0, 64, 34);
  h2.add(1, 64, 34);
  h2.sim.run();
  REQUIRE(h2.replica->stats().preemptions == 1);
  REQUIRE(h2.records[1].preemptions == 1);
}

TEST_CASE("the priority policy preempts the lowest-priority request", "[replica]") {
  EngineConfig c = config(8, 1024);
  c.scheduling_policy = "priority";
  Harness h(c, 10, 2);
  h.add(0, 64, 40, /*priority=*/5);  // lower priority (larger value), admitted first
  h.add(1, 64, 40, /*priority=*/0);
  h.sim.run();
  REQUIRE(h.records[0].preemptions == 1);
  REQUIRE(h.records[1].preemptions == 0);
}

TEST_CASE("prefix caching serves a shared prefix from cache", "[replica]") {
  // Two requests share a 64-token prefix (4 full blocks). The second arrives after the first
  // finished: its lookup hits 4 blocks, so it prefills 100 - 64 = 36 tokens.
  Harness h(config(8, 1024, /*prefix_caching=*/true), 100, 2);
  workloads::RequestSpec a{0, SimTime::zero(), 100, 5, /*group=*/7, /*prefix=*/64, 0, nullptr, 0};
  h.records[0].id = 0;
  h.replica->add_request(h.sim, a);
  h.sim.run();
  const SimTime t1 = h.sim.now();
  workloads::RequestSpec b{1, t1, 100, 5, 7, 64, 0, nullptr, 0};
  h.records[1].id = 1;
  h.records[1].arrival = t1;
  h.replica->add_request(h.sim, b);
  h.sim.run();
  REQUIRE(h.records[0].cached_prompt_tokens == 0);
  REQUIRE(h.records[1].cached_prompt_tokens == 64);
  REQUIRE(h.records[1].first_token - t1 == step_time(36));
  REQUIRE(h.replica->stats().prefix_hit_tokens == 64);
}

TEST_CASE("without prefix caching nothing is reused", "[replica]") {
  Harness h(config(8, 1024, false), 100, 2);
  workloads::RequestSpec a{0, SimTime::zero(), 100, 5, 7, 64, 0, nullptr, 0};
  h.replica->add_request(h.sim, a);
  h.sim.run();
  workloads::RequestSpec b{1, h.sim.now(), 100, 5, 7, 64, 0, nullptr, 0};
  h.replica->add_request(h.sim, b);
  h.sim.run();
  REQUIRE(h.records[1].cached_prompt_tokens == 0);
}

TEST_CASE("a request longer than max-model-len fails and the run goes on", "[replica]") {
  EngineConfig c = config(8, 1024);
  c.max_model_len = 128;
  Harness h(c, 100, 2);
  h.add(0, 100, 29);  // 129 > 128
  h.add(1, 100, 28);  // 128: accepted (boundary)
  h.sim.run();
  REQUIRE(h.records[0].failed);
  REQUIRE(h.records[0].error.find("maximum context length is 128") != std::string::npos);
  REQUIRE(h.records[1].completed);
  REQUIRE(h.observer.done == 2);
}

TEST_CASE("simultaneous arrivals join the same first step", "[replica]") {
  Harness h(config(8, 4096), 100, 3);
  for (int i = 0; i < 3; ++i) h.add(i, 10, 1);
  h.sim.run();
  for (const auto& r : h.records) REQUIRE(r.first_token == step_time(30));
}

// Sliding-window groups (vLLM's hybrid KV cache manager): W = 128, block 16, one sliding group.
// A sliding group allocates the full group's block indices and frees those wholly before token
// c − W + 1 when the request is scheduled with c tokens computed (remove_skipped_blocks).
EngineConfig with_sliding_group(EngineConfig c) {
  c.kv_layers_per_block = 18;
  c.kv_sliding_groups = 1;
  c.kv_sliding_window = 128;
  return c;
}

TEST_CASE("a sliding group holds the window's blocks, a full group every block",
          "[replica][sliding]") {
  SECTION("prompt 1000 in one chunk: 63 full + 63 sliding blocks; 126 run it, 125 cannot") {
    // Then the prompt's skipped blocks go (floor((1000 − 127) / 16) = 54 of them): 63 + 9.
    Harness h(with_sliding_group(config(8, 2048)), 126, 1);
    h.add(0, 1000, 20);
    h.sim.run();
    CHECK(h.records[0].completed);
    CHECK(h.replica->stats().peak_used_blocks == 126);
    CHECK(h.replica->stats().used_blocks_now == 0);
    Harness tight(with_sliding_group(config(8, 2048)), 125, 1);
    tight.add(0, 1000, 20);
    tight.sim.run();
    CHECK(tight.records[0].failed);
    CHECK(tight.replica->stats().used_blocks_now == 0);
  }
  SECTION("prompt 1000 in chunks of 512: 32 + 32, then 63 + (63 − 24) = 102 at the peak") {
    // The second chunk is scheduled with c = 512: blocks before floor(385 / 16) = 24 are freed.
    Harness h(with_sliding_group(config(8, 512)), 1000, 1);
    h.add(0, 1000, 20);
    h.sim.run();
    CHECK(h.replica->stats().peak_used_blocks == 102);
  }
  SECTION("decode past the window: 32 full + 9 sliding at the last block boundary") {
    // Prompt 100, 400 tokens out: positions 0..498 computed; the last boundary is at c = 496
    // (ceil(497 / 16) = 32 blocks), the sliding group keeps 32 − floor(369 / 16) = 9 of them.
    Harness h(with_sliding_group(config(8, 2048)), 1000, 1);
    h.add(0, 100, 400);
    h.sim.run();
    CHECK(h.records[0].completed);
    CHECK(h.replica->stats().peak_used_blocks == 41);
    Harness plain(config(8, 2048), 1000, 1);
    plain.add(0, 100, 400);
    plain.sim.run();
    CHECK(plain.replica->stats().peak_used_blocks == 32);
    // The sliding blocks change memory, not time: the same steps at the same times.
    CHECK(h.records[0].last_token == plain.records[0].last_token);
  }
  SECTION("a full cache: the trims come before the allocations, nothing is over-allocated") {
    // Long prompts in chunks of 512 and decoders at block boundaries on caches from nearly too
    // small to ample: the steps where a request's own trim pays for its growth must not
    // allocate first (an earlier version did, and stopped on "allocate beyond free blocks").
    for (int64_t blocks = 260; blocks <= 1400; blocks += 95) {
      Harness h(with_sliding_group(config(32, 512)), blocks, 48);
      for (int i = 0; i < 48; ++i) h.add(i, 1000 + 37 * i, 60 + 11 * i);
      h.sim.run();
      CHECK(h.observer.done == 48);
      for (const auto& r : h.records) CHECK(r.completed);
      CHECK(h.replica->stats().used_blocks_now == 0);
      CHECK(h.replica->stats().peak_used_blocks <= blocks);
    }
  }
  SECTION("under preemption every block comes back") {
    // 40 requests of 700 + 300 tokens on 600 blocks: the cache fills, requests are preempted
    // and readmitted; after the run nothing is held.
    Harness h(with_sliding_group(config(64, 2048)), 600, 40);
    for (int i = 0; i < 40; ++i) h.add(i, 700, 300);
    h.sim.run();
    CHECK(h.observer.done == 40);
    for (const auto& r : h.records) CHECK(r.completed);
    CHECK(h.replica->stats().preemptions > 0);
    CHECK(h.replica->stats().used_blocks_now == 0);
    CHECK(h.replica->stats().peak_used_blocks <= 600);
  }
}

}  // namespace
}  // namespace servesim::sim
