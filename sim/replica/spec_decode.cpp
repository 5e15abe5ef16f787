#include "sim/replica/spec_decode.h"

#include <algorithm>
#include <cmath>

namespace servesim::sim {

double mean_accepted(const std::vector<double>& rates, int max_drafts) {
  const size_t k = std::min(rates.size(), static_cast<size_t>(std::max(max_drafts, 0)));
  double all = 1.0;
  double sum = 0.0;
  for (size_t m = 0; m < k; ++m) {
    all *= rates[m];
    sum += all;
  }
  return sum;
}

double constant_rate_for_acceptance_length(double length, int k) {
  const double target = length - 1.0;
  if (target <= 0.0) return 0.0;
  if (target >= k) return 1.0;
  // E[A](a) is continuous and strictly increasing on [0, 1]: 60 halvings pin a to 2^-60.
  double lo = 0.0, hi = 1.0;
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (mean_accepted(std::vector<double>(static_cast<size_t>(k), mid), k) < target) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return 0.5 * (lo + hi);
}

std::vector<double> rates_for_acceptance_length(double length, int k) {
  return std::vector<double>(static_cast<size_t>(k),
                             constant_rate_for_acceptance_length(length, k));
}

namespace {

// SplitMix64's finalizer: a bijection of 64-bit words that spreads every input bit.
uint64_t mix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

int accepted_drafts(const std::vector<double>& rates, uint64_t seed, int64_t request_id,
                    int64_t generated, int drafts) {
  const uint64_t base = mix(mix(seed ^ 0x5bd1e9955bd1e995ull) ^ static_cast<uint64_t>(request_id));
  const uint64_t at = mix(base ^ (static_cast<uint64_t>(generated) * 0x9e3779b97f4a7c15ull));
  const int k = std::min<int>(drafts, static_cast<int>(rates.size()));
  // The first rejected position (k when none is). Every position is drawn, last to first, with
  // no early exit: the words are independent, so the CPU overlaps their multiplications, and the
  // select compiles to a conditional move instead of a branch mispredicted about once a call
  // (plan's speculative candidates spent a quarter of their time here). Same result as stopping
  // at the first rejection: a later position's draw never changes which one is first.
  int accepted = k;
  for (int m = k - 1; m >= 0; --m) {
    // A uniform double in [0, 1) from the top 53 bits of an independent word per position.
    const uint64_t w = mix(at + static_cast<uint64_t>(m + 1) * 0xd1b54a32d192ed03ull);
    const double u = static_cast<double>(w >> 11) * 0x1.0p-53;
    accepted = !(u < rates[static_cast<size_t>(m)]) ? m : accepted;
  }
  return accepted;
}

}  // namespace servesim::sim
