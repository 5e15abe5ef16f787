// PipelineStages (the shared stage timeline of a pipeline-parallel replica) and vLLM V0 virtual
// engines (Replica::set_virtual_engines). The cost model is a hand-checkable stub: every step
// takes 2 ms of GPU time, split evenly over the stages, plus `overhead` on the host.
#include "sim/replica/pipeline.h"

#include <catch2/catch.hpp>

#include <vector>

#include "sim/engine/simulator.h"
#include "sim/replica/replica.h"

namespace servesim::sim {
namespace {

class FlatCost : public models::CostModel {
 public:
  explicit FlatCost(double overhead_s) : overhead_s_(overhead_s) {}
  models::StepCost estimate(const models::BatchShape& s) const override {
    models::StepCost c;
    if (s.empty()) return c;
    c.overhead_s = overhead_s_;
    c.linear_s = 2e-3;
    c.total_s = c.overhead_s + c.linear_s;
    return c;
  }

 private:
  double overhead_s_;
};

models::BatchShape one_decode() {
  models::BatchShape s;
  s.decode_seqs = 1;
  s.decode_context_tokens = 100;
  s.sampled_seqs = 1;
  return s;
}

TEST_CASE("one micro-batch takes the sum of its stages", "[pipeline]") {
  // PP2: overhead 0.5 ms, then 1 ms on each stage: leaves at 2.5 ms.
  FlatCost cost(0.5e-3);
  PipelineStages p(cost, 2);
  CHECK(p.run(SimTime::zero(), one_decode()).ns() == 2'500'000);
  CHECK(p.stage_busy_ns(0) == 1'000'000);
  CHECK(p.in_flight_ns() == 2'500'000);
}

TEST_CASE("stages are first come first served: a second micro-batch waits for stage 0",
          "[pipeline]") {
  // No overhead, PP2, 1 ms per stage. A at t=0: stage 0 [0,1], stage 1 [1,2]. B at t=0.2 ms:
  // stage 0 is busy until 1: [1,2], stage 1 [2,3]: B leaves at 3 ms (not 2.2).
  FlatCost cost(0);
  PipelineStages p(cost, 2);
  CHECK(p.run(SimTime::zero(), one_decode()).ns() == 2'000'000);
  CHECK(p.run(SimTime::from_ns(200'000), one_decode()).ns() == 3'000'000);
  CHECK(p.in_flight_ns() == 3'000'000);
}

TEST_CASE("m looping micro-batches repeat every pipeline_round_s", "[pipeline]") {
  // Each of m engines issues its next step when its previous one ends (what a virtual engine
  // does under load). After a warm-up the period of every engine equals the closed form:
  //   PP 4, 0.5 ms per stage, host 0.3 ms: m = 1: 0.3 + 2 = 2.3 ms; m = 2: max(2.3, 2·0.5) = 2.3;
  //   m = 8: max(2.3, 8·0.5) = 4 ms (the stages are the bottleneck).
  for (int m : {1, 2, 4, 8}) {
    FlatCost cost(0.3e-3);
    PipelineStages p(cost, 4);
    std::vector<int64_t> next(static_cast<size_t>(m), 0);
    std::vector<int64_t> last_period(static_cast<size_t>(m), 0);
    for (int round = 0; round < 50; ++round) {
      for (size_t e = 0; e < next.size(); ++e) {
        const int64_t end = p.run(SimTime::from_ns(next[e]), one_decode()).ns();
        last_period[e] = end - next[e];
        next[e] = end;
      }
    }
    const double expected = models::pipeline_round_s(p.split(one_decode()), m);
    for (int64_t period : last_period) CHECK(std::abs(period * 1e-9 - expected) < 1e-8);
  }
}

class Counter : public RequestObserver {
 public:
  int64_t done = 0;
  void on_request_done(engine::Simulator&, int64_t) override { ++done; }
};

TEST_CASE("virtual engines: new requests go to the engine with the fewest unfinished",
          "[pipeline][replica]") {
  // Requests 0, 1, 2 arrive together: engine 0 (0 unfinished) gets 0, engine 1 gets 1, then
  // both have 1 and the tie goes to engine 0. All finish; each engine logs its own steps.
  EngineConfig c;
  c.max_num_seqs = 8;
  c.max_num_batched_tokens = 512;
  c.enable_prefix_caching = false;
  c.max_model_len = 1 << 20;
  FlatCost cost(0);
  PipelineStages stages(cost, 2);
  Counter observer;
  engine::Simulator sim;
  std::vector<metrics::RequestRecord> records(3);
  Replica e0(0, c, cost, nullptr, 100, &records, &observer);
  Replica e1(1, c, cost, nullptr, 100, &records, &observer);
  e0.set_virtual_engines({&e1}, &stages);
  for (int64_t id = 0; id < 3; ++id) {
    workloads::RequestSpec spec;
    spec.id = id;
    spec.prompt_tokens = 32;
    spec.output_tokens = 4;
    records[static_cast<size_t>(id)].id = id;
    records[static_cast<size_t>(id)].prompt_tokens = 32;
    records[static_cast<size_t>(id)].output_tokens = 4;
    e0.add_request(sim, spec);
  }
  CHECK(e0.outstanding() == 3);
  sim.run();
  CHECK(observer.done == 3);
  CHECK(records[0].replica == 0);
  CHECK(records[1].replica == 1);
  CHECK(records[2].replica == 0);
  // 4 output tokens = 4 steps per engine. Engine 1's steps queue behind engine 0's on each stage.
  CHECK(e0.step_log().step_end.size() == 4);
  CHECK(e1.step_log().step_end.size() == 4);
  CHECK(e1.step_log().step_end.front() > e0.step_log().step_end.front());
}

}  // namespace
}  // namespace servesim::sim
