// Queueing fidelity: k replicas behind join-shortest-queue with batching off (max-num-seqs 1) form
// a k-server queue; with Poisson arrivals and (nearly) exponential service times the mean waiting
// time must match Erlang C (M/M/k) within the run's statistical error.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/base/rng.h"
#include "sim/cluster/simulation.h"
#include "workloads/trace_workload.h"

namespace servesim::sim {
namespace {

// Erlang C: probability that an arrival waits, for k servers at offered load a = λ/μ (< k).
double erlang_c(int k, double a) {
  double term = 1, sum = 1;  // Σ_{n<k} a^n/n!, built term by term
  for (int n = 1; n < k; ++n) {
    term *= a / n;
    sum += term;
  }
  const double top = term * a / k / (1 - a / k);  // a^k/k! · 1/(1-ρ)
  return top / (sum + top);
}

SimulationConfig queue_config(int replicas) {
  SimulationConfig c;
  c.num_replicas = replicas;
  c.router = "least-outstanding";  // join the shortest queue (outstanding = waiting + running)
  c.engine.max_num_seqs = 1;       // batching off: a replica serves one request at a time
  c.engine.enable_prefix_caching = false;
  // Synchronous engine: with async scheduling a finished request keeps its seat one more step,
  // which lengthens the service time this closed form assumes (docs/semantics.md).
  c.engine.async_scheduling = 0;
  c.calibration = "none";  // no client overhead: TTFT is queueing + the first step
  return c;
}

TEST_CASE("k replicas, join-shortest-queue, no batching: mean wait matches Erlang C (M/M/k)",
          "[fidelity][queueing]") {
  // Model: 1-token prompts and geometric output lengths O (mean m = 40) make a request's service
  // time S = t1 + (O-1)·t_d, with t1 the first (prefill) step and t_d a decode step at batch 1:
  // nearly exponential (geometric with CV² = 1 - 1/m = 0.975; the context grows by at most a few
  // hundred tokens, which changes t_d by far less than 1%). Arrivals are Poisson at rate λ with
  // ρ = λ/(kμ) = 0.7, k = 3, μ = 1/E[S] measured from the run itself.
  // Expectation: mean waiting time W = TTFT − t1 equals Erlang C's E[Wq] = C(k, λ/μ)/(kμ − λ)
  // within 3 standard errors of the run's mean (batch means over 20 consecutive blocks), plus 3%
  // for the service-time CV² (Allen–Cunneen: W scales with (1 + CV²)/2 = 0.99) and for JSQ's
  // per-replica queues (a request can wait at one replica while another frees first).
  // Measured (seed 7): mean wait 0.170 s against Erlang C 0.142 s, SE 0.010 s: 2.75 SE above.
  // The sign is JSQ's (per-replica queues wait longer than M/M/k's one shared queue); the check
  // bounds the gap, it does not claim JSQ equals M/M/k.
  const int k = 3;
  const double rho = 0.7;
  const int n = 20000;
  const double mean_out = 40;

  // t1 and t_d: one request of 1 + 2 tokens on an idle replica.
  SimulationConfig one = queue_config(1);
  one.workload.num_prompts = 1;
  one.workload.random_input_len = 1;
  one.workload.random_output_len = 2;
  const PreparedDeployment p1 = prepare_deployment(one);
  const SimulationResult r1 = run_simulation(one, p1);
  const double t1 = (r1.records[0].first_token - r1.records[0].arrival).seconds();
  const double td = (r1.records[0].last_token - r1.records[0].first_token).seconds();
  REQUIRE(t1 > 0);
  REQUIRE(td > 0);

  const double mean_service = t1 + (mean_out - 1) * td;
  const double lambda = rho * k / mean_service;
  RngStream rng(7, "erlang-c-test");
  std::vector<workloads::RequestSpec> specs;
  double t = 0;
  for (int i = 0; i < n; ++i) {
    t += rng.exponential(1 / lambda);
    workloads::RequestSpec s;
    s.arrival = SimTime::from_seconds_ceil(t);
    s.prompt_tokens = 1;
    // Geometric on {1, 2, ...} with mean m: ceil(log(U) / log(1 - 1/m)).
    s.output_tokens = static_cast<int32_t>(
        std::max(1.0, std::ceil(std::log(rng.uniform01_open0()) / std::log(1 - 1 / mean_out))));
    specs.push_back(s);
  }
  SimulationConfig c = queue_config(k);
  c.workload.num_prompts = n;
  const PreparedDeployment p = prepare_deployment(c);
  workloads::TraceWorkload trace(specs);
  const SimulationResult r = run_simulation(c, p, trace);

  std::vector<std::pair<int64_t, double>> waits;  // (arrival, wait) to batch in arrival order
  double service_sum = 0;
  for (const auto& rec : r.records) {
    REQUIRE(rec.completed);
    waits.emplace_back(rec.arrival.ns(), (rec.first_token - rec.arrival).seconds() - t1);
    service_sum += t1 + (rec.last_token - rec.first_token).seconds();
  }
  std::sort(waits.begin(), waits.end());
  const double mu = 1 / (service_sum / n);
  const double a = lambda / mu;
  const double expected = erlang_c(k, a) / (k * mu - lambda);

  const int batches = 20;
  std::vector<double> means(batches, 0);
  for (int i = 0; i < n; ++i) means[static_cast<size_t>(i * batches / n)] += waits[i].second;
  double mean = 0;
  for (double& m : means) {
    m /= (n / batches);
    mean += m / batches;
  }
  double var = 0;
  for (double m : means) var += (m - mean) * (m - mean) / (batches - 1);
  const double se = std::sqrt(var / batches);
  INFO("simulated mean wait " << mean << " s, Erlang C " << expected << " s, SE " << se
                              << " s, rho " << a / k);
  CHECK(a / k == Approx(rho).epsilon(0.05));
  CHECK(std::fabs(mean - expected) <= 3 * se + 0.03 * expected);
}

}  // namespace
}  // namespace servesim::sim
