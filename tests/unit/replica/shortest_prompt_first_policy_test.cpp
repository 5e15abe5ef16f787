// The test-only ShortestPromptFirstPolicy, registered by the one line below and run through a
// whole Replica: the worked example of adding a scheduler policy (docs/design.md).
#include "tests/unit/replica/shortest_prompt_first_policy.h"

#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "sim/engine/simulator.h"
#include "sim/replica/replica.h"
#include "sim/replica/waiting_queue.h"
#include "tests/unit/replica/replica_harness.h"

namespace servesim::sim {
namespace {

// The registration line: from here on EngineConfig::scheduling_policy may name it.
const bool kRegistered = register_scheduler_policy(
    "shortest_prompt_first", [] { return std::make_unique<ShortestPromptFirstPolicy>(); });

RequestState state(int64_t id, int64_t arrival_ns, int32_t prompt) {
  RequestState r;
  r.id = id;
  r.arrival_ns = arrival_ns;
  r.prompt = prompt;
  return r;
}

TEST_CASE("shortest-prompt-first orders the waiting queue by prompt and preempts the longest",
          "[replica][scheduler_policy]") {
  REQUIRE(kRegistered);
  const auto spf = make_scheduler_policy("shortest_prompt_first");
  REQUIRE_FALSE(spf->arrival_order());
  std::vector<RequestState> slots = {state(0, 0, 300), state(1, 1, 100), state(2, 2, 200),
                                     state(3, 3, 100), state(4, 4, 300)};
  WaitingQueue q(*spf);
  for (int32_t s = 0; s < 5; ++s) q.push_back(s, slots[s]);
  std::vector<int32_t> order;
  while (!q.empty()) {
    order.push_back(q.front_slot());
    q.pop_front();
  }
  REQUIRE(order == std::vector<int32_t>{1, 3, 2, 0, 4});  // 100, 100, 200, 300, 300 by arrival
  REQUIRE(spf->victim({1, 0, 2, 4}, slots) == 3);         // prompt 300, the later arrival (slot 4)
  REQUIRE(spf->victim({1, 2, 3}, slots) == 1);
}

using testing::AffineCost;
using testing::step_time;
using NoObserver = testing::Counter;

TEST_CASE("a replica under shortest-prompt-first serves simultaneous arrivals shortest first",
          "[replica][scheduler_policy]") {
  // One sequence at a time (max_num_seqs = 1), three requests at t = 0 with prompts 300, 100,
  // 200 and 2 output tokens: each runs a prefill step (1 ms + 10 µs · prompt) and a decode step
  // (1.01 ms). Shortest first: 100, then 200, then 300 — each request's first token comes after
  // the steps of those before it. FCFS would serve 300 first.
  EngineConfig c;
  c.max_num_seqs = 1;
  c.max_num_batched_tokens = 1024;
  c.block_size = 16;
  c.max_model_len = 4096;
  c.scheduling_policy = "shortest_prompt_first";
  AffineCost cost;
  NoObserver observer;
  engine::Simulator sim;
  std::vector<metrics::RequestRecord> records(3);
  Replica replica(0, c, cost, nullptr, 100, &records, &observer);
  const int32_t prompts[3] = {300, 100, 200};
  for (int64_t id = 0; id < 3; ++id) {
    workloads::RequestSpec spec;
    spec.id = id;
    spec.prompt_tokens = prompts[id];
    spec.output_tokens = 2;
    records[id].id = id;
    records[id].prompt_tokens = prompts[id];
    records[id].output_tokens = 2;
    replica.add_request(sim, spec);
  }
  sim.run();
  const SimTime t100 = step_time(100);
  const SimTime t200 = t100 + step_time(1) + step_time(200);
  const SimTime t300 = t200 + step_time(1) + step_time(300);
  REQUIRE(records[1].first_token == t100);
  REQUIRE(records[2].first_token == t200);
  REQUIRE(records[0].first_token == t300);
  REQUIRE(records[0].last_token == t300 + step_time(1));
  for (const auto& r : records) REQUIRE(r.completed);
}

}  // namespace
}  // namespace servesim::sim
