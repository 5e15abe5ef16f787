// The per-request distribution tests of validate: Kolmogorov–Smirnov's D and asymptotic p-value,
// Welch TOST of the means at ±10 %, and the per-request values they compare (pooled over seeds,
// the same values the prediction's summaries come from).
#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>
#include <vector>

#include "sim/app/run_config.h"
#include "sim/cluster/simulation.h"
#include "sim/measured/distribution_tests.h"
#include "sim/measured/latency_samples.h"
#include "sim/measured/replay.h"
#include "sim/measured/validation.h"

namespace servesim::measured {
namespace {

std::vector<double> iota(int n, double start) {
  std::vector<double> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), start);
  return v;
}

// {90, 110} repeated n/2 times: mean 100, sample variance 100·n/(n − 1).
std::vector<double> two_point(int n, double shift = 0) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back((i % 2 ? 110.0 : 90.0) + shift);
  return v;
}

double mean(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
}

TEST_CASE("kolmogorov_q: the limiting distribution's table values, both series", "[measured]") {
  // Smirnov's critical values of √n·D: 1.2238 (α 0.10), 1.3581 (0.05), 1.6276 (0.01); Q(1) and
  // Q(0.5) from the series (also scipy.stats.kstwobign.sf: 0.26999967, 0.96394524).
  CHECK(kolmogorov_q(1.2238) == Approx(0.10).margin(1e-4));
  CHECK(kolmogorov_q(1.3581) == Approx(0.05).margin(1e-4));
  CHECK(kolmogorov_q(1.6276) == Approx(0.01).margin(1e-5));
  CHECK(kolmogorov_q(1.0) == Approx(0.26999967).margin(1e-7));
  CHECK(kolmogorov_q(0.5) == Approx(0.96394524).margin(1e-7));
  // Large λ: the first term, 2·exp(−2λ²), is all that is left.
  CHECK(kolmogorov_q(5.0) == Approx(2 * std::exp(-50.0)).epsilon(1e-12));
  // The two series meet at the switch (λ = 1.18).
  CHECK(kolmogorov_q(1.18 - 1e-9) == Approx(kolmogorov_q(1.18 + 1e-9)).margin(1e-8));
  CHECK(kolmogorov_q(0.0) == 1.0);
  CHECK(kolmogorov_q(0.1) == Approx(1.0).margin(1e-12));
}

TEST_CASE("ks_two_sample: identical D = 0, disjoint D = 1, ties and a shift exact", "[measured]") {
  const KsResult same = ks_two_sample(iota(50, 0), iota(50, 0));
  CHECK(same.d == 0.0);
  CHECK(same.p_value == 1.0);

  // Disjoint: D = 1, p = Q(√(n·m/(n + m))) = Q(5) for n = m = 50.
  const KsResult apart = ks_two_sample(iota(50, 0), iota(50, 100));
  CHECK(apart.d == 1.0);
  CHECK(apart.p_value == Approx(2 * std::exp(-50.0)).epsilon(1e-12));
  CHECK(ks_two_sample(iota(50, 100), iota(50, 0)).d == 1.0);  // symmetric

  // 0..9 against 0.5..9.5: after each value of the first, it leads by 1/10.
  const KsResult shift = ks_two_sample(iota(10, 0), iota(10, 0.5));
  CHECK(shift.d == Approx(0.1).epsilon(1e-15));
  CHECK(shift.p_value == Approx(kolmogorov_q(std::sqrt(5.0) * 0.1)).epsilon(1e-15));

  // Ties are stepped together: {1, 1, 2} vs {1, 2, 2}: at 1 the CDFs are 2/3 and 1/3.
  CHECK(ks_two_sample({1, 1, 2}, {1, 2, 2}).d == Approx(1.0 / 3).epsilon(1e-15));
  // Unequal sizes: {1, 2} vs {1, 1, 1, 2}: at 1, 1/2 against 3/4.
  CHECK(ks_two_sample({2, 1}, {1, 1, 2, 1}).d == Approx(0.25).epsilon(1e-15));
}

TEST_CASE("tost_means: Welch t at ±10 % of the measured mean", "[measured]") {
  SECTION("equal means (0 %): equivalent, both p from t = ±δ/se with df = 2(n − 1)") {
    const auto x = two_point(200);
    const TostResult r = tost_means(x, x, 0.10, 0.05);
    const double se = std::sqrt(2 * (100.0 * 200 / 199) / 200);
    CHECK(r.mean_measured == Approx(100));
    CHECK(r.margin == Approx(10));
    CHECK(r.df == Approx(398).epsilon(1e-12));  // equal variances and sizes
    CHECK(r.t_lower == Approx(10 / se).epsilon(1e-12));
    CHECK(r.t_upper == Approx(-10 / se).epsilon(1e-12));
    CHECK(r.p_lower == Approx(r.p_upper).epsilon(1e-9));
    CHECK(r.p_lower < 1e-15);  // t ≈ 9.97 at 398 df (scipy: 2.3e-21)
    CHECK(r.equivalent);
  }
  SECTION("5 % apart on 10 values: the upper test fails (Student's t, 18 df)") {
    // d = 5, δ = 10, se = √(2·111.1/10) = 4.714: t⁻ = 3.182, t⁺ = −1.061.
    // T₁₈: sf(3.182) = 0.0025815, cdf(−1.0607) = 0.151435 (scipy.stats.t; tables: t₀.₀₂₅,₁₈ =
    // 2.101, t₀.₀₀₅,₁₈ = 2.878).
    const TostResult r = tost_means(two_point(10), two_point(10, 5), 0.10, 0.05);
    CHECK(r.df == Approx(18).epsilon(1e-12));
    CHECK(r.t_lower == Approx(3.181980515).epsilon(1e-9));
    CHECK(r.t_upper == Approx(-1.060660172).epsilon(1e-9));
    CHECK(r.p_lower == Approx(0.0025814628).epsilon(1e-6));
    CHECK(r.p_upper == Approx(0.1514348362).epsilon(1e-6));
    CHECK_FALSE(r.equivalent);
  }
  SECTION("20 % apart: not equivalent, whichever side is higher") {
    auto y = two_point(200);
    for (double& v : y) v *= 1.2;
    const TostResult hi = tost_means(two_point(200), y, 0.10, 0.05);
    CHECK(hi.mean_simulated == Approx(120));
    CHECK(hi.p_upper > 0.999);
    CHECK(hi.p_lower < 1e-15);
    CHECK_FALSE(hi.equivalent);
    for (double& v : y) v *= 0.8 / 1.2;  // 20 % low
    const TostResult lo = tost_means(two_point(200), y, 0.10, 0.05);
    CHECK(lo.p_lower > 0.999);
    CHECK_FALSE(lo.equivalent);
  }
  SECTION("constant samples: the difference is exact") {
    const std::vector<double> a(5, 100.0), b(5, 105.0), c(5, 120.0);
    CHECK(tost_means(a, b, 0.10, 0.05).equivalent);
    CHECK(std::isnan(tost_means(a, b, 0.10, 0.05).df));
    CHECK_FALSE(tost_means(a, c, 0.10, 0.05).equivalent);
  }
}

TEST_CASE("distribution_tests: only the metrics both sides have, in report order", "[measured]") {
  LatencySamples m, s;
  m.ttft_ms = two_point(20);
  m.e2el_ms = two_point(20, 1000);
  m.itl_ms = {5.0};  // one value: no test
  s.ttft_ms = two_point(60);
  s.e2el_ms = two_point(60, 1000);
  s.itl_ms = two_point(60);
  s.tpot_ms = two_point(60);
  const auto tests = distribution_tests(m, s);
  REQUIRE(tests.size() == 2);
  CHECK(tests[0].metric == "ttft");
  CHECK(tests[1].metric == "e2el");
  CHECK(tests[0].measured_n == 20);
  CHECK(tests[0].simulated_n == 60);
  CHECK(tests[0].ks.d == 0.0);
  CHECK_FALSE(tests[0].ks_differ);
  CHECK(tests[0].tost.equivalent);
  CHECK(distribution_tests(LatencySamples{}, s).empty());
}

// A small run with send times, lengths and per-request TTFT/E2E, as a result file gives them.
MeasuredRun measured_run(bool poisson) {
  MeasuredRun r;
  r.id = r.path = "synthetic";
  r.format = "test";
  r.deployment.set("model", "llama-3.1-8b", "test");
  r.deployment.set("gpu", "h100-sxm", "test");
  r.deployment.set("tensor_parallel_size", 1, "test");
  for (int i = 0; i < 30; ++i) {
    MeasuredRequest q;
    q.start_s = 0.1 * i;
    q.input_tokens = 200 + 10 * i;
    q.output_tokens = 20 + i;
    q.ttft_s = 0.030 + 0.001 * i;
    q.e2e_s = q.ttft_s + 0.008 * (q.output_tokens - 1);
    r.requests.push_back(q);
  }
  r.has_start_times = !poisson;
  r.num_prompts = 30;
  r.request_rate = 10;
  fill_metrics_from_requests(r);
  return r;
}

TEST_CASE("replay samples: pooled over seeds, their means are the prediction's means",
          "[measured]") {
  const MeasuredRun run = measured_run(/*poisson=*/true);
  sim::SimulationConfig cfg = simulation_config(run, app::apply_config_json);
  cfg.calibration = "none";
  ReplayOptions opts;
  opts.seeds = 3;
  opts.request_samples = true;
  const Prediction p = simulate_measured_run(run, cfg, Calibration{}, opts);
  // Every seed replays the same 30 requests: the pooled mean is the mean of the seeds' means,
  // which is what the prediction reports.
  REQUIRE(p.samples.ttft_ms.size() == 90);
  CHECK(p.samples.e2el_ms.size() == 90);
  CHECK(p.samples.tpot_ms.size() == 90);  // every output > 1
  CHECK(mean(p.samples.ttft_ms) == Approx(p.metrics.at("mean_ttft_ms")).epsilon(1e-9));
  CHECK(mean(p.samples.tpot_ms) == Approx(p.metrics.at("mean_tpot_ms")).epsilon(1e-9));
  CHECK(mean(p.samples.e2el_ms) == Approx(p.metrics.at("mean_e2el_ms")).epsilon(1e-9));
  // ITL: every gap of every request, Σ(output − 1) per seed, mean = the pooled ITL mean.
  int gaps = 0;
  for (const auto& q : run.requests) gaps += q.output_tokens - 1;
  CHECK(p.samples.itl_ms.size() == static_cast<std::size_t>(3 * gaps));
  CHECK(mean(p.samples.itl_ms) == Approx(p.metrics.at("mean_itl_ms")).epsilon(1e-6));
  // A client TTFT offset moves every TTFT and E2E by exactly that much, as in the prediction.
  Calibration offset;
  offset.source = "test";
  offset.ttft_offset_s = 0.05;
  const Prediction q = simulate_measured_run(run, cfg, offset, opts);
  CHECK(mean(q.samples.ttft_ms) == Approx(mean(p.samples.ttft_ms) + 50).epsilon(1e-9));
  CHECK(mean(q.samples.ttft_ms) == Approx(q.metrics.at("mean_ttft_ms")).epsilon(1e-9));
  // Without the option nothing is kept.
  opts.request_samples = false;
  CHECK(simulate_measured_run(run, cfg, Calibration{}, opts).samples.ttft_ms.empty());
}

TEST_CASE("validate_runs: distribution tests where the file has per-request values, else none",
          "[measured]") {
  MeasuredRun timed = measured_run(/*poisson=*/false);
  MeasuredRun summary_only = timed;
  summary_only.id = "summary-only";
  for (auto& q : summary_only.requests) q.ttft_s = q.e2e_s = kUnknown;
  std::vector<MeasuredRun> runs = {timed, summary_only};
  std::vector<sim::SimulationConfig> configs;
  for (const auto& r : runs) {
    configs.push_back(simulation_config(r, app::apply_config_json));
    configs.back().calibration = "none";
  }
  ReplayOptions opts;
  opts.request_samples = true;
  const ValidationTable t = validate_runs(runs, configs, Calibration{}, opts, 1);
  REQUIRE(t.runs[0].distribution_tests.size() == 3);  // ttft, tpot, e2el (no ITLs in the file)
  const DistributionTest& ttft = t.runs[0].distribution_tests[0];
  CHECK(ttft.metric == "ttft");
  CHECK(ttft.measured_n == 30);
  CHECK(ttft.simulated_n == 30);
  CHECK(ttft.tost.mean_measured == Approx(timed.metrics.at("mean_ttft_ms")).epsilon(1e-12));
  CHECK(t.runs[1].distribution_tests.empty());
  const auto j = to_json(t);
  CHECK(j["runs"][0].contains("distribution_tests"));
  CHECK(j["runs"][0]["distribution_tests"]["ttft"]["ks"]["d"].get<double>() == ttft.ks.d);
  CHECK_FALSE(j["runs"][1].contains("distribution_tests"));
  // Without request samples (calibrate's scoring) the table is as before.
  const ValidationTable plain = validate_runs(runs, configs, Calibration{}, ReplayOptions{}, 1);
  CHECK(plain.runs[0].distribution_tests.empty());
}

TEST_CASE("the simulator's own run, read back as a measurement: same distributions", "[measured]") {
  sim::SimulationConfig cfg;
  cfg.model = "llama-3.1-8b";
  cfg.gpu = "h100-sxm";
  cfg.workload.num_prompts = 80;
  cfg.workload.request_rate = 20;
  cfg.workload.random_input_len = 512;
  cfg.workload.random_output_len = 64;
  cfg.workload.random_range_ratio = 0.5;
  cfg.workload.seed = 3;
  cfg.calibration = "none";
  const sim::PreparedDeployment prepared = sim::prepare_deployment(cfg);
  const sim::SimulationResult result = sim::run_simulation(cfg, prepared);
  MeasuredRun m;
  m.id = m.path = "self";
  m.deployment.set("model", "llama-3.1-8b", "test");
  m.deployment.set("gpu", "h100-sxm", "test");
  m.deployment.set("tensor_parallel_size", 1, "test");
  for (const auto& rec : result.records) {
    MeasuredRequest q;
    q.start_s = rec.arrival.seconds();
    q.input_tokens = rec.prompt_tokens;
    q.output_tokens = rec.output_tokens;
    q.ttft_s = (rec.first_token - rec.arrival).seconds();
    q.e2e_s = (rec.last_token - rec.arrival).seconds();
    m.requests.push_back(q);
  }
  m.has_start_times = true;
  m.num_prompts = 80;
  m.request_rate = 20;
  fill_metrics_from_requests(m);
  sim::SimulationConfig rc = simulation_config(m, app::apply_config_json);
  rc.calibration = "none";
  ReplayOptions opts;
  opts.request_samples = true;
  const ValidationTable t = validate_runs({m}, {rc}, Calibration{}, opts, 1);
  REQUIRE(t.runs[0].distribution_tests.size() == 3);  // ttft, tpot, e2el
  for (const DistributionTest& d : t.runs[0].distribution_tests) {
    INFO(d.metric);
    // Send times pass through double seconds (at most 1 ns per request moves): a value can
    // change places with its neighbour, so D is at most a few steps of 1/80, not exactly 0.
    CHECK(d.ks.d <= 3.0 / 80);
    CHECK(d.ks.p_value > 0.99);
    CHECK_FALSE(d.ks_differ);
    CHECK(d.tost.mean_simulated == Approx(d.tost.mean_measured).epsilon(1e-6));
    CHECK(d.tost.equivalent);
  }
}

}  // namespace
}  // namespace servesim::measured
