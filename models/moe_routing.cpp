#include "models/moe_routing.h"

#include <algorithm>
#include <cmath>

#include <boost/math/distributions/normal.hpp>

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

}  // namespace servesim::models
