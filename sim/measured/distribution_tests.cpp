#include "sim/measured/distribution_tests.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <boost/math/distributions/students_t.hpp>

#include "sim/base/error.h"

namespace servesim::measured {
namespace {

struct Moments {
  double mean = 0, var = 0;  // var: sample variance (n − 1)
};

Moments moments(const std::vector<double>& v) {
  Moments m;
  for (double x : v) m.mean += x;
  m.mean /= double(v.size());
  for (double x : v) m.var += (x - m.mean) * (x - m.mean);
  m.var /= double(v.size() - 1);
  return m;
}

}  // namespace

double kolmogorov_q(double lambda) {
  if (!(lambda > 0)) return 1.0;
  constexpr double kPi = 3.14159265358979323846;
  if (lambda < 1.18) {
    // Small λ: the alternating series converges slowly; its Jacobi-theta transform,
    // 1 − Q = √(2π)/λ · Σ_{k≥1} exp(−(2k − 1)²π²/(8λ²)), converges fast (Numerical Recipes
    // 3rd ed., Eq. 6.14.57).
    const double y = std::exp(-kPi * kPi / (8 * lambda * lambda));
    double sum = 0;  // y < 0.41 here: 20 terms reach far below double precision
    for (int k = 1; k <= 20; ++k) sum += std::pow(y, double((2 * k - 1) * (2 * k - 1)));
    return 1.0 - std::sqrt(2 * kPi) / lambda * sum;
  }
  double sum = 0;
  for (int k = 1; k <= 100; ++k) {
    const double term = std::exp(-2.0 * k * k * lambda * lambda);
    sum += (k % 2 ? term : -term);
    if (term < 1e-17 * sum) break;
  }
  return std::clamp(2 * sum, 0.0, 1.0);
}

KsResult ks_two_sample(std::vector<double> a, std::vector<double> b) {
  SERVESIM_CHECK(!a.empty() && !b.empty(), "ks_two_sample: an empty sample");
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  const double n = double(a.size()), m = double(b.size());
  std::size_t i = 0, j = 0;
  double d = 0;
  // Step both CDFs past each distinct value (ties together), then compare.
  while (i < a.size() && j < b.size()) {
    const double x = std::min(a[i], b[j]);
    while (i < a.size() && a[i] == x) ++i;
    while (j < b.size() && b[j] == x) ++j;
    d = std::max(d, std::fabs(double(i) / n - double(j) / m));
  }
  // Past the end of one sample the difference only shrinks to 0.
  KsResult r;
  r.d = d;
  r.p_value = kolmogorov_q(std::sqrt(n * m / (n + m)) * d);
  return r;
}

TostResult tost_means(const std::vector<double>& measured, const std::vector<double>& simulated,
                      double margin_fraction, double alpha) {
  SERVESIM_CHECK(measured.size() >= 2 && simulated.size() >= 2, "tost_means: under 2 values");
  const Moments x = moments(measured), y = moments(simulated);
  const double n = double(measured.size()), m = double(simulated.size());
  TostResult r;
  r.mean_measured = x.mean;
  r.mean_simulated = y.mean;
  r.margin = margin_fraction * std::fabs(x.mean);
  const double diff = y.mean - x.mean;
  const double vx = x.var / n, vy = y.var / m;
  const double se = std::sqrt(vx + vy);
  if (se == 0) {
    // Both samples constant: the difference of the means is exact.
    r.df = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    r.t_lower = diff + r.margin > 0 ? inf : -inf;
    r.t_upper = diff - r.margin < 0 ? -inf : inf;
    r.p_lower = diff + r.margin > 0 ? 0.0 : 1.0;
    r.p_upper = diff - r.margin < 0 ? 0.0 : 1.0;
  } else {
    r.df = (vx + vy) * (vx + vy) / (vx * vx / (n - 1) + vy * vy / (m - 1));
    const boost::math::students_t t(r.df);
    r.t_lower = (diff + r.margin) / se;
    r.t_upper = (diff - r.margin) / se;
    r.p_lower = boost::math::cdf(boost::math::complement(t, r.t_lower));
    r.p_upper = boost::math::cdf(t, r.t_upper);
  }
  r.equivalent = std::max(r.p_lower, r.p_upper) < alpha;
  return r;
}

std::vector<DistributionTest> distribution_tests(const LatencySamples& measured,
                                                 const LatencySamples& simulated) {
  std::vector<DistributionTest> out;
  for (const std::string& metric : latency_metric_names()) {
    const std::vector<double>& a = measured.of(metric);
    const std::vector<double>& b = simulated.of(metric);
    if (a.size() < 2 || b.size() < 2) continue;
    DistributionTest t;
    t.metric = metric;
    t.measured_n = static_cast<int64_t>(a.size());
    t.simulated_n = static_cast<int64_t>(b.size());
    t.ks = ks_two_sample(a, b);
    t.ks_differ = t.ks.p_value < kTestAlpha;
    t.tost = tost_means(a, b, kTostMargin, kTestAlpha);
    out.push_back(t);
  }
  return out;
}

}  // namespace servesim::measured
