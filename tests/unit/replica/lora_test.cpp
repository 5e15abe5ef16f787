// LoRA serving in one engine (sim/replica/lora_adapters.h): the scheduler's max_loras rule, the
// LRU order of the GPU slots and the CPU cache, and the time adapter loads add to a step.
//
// The cost model gives every non-empty step a constant time G; the load times are multiples of
// 2^-10 s, so every step end is an exact number of nanoseconds and is checked exactly.
#include <catch2/catch.hpp>

#include <utility>
#include <vector>

#include "sim/engine/simulator.h"
#include "sim/replica/lora_adapters.h"
#include "sim/replica/lru_set.h"
#include "sim/replica/replica.h"

namespace servesim::sim {
namespace {

constexpr double kUnit = 1.0 / 1024;  // s

class ConstantCost : public models::CostModel {
 public:
  explicit ConstantCost(double s) : s_(s) {}
  models::StepCost estimate(const models::BatchShape& shape) const override {
    models::StepCost c;
    if (shape.empty()) return c;
    c.linear_s = s_;
    c.total_s = s_;
    return c;
  }

 private:
  double s_;
};

class NoObserver : public RequestObserver {
 public:
  void on_request_done(engine::Simulator&, int64_t) override {}
};

LoraConfig lora(int max_loras, int max_cpu_loras, double storage_s = 0, double copy_s = 0) {
  LoraConfig l;
  l.enable_lora = true;
  l.max_loras = max_loras;
  l.max_cpu_loras = max_cpu_loras;
  l.storage_load_s = storage_s;
  l.slot_copy_s = copy_s;
  return l;  // l.step: 0 layers, so the kernels cost nothing here
}

struct Run {
  std::vector<metrics::RequestRecord> records;
  metrics::StepLog log;
  ReplicaStats stats;
};

// Requests (adapter; −1 = none), each a 10-token prompt and `output` tokens, all at t = 0, in
// order, on a synchronous engine whose steps take G = 4 units plus their adapter loads.
Run run(const LoraConfig& l, const std::vector<int32_t>& adapters, int output = 5) {
  ConstantCost cost(4 * kUnit);
  NoObserver observer;
  engine::Simulator sim;
  Run out;
  out.records.resize(adapters.size());
  EngineConfig cfg;
  cfg.max_num_seqs = 64;
  cfg.max_num_batched_tokens = 4096;
  cfg.max_model_len = 1 << 20;
  cfg.async_scheduling = 0;
  cfg.lora = l;
  Replica replica(0, cfg, cost, nullptr, 10000, &out.records, &observer);
  for (size_t i = 0; i < adapters.size(); ++i) {
    workloads::RequestSpec spec;
    spec.id = static_cast<int64_t>(i);
    spec.prompt_tokens = 10;
    spec.output_tokens = output;
    spec.lora_adapter = adapters[i];
    out.records[i].id = spec.id;
    out.records[i].prompt_tokens = spec.prompt_tokens;
    out.records[i].output_tokens = spec.output_tokens;
    replica.add_request(sim, spec);
  }
  sim.run();
  out.log = replica.step_log();
  out.stats = replica.stats();
  return out;
}

int64_t ns(double units) { return static_cast<int64_t>(units * kUnit * 1e9 + 0.5); }

TEST_CASE("LRU set: touch refreshes, a full set drops its least recent key", "[replica][lora]") {
  LruSet s(3);
  CHECK(s.touch(1) == -1);
  CHECK(s.touch(2) == -1);
  CHECK(s.touch(3) == -1);
  CHECK(s.touch(1) == -1);  // 1 becomes the most recent: order 2, 3, 1
  CHECK(s.keys() == std::vector<int32_t>{2, 3, 1});
  CHECK(s.touch(4) == 2);  // full: the least recent, 2, leaves
  CHECK(s.keys() == std::vector<int32_t>{3, 1, 4});
  s.erase(1);
  CHECK(s.keys() == std::vector<int32_t>{3, 4});
  CHECK(s.touch(5) == -1);  // room again
}

TEST_CASE("max_loras rule: a new adapter is admitted below max_loras, refused at it",
          "[replica][lora]") {
  LoraAdapters a(lora(2, 2));
  CHECK(a.admits(0));
  a.add_running(0);
  // max_loras − 1 distinct adapters: any adapter may still join.
  CHECK(a.distinct() == 1);
  CHECK(a.admits(1));
  a.add_running(1);
  a.add_running(1);
  // max_loras distinct: only those two adapters and the base model.
  CHECK(a.distinct() == 2);
  CHECK_FALSE(a.admits(2));
  CHECK(a.admits(0));
  CHECK(a.admits(1));
  CHECK(a.admits(-1));
  a.remove_running(1);  // one of adapter 1's two requests leaves: still 2 distinct
  CHECK_FALSE(a.admits(2));
  a.remove_running(1);
  CHECK(a.admits(2));
}

TEST_CASE("CPU cache LRU: which adapters are read from storage, which only copied to a slot",
          "[replica][lora]") {
  // One GPU slot, a CPU cache of two; batches A, B, A, C, B (adapters 0, 1, 0, 2, 1):
  //   A: storage + slot.  cache [A]     B: storage + slot.  cache [A B]
  //   A: cached, slot.    cache [B A]   C: storage (B, the least recent, leaves) + slot. [A C]
  //   B: storage again (A leaves) + slot.                                              [C B]
  // 4 storage reads, 5 slot copies, 2 evictions.
  const double load = 3, copy = 1;
  LoraAdapters a(lora(1, 2, load, copy));
  double total = 0;
  for (int32_t adapter : {0, 1, 0, 2, 1}) {
    a.add_running(adapter);
    total += a.prepare_step();
    a.remove_running(adapter);
  }
  CHECK(a.stats().storage_loads == 4);
  CHECK(a.stats().slot_loads == 5);
  CHECK(a.stats().cpu_evictions == 2);
  CHECK(total == 4 * load + 5 * copy);
  CHECK(a.cpu_cache().keys() == std::vector<int32_t>{2, 1});
  CHECK(a.gpu_slots().keys() == std::vector<int32_t>{1});
  // The same batch again loads nothing.
  a.add_running(1);
  CHECK(a.prepare_step() == 0.0);
}

TEST_CASE("engine: a request whose adapter would exceed max_loras waits until a slot frees",
          "[replica][lora]") {
  // max_loras = 2; requests with adapters 0, 1, 2, 0 and none, all at t = 0, 5 output tokens.
  // Step 0 admits r0 (A0), r1 (A1), skips r2 (a third adapter), admits r3 (A0 runs already) and
  // r4 (base model); its first tokens come at its end; steps 1-4 decode the other 4 tokens;
  // everyone but r2 finishes at the end of step 4. Step 5 admits r2.
  // Step times: G = 4 units; step 0 loads A0 and A1 from storage (3 + 1 units each), step 5
  // loads A2: step_end = 12, 16, 20, 24, 28, then 28 + 4 + 4 = 36 units.
  const Run r = run(lora(2, 4, 3 * kUnit, 1 * kUnit), {0, 1, 2, 0, -1});
  REQUIRE(r.log.step_end.size() >= 6);
  CHECK(r.log.step_end[0].ns() == ns(12));
  CHECK(r.log.step_end[4].ns() == ns(28));
  CHECK(r.log.step_end[5].ns() == ns(36));
  for (int i : {0, 1, 3, 4}) CHECK(r.records[i].first_token.ns() == ns(12));
  CHECK(r.records[2].first_token.ns() == ns(36));
  // r2 was first skipped at step 0 (t = 0) and admitted at step 5 (t = 28 units).
  CHECK(r.stats.lora.waited_requests == 1);
  CHECK(r.stats.lora.wait_ns == ns(28));
  CHECK(r.stats.lora.storage_loads == 3);
  CHECK(r.stats.lora.slot_loads == 3);

  // One more slot (max_loras = 3): the third adapter is admitted at once.
  const Run wide = run(lora(3, 4, 3 * kUnit, 1 * kUnit), {0, 1, 2, 0, -1});
  for (int i = 0; i < 5; ++i) CHECK(wide.records[i].first_token.ns() == ns(4 + 3 * 4));
  CHECK(wide.stats.lora.waited_requests == 0);
}

TEST_CASE("engine: skipped requests keep their place in the queue", "[replica][lora]") {
  // max_loras = 1; adapters 0, 1, 2, 1. Step 0 runs r0; r1, r2 are skipped, r3 too (adapter 1
  // is not running). When r0 finishes (end of step 4), step 5 admits r1 (the head) and r3 (same
  // adapter) and skips r2; r2 runs from step 10. No loads cost anything here: G = 4 units.
  const Run r = run(lora(1, 1), {0, 1, 2, 1});
  CHECK(r.records[0].first_token.ns() == ns(4));
  CHECK(r.records[1].first_token.ns() == ns(24));
  CHECK(r.records[3].first_token.ns() == ns(24));
  CHECK(r.records[2].first_token.ns() == ns(44));
  CHECK(r.stats.lora.waited_requests == 3);
  CHECK(r.stats.lora.wait_ns == ns(20) + ns(20) + ns(40));
  CHECK(r.stats.lora.max_wait_ns == ns(40));
}

}  // namespace
}  // namespace servesim::sim
