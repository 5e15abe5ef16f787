// The knee and saturation rules of sim/planning/knee.h, on synthetic curves and runs whose answer
// is known, and the saturation rule on real simulations far below and far above capacity.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "sim/cluster/saturation.h"
#include "sim/cluster/simulation.h"
#include "sim/planning/knee.h"

namespace servesim::planning {
namespace {

using Ys = std::vector<std::optional<double>>;

std::vector<double> range_1_to(int n) {
  std::vector<double> xs;
  for (int i = 1; i <= n; ++i) xs.push_back(i);
  return xs;
}

// y = 100 ms up to x = 12, then 100 + 150·(x − 12): the knee is x = 12 by construction.
// With tolerance 1 the threshold is 2·plateau = 200; y(13) = 250 > 200 and y(14) = 400 > 200.
Ys hockey_stick(const std::vector<double>& xs) {
  Ys ys;
  for (double x : xs) ys.push_back(x <= 12 ? 100.0 : 100.0 + 150.0 * (x - 12));
  return ys;
}

TEST_CASE("knee of a hockey-stick curve is its corner", "[planning][knee]") {
  const auto xs = range_1_to(20);
  const KneeResult k = find_knee(xs, hockey_stick(xs), KneeOptions{});
  REQUIRE(k.index.has_value());
  CHECK(xs[*k.index] == 12);
  CHECK(k.left_plateau);
  CHECK(k.plateau == 100);
  CHECK(k.threshold == 200);
}

TEST_CASE("knee is stable under ±10% multiplicative noise", "[planning][knee]") {
  // Each y is multiplied by U(0.9, 1.1). Worst cases: the plateau median is at most 110, so the
  // threshold is at most 220 < the smallest noisy y(13) = 0.9·250 = 225; every plateau point is
  // at most 110 < the smallest threshold 180. So the knee is 12 for every noise draw.
  const auto xs = range_1_to(20);
  for (uint64_t seed = 0; seed < 50; ++seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0.9, 1.1);
    Ys ys = hockey_stick(xs);
    for (auto& y : ys) *y *= u(rng);
    const KneeResult k = find_knee(xs, ys, KneeOptions{});
    INFO("seed " << seed);
    REQUIRE(k.index.has_value());
    CHECK(xs[*k.index] == 12);
  }
}

TEST_CASE("one isolated spike is not a knee, a persistent rise is", "[planning][knee]") {
  // y(5) = 300 > 200 but y(6) is back on the plateau: the two-in-a-row rule ignores it.
  const auto xs = range_1_to(20);
  Ys ys = hockey_stick(xs);
  ys[4] = 300.0;
  KneeResult k = find_knee(xs, ys, KneeOptions{});
  REQUIRE(k.index.has_value());
  CHECK(xs[*k.index] == 12);
  // Two spikes in a row (x = 5, 6) end the plateau: knee = 4.
  ys[5] = 300.0;
  k = find_knee(xs, ys, KneeOptions{});
  REQUIRE(k.index.has_value());
  CHECK(xs[*k.index] == 4);
}

TEST_CASE("tolerance moves the knee along a convex curve", "[planning][knee]") {
  // y = 10 / (1 − x/10) (an M/M/1-like curve), x = 1..9: n = 9 ⇒ m = min(3, ⌊9/4⌋) = 2 plateau
  // points ⇒ P = (y1 + y2)/2 = (11.1111 + 12.5)/2 = 11.8056.
  // tolerance 1 ⇒ threshold 23.611 ⇒ y ≤ 23.611 ⟺ 1 − x/10 ≥ 0.42353 ⟺ x ≤ 5.76 ⇒ knee 5.
  // tolerance 0.5 ⇒ threshold 17.708 ⇒ 1 − x/10 ≥ 0.56471 ⟺ x ≤ 4.35 ⇒ knee 4.
  // tolerance 3 ⇒ threshold 47.22 ⇒ 1 − x/10 ≥ 0.21176 ⟺ x ≤ 7.88 ⇒ knee 7.
  std::vector<double> xs;
  Ys ys;
  for (int x = 1; x <= 9; ++x) {
    xs.push_back(x);
    ys.push_back(10.0 / (1 - x / 10.0));
  }
  KneeOptions o;
  CHECK(xs[*find_knee(xs, ys, o).index] == 5);
  o.tolerance = 0.5;
  CHECK(xs[*find_knee(xs, ys, o).index] == 4);
  o.tolerance = 3;
  CHECK(xs[*find_knee(xs, ys, o).index] == 7);
}

TEST_CASE("saturated points count as above the threshold", "[planning][knee]") {
  // Flat to x = 15, saturated from 16 on (the last point): knee 15.
  const auto xs = range_1_to(16);
  Ys ys(16, 50.0);
  ys[15] = std::nullopt;
  KneeResult k = find_knee(xs, ys, KneeOptions{});
  REQUIRE(k.index.has_value());
  CHECK(*k.index == 14);
  CHECK(k.left_plateau);
  // Never leaves: the knee is the last point, beyond-range flag.
  ys[15] = 55.0;
  k = find_knee(xs, ys, KneeOptions{});
  CHECK(*k.index == 15);
  CHECK_FALSE(k.left_plateau);
  // Two points, the second saturated: the plateau is the first point alone, the knee is x = 1.
  k = find_knee({1, 2}, {50.0, std::nullopt}, KneeOptions{});
  REQUIRE(k.index.has_value());
  CHECK(*k.index == 0);
  CHECK(k.plateau == 50);
  // Saturated at the lowest value: no plateau, no knee.
  k = find_knee({1, 2}, {std::nullopt, std::nullopt}, KneeOptions{});
  CHECK_FALSE(k.index.has_value());
  CHECK(std::isnan(k.plateau));
}

// Synthetic open-loop runs: n requests sent every 1/λ s into one FIFO server with a fixed service
// time S; the first token comes S/2 after service starts, the last at its end. A deterministic
// queue: stable iff S < 1/λ, and the backlog grows by (λ − 1/S)·t when S > 1/λ.
std::vector<metrics::RequestRecord> fifo_run(int n, double rate, double service_s) {
  std::vector<metrics::RequestRecord> recs(static_cast<size_t>(n));
  double free_at = 0;
  for (int i = 0; i < n; ++i) {
    const double send = i / rate;
    const double start = std::max(send, free_at);
    free_at = start + service_s;
    auto& r = recs[size_t(i)];
    r.id = i;
    r.completed = true;
    r.output_tokens = 2;
    r.arrival = SimTime::from_seconds_ceil(send);
    r.first_token = SimTime::from_seconds_ceil(start + service_s / 2);
    r.last_token = SimTime::from_seconds_ceil(free_at);
  }
  return recs;
}

TEST_CASE("saturation rule on synthetic FIFO runs", "[planning][saturation]") {
  SECTION("stable: service 0.09 s at λ = 10/s (ρ = 0.9) ⇒ no queue, r ≈ 1, g = 1") {
    const SaturationCheck c = check_saturation(fifo_run(400, 10, 0.09), SaturationOptions{});
    CHECK(c.applicable);
    CHECK_FALSE(c.saturated);
    CHECK_THAT(c.offered_rate, Catch::Matchers::WithinRel(10.0, 1e-6));
    CHECK(c.throughput_ratio > 0.99);
    CHECK_THAT(c.latency_growth, Catch::Matchers::WithinRel(1.0, 1e-6));
  }
  SECTION("overloaded: service 0.2 s (μ = 5/s) at λ = 10/s ⇒ r ≈ μ/λ = 0.5, g ≈ 7/3") {
    // Request i waits ≈ i·(0.2 − 0.1) s; the quarter medians sit at i ≈ 3n/8 and 7n/8, so
    // g ≈ (7/8)/(3/8) ≈ 2.33 (a little less: the constant S/2 in the TTFT).
    const SaturationCheck c = check_saturation(fifo_run(400, 10, 0.2), SaturationOptions{});
    CHECK(c.saturated);
    CHECK_THAT(c.throughput_ratio, Catch::Matchers::WithinAbs(0.5, 0.01));
    CHECK(c.latency_growth > 2.0);
    CHECK(c.latency_growth < 7.0 / 3.0);
  }
  SECTION("all requests at t = 0 (rate inf): no arrival window, never saturated") {
    auto recs = fifo_run(50, 1e30, 0.1);
    for (auto& r : recs) r.arrival = SimTime::from_ns(0);
    const SaturationCheck c = check_saturation(recs, SaturationOptions{});
    CHECK_FALSE(c.applicable);
    CHECK_FALSE(c.saturated);
  }
}

TEST_CASE("simulate's overload warning covers a trace replayed at its recorded times",
          "[planning][saturation]") {
  // No --request-rate (a trace): the offered rate is (n - 1) / send span = 10/s from the records.
  sim::SimulationConfig cfg;
  cfg.workload.request_rate = std::numeric_limits<double>::infinity();
  sim::SimulationResult overloaded;
  overloaded.records = fifo_run(400, 10, 0.2);  // mu = 5/s: the queue grows by 5 requests/s
  overloaded.metrics.request_throughput = 5;
  const sim::SaturationCheck c = sim::check_saturation(cfg, overloaded);
  CHECK(c.applicable);
  CHECK(c.saturated);
  CHECK_THAT(c.offered_rps, Catch::Matchers::WithinRel(10.0, 1e-6));
  sim::SimulationResult stable;
  stable.records = fifo_run(400, 10, 0.09);
  CHECK_FALSE(sim::check_saturation(cfg, stable).saturated);
  // Every request at t = 0 (--request-rate inf): no send span, no verdict.
  for (auto& r : overloaded.records) r.arrival = SimTime::from_ns(0);
  CHECK_FALSE(sim::check_saturation(cfg, overloaded).applicable);
}

TEST_CASE("saturation rule on real runs far below and far above capacity",
          "[planning][saturation]") {
  // llama-3.1-8b on one H100, 1024 in / 128 out: the engine sustains about 31 req/s (see
  // docs/sweeps.md). 5 req/s is far below (ρ ≈ 0.16) and 100 req/s is 3x above.
  sim::SimulationConfig cfg;
  cfg.workload.num_prompts = 1000;
  const sim::PreparedDeployment prepared = sim::prepare_deployment(cfg);
  cfg.workload.request_rate = 5;
  const SaturationCheck low = check_saturation(sim::run_simulation(cfg, prepared).records, {});
  CHECK(low.applicable);
  CHECK_FALSE(low.saturated);
  CHECK(low.throughput_ratio > 0.95);
  cfg.workload.request_rate = 100;
  const SaturationCheck high = check_saturation(sim::run_simulation(cfg, prepared).records, {});
  CHECK(high.saturated);
  CHECK(high.throughput_ratio < 0.5);  // ≈ 31/100
  CHECK(high.latency_growth > 1.25);
}

}  // namespace
}  // namespace servesim::planning
