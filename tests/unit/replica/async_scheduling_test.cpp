// Async scheduling (sim/replica/replica.h): the step period is max(device, host) instead of their
// sum, and a request that finishes in step k still takes a seat and a token of step k+1.
//
// The cost model gives every non-empty step a constant device time G and host time H, both
// multiples of 2^-10 s so that G, H, G + H and max(G, H) convert to integer nanoseconds exactly.
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "sim/engine/simulator.h"
#include "sim/replica/replica.h"

namespace servesim::sim {
namespace {

class ConstantCost : public models::CostModel {
 public:
  ConstantCost(double device_s, double host_s) : device_s_(device_s), host_s_(host_s) {}
  models::StepCost estimate(const models::BatchShape& s) const override {
    models::StepCost c;
    if (s.empty()) return c;
    c.linear_s = device_s_;
    c.host_s = host_s_;
    c.total_s = device_s_ + host_s_;
    return c;
  }

 private:
  double device_s_, host_s_;
};

class Counter : public RequestObserver {
 public:
  void on_request_done(engine::Simulator&, int64_t) override {}
};

struct Run {
  std::vector<metrics::RequestRecord> records;
  metrics::StepLog log;
};

// Requests (prompt, output) all arriving at t = 0 on a replica with the given seats and mode.
Run run(double g, double h, int async, int max_num_seqs,
        const std::vector<std::pair<int, int>>& requests) {
  ConstantCost cost(g, h);
  Counter observer;
  engine::Simulator sim;
  Run out;
  out.records.resize(requests.size());
  EngineConfig cfg;
  cfg.max_num_seqs = max_num_seqs;
  cfg.max_num_batched_tokens = 4096;
  cfg.max_model_len = 1 << 20;
  cfg.async_scheduling = async;
  Replica replica(0, cfg, cost, nullptr, 10000, &out.records, &observer);
  for (size_t i = 0; i < requests.size(); ++i) {
    workloads::RequestSpec spec;
    spec.id = static_cast<int64_t>(i);
    spec.prompt_tokens = requests[i].first;
    spec.output_tokens = requests[i].second;
    out.records[i].id = spec.id;
    out.records[i].prompt_tokens = spec.prompt_tokens;
    out.records[i].output_tokens = spec.output_tokens;
    replica.add_request(sim, spec);
  }
  sim.run();
  out.log = replica.step_log();
  return out;
}

constexpr double kUnit = 1.0 / 1024;  // s

TEST_CASE("async scheduling: constant GPU time G and host time H give a period of max(G, H)",
          "[replica][async]") {
  // One request, 100-token prompt, 40 output tokens: step 0 prefills, steps 1..39 decode.
  // Sync: every step takes G + H. Async: step 0 starts from idle (nothing to overlap) and takes
  // G + H; every later step starts as the previous ends and takes exactly max(G, H) — one more
  // step (the finished request's placeholder) runs after the last token.
  for (auto [g, h] : {std::pair{2 * kUnit, 5 * kUnit}, std::pair{5 * kUnit, 2 * kUnit},
                      std::pair{3 * kUnit, 3 * kUnit}, std::pair{4 * kUnit, 0.0}}) {
    INFO("G " << g << " H " << h);
    const SimTime sum = SimTime::from_seconds_ceil(g + h);
    const SimTime period = SimTime::from_seconds_ceil(std::max(g, h));
    const Run sync = run(g, h, 0, 8, {{100, 40}});
    REQUIRE(sync.log.step_end.size() == 40);
    REQUIRE(sync.log.step_end[0] == sum);
    for (size_t k = 1; k < sync.log.step_end.size(); ++k) {
      REQUIRE(sync.log.step_end[k] - sync.log.step_end[k - 1] == sum);
    }
    REQUIRE(sync.records[0].last_token == sync.log.step_end[39]);

    const Run async = run(g, h, 1, 8, {{100, 40}});
    REQUIRE(async.log.step_end.size() == 41);  // + the placeholder step
    REQUIRE(async.log.step_end[0] == sum);
    for (size_t k = 1; k < async.log.step_end.size(); ++k) {
      REQUIRE(async.log.step_end[k] - async.log.step_end[k - 1] == period);
    }
    REQUIRE(async.records[0].first_token == sum);
    REQUIRE(async.records[0].last_token == sum + SimTime::from_ns(period.ns() * 39));
  }
}

TEST_CASE("async scheduling: a finished request holds its seat for one more step",
          "[replica][async]") {
  // max_num_seqs = 1; A (10 prompt, 2 output) and B (10 prompt, 1 output) arrive together.
  // Sync: step 0 prefills A, step 1 decodes A (A done), step 2 prefills B: B's first token at
  // the end of step 2. Async: A rides along in step 2 as a placeholder and takes the only seat,
  // so B is admitted in step 3.
  const double g = 1 * kUnit, h = 0.0;
  const Run sync = run(g, h, 0, 1, {{10, 2}, {10, 1}});
  REQUIRE(sync.records[1].first_token == sync.log.step_end[2]);
  REQUIRE(sync.log.step_end.size() == 3);
  const Run async = run(g, h, 1, 1, {{10, 2}, {10, 1}});
  REQUIRE(async.records[0].last_token == async.log.step_end[1]);
  REQUIRE(async.records[1].first_token == async.log.step_end[3]);
  REQUIRE(async.log.step_end.size() == 5);  // B's placeholder step too
}

TEST_CASE("async scheduling with no host time and no finishing request changes nothing",
          "[replica][async]") {
  // H = 0: max(G, 0) = G + 0, so every token time is the synchronous one; only the trailing
  // placeholder step is added.
  const Run sync = run(3 * kUnit, 0.0, 0, 4, {{50, 20}, {70, 30}, {20, 25}});
  const Run async = run(3 * kUnit, 0.0, 1, 4, {{50, 20}, {70, 30}, {20, 25}});
  for (size_t i = 0; i < 3; ++i) {
    REQUIRE(async.records[i].first_token == sync.records[i].first_token);
  }
  // Requests that finish before the last one leave a placeholder behind, but there are 4 seats
  // and budget to spare, so nobody is delayed.
  for (size_t i = 0; i < 3; ++i) REQUIRE(async.records[i].last_token == sync.records[i].last_token);
}

}  // namespace
}  // namespace servesim::sim
