// A new cost model needs one function: estimate(). TableCost, test-only, times a step from a
// table of step times against the step's tokens (as read off a profiler) and implements nothing
// else; a Replica runs on it as on the roofline, without a fast path (every step is one
// estimate() call). And the roofline's fast path (models/cost_fast_path.h) is only a faster road
// to the same numbers: hidden behind an estimate()-only wrapper, the roofline gives the same run
// to the nanosecond.
#include <catch2/catch.hpp>

#include <cstdint>
#include <utility>
#include <vector>

#include "hardware/gpu_spec.h"
#include "hardware/kernel_profile.h"
#include "models/deployment.h"
#include "models/model_spec.h"
#include "models/roofline_cost_model.h"
#include "sim/engine/simulator.h"
#include "sim/replica/replica.h"
#include "tests/unit/replica/replica_harness.h"

namespace servesim::sim {
namespace {

// Step time against the step's tokens (prefill + decode), log-linear between the table's points
// and exact at them (hardware::MonotoneCurve, the type the kernel tables use).
class TableCost : public models::CostModel {
 public:
  explicit TableCost(std::vector<std::pair<double, double>> points)
      : curve_(hardware::MonotoneCurve::fit(std::move(points))) {}
  models::StepCost estimate(const models::BatchShape& s) const override {
    shapes.push_back(s);
    models::StepCost c;
    if (s.empty()) return c;
    c.linear_s = curve_.at(static_cast<double>(s.total_tokens()));
    c.total_s = c.linear_s;
    return c;
  }
  // The table's step time at `tokens`, as the replica's clock counts it.
  SimTime step(int64_t tokens) const {
    return SimTime::from_seconds_ceil(curve_.at(static_cast<double>(tokens)));
  }
  mutable std::vector<models::BatchShape> shapes;  // every shape asked about, in order

 private:
  hardware::MonotoneCurve curve_;
};

// 10 ms for one token, 11 ms at 33, 13 ms at 128, 25 ms at 512 (a decode step's fixed cost,
// then the prefill's growth).
TableCost table() { return TableCost({{1, 10e-3}, {33, 11e-3}, {128, 13e-3}, {512, 25e-3}}); }

using testing::config;
using NoObserver = testing::Counter;

void add(engine::Simulator& sim, Replica& replica, std::vector<metrics::RequestRecord>& records,
         int64_t id, int32_t prompt, int32_t output) {
  testing::send(sim, replica, records, id, prompt, output);
}

TEST_CASE("a table-driven cost model with estimate() alone runs a replica", "[replica][cost]") {
  // Two requests at t = 0, prompts 100 and 60, 2 output tokens each, a 128-token budget. Every
  // step lands on a table point:
  //   step 0: request 0's prompt (100) + the first 28 of request 1's (chunked)  128 tokens, 13 ms
  //           request 0's first token;
  //   step 1: request 0 decodes (1) + request 1's last 32 prompt tokens           33 tokens, 11 ms
  //           request 0's second token (done), request 1's first token;
  //   step 2: request 1 decodes                                                     1 token, 10 ms
  // Expectations: those token times in closed form; one estimate() call per step (no fast
  // path: the replica needs nothing else); the table has no fast path.
  const TableCost cost = table();
  REQUIRE(cost.fast_path() == nullptr);
  REQUIRE(cost.step(128).ns() == 13'000'000);
  REQUIRE(cost.step(33).ns() == 11'000'000);
  REQUIRE(cost.step(1).ns() == 10'000'000);
  NoObserver observer;
  engine::Simulator sim;
  std::vector<metrics::RequestRecord> records(2);
  Replica replica(0, config(4, 128), cost, nullptr, 200, &records, &observer);
  add(sim, replica, records, 0, 100, 2);
  add(sim, replica, records, 1, 60, 2);
  sim.run();
  REQUIRE(records[0].completed);
  REQUIRE(records[1].completed);
  const SimTime s0 = cost.step(128), s1 = cost.step(33), s2 = cost.step(1);
  CHECK(records[0].first_token == s0);
  CHECK(records[0].last_token == s0 + s1);
  CHECK(records[1].first_token == s0 + s1);
  CHECK(records[1].last_token == s0 + s1 + s2);
  REQUIRE(cost.shapes.size() == 3);
  CHECK(cost.shapes[0].prefill_tokens == 128);
  CHECK(cost.shapes[0].prefill_seqs == 2);
  CHECK(cost.shapes[1].decode_seqs == 1);
  CHECK(cost.shapes[1].prefill_tokens == 32);
  CHECK(cost.shapes[2].total_tokens() == 1);
  CHECK(replica.stats().steps == 3);
}

TEST_CASE("a table-driven cost model: busy time and tokens are conserved", "[replica][cost]") {
  // Twenty requests at t = 0, prompts 40 + 23·i, outputs 3 + 5·i, 8 seats, a 256-token budget,
  // enough blocks that nothing is preempted. Expectations: the replica is busy exactly the sum
  // of the table's times of the shapes it asked for (one call per step), and the scheduled
  // tokens are each prompt once plus every output token but the first (which the prefill step
  // samples): Σ p + Σ (o − 1).
  const TableCost cost = table();
  NoObserver observer;
  engine::Simulator sim;
  std::vector<metrics::RequestRecord> records(20);
  Replica replica(0, config(8, 256), cost, nullptr, 1000, &records, &observer);
  int64_t tokens = 0;
  for (int32_t i = 0; i < 20; ++i) {
    add(sim, replica, records, i, 40 + 23 * i, 3 + 5 * i);
    tokens += (40 + 23 * i) + (3 + 5 * i - 1);
  }
  sim.run();
  for (const auto& r : records) REQUIRE(r.completed);
  const ReplicaStats stats = replica.stats();
  REQUIRE(stats.preemptions == 0);
  REQUIRE(static_cast<int64_t>(cost.shapes.size()) == stats.steps);
  int64_t busy_ns = 0, shape_tokens = 0;
  for (const models::BatchShape& s : cost.shapes) {
    busy_ns += cost.step(s.total_tokens()).ns();
    shape_tokens += s.total_tokens();
  }
  CHECK(stats.busy_ns == busy_ns);
  CHECK(stats.scheduled_tokens == tokens);
  CHECK(shape_tokens == tokens);
}

// The roofline with its fast path hidden: estimate() only.
class EstimateOnly : public models::CostModel {
 public:
  explicit EstimateOnly(const models::CostModel& m) : m_(m) {}
  models::StepCost estimate(const models::BatchShape& s) const override { return m_.estimate(s); }

 private:
  const models::CostModel& m_;
};

TEST_CASE("the roofline's fast path changes no result", "[replica][cost]") {
  // Llama-3.1-8B on one H100 (the roofline of the catalog's GPU, no table), 48 requests at
  // t = 0 with prompts 64 + 37·i and outputs 16 + 29·i: after the prefills, decode-only steps
  // between finishes, which the replica runs back to back from the roofline's decode series;
  // the wrapper makes it cost each of them with estimate(). Expectations: every request's first
  // and last token, token segments, and every step's end, identical to the nanosecond.
  models::Deployment d;
  d.model = models::load_model("llama-3.1-8b");
  d.gpu = hardware::load_gpu("h100-sxm");
  const models::RooflineCostModel roofline(d);
  REQUIRE(roofline.fast_path() != nullptr);
  const EstimateOnly plain(roofline);
  struct Run {
    std::vector<metrics::RequestRecord> records;
    metrics::StepLog log;
    int64_t steps = 0;
  };
  auto run = [](const models::CostModel& cost, const models::CostModel& ideal) {
    NoObserver observer;
    engine::Simulator sim;
    Run r;
    r.records.resize(48);
    Replica replica(0, config(64, 2048), cost, &ideal, 20000, &r.records, &observer);
    for (int32_t i = 0; i < 48; ++i) add(sim, replica, r.records, i, 64 + 37 * i, 16 + 29 * i);
    sim.run();
    r.steps = replica.stats().steps;
    r.log = replica.take_step_log();
    return r;
  };
  const Run fast = run(roofline, roofline);
  const Run slow = run(plain, plain);
  REQUIRE(fast.steps > 48);
  REQUIRE(fast.steps == slow.steps);
  REQUIRE(fast.log.step_end.size() == slow.log.step_end.size());
  for (size_t k = 0; k < fast.log.step_end.size(); ++k) {
    REQUIRE(fast.log.step_end[k] == slow.log.step_end[k]);
  }
  for (size_t i = 0; i < fast.records.size(); ++i) {
    const metrics::RequestRecord &a = fast.records[i], &b = slow.records[i];
    REQUIRE(a.completed);
    REQUIRE(a.first_token == b.first_token);
    REQUIRE(a.last_token == b.last_token);
    REQUIRE(a.segments.size() == b.segments.size());
    for (size_t j = 0; j < a.segments.size(); ++j) {
      REQUIRE(a.segments.begin()[j].first_step == b.segments.begin()[j].first_step);
      REQUIRE(a.segments.begin()[j].last_step == b.segments.begin()[j].last_step);
    }
  }
}

}  // namespace
}  // namespace servesim::sim
