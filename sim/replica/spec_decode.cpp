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

// The word of a seed, of a request under it, and of the request at a point of its output.
uint64_t seed_word(uint64_t seed) { return mix(seed ^ 0x5bd1e9955bd1e995ull); }
uint64_t draw_word(uint64_t seed_word, int64_t request_id, int64_t generated) {
  const uint64_t base = mix(seed_word ^ static_cast<uint64_t>(request_id));
  return mix(base ^ (static_cast<uint64_t>(generated) * 0x9e3779b97f4a7c15ull));
}
// The word of draft position m (0-based) at `at`.
uint64_t position_word(uint64_t at, int m) {
  return mix(at + static_cast<uint64_t>(m + 1) * 0xd1b54a32d192ed03ull);
}

}  // namespace

int accepted_drafts(const std::vector<double>& rates, uint64_t seed, int64_t request_id,
                    int64_t generated, int drafts) {
  const uint64_t at = draw_word(seed_word(seed), request_id, generated);
  const int k = std::min<int>(drafts, static_cast<int>(rates.size()));
  // The first rejected position (k when none is). Every position is drawn, last to first, with
  // no early exit: the words are independent, so the CPU overlaps their multiplications, and the
  // select compiles to a conditional move instead of a branch mispredicted about once a call
  // (plan's speculative candidates spent a quarter of their time here). Same result as stopping
  // at the first rejection: a later position's draw never changes which one is first.
  int accepted = k;
  for (int m = k - 1; m >= 0; --m) {
    // A uniform double in [0, 1) from the top 53 bits of an independent word per position.
    const uint64_t w = position_word(at, m);
    const double u = static_cast<double>(w >> 11) * 0x1.0p-53;
    accepted = !(u < rates[static_cast<size_t>(m)]) ? m : accepted;
  }
  return accepted;
}

AcceptanceSampler::AcceptanceSampler(const std::vector<double>& rates, uint64_t seed)
    : seed_word_(seed_word(seed)) {
  constexpr double kScale = 0x1.0p53;
  for (const double a : rates) {
    // u < a never holds for a <= 0 (or NaN) and always for a >= 1.
    uint64_t t = 0;
    if (a >= 1.0) {
      t = uint64_t{1} << 53;
    } else if (a > 0.0) {
      t = static_cast<uint64_t>(std::ceil(a * kScale));
    }
    thresholds_.push_back(t);
  }
}

int AcceptanceSampler::accepted(int64_t request_id, int64_t generated, int drafts) const {
  const uint64_t at = draw_word(seed_word_, request_id, generated);
  const int k = std::min<int>(drafts, static_cast<int>(thresholds_.size()));
  // As accepted_drafts(): every position drawn, the first rejection kept by a select.
  int accepted = k;
  for (int m = k - 1; m >= 0; --m) {
    const uint64_t n = position_word(at, m) >> 11;
    accepted = n < thresholds_[static_cast<size_t>(m)] ? accepted : m;
  }
  return accepted;
}

}  // namespace servesim::sim
