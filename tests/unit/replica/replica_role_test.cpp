// A replica's role in disaggregated prefill/decode (Replica::Role): which requests a prefill,
// a decode and an aggregated replica take, and a decode instance's remote request worked by
// hand on AffineCost (1 ms + 10 µs per scheduled token).
#include <catch2/catch.hpp>

#include <utility>
#include <vector>

#include "sim/base/error.h"
#include "tests/unit/replica/replica_harness.h"

namespace servesim::sim {
namespace {

using testing::Harness;
using testing::step_time;

workloads::RequestSpec spec(int64_t id, int32_t prompt, int32_t output) {
  workloads::RequestSpec s;
  s.id = id;
  s.prompt_tokens = prompt;
  s.output_tokens = output;
  return s;
}

// Records the loads a decode replica asks for and delivers each `delay` after it is asked.
struct Source : RemoteKvSource, engine::EventHandler {
  Replica* replica = nullptr;
  SimTime delay = SimTime::from_seconds_ceil(5e-3);
  std::vector<std::pair<int64_t, int64_t>> loads;  // (request, tokens)
  std::vector<SimTime> asked;
  void start_remote_kv_load(engine::Simulator& sim, int32_t, int64_t id, int64_t tokens) override {
    loads.emplace_back(id, tokens);
    asked.push_back(sim.now());
    sim.schedule_at(sim.now() + delay, this, id);
  }
  void on_event(engine::Simulator& sim, int64_t id) override { replica->remote_kv_loaded(sim, id); }
};

TEST_CASE("an aggregated replica takes local requests and refuses remote ones", "[replica][role]") {
  Harness h(testing::config(4, 2048), 64, 1);
  CHECK(h.replica->role() == Replica::Role::kAggregated);
  CHECK_THROWS_AS(h.replica->add_remote_request(h.sim, spec(0, 100, 3)), InternalError);
}

TEST_CASE("a prefill replica runs the proxy's max_tokens=1 requests and refuses others",
          "[replica][role]") {
  Harness h(testing::config(4, 2048), 64, 2);
  h.replica->set_prefill_role();
  CHECK(h.replica->role() == Replica::Role::kPrefill);
  CHECK_THROWS_AS(h.add(0, 100, 2), InternalError);  // max_tokens = 2: not the proxy's request
  h.add(1, 100, 1);
  h.sim.run();
  REQUIRE(h.records[1].completed);
  // One step computes the 100 prompt tokens and samples the one token: 1 ms + 1 ms.
  CHECK(h.records[1].last_token == step_time(100));
  CHECK_THROWS_AS(h.replica->add_remote_request(h.sim, spec(0, 100, 3)), InternalError);
}

TEST_CASE("a decode replica pulls the prompt's KV, then recomputes its last token",
          "[replica][role]") {
  // Prompt 100 (7 blocks of 16), 3 output tokens, an empty prefix cache: the whole prompt is
  // pulled (100 tokens). Once it lands (5 ms after it was asked), the request is admitted with
  // 99 tokens computed: one step of 1 token samples the first output token, two decode steps of
  // 1 token the others — 3 × step_time(1) after the load, the replica being idle.
  Harness h(testing::config(4, 2048), 64, 1);
  Source source;
  source.replica = h.replica.get();
  h.replica->set_remote_kv_source(&source);
  CHECK(h.replica->role() == Replica::Role::kDecode);
  h.records[0].id = 0;
  h.records[0].prompt_tokens = 100;
  h.records[0].output_tokens = 3;
  h.replica->add_remote_request(h.sim, spec(0, 100, 3));
  h.sim.run();
  REQUIRE(source.loads == std::vector<std::pair<int64_t, int64_t>>{{0, 100}});
  REQUIRE(h.records[0].completed);
  const SimTime landed = source.asked[0] + source.delay;
  CHECK(h.records[0].first_token == landed + step_time(1));
  CHECK(h.records[0].last_token == landed + step_time(1) + step_time(1) + step_time(1));
  for (const models::BatchShape& s : h.cost.shapes) CHECK(s.total_tokens() <= 1);
}

}  // namespace
}  // namespace servesim::sim
