#include "sim/planning/compare_stats.h"

#include <cmath>
#include <limits>

#include <boost/math/distributions/students_t.hpp>

#include "sim/base/error.h"

namespace servesim::planning {

double student_t_two_sided_p(double t, double df) {
  SERVESIM_CHECK(df > 0, "t distribution: df must be > 0");
  if (std::isinf(t)) return 0;
  if (std::isnan(t)) return 1;
  return 2 * boost::math::cdf(boost::math::complement(boost::math::students_t(df), std::fabs(t)));
}

double student_t_cdf(double t, double df) {
  SERVESIM_CHECK(df > 0, "t distribution: df must be > 0");
  if (std::isinf(t)) return t > 0 ? 1 : 0;
  return boost::math::cdf(boost::math::students_t(df), t);
}

double student_t_quantile(double p, double df) {
  SERVESIM_CHECK(p > 0 && p < 1, "t quantile: p must be in (0, 1)");
  SERVESIM_CHECK(df > 0, "t distribution: df must be > 0");
  return boost::math::quantile(boost::math::students_t(df), p);
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
    r.t =
        r.mean_diff == 0 ? 0 : std::copysign(std::numeric_limits<double>::infinity(), r.mean_diff);
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
