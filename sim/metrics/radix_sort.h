// Linear-time sorts for the metrics (internal to sim/metrics).
//
// vLLM's summaries need the sorted sample, not just a few order statistics: np.mean and np.std
// are reproduced by summing the sorted values in long double (sample_stats.cpp), and that sum's
// last bits depend on the order. A selection algorithm would change them; an LSD radix sort keeps
// the exact order of std::sort (equal keys are equal values, so their order cannot matter) in
// O(n) time. Keys are 64-bit; byte passes whose digit is the same for every element are skipped,
// so nanosecond durations (< 2^40) take five passes or fewer.
#ifndef SERVESIM_SIM_METRICS_RADIX_SORT_H_
#define SERVESIM_SIM_METRICS_RADIX_SORT_H_

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#include "sim/base/huge_pages.h"

namespace servesim::metrics::detail {

// Stable sort of `v` by key(v[i]) ascending (uint64_t keys). `scratch` is reused storage.
template <typename T, typename Key>
void radix_sort(std::vector<T>& v, std::vector<T>& scratch, const Key& key) {
  const size_t n = v.size();
  if (n < 2) return;
  std::array<std::array<size_t, 256>, 8> counts{};
  for (const T& x : v) {
    const uint64_t k = key(x);
    for (int d = 0; d < 8; ++d) ++counts[d][(k >> (8 * d)) & 0xff];
  }
  if (scratch.capacity() < n) {
    scratch.reserve(n);
    advise_huge_pages(scratch.data(), scratch.capacity() * sizeof(T));  // before it is written
  }
  scratch.resize(n);
  std::vector<T>* from = &v;
  std::vector<T>* to = &scratch;
  for (int d = 0; d < 8; ++d) {
    auto& c = counts[d];
    bool trivial = false;
    for (size_t b = 0; b < 256; ++b) {
      if (c[b] == n) trivial = true;
    }
    if (trivial) continue;  // every element has the same digit here
    size_t offset = 0;
    for (size_t b = 0; b < 256; ++b) {
      const size_t count = c[b];
      c[b] = offset;
      offset += count;
    }
    for (const T& x : *from) (*to)[c[(key(x) >> (8 * d)) & 0xff]++] = x;
    std::swap(from, to);
  }
  if (from != &v) v.swap(scratch);
}

// The key whose unsigned order is the order of a signed int64.
inline uint64_t int64_order_key(int64_t x) { return static_cast<uint64_t>(x) ^ (1ull << 63); }

// The key whose unsigned order is the numeric order of a double (not NaN; −0 sorts before +0,
// which std::sort treats as equal: neither the sums nor the order statistics can tell).
inline uint64_t double_order_key(double x) {
  const auto bits = std::bit_cast<uint64_t>(x);
  return (bits >> 63) != 0 ? ~bits : bits | (1ull << 63);
}

// Sorts doubles ascending, as std::sort would.
inline void radix_sort_doubles(std::vector<double>& v) {
  std::vector<double> scratch;
  radix_sort(v, scratch, [](double x) { return double_order_key(x); });
}

}  // namespace servesim::metrics::detail

#endif  // SERVESIM_SIM_METRICS_RADIX_SORT_H_
