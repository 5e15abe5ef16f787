#include "sim/planning/compare_stats.h"

#include <cmath>
#include <limits>

#include "sim/base/error.h"

namespace servesim::planning {
namespace {

// Continued fraction for I_x(a, b) (Numerical Recipes, betacf), modified Lentz.
double beta_continued_fraction(double a, double b, double x) {
  constexpr int kMaxIterations = 10000;
  constexpr double kEps = 1e-15;
  constexpr double kTiny = 1e-300;
  const double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= kMaxIterations; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < kEps) break;
  }
  return h;
}

}  // namespace

double regularized_incomplete_beta(double a, double b, double x) {
  SERVESIM_CHECK(a > 0 && b > 0 && x >= 0 && x <= 1, "incomplete beta: bad arguments");
  if (x == 0 || x == 1) return x;
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  const double front = std::exp(log_front);
  if (x < (a + 1) / (a + b + 2)) return front * beta_continued_fraction(a, b, x) / a;
  return 1 - front * beta_continued_fraction(b, a, 1 - x) / b;
}

double student_t_two_sided_p(double t, double df) {
  SERVESIM_CHECK(df > 0, "t distribution: df must be > 0");
  if (std::isinf(t)) return 0;
  if (std::isnan(t)) return 1;
  return regularized_incomplete_beta(df / 2, 0.5, df / (df + t * t));
}

double student_t_cdf(double t, double df) {
  const double tail = 0.5 * student_t_two_sided_p(t, df);
  return t >= 0 ? 1 - tail : tail;
}

double student_t_quantile(double p, double df) {
  SERVESIM_CHECK(p > 0 && p < 1, "t quantile: p must be in (0, 1)");
  if (p == 0.5) return 0;
  if (p < 0.5) return -student_t_quantile(1 - p, df);
  double lo = 0, hi = 1;
  while (student_t_cdf(hi, df) < p) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_cdf(mid, df) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

double sign_test_p(int positive, int negative) {
  const int n = positive + negative;
  if (n == 0) return 1;
  const int k = std::min(positive, negative);
  // P(Bin(n, 1/2) <= k) = Σ_{i<=k} C(n, i) / 2^n, each term through lgamma.
  double cdf = 0;
  for (int i = 0; i <= k; ++i) {
    cdf += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) -
                    n * std::log(2.0));
  }
  return std::min(1.0, 2 * cdf);
}

PairedTest paired_t_test(const std::vector<double>& a, const std::vector<double>& b,
                         double confidence) {
  SERVESIM_CHECK(a.size() == b.size() && a.size() >= 2, "paired t-test needs >= 2 pairs");
  SERVESIM_CHECK(confidence > 0 && confidence < 1, "confidence must be in (0, 1)");
  PairedTest r;
  r.n = static_cast<int>(a.size());
  r.df = r.n - 1;
  r.confidence = confidence;
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = b[i] - a[i];
    sum += d;
    r.positive += d > 0;
    r.negative += d < 0;
  }
  r.mean_diff = sum / r.n;
  double ss = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double e = (b[i] - a[i]) - r.mean_diff;
    ss += e * e;
  }
  r.sd_diff = std::sqrt(ss / r.df);
  const double se = r.sd_diff / std::sqrt(double(r.n));
  if (se == 0) {
    r.t = r.mean_diff == 0 ? 0 : std::copysign(std::numeric_limits<double>::infinity(), r.mean_diff);
    r.p_value = r.mean_diff == 0 ? 1 : 0;
    r.ci_low = r.ci_high = r.mean_diff;
  } else {
    r.t = r.mean_diff / se;
    r.p_value = student_t_two_sided_p(r.t, r.df);
    const double q = student_t_quantile(0.5 + confidence / 2, r.df);
    r.ci_low = r.mean_diff - q * se;
    r.ci_high = r.mean_diff + q * se;
  }
  r.sign_p = sign_test_p(r.positive, r.negative);
  return r;
}

}  // namespace servesim::planning
