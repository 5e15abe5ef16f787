#include "sim/metrics/sample_stats.h"

#include <algorithm>
#include <cmath>

#include "sim/base/error.h"
#include "sim/metrics/radix_sort.h"

namespace servesim::metrics {
namespace detail {
namespace {

constexpr double kMsPerSecond = 1000.0;  // vLLM multiplies every summary by 1000
__extension__ typedef __int128 Int128;   // exact Σ weight·ns (GCC/Clang extension)

// np.percentile(x, p) for the default method="linear" (numpy ≥ 1.22 _quantile):
// virtual index = (n − 1)·(p/100); previous = floor, next = previous + 1; at or above n − 1 both
// are the last element; gamma = virtual − previous; result = _lerp(x[prev], x[next], gamma).
// `at(k)` returns the k-th smallest element. REQUIRES: n > 0, 0 <= p <= 100.
template <typename At>
double percentile_at(int64_t n, double p, const At& at) {
  const double q = p / 100.0;  // np.true_divide(q, 100)
  const double virtual_index = static_cast<double>(n - 1) * q;
  if (virtual_index >= static_cast<double>(n - 1)) return at(n - 1);
  if (virtual_index <= 0) return at(0);
  const double previous = std::floor(virtual_index);
  const auto k = static_cast<int64_t>(previous);
  return numpy_lerp(at(k), at(k + 1), virtual_index - previous);
}

// np.median: the middle element, or np.mean of the two middle ones ((a + b) / 2).
template <typename At>
double median_at(int64_t n, const At& at) {
  if (n % 2 == 1) return at(n / 2);
  return (at(n / 2 - 1) + at(n / 2)) / 2.0;
}

MetricSummary zero_summary(const std::vector<double>& percentiles) {
  // vLLM: np.mean(x or 0) etc. — an empty list becomes the scalar 0, so every statistic is 0.
  MetricSummary s;
  for (double p : percentiles) s.percentiles_ms.emplace_back(p, 0.0);
  return s;
}

}  // namespace

double numpy_lerp(double a, double b, double t) {
  const double diff_b_a = b - a;
  if (t >= 0.5) return b - diff_b_a * (1 - t);
  return a + diff_b_a * t;
}

void WeightedNsSamples::add_wide(int64_t value_ns, int64_t weight) {
  if (packed_mode_) {
    packed_mode_ = false;
    values_.reserve(packed_.size() + 1);
    for (const uint64_t p : packed_) {
      values_.emplace_back(static_cast<int64_t>(p >> kWeightBits),
                           static_cast<int64_t>(p & (kMaxPackedWeight - 1)));
    }
    std::vector<uint64_t>().swap(packed_);
  }
  values_.emplace_back(value_ns, weight);
}

bool WeightedNsSamples::merge_by_histogram() {
  // Step durations: millions of samples, most within a few milliseconds of the shortest. Σ
  // weights per value in a dense array over [lo, lo + window) gives their distinct values and
  // cumulative weights in one scattered pass and one pass over the window, instead of a radix
  // sort's four or five; the longer ones (steps with a prefill) are radix-sorted apart and follow,
  // all being larger. The window ends at the 95th percentile of a sample of the values and spans
  // at most n ns (32-bit sums: n/2 words), so memory stays within the sort's (2n words).
  const std::size_t n = packed_.size();
  if (n < 4096 || total_ >= (int64_t{1} << 32)) return false;  // 32-bit sums cannot overflow
  uint64_t lo = ~uint64_t{0};
  for (const uint64_t p : packed_) lo = std::min(lo, p >> kWeightBits);
  std::vector<uint64_t> sample;
  const std::size_t stride = n / 2048;
  for (std::size_t i = 0; i < n; i += stride) sample.push_back(packed_[i] >> kWeightBits);
  std::sort(sample.begin(), sample.end());
  const uint64_t window = std::min<uint64_t>(n, sample[sample.size() * 95 / 100] - lo + 1);
  std::size_t outside = 0;
  uint64_t hi = lo;
  for (const uint64_t p : packed_) {
    const uint64_t v = p >> kWeightBits;
    if (v - lo < window) {
      hi = std::max(hi, v);
    } else {
      ++outside;
    }
  }
  if (outside > n / 4) return false;
  std::vector<uint32_t> weight(static_cast<std::size_t>(hi - lo + 1), 0);
  std::vector<uint64_t> rest;
  rest.reserve(outside);
  for (const uint64_t p : packed_) {  // every weight is >= 1: a value is present iff its sum > 0
    const uint64_t v = p >> kWeightBits;
    if (v - lo < window) {
      weight[static_cast<std::size_t>(v - lo)] += static_cast<uint32_t>(p & (kMaxPackedWeight - 1));
    } else {
      rest.push_back(p);
    }
  }
  std::vector<uint64_t>().swap(packed_);
  std::size_t d = 0;
  for (const uint32_t w : weight) d += w > 0;
  {
    std::vector<uint64_t> scratch;
    radix_sort(rest, scratch, [](uint64_t x) { return x >> kWeightBits; });
  }
  for (std::size_t i = 0; i < rest.size(); ++i) {
    d += i == 0 || (rest[i] >> kWeightBits) != (rest[i - 1] >> kWeightBits);
  }
  distinct_.reserve(d);
  cumulative_.reserve(d);
  int64_t running = 0;
  for (std::size_t i = 0; i < weight.size(); ++i) {
    if (weight[i] == 0) continue;
    running += weight[i];
    distinct_.push_back(static_cast<int64_t>(lo + i));
    cumulative_.push_back(running);
  }
  std::vector<uint32_t>().swap(weight);
  for (const uint64_t p : rest) {
    const auto value = static_cast<int64_t>(p >> kWeightBits);
    running += static_cast<int64_t>(p & (kMaxPackedWeight - 1));
    if (!distinct_.empty() && distinct_.back() == value) {
      cumulative_.back() = running;
    } else {
      distinct_.push_back(value);
      cumulative_.push_back(running);
    }
  }
  return true;
}

bool WeightedNsSamples::set_window(int64_t lo_ns, int64_t width_ns, int64_t max_total) {
  if (total_ != 0 || !merged_ || !distinct_.empty() || width_ns <= 0 ||
      max_total >= (int64_t{1} << 32)) {
    return false;
  }
  window_lo_ = lo_ns;
  window_.assign(static_cast<std::size_t>(width_ns), 0);
  return true;
}

void WeightedNsSamples::merge_window() {
  // distinct_ holds the values outside the window, ascending: those below it, then those above.
  std::size_t d = 0;
  for (const uint32_t w : window_) d += w > 0;
  std::vector<int64_t> distinct, cumulative;
  distinct.reserve(distinct_.size() + d);
  cumulative.reserve(distinct_.size() + d);
  int64_t running = 0;
  std::size_t i = 0;
  const auto take_outside = [&](std::size_t j) {
    running += cumulative_[j] - (j > 0 ? cumulative_[j - 1] : 0);
    distinct.push_back(distinct_[j]);
    cumulative.push_back(running);
  };
  for (; i < distinct_.size() && distinct_[i] < window_lo_; ++i) take_outside(i);
  for (std::size_t k = 0; k < window_.size(); ++k) {
    if (window_[k] == 0) continue;  // every weight is >= 1: a value is present iff its sum > 0
    running += window_[k];
    distinct.push_back(window_lo_ + static_cast<int64_t>(k));
    cumulative.push_back(running);
  }
  for (; i < distinct_.size(); ++i) take_outside(i);
  distinct_ = std::move(distinct);
  cumulative_ = std::move(cumulative);
  std::vector<uint32_t>().swap(window_);
}

void WeightedNsSamples::sort_and_merge() {
  if (merged_) return;
  if (!distinct_.empty()) {
    // add() after an earlier merge: the merged values join the new ones.
    const std::vector<int64_t> distinct = std::move(distinct_);
    const std::vector<int64_t> cumulative = std::move(cumulative_);
    for (std::size_t i = 0; i < distinct.size(); ++i) {
      push(distinct[i], cumulative[i] - (i > 0 ? cumulative[i - 1] : 0));
    }
  }
  distinct_.clear();
  cumulative_.clear();
  if (packed_mode_ && merge_by_histogram()) {
    // Merged without sorting.
  } else if (packed_mode_) {
    // By value only (the high bits): equal values merge below, whatever the order of weights.
    {
      std::vector<uint64_t> scratch;
      radix_sort(packed_, scratch, [](uint64_t x) { return x >> kWeightBits; });
    }
    std::size_t d = 0;
    for (std::size_t i = 0; i < packed_.size(); ++i) {
      d += i == 0 || (packed_[i] >> kWeightBits) != (packed_[i - 1] >> kWeightBits);
    }
    cumulative_.reserve(d);
    distinct_.reserve(d);
    int64_t running = 0;
    for (std::size_t i = 0; i < packed_.size(); ++i) {
      const auto value = static_cast<int64_t>(packed_[i] >> kWeightBits);
      running += static_cast<int64_t>(packed_[i] & (kMaxPackedWeight - 1));
      if (!distinct_.empty() && distinct_.back() == value) {
        cumulative_.back() = running;
      } else {
        distinct_.push_back(value);
        cumulative_.push_back(running);
      }
    }
    std::vector<uint64_t>().swap(packed_);
  } else {
    std::vector<std::pair<int64_t, int64_t>> scratch;
    radix_sort(values_, scratch,
               [](const std::pair<int64_t, int64_t>& x) { return int64_order_key(x.first); });
    std::vector<std::pair<int64_t, int64_t>>().swap(scratch);
    int64_t running = 0;
    for (const auto& [value, weight] : values_) {
      running += weight;
      if (!distinct_.empty() && distinct_.back() == value) {
        cumulative_.back() = running;
      } else {
        distinct_.push_back(value);
        cumulative_.push_back(running);
      }
    }
    std::vector<std::pair<int64_t, int64_t>>().swap(values_);
    packed_mode_ = true;  // later add()s start a new packed batch
  }
  if (!window_.empty()) merge_window();  // later add()s are kept as samples
  merged_ = true;
}

double WeightedNsSamples::at_seconds(int64_t k) const {
  // The first distinct value whose cumulative weight exceeds k holds order statistic k.
  const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), k);
  SERVESIM_CHECK(it != cumulative_.end(), "order statistic out of range");
  const int64_t ns = distinct_[static_cast<std::size_t>(it - cumulative_.begin())];
  return static_cast<double>(ns) * 1e-9;  // the same conversion as SimTime::seconds()
}

MetricSummary WeightedNsSamples::summarize(const std::vector<double>& percentiles) {
  if (total_ == 0) return zero_summary(percentiles);
  sort_and_merge();
  const int64_t n = total_;
  const auto at = [this](int64_t k) { return at_seconds(k); };

  // Exact Σ w·v in integer nanoseconds (no rounding until the final division).
  const auto weight = [this](std::size_t i) {
    return cumulative_[i] - (i > 0 ? cumulative_[i - 1] : 0);
  };
  Int128 sum_ns = 0;
  for (std::size_t i = 0; i < distinct_.size(); ++i) {
    sum_ns += static_cast<Int128>(distinct_[i]) * weight(i);
  }
  const double mean_s =
      static_cast<double>(static_cast<long double>(sum_ns) / static_cast<long double>(n) * 1e-9L);
  long double sq = 0;
  for (std::size_t i = 0; i < distinct_.size(); ++i) {
    const long double d =
        static_cast<long double>(static_cast<double>(distinct_[i]) * 1e-9 - mean_s);
    sq += d * d * static_cast<long double>(weight(i));
  }
  MetricSummary s;
  s.mean_ms = mean_s * kMsPerSecond;
  s.median_ms = median_at(n, at) * kMsPerSecond;
  s.std_ms = static_cast<double>(std::sqrt(sq / static_cast<long double>(n))) * kMsPerSecond;
  for (double p : percentiles)
    s.percentiles_ms.emplace_back(p, percentile_at(n, p, at) * kMsPerSecond);
  return s;
}

MetricSummary summarize_seconds(std::vector<double>& values,
                                const std::vector<double>& percentiles) {
  if (values.empty()) return zero_summary(percentiles);
  radix_sort_doubles(values);  // std::sort's order in linear time (radix_sort.h says why sort)
  const auto n = static_cast<int64_t>(values.size());
  const auto at = [&values](int64_t k) { return values[static_cast<std::size_t>(k)]; };

  long double sum = 0;
  for (double v : values) sum += v;
  const double mean_s = static_cast<double>(sum / static_cast<long double>(n));
  long double sq = 0;
  for (double v : values) {
    const long double d = static_cast<long double>(v - mean_s);
    sq += d * d;
  }
  MetricSummary s;
  s.mean_ms = mean_s * kMsPerSecond;
  s.median_ms = median_at(n, at) * kMsPerSecond;
  s.std_ms = static_cast<double>(std::sqrt(sq / static_cast<long double>(n))) * kMsPerSecond;
  for (double p : percentiles)
    s.percentiles_ms.emplace_back(p, percentile_at(n, p, at) * kMsPerSecond);
  return s;
}

}  // namespace detail

double percentile_linear(const std::vector<double>& sorted_values, double p) {
  SERVESIM_CHECK(!sorted_values.empty(), "percentile of an empty list");
  return detail::percentile_at(
      static_cast<int64_t>(sorted_values.size()), p,
      [&sorted_values](int64_t k) { return sorted_values[static_cast<std::size_t>(k)]; });
}

}  // namespace servesim::metrics
