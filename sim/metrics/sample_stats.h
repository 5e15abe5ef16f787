// numpy-exact summary statistics over a sorted sample, plain or weighted (internal to sim/metrics).
//
// vLLM's calculate_metrics (vllm/benchmarks/serve.py) reports np.mean, np.median, np.std and
// np.percentile(method="linear") of Python lists of seconds, times 1000. This file reproduces those
// four functions:
//   * on a plain sorted vector<double> (TTFT, TPOT, E2EL: one value per request), and
//   * on a weighted multiset of integer-nanosecond values (ITL), where a value with weight w stands
//     for w equal list elements. Percentiles and the median pick the same order statistics as on
//     the expanded list and interpolate with numpy's own formula, so they are bit-identical to the
//     expanded computation; mean and std are accumulated exactly (integers) or in long double, so
//     they agree with numpy to a few ulp (numpy itself uses pairwise float64 summation).
#ifndef SERVESIM_SIM_METRICS_SAMPLE_STATS_H_
#define SERVESIM_SIM_METRICS_SAMPLE_STATS_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/metrics/benchmark_metrics.h"

namespace servesim::metrics::detail {

// A multiset of int64 nanosecond values with int64 multiplicities.
// Usage: add() any number of times, then summarize() (which sorts and merges once).
class WeightedNsSamples {
 public:
  // Adds `weight` copies of `value_ns`. Weights <= 0 are ignored.
  [[gnu::always_inline]] void add(int64_t value_ns, int64_t weight) {
    if (weight <= 0) return;
    total_ += weight;
    merged_ = false;
    // Unsigned: a value below the window wraps to a large offset (no signed overflow).
    const uint64_t offset = static_cast<uint64_t>(value_ns) - static_cast<uint64_t>(window_lo_);
    if (offset < window_.size()) {
      window_[offset] += static_cast<uint32_t>(weight);
      return;
    }
    push(value_ns, weight);
  }
  // Optional, before the first add(): every value in [lo_ns, lo_ns + width_ns) is summed straight
  // into a dense array of 32-bit weights (4 bytes per ns of width) instead of being kept as one
  // sample each; only the values outside are kept and sorted. The summary is the same whatever the
  // window (it only moves work). Ignored when something was added already, when width_ns <= 0, or
  // unless `max_total` — a bound on the total weight that will ever be added — is below 2^32 (so
  // no 32-bit sum can overflow). Returns whether the window was set.
  bool set_window(int64_t lo_ns, int64_t width_ns, int64_t max_total);
  // Room for `n` add() calls without growing (so that memory is n × 8 bytes, not up to twice).
  void reserve(size_t n) { packed_.reserve(n); }
  // Total multiplicity n (the length of the expanded list).
  int64_t count() const { return total_; }
  // mean/median/std/percentiles of the expanded list of seconds (value_ns * 1e-9), in ms.
  // An empty multiset gives all zeros, like vLLM's np.mean(x or 0).
  MetricSummary summarize(const std::vector<double>& percentiles);

 private:
  // Samples are kept packed in one word, value_ns << 24 | weight, while every value fits in 40
  // bits (18 minutes) and every weight in 24; the first one that does not moves them all to
  // (value, weight) pairs. Either way the merge gives the same distinct values and weights.
  static constexpr int kWeightBits = 24;
  static constexpr int64_t kMaxPackedWeight = int64_t{1} << kWeightBits;
  static constexpr int64_t kMaxPackedValue = int64_t{1} << (64 - kWeightBits);
  void push(int64_t value_ns, int64_t weight) {
    if (packed_mode_ && value_ns >= 0 && value_ns < kMaxPackedValue && weight < kMaxPackedWeight) {
      packed_.push_back((static_cast<uint64_t>(value_ns) << kWeightBits) |
                        static_cast<uint64_t>(weight));
      return;
    }
    add_wide(value_ns, weight);
  }
  void add_wide(int64_t value_ns, int64_t weight);
  void sort_and_merge();
  // sort_and_merge() of packed_ mostly through a dense per-value array; false (nothing done) when
  // more than a quarter of the values lie n/2 ns or more above the smallest.
  bool merge_by_histogram();
  // Folds window_ into distinct_/cumulative_ (which hold the values outside it) and frees it.
  void merge_window();
  double at_seconds(int64_t k) const;  // k-th order statistic (0-based) of the expanded list

  bool packed_mode_ = true;
  std::vector<uint64_t> packed_;
  std::vector<std::pair<int64_t, int64_t>> values_;  // wide mode: (value_ns, weight)
  // set_window(): Σ weights of value window_lo_ + i at i; empty when there is no window.
  int64_t window_lo_ = 0;
  std::vector<uint32_t> window_;
  // After the merge: the distinct values, ascending, and Σ weights of distinct[0..i].
  std::vector<int64_t> distinct_;
  std::vector<int64_t> cumulative_;
  int64_t total_ = 0;
  bool merged_ = true;
};

MetricSummary summarize_seconds(std::vector<double>& values,
                                const std::vector<double>& percentiles);

// numpy's _lerp (numpy/lib/function_base.py): a + (b−a)·t, or b − (b−a)·(1−t) when t ≥ 0.5.
double numpy_lerp(double a, double b, double t);

}  // namespace servesim::metrics::detail

#endif  // SERVESIM_SIM_METRICS_SAMPLE_STATS_H_
