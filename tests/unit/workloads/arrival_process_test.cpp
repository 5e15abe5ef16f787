// Arrival processes and vLLM's cumulate-and-rescale arrival times.
#include "workloads/arrival_process.h"

#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "sim/base/error.h"
#include "workloads/workload.h"

namespace servesim::workloads {
namespace {

struct GapStats {
  double mean = 0;
  double cv = 0;  // population std / mean
};

GapStats stats(const std::vector<double>& gaps) {
  double sum = 0;
  for (double g : gaps) {
    sum += g;
  }
  const double mean = sum / static_cast<double>(gaps.size());
  double ss = 0;
  for (double g : gaps) {
    ss += (g - mean) * (g - mean);
  }
  return {mean, std::sqrt(ss / static_cast<double>(gaps.size())) / mean};
}

std::vector<double> raw_gaps(const ArrivalProcess& process, int64_t n, uint64_t seed) {
  RngStream rng(seed, kArrivalStreamName);
  std::vector<double> gaps;
  for (int64_t i = 0; i < n; ++i) {
    gaps.push_back(process.next_gap_s(rng));
  }
  return gaps;
}

std::vector<double> diffs(const std::vector<double>& times) {
  std::vector<double> gaps{times.front()};
  for (size_t i = 1; i < times.size(); ++i) {
    gaps.push_back(times[i] - times[i - 1]);
  }
  return gaps;
}

// Relative standard error of the sample CV of n gamma(b) gaps. The sample std has relative SE
// ~ sqrt((2 + excess kurtosis) / n) / 2 with excess kurtosis 6/b; the sample mean has relative SE
// CV / sqrt(n) = 1 / sqrt(b n). Adding them (ignoring their positive correlation) over-estimates
// the SE of the ratio, so 5 of these is a generous, not a tight, bound.
double cv_rel_se(double b, double n) {
  return 0.5 * std::sqrt((2.0 + 6.0 / b) / n) + 1.0 / std::sqrt(b * n);
}

}  // namespace

TEST_CASE("Poisson gaps have mean 1/rate and CV 1", "[workloads]") {
  // Expectations: Exponential(mean 1/rate) gaps. n = 200k gives a standard error of the mean
  // of 1/(rate sqrt(n)) = 0.22% of the mean; we allow 5 standard errors.
  const double rate = 8.0;
  const int64_t n = 200'000;
  PoissonArrivals poisson(rate);
  const GapStats s = stats(raw_gaps(poisson, n, 42));
  const double se_mean = 1.0 / (rate * std::sqrt(static_cast<double>(n)));
  CHECK(std::abs(s.mean - 1.0 / rate) <= 5 * se_mean);
  CHECK_THAT(s.cv, Catch::Matchers::WithinRel(1.0, 5 * cv_rel_se(1.0, n)));
  CHECK(poisson.cv() == 1.0);
}

TEST_CASE("Gamma gaps with burstiness b have mean 1/rate and CV 1/sqrt(b)", "[workloads]") {
  // Expectations: Gamma(shape b, scale 1/(rate b)): mean 1/rate, CV 1/sqrt(b) -> 2 for b = 0.25
  // (bursty), 0.5 for b = 4 (regular). Standard error of the mean: CV/(rate sqrt(n)).
  const double rate = 3.0;
  const int64_t n = 200'000;
  for (double b : {0.25, 4.0}) {
    INFO("burstiness " << b);
    GammaArrivals gamma(rate, b);
    const GapStats s = stats(raw_gaps(gamma, n, 7));
    const double cv = 1.0 / std::sqrt(b);
    const double se_mean = cv / (rate * std::sqrt(static_cast<double>(n)));
    CHECK(std::abs(s.mean - 1.0 / rate) <= 5 * se_mean);
    CHECK_THAT(s.cv, Catch::Matchers::WithinRel(cv, 5 * cv_rel_se(b, n)));
    CHECK_THAT(gamma.cv(), Catch::Matchers::WithinRel(cv, 1e-12));
  }
}

TEST_CASE("make_arrival_process picks the process from the flags", "[workloads]") {
  CHECK(dynamic_cast<PoissonArrivals*>(make_arrival_process(2, 1.0, "poisson").get()));
  CHECK(dynamic_cast<GammaArrivals*>(make_arrival_process(2, 0.5, "poisson").get()));
  CHECK(dynamic_cast<ConstantArrivals*>(make_arrival_process(2, 1.0, "constant").get()));
  // vLLM get_request: burstiness == inf -> constant delay 1/rate.
  CHECK(dynamic_cast<ConstantArrivals*>(
      make_arrival_process(2, std::numeric_limits<double>::infinity(), "poisson").get()));
  CHECK_THROWS_AS(make_arrival_process(2, 1.0, "uniform"), ConfigError);
}

TEST_CASE("arrival times follow vLLM get_request: cumulate, then rescale to n/rate",
          "[workloads]") {
  // In details: vllm/benchmarks/serve.py get_request draws one delay per request (the first
  // included), cumulates them, and multiplies all by (n/rate) / delay_ts[-1].
  // Expectations: times equal that computation bit for bit; the last time is n/rate; the first
  // is one (scaled) gap after 0, not 0; the CV of the gaps is that of the raw gaps (the rescale
  // is one common factor); the factor is 1 within 5 standard errors CV/sqrt(n).
  const int64_t n = 50'000;
  const double rate = 20.0;
  for (double b : {1.0, 0.25, 4.0}) {
    INFO("burstiness " << b);
    const auto process = make_arrival_process(rate, b, "poisson");
    const std::vector<double> gaps = raw_gaps(*process, n, 1234);
    std::vector<double> expected(gaps.size());
    double cum = 0;
    for (size_t i = 0; i < gaps.size(); ++i) {
      expected[i] = cum += gaps[i];
    }
    const double factor = (static_cast<double>(n) / rate) / expected.back();
    for (double& t : expected) {
      t *= factor;
    }

    const std::vector<double> times = arrival_times_s(n, rate, b, "poisson", 1234);
    REQUIRE(times.size() == static_cast<size_t>(n));
    bool identical = true;  // bit-identical by construction: same draws, same order of sums
    for (size_t i = 0; i < times.size(); ++i) {
      identical =
          identical && std::bit_cast<uint64_t>(times[i]) == std::bit_cast<uint64_t>(expected[i]);
    }
    CHECK(identical);
    CHECK_THAT(times.back(), Catch::Matchers::WithinRel(n / rate, 1e-12));
    CHECK(times.front() > 0.0);
    CHECK_THAT(times.front(), Catch::Matchers::WithinRel(gaps.front() * factor, 1e-12));
    for (size_t i = 1; i < times.size(); ++i) {
      REQUIRE(times[i] >= times[i - 1]);
    }
    CHECK(std::abs(factor - 1.0) <= 5 * process->cv() / std::sqrt(static_cast<double>(n)));
    CHECK_THAT(stats(diffs(times)).cv, Catch::Matchers::WithinRel(stats(gaps).cv, 1e-9));
  }
}

TEST_CASE("ArrivalSequence hands out the same times as arrival_times_s", "[workloads]") {
  ArrivalSequence seq(1000, 5.0, 0.5, "poisson", 9);
  const std::vector<double> times = arrival_times_s(1000, 5.0, 0.5, "poisson", 9);
  for (double t : times) {
    REQUIRE(seq.next_s() == t);
  }
  CHECK(seq.normalize_factor() > 0.0);
}

TEST_CASE("one request lands at exactly 1/rate", "[workloads]") {
  // get_request with n = 1: the single delay is rescaled to n/rate whatever was drawn.
  CHECK_THAT(arrival_times_s(1, 4.0, 1.0, "poisson", 3).front(),
             Catch::Matchers::WithinRel(0.25, 1e-15));
}

TEST_CASE("constant arrivals are exactly 1/rate apart, the first at 1/rate", "[workloads]") {
  // Expectations: arrival i (0-based) at (i + 1)/rate, as vLLM's burstiness = inf gives.
  const double rate = 10.0;
  const std::vector<double> times = arrival_times_s(1000, rate, 1.0, "constant", 5);
  for (size_t i = 0; i < times.size(); ++i) {
    REQUIRE_THAT(times[i], Catch::Matchers::WithinRel((static_cast<double>(i) + 1) / rate, 1e-15));
  }
  // The same times for any seed, and for burstiness inf.
  CHECK(arrival_times_s(1000, rate, 1.0, "constant", 6) == times);
  CHECK(arrival_times_s(1000, rate, std::numeric_limits<double>::infinity(), "poisson", 5) ==
        times);
}

TEST_CASE("request rate inf sends everything at t = 0", "[workloads]") {
  const std::vector<double> times =
      arrival_times_s(500, std::numeric_limits<double>::infinity(), 0.5, "poisson", 1);
  REQUIRE(times.size() == 500);
  for (double t : times) {
    REQUIRE(t == 0.0);
  }
}

TEST_CASE("arrival times are deterministic per seed", "[workloads]") {
  const auto a = arrival_times_s(2000, 7.0, 1.0, "poisson", 11);
  CHECK(arrival_times_s(2000, 7.0, 1.0, "poisson", 11) == a);
  CHECK(arrival_times_s(2000, 7.0, 1.0, "poisson", 12) != a);
}

TEST_CASE("arrival_times_s rejects bad arguments, naming the flag", "[workloads]") {
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(arrival_times_s(0, 1.0, 1.0, "poisson", 0), Contains("--num-prompts"));
  CHECK_THROWS_WITH(arrival_times_s(10, 0.0, 1.0, "poisson", 0), Contains("--request-rate"));
  CHECK_THROWS_WITH(arrival_times_s(10, 1.0, 0.0, "poisson", 0), Contains("--burstiness"));
  CHECK_THROWS_WITH(arrival_times_s(10, 1.0, 1.0, "bursty", 0), Contains("--arrival-process"));
}

}  // namespace servesim::workloads
