// The API-server front end (sim/cluster/front_end.h) against queueing closed forms.
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "sim/cluster/front_end.h"
#include "sim/cluster/simulation.h"
#include "sim/engine/simulator.h"
#include "workloads/workload.h"

namespace servesim::sim {
namespace {

// A negligible engine behind the front end: 1 µs per step.
class TinyCost : public models::CostModel {
 public:
  models::StepCost estimate(const models::BatchShape& s) const override {
    models::StepCost c;
    if (s.empty()) return c;
    c.overhead_s = 1e-6;
    c.total_s = 1e-6;
    return c;
  }
};

class Sink : public RequestObserver {
 public:
  void on_request_done(engine::Simulator&, int64_t) override {}
};

// Sends request i to the front end at times[i].
class Driver : public engine::EventHandler {
 public:
  Driver(FrontEnd& fe, std::vector<double> times, int32_t prompt, int32_t output)
      : fe_(fe), times_(std::move(times)), prompt_(prompt), output_(output) {}
  void start(engine::Simulator& sim) {
    sim.schedule_at(SimTime::from_seconds_ceil(times_[0]), this, 0);
  }
  void on_event(engine::Simulator& sim, int64_t) override {
    workloads::RequestSpec spec;
    spec.id = next_;
    spec.prompt_tokens = prompt_;
    spec.output_tokens = output_;
    fe_.send(sim, spec);
    if (++next_ < static_cast<int64_t>(times_.size())) {
      sim.schedule_at(SimTime::from_seconds_ceil(times_[static_cast<size_t>(next_)]), this, 0);
    }
  }

 private:
  FrontEnd& fe_;
  std::vector<double> times_;
  int32_t prompt_, output_;
  int64_t next_ = 0;
};

struct QueueResult {
  double mean_wait_s;
  double service_s;
};

QueueResult run_front_end(const FrontEndCosts& costs, int32_t prompt, int32_t output, double rho,
                          int64_t n) {
  const double service = costs.service_s(prompt, output);
  const double rate = rho / service;
  TinyCost cost;
  Sink sink;
  engine::Simulator sim;
  std::vector<metrics::RequestRecord> records(static_cast<size_t>(n));
  EngineConfig cfg;
  cfg.max_num_seqs = 1024;
  cfg.max_num_batched_tokens = 1 << 20;
  cfg.max_model_len = 1 << 20;
  Replica replica(0, cfg, cost, nullptr, 1 << 22, &records, &sink);
  FrontEnd fe(costs, &replica);
  Driver driver(fe, workloads::arrival_times_s(n, rate, 1.0, "poisson", 7), prompt, output);
  driver.start(sim);
  sim.run();
  REQUIRE(fe.served() == n);
  return {double(fe.total_wait_ns()) * 1e-9 / double(n), service};
}

TEST_CASE("front end: Poisson arrivals and equal lengths give the M/D/1 mean wait",
          "[fidelity][frontend][slow]") {
  // In details: S = 0.4 ms + 0.5 µs · 1000 prompt + 0.5 µs · 200 output = 1.0 ms per request, one
  // FIFO server, Poisson arrivals at λ = ρ/S. Pollaczek–Khinchine for deterministic service:
  // W = ρ·S / (2(1 − ρ)).
  // Tolerances: 200k requests, as the replica's M/D/1 test: the sample mean wait has a relative
  // standard error below 1% at ρ = 0.5 and below 2% at ρ = 0.7 (batch means), so 3% and 6% are
  // 3-sigma bounds.
  FrontEndCosts costs;
  costs.per_request_s = 0.4e-3;
  costs.per_prompt_token_s = 0.5e-6;
  costs.per_output_token_s = 0.5e-6;
  for (auto [rho, tol] : {std::pair{0.5, 0.03}, std::pair{0.7, 0.06}}) {
    const QueueResult q = run_front_end(costs, 1000, 200, rho, 200000);
    REQUIRE(q.service_s == Approx(1.0e-3).epsilon(1e-12));
    const double w = rho * q.service_s / (2 * (1 - rho));
    INFO("rho " << rho);
    REQUIRE(q.mean_wait_s == Approx(w).epsilon(tol));
  }
}

TEST_CASE("front end: a burst of N requests waits 0, S, 2S, ... (D/D/1)", "[fidelity][frontend]") {
  // All N requests at t = 0: request i starts service at i·S, so the mean wait is S(N − 1)/2
  // exactly (S is a whole number of ns here) — the TTFT collapse of --request-rate inf.
  FrontEndCosts costs;
  costs.per_request_s = 1e-3;
  costs.per_prompt_token_s = 1e-6;
  const int64_t n = 200;
  TinyCost cost;
  Sink sink;
  engine::Simulator sim;
  std::vector<metrics::RequestRecord> records(n);
  EngineConfig cfg;
  cfg.max_num_seqs = 1024;
  cfg.max_num_batched_tokens = 1 << 20;
  cfg.max_model_len = 1 << 20;
  Replica replica(0, cfg, cost, nullptr, 1 << 22, &records, &sink);
  FrontEnd fe(costs, &replica);
  Driver driver(fe, std::vector<double>(n, 0.0), 1000, 10);
  driver.start(sim);
  sim.run();
  REQUIRE(fe.served() == n);
  REQUIRE(fe.total_wait_ns() == 2'000'000LL * n * (n - 1) / 2);
  REQUIRE(fe.busy_ns() == 2'000'000LL * n);
}

TEST_CASE("front end with zero costs is not there: results identical to a run without it",
          "[fidelity][frontend]") {
  SimulationConfig c;
  c.calibration = "none";
  c.workload.num_prompts = 300;
  c.workload.request_rate = 20;
  const PreparedDeployment p = prepare_deployment(c);
  REQUIRE(p.frontend.empty());
  const SimulationResult a = run_simulation(c, p);
  // Explicit zero costs take the same path.
  std::unique_ptr<workloads::Workload> w = workloads::make_workload(resolved_workload(c));
  const FrontEndCosts zero;
  const SimulationResult b = run_simulation(c, p, *w, nullptr, &zero);
  REQUIRE(a.events == b.events);
  for (size_t i = 0; i < a.records.size(); ++i) {
    REQUIRE(a.records[i].first_token == b.records[i].first_token);
    REQUIRE(a.records[i].last_token == b.records[i].last_token);
  }
  // Non-zero costs delay every request's first token by at least its own service time.
  FrontEndCosts some;
  some.per_request_s = 2e-3;
  std::unique_ptr<workloads::Workload> w2 = workloads::make_workload(resolved_workload(c));
  const SimulationResult d = run_simulation(c, p, *w2, nullptr, &some);
  for (size_t i = 0; i < a.records.size(); ++i) {
    REQUIRE(d.records[i].first_token - d.records[i].arrival >= SimTime::from_ns(2'000'000));
  }
}

}  // namespace
}  // namespace servesim::sim
