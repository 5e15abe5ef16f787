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

// The word of a seed, and of a request under it at a point of its output: one mix of the seed's
// word plus the request id and the tokens generated, each times its own odd constant (SplitMix64
// itself is this mix of a counter times an odd constant; here two counters). The statistical
// tests (spec_decode_test.cpp) check the mean and each survival frequency of the draws.
uint64_t seed_word(uint64_t seed) { return mix(seed ^ 0x5bd1e9955bd1e995ull); }
uint64_t draw_word(uint64_t seed_word, int64_t request_id, int64_t generated) {
  return mix(seed_word + static_cast<uint64_t>(request_id) * 0x9e3779b97f4a7c15ull +
             static_cast<uint64_t>(generated) * 0xd1b54a32d192ed03ull);
}
// A rate as a probability: u < a never holds for a <= 0 (or NaN) and always for a >= 1.
double clamp_rate(double a) {
  if (a >= 1.0) return 1.0;
  return a > 0.0 ? a : 0.0;
}

}  // namespace

int accepted_drafts(const std::vector<double>& rates, uint64_t seed, int64_t request_id,
                    int64_t generated, int drafts) {
  // One uniform u in [0, 1) from the top 53 bits of the word, against the survival function:
  // A >= m exactly when u < P(A >= m) = a_1 · … · a_m (the running product, in this order). So
  // P(A >= m) is the closed form, and the drafts accepted out of d are min(A_K, d): the first
  // position past u ends the run whatever is scheduled after it.
  const uint64_t at = draw_word(seed_word(seed), request_id, generated);
  const double u = static_cast<double>(at >> 11) * 0x1.0p-53;
  const int k = std::min<int>(drafts, static_cast<int>(rates.size()));
  double survive = 1.0;
  int accepted = 0;
  for (int m = 0; m < k; ++m) {
    survive *= clamp_rate(rates[static_cast<size_t>(m)]);
    if (!(u < survive)) break;
    accepted = m + 1;
  }
  return accepted;
}

AcceptanceSampler::AcceptanceSampler(const std::vector<double>& rates, uint64_t seed)
    : seed_word_(seed_word(seed)) {
  constexpr double kScale = 0x1.0p53;
  double survive = 1.0;  // the same running product as accepted_drafts()
  for (const double a : rates) {
    survive *= clamp_rate(a);
    // u = n·2^-53 < p  ⇔  n < ⌈p·2^53⌉ for an integer n (p·2^53 is exact: a power-of-two scale).
    thresholds_.push_back(static_cast<uint64_t>(std::ceil(survive * kScale)));
  }
}

int AcceptanceSampler::accepted(int64_t request_id, int64_t generated, int drafts) const {
  const uint64_t n = draw_word(seed_word_, request_id, generated) >> 11;
  const int k = std::min<int>(drafts, static_cast<int>(thresholds_.size()));
  // The thresholds never increase, so the count of those above n is the first one that is not:
  // a sum without branches.
  int accepted = 0;
  for (int m = 0; m < k; ++m) accepted += n < thresholds_[static_cast<size_t>(m)] ? 1 : 0;
  return accepted;
}

}  // namespace servesim::sim
