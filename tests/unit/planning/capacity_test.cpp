// Capacity search building blocks (sim/planning/capacity.h, plan.h smallest_passing).
#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <vector>

#include "sim/planning/capacity.h"
#include "sim/planning/plan.h"

namespace servesim::planning {
namespace {

TEST_CASE("bisection finds a known threshold of a monotone predicate", "[planning][capacity]") {
  // passes(x) = x <= t. Expectations: max_pass <= t < min_fail, the bracket within 1% of the
  // rate, and ceil(log2(ln(hi/lo) / ln(1.01))) + 1 = ceil(log2(462.8)) + 1 = 10 probes for
  // [0.1, 10] when t is at or above the first midpoint √(0.1·10) = 1 (lo is not probed), one
  // more below it (geometric midpoints halve the log-width of the bracket).
  for (double t : {0.1234, 0.99, 1.0, 3.7, 9.99}) {
    int calls = 0;
    const Bisection b = bisect_max_passing(0.1, 10, 0.01, [&](double x) {
      ++calls;
      return x <= t;
    });
    INFO("threshold " << t);
    REQUIRE_FALSE(b.low_fails);
    REQUIRE_FALSE(b.high_passes);
    REQUIRE(b.max_pass <= t);
    REQUIRE(b.min_fail > t);
    REQUIRE(b.min_fail <= b.max_pass * 1.01);
    REQUIRE(b.probes == calls);
    REQUIRE(calls == (t >= 1.0 ? 10 : 11));
  }
  // Fails at the bottom: hi, the first midpoint and lo fail. Passes at the top: capped there after
  // one probe.
  std::vector<double> probed;
  const Bisection none = bisect_max_passing(0.1, 10, 0.01, [&](double x) {
    probed.push_back(x);
    return false;
  });
  REQUIRE(none.low_fails);
  REQUIRE(none.max_pass == 0);
  REQUIRE(none.min_fail == 0.1);
  REQUIRE(probed == std::vector<double>{10, std::sqrt(0.1 * 10), 0.1});
  const Bisection all = bisect_max_passing(0.1, 10, 0.01, [](double) { return true; });
  REQUIRE(all.high_passes);
  REQUIRE(all.max_pass == 10);
  REQUIRE(all.probes == 1);
  // The same final bracket as a search that probes lo first (lo passes, then bisect_between).
  for (double t : {0.1234, 0.99, 1.0, 3.7, 9.99}) {
    auto below = [&](double x) { return x <= t; };
    const Bisection a = bisect_max_passing(0.1, 10, 0.01, below);
    const Bisection b = bisect_between(0.1, 10, 0.01, below);
    REQUIRE(a.max_pass == b.max_pass);
    REQUIRE(a.min_fail == b.min_fail);
  }
  // A known bracket: no probe when it is already within tolerance.
  REQUIRE(bisect_between(5, 5.04, 0.01, [](double) { return true; }).probes == 0);
}

TEST_CASE("smallest passing replica count is found from any start", "[planning][capacity]") {
  // passes(n) = n >= k. Expectations: the answer is max(k, floor) (counts below the floor fail by
  // definition), 0 when k > cap; each n is evaluated at most once.
  for (int k : {1, 2, 7, 50, 199}) {
    for (int start : {1, 5, 49, 50, 51, 120, 300}) {
      for (int floor : {1, 3, 40}) {
        std::set<int> seen;
        const int n = smallest_passing(start, floor, 200, [&](int m) {
          REQUIRE(seen.insert(m).second);
          REQUIRE(m >= floor);
          return m >= k;
        });
        INFO("k " << k << " start " << start << " floor " << floor);
        REQUIRE(n == std::max(k, floor));
      }
    }
  }
  REQUIRE(smallest_passing(10, 1, 30, [](int m) { return m >= 31; }) == 0);
}

TEST_CASE("smallest passing replica count: the floor first, then up from it to the estimate",
          "[planning][capacity]") {
  // The order the counts are tried in (each a cluster simulation, costlier with more replicas):
  // floor; floor + 1, + 3, + 7, ... capped at the estimate `start`; from `start` + 1, + 3, ...;
  // then bisection of the last gap.
  auto order = [](int start, int floor, int k) {
    std::vector<int> tried;
    const int n = smallest_passing(start, floor, 1000, [&](int m) {
      tried.push_back(m);
      return m >= k;
    });
    REQUIRE(n == std::max(k, floor));
    return tried;
  };
  // The answer at the floor (pooling): one run, the estimate never simulated.
  CHECK(order(168, 88, 88) == std::vector<int>{88});
  CHECK(order(168, 88, 50) == std::vector<int>{88});
  // One above the floor: two runs.
  CHECK(order(145, 74, 75) == std::vector<int>{74, 75});
  // 74 fails, 75, 77 fail, 81 passes, bisect 77..81: 79 passes, 78 fails.
  CHECK(order(145, 74, 79) == std::vector<int>{74, 75, 77, 81, 79, 78});
  // Steps stop at the estimate: 10, 11, 13, 17, then 20 (not 25), which fails; from 20: 21, 23.
  CHECK(order(20, 10, 23) == std::vector<int>{10, 11, 13, 17, 20, 21, 23, 22});
}

TEST_CASE("seed statistics: mean, range and a Student-t interval", "[planning][capacity]") {
  // Values 10, 12, 14: mean 12, sample sd 2, t(0.975, 2) = 0.95/√(2·0.975·0.025) = 4.30265 (the
  // df = 2 closed form) → half-width 4.30265·2/√3 = 4.968.
  const SeedStat s = seed_stat({10, 12, 14});
  REQUIRE(s.mean == Approx(12));
  REQUIRE(s.min == 10);
  REQUIRE(s.max == 14);
  REQUIRE(s.ci95 ==
          Approx(0.95 / std::sqrt(2 * 0.975 * 0.025) * 2 / std::sqrt(3.0)).epsilon(1e-12));
  REQUIRE(seed_stat({5}).ci95 == 0);
}

TEST_CASE("SLOs are judged on the mean over seeds", "[planning][capacity]") {
  // Seeds give p99 TTFT 400, 700 and 450 ms: mean 516.7 > 500 fails although two seeds pass
  // (and p99 TPOT 40, 45, 80: mean 55 > 50);
  // seed_pass tells each seed apart; the worst SLO is the one furthest past its threshold.
  std::vector<metrics::BenchmarkMetrics> runs(3);
  const double ttft[] = {400, 700, 450};
  const double tpot[] = {40, 45, 80};
  for (int i = 0; i < 3; ++i) {
    runs[i].completed = 1;
    runs[i].summaries["ttft"].percentiles_ms = {{99, ttft[i]}};
    runs[i].summaries["tpot"].percentiles_ms = {{99, tpot[i]}};
  }
  const auto slos = parse_slos({"p99_ttft_ms<=500", "p99_tpot_ms<=50"});
  const SloEvaluation e = evaluate_slos(runs, slos);
  REQUIRE_FALSE(e.pass);
  REQUIRE(*e.mean[0] == Approx(516.6667).epsilon(1e-6));
  REQUIRE(*e.mean[1] == Approx(55));
  REQUIRE(e.worst == 1);  // TPOT is 10% past its threshold, TTFT 3.3%
  REQUIRE(e.seed_pass(0, slos));
  REQUIRE_FALSE(e.seed_pass(1, slos));
  REQUIRE_FALSE(e.seed_pass(2, slos));
}

}  // namespace
}  // namespace servesim::planning
