#include "workloads/random_dataset.h"

#include <algorithm>
#include <cmath>

#include "sim/base/error.h"

namespace servesim::workloads {
namespace {

// Draws from [lo, hi]; a one-value range draws nothing (the stream is private to this length).
int64_t draw(RngStream& rng, const LengthRange& range) {
  return range.lo == range.hi ? range.lo : rng.uniform_int(range.lo, range.hi);
}

}  // namespace

LengthRange vllm_random_length_range(int64_t mean_len, double range_ratio, int64_t min_lo) {
  SERVESIM_CHECK(mean_len >= 0 && range_ratio >= 0.0 && range_ratio < 1.0,
                 "length range arguments out of domain");
  // get_sampling_params: math.floor(L * (1 - range_ratio)), math.ceil(L * (1 + range_ratio)).
  // Python evaluates int * float in double, exactly as below.
  const auto len = static_cast<double>(mean_len);
  LengthRange range;
  range.lo = static_cast<int64_t>(std::floor(len * (1.0 - range_ratio)));
  range.hi = static_cast<int64_t>(std::ceil(len * (1.0 + range_ratio)));
  // output_low = max(output_low, 1); output_high = max(output_high, 1).
  range.lo = std::max(range.lo, min_lo);
  range.hi = std::max(range.hi, min_lo);
  return range;
}

LengthRange legacy_random_length_range(int64_t mean_len, double range_ratio, int64_t min_lo) {
  SERVESIM_CHECK(mean_len >= 0 && range_ratio >= 0.0 && range_ratio <= 1.0,
                 "length range arguments out of domain");
  const double r = range_ratio == 0.0 ? 1.0 : range_ratio;
  LengthRange range;
  // int(L * r) truncates toward zero (both factors are >= 0).
  range.lo = static_cast<int64_t>(static_cast<double>(mean_len) * r);
  range.hi = mean_len;
  range.lo = std::max(range.lo, min_lo);
  range.hi = std::max(range.hi, min_lo);
  return range;
}

namespace {
LengthRange length_range(const RandomDatasetParams& p, int64_t len, int64_t min_lo) {
  return p.legacy_range ? legacy_random_length_range(len, p.range_ratio, min_lo)
                        : vllm_random_length_range(len, p.range_ratio, min_lo);
}
}  // namespace

RandomDataset::RandomDataset(const RandomDatasetParams& params, uint64_t seed)
    : params_(params),
      input_range_(length_range(params, params.input_len, 0)),
      output_range_(length_range(params, params.output_len, 1)),
      input_rng_(seed, "random.input_len"),
      output_rng_(seed, "random.output_len") {}

RequestSpec RandomDataset::next() {
  RequestSpec spec;
  const int64_t input = draw(input_rng_, input_range_);
  const int64_t output = draw(output_rng_, output_range_);
  // validate() bounds prefix + input_range.hi and output_range.hi by INT32_MAX.
  spec.prompt_tokens = static_cast<int32_t>(params_.prefix_len + input);
  spec.output_tokens = static_cast<int32_t>(output);
  if (params_.prefix_len > 0) {
    // One prefix, generated once in RandomDataset.sample (get_prefix), shared by every request.
    spec.prefix_group = 0;
    spec.prefix_tokens = params_.prefix_len;
  }
  return spec;
}

}  // namespace servesim::workloads
