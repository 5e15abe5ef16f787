// Two-sample tests of a measured latency distribution against a simulated one (per metric: TTFT,
// TPOT, ITL, E2E; values from latency_samples.h):
//
//   * Kolmogorov–Smirnov: D = sup_x |F_measured(x) − F_simulated(x)| over the two empirical CDFs
//     (ties stepped together), p = Q_KS(√n_e · D) with n_e = n·m/(n + m) and
//     Q_KS(λ) = 2 Σ_{k≥1} (−1)^{k−1} exp(−2k²λ²), Kolmogorov's limiting distribution (Smirnov
//     1939; Numerical Recipes 3rd ed. §6.14.12, and scipy.stats.kstwobign.sf). No small-sample
//     correction: the samples here are 10²–10⁵ values. The distributions differ at level α when
//     p < α. (Debian's Boost 1.74 has no Kolmogorov–Smirnov distribution in Boost.Math, hence
//     the series here.)
//   * TOST (two one-sided tests, Schuirmann 1987) of the means with Welch's t: margin
//     δ = margin_fraction · |measured mean|, d = simulated mean − measured mean,
//     se = √(s_x²/n + s_y²/m), Welch–Satterthwaite df; H0⁻: d ≤ −δ has p⁻ = 1 − T_df((d + δ)/se),
//     H0⁺: d ≥ +δ has p⁺ = T_df((d − δ)/se) (T_df: Boost.Math's students_t CDF). The means are
//     equivalent within ±δ at level α when both p < α.
//
// Both treat the values as independent draws. A run's requests are not independent (a queue
// couples neighbours), so the p-values are nominal: they rank runs, they are not exact error
// rates.
#ifndef SERVESIM_SIM_MEASURED_DISTRIBUTION_TESTS_H_
#define SERVESIM_SIM_MEASURED_DISTRIBUTION_TESTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/measured/latency_samples.h"

namespace servesim::measured {

// Q_KS(λ) above: the probability that √n·D of the limiting distribution exceeds λ; 1 for λ <= 0.
double kolmogorov_q(double lambda);

struct KsResult {
  double d = 0;        // the statistic, in [0, 1]
  double p_value = 1;  // asymptotic, Q_KS(√n_e · D)
};
// REQUIRES: both samples non-empty and free of NaN.
KsResult ks_two_sample(std::vector<double> a, std::vector<double> b);

struct TostResult {
  double mean_measured = 0, mean_simulated = 0;
  double margin = 0;        // δ
  double df = 0;            // Welch–Satterthwaite; NaN when both variances are 0
  double t_lower = 0;       // (d + δ)/se; ±inf when se = 0
  double t_upper = 0;       // (d − δ)/se
  double p_lower = 1;       // H0: d <= −δ
  double p_upper = 1;       // H0: d >= +δ
  bool equivalent = false;  // max(p_lower, p_upper) < alpha
};
// REQUIRES: both samples hold at least 2 values, free of NaN; 0 <= margin_fraction; 0 < alpha < 1.
TostResult tost_means(const std::vector<double>& measured, const std::vector<double>& simulated,
                      double margin_fraction, double alpha);

// One metric's tests, as validate reports them.
struct DistributionTest {
  std::string metric;  // "ttft", "tpot", "itl", "e2el"
  int64_t measured_n = 0, simulated_n = 0;
  KsResult ks;
  bool ks_differ = false;  // ks.p_value < alpha
  TostResult tost;
};

inline constexpr double kTostMargin = 0.10;  // ±10 % of the measured mean
inline constexpr double kTestAlpha = 0.05;

// The tests of every latency metric (latency_metric_names() order) that both sides have at least
// two values of; none when the measured run has no per-request data.
std::vector<DistributionTest> distribution_tests(const LatencySamples& measured,
                                                 const LatencySamples& simulated);

}  // namespace servesim::measured

#endif  // SERVESIM_SIM_MEASURED_DISTRIBUTION_TESTS_H_
