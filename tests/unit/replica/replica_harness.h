// A Replica on a cost model simple enough to compute by hand, for the replica tests:
//   step time = 1 ms + 10 µs per scheduled token (prefill or decode), whatever the batch.
// AffineCost also keeps every BatchShape it is asked about (shapes), for the tests that check
// what the replica hands the cost model. Harness owns the simulator, the records and the
// replica, and sends requests now (add) or at a later time (add_at).
#ifndef SERVESIM_TESTS_UNIT_REPLICA_REPLICA_HARNESS_H_
#define SERVESIM_TESTS_UNIT_REPLICA_REPLICA_HARNESS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/engine/simulator.h"
#include "sim/replica/replica.h"

namespace servesim::sim::testing {

class AffineCost : public models::CostModel {
 public:
  models::StepCost estimate(const models::BatchShape& s) const override {
    shapes.push_back(s);
    models::StepCost c;
    c.overhead_s = 1e-3;
    c.linear_s = 1e-5 * static_cast<double>(s.total_tokens());
    c.total_s = c.overhead_s + c.linear_s;
    return c;
  }
  mutable std::vector<models::BatchShape> shapes;
};

// AffineCost's step time for `tokens` scheduled tokens, on the simulator's clock.
inline SimTime step_time(int64_t tokens) {
  return SimTime::from_seconds_ceil(1e-3 + 1e-5 * static_cast<double>(tokens));
}

// Counts the requests that left the replica.
class Counter : public RequestObserver {
 public:
  int64_t done = 0;
  void on_request_done(engine::Simulator&, int64_t) override { ++done; }
};

// A resolved V1 config: `max_num_seqs` seats, a token budget, 16-token blocks, no length limit.
inline EngineConfig config(int max_num_seqs, int budget, bool prefix_caching = false) {
  EngineConfig c;
  c.max_num_seqs = max_num_seqs;
  c.max_num_batched_tokens = budget;
  c.block_size = 16;
  c.enable_prefix_caching = prefix_caching;
  c.max_model_len = 1 << 20;
  return c;
}

// Request `id` (records[id] filled as the client fills it) reaches `replica` now.
inline void send(engine::Simulator& sim, Replica& replica,
                 std::vector<metrics::RequestRecord>& records, int64_t id, int32_t prompt,
                 int32_t output, int32_t priority = 0) {
  workloads::RequestSpec spec;
  spec.id = id;
  spec.prompt_tokens = prompt;
  spec.output_tokens = output;
  spec.priority = priority;
  records[id].id = id;
  records[id].arrival = sim.now();
  records[id].prompt_tokens = prompt;
  records[id].output_tokens = output;
  replica.add_request(sim, spec);
}

struct Harness : engine::EventHandler {
  AffineCost cost;
  Counter observer;
  engine::Simulator sim;
  std::vector<metrics::RequestRecord> records;
  std::unique_ptr<Replica> replica;
  std::vector<workloads::RequestSpec> later;  // sent at their event (tag = index)

  // `n_requests` records (ids 0..n−1) for a replica of `blocks` KV blocks.
  Harness(const EngineConfig& cfg, int64_t blocks, int n_requests) : records(n_requests) {
    replica = std::make_unique<Replica>(0, cfg, cost, nullptr, blocks, &records, &observer);
  }
  // Request `id` reaches the replica now.
  void add(int64_t id, int32_t prompt, int32_t output, int32_t priority = 0) {
    send(sim, *replica, records, id, prompt, output, priority);
  }
  // Request `id` reaches the replica at `t`.
  void add_at(SimTime t, int64_t id, int32_t prompt, int32_t output) {
    workloads::RequestSpec spec;
    spec.id = id;
    spec.prompt_tokens = prompt;
    spec.output_tokens = output;
    later.push_back(spec);
    sim.schedule_at(t, this, static_cast<int64_t>(later.size() - 1));
  }
  void on_event(engine::Simulator&, int64_t tag) override {
    const workloads::RequestSpec& s = later[static_cast<size_t>(tag)];
    add(s.id, s.prompt_tokens, s.output_tokens);
  }
};

}  // namespace servesim::sim::testing

#endif  // SERVESIM_TESTS_UNIT_REPLICA_REPLICA_HARNESS_H_
