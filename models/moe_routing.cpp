#include "models/moe_routing.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/quadrature/exp_sinh.hpp>
#include <boost/math/quadrature/gauss_kronrod.hpp>

namespace servesim::models {

double expected_max_group_rows(double tokens, double top_k, double experts, int groups) {
  if (tokens <= 0) return 0;
  const double rows = tokens * top_k;
  if (groups <= 1) return rows;
  const double g = groups;
  const double mean = rows / g;
  const double var = rows * (1.0 / g) * (1.0 - 1.0 / g) *
                     (experts > 1 ? (experts - top_k) / (experts - 1.0) : 0.0);
  const boost::math::normal_distribution<double> standard;
  const double z = boost::math::quantile(standard, (g - 0.375) / (g + 0.25));
  const double cap = tokens * std::min(top_k, experts / g);
  return std::min(cap, mean + std::sqrt(std::max(0.0, var)) * z);
}

std::vector<double> skewed_inclusion_probabilities(int top_k, int experts, double skew) {
  const auto n = static_cast<size_t>(experts);
  std::vector<double> w(n);
  for (size_t i = 0; i < n; ++i) w[i] = std::pow(static_cast<double>(i + 1), -skew);
  if (skew == 0) return std::vector<double>(n, static_cast<double>(top_k) / experts);
  const auto k = static_cast<size_t>(top_k);
  std::vector<double> fewer(k);  // P(exactly c of the others beat the threshold), c < k
  boost::math::quadrature::exp_sinh<double> integrator;
  std::vector<double> pi(n);
  for (size_t i = 0; i < n; ++i) {
    // t = w_i·u, u = exp(−threshold): the Gumbel density of expert i's own score is e^-t dt.
    auto integrand = [&](double t) {
      const double u = t / w[i];
      std::fill(fewer.begin(), fewer.end(), 0.0);
      fewer[0] = 1;
      for (size_t j = 0; j < n; ++j) {
        if (j == i) continue;
        const double p = -std::expm1(-w[j] * u);  // expert j beats the threshold
        for (size_t c = k - 1; c > 0; --c) fewer[c] = fewer[c] * (1 - p) + fewer[c - 1] * p;
        fewer[0] *= 1 - p;
      }
      double below = 0;
      for (double f : fewer) below += f;
      return std::exp(-t) * below;
    };
    pi[i] = integrator.integrate(integrand, 0.0, std::numeric_limits<double>::infinity());
  }
  return pi;
}

std::vector<double> skewed_group_shares(int top_k, int experts, int groups, double skew) {
  const std::vector<double> pi = skewed_inclusion_probabilities(top_k, experts, skew);
  const int per_group = experts / groups;
  std::vector<double> share(static_cast<size_t>(groups), 0.0);
  for (int i = 0; i < experts; ++i) {
    share[static_cast<size_t>(i / per_group)] += pi[static_cast<size_t>(i)] / top_k;
  }
  return share;
}

double expected_max_group_rows(double tokens, double top_k, double experts,
                               const std::vector<double>& group_shares) {
  if (tokens <= 0) return 0;
  const double rows = tokens * top_k;
  if (group_shares.size() <= 1) return rows;
  const double g = static_cast<double>(group_shares.size());
  const double fpc = experts > 1 ? (experts - top_k) / (experts - 1.0) : 0.0;
  const double cap = tokens * std::min(top_k, experts / g);
  // P(max <= x) = Π_r Φ((x − mean_r) / sd_r); E[max] of the nonnegative counts is the
  // integral of its complement, over 0..cap (no group holds more than cap rows).
  auto above = [&](double x) {
    double below = 1;
    for (double q : group_shares) {
      const double mean = rows * q;
      const double sd = std::sqrt(std::max(0.0, rows * q * (1 - q) * fpc));
      below *= sd > 0 ? 0.5 * std::erfc((mean - x) / (sd * std::sqrt(2.0))) : (x >= mean ? 1 : 0);
    }
    return 1 - below;
  };
  const double e_max =
      boost::math::quadrature::gauss_kronrod<double, 61>::integrate(above, 0.0, cap, 15, 1e-9);
  return std::min(cap, e_max);
}

}  // namespace servesim::models
