// The Marlin MoE kernel's block size, blocks and padded rows (models/marlin_moe.h).
#include "models/marlin_moe.h"

#include <algorithm>
#include <cmath>

namespace servesim::models {

MarlinPaddedExpert marlin_mxfp4_padded(double hidden, double intermediate_rank) {
  auto round_up = [](double x, double m) { return std::ceil(x / m) * m; };
  return {round_up(hidden, 256), round_up(intermediate_rank, 128)};
}

int marlin_moe_block_size(double tokens, double top_k, double local_experts) {
  // fused_marlin_moe: `for block_size_m in [8, 16, 32, 48, 64]: if M * topk / E / block_size_m
  // < 0.9: break` (the loop variable keeps 64 when no size breaks it).
  const double rows = tokens * top_k / local_experts;
  for (int size : {8, 16, 32, 48}) {
    if (rows / size < 0.9) return size;
  }
  return 64;
}

double expected_marlin_blocks(double trials, double p, int block) {
  const double n = std::round(trials);
  if (n < 1 || p <= 0) return 0;
  if (p >= 1) return std::ceil(n / block);
  // The binomial's probabilities from its mode outwards, by the ratio of neighbours, until they
  // fall below 1e-18 of the mode's (what they add is below double precision of the sum).
  const double mode = std::min(n, std::floor((n + 1) * p));
  const double log_mode = std::lgamma(n + 1) - std::lgamma(mode + 1) - std::lgamma(n - mode + 1) +
                          mode * std::log(p) + (n - mode) * std::log1p(-p);
  const double odds = p / (1 - p);
  const double p_mode = std::exp(log_mode);
  const double cutoff = p_mode * 1e-18;
  auto blocks = [block](double x) { return std::ceil(x / block); };
  double sum = p_mode * blocks(mode);
  double pmf = p_mode;
  for (double x = mode; x < n && pmf > cutoff; ++x) {  // upwards: P(x + 1) from P(x)
    pmf *= (n - x) / (x + 1) * odds;
    sum += pmf * blocks(x + 1);
  }
  pmf = p_mode;
  for (double x = mode; x > 0 && pmf > cutoff; --x) {  // downwards: P(x − 1) from P(x)
    pmf *= x / (n - x + 1) / odds;
    sum += pmf * blocks(x - 1);
  }
  return sum;
}

MarlinMoeWork marlin_moe_work(double tokens, double top_k, double local_experts,
                              double expert_share) {
  MarlinMoeWork w;
  w.block_size = marlin_moe_block_size(tokens, top_k, local_experts);
  w.rows_per_expert = tokens * expert_share;
  w.blocks = local_experts * expected_marlin_blocks(tokens, expert_share, w.block_size);
  w.padded_rows = w.blocks * w.block_size;
  return w;
}

}  // namespace servesim::models
