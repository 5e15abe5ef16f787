// The `random` dataset of `vllm bench serve`: integer-uniform prompt and output lengths around
// the configured means, plus one prefix shared by every request.
//
// Source read: vllm-project/vllm `vllm/benchmarks/datasets.py`, class `RandomDataset`, functions
// `sample` and `get_sampling_params` (current main, numpy default_rng version). What it does:
//   real_input_len = max(0, input_len - tokenizer.num_special_tokens_to_add())
//   input_low  = math.floor(real_input_len * (1 - range_ratio))
//   input_high = math.ceil (real_input_len * (1 + range_ratio))
//   output_low  = max(math.floor(output_len * (1 - range_ratio)), 1)
//   output_high = max(math.ceil (output_len * (1 + range_ratio)), 1)
//   input_lens  = rng.integers(input_low,  input_high + 1)      # inclusive [low, high]
//   output_lens = rng.integers(output_low, output_high + 1)
//   prompt = prefix (prefix_len tokens, drawn once, shared by all) + input_lens[i] tokens
//   sample() raises if prefix_len + floor(real_input_len * (1 - range_ratio)) < 1;
//   get_sampling_params() raises unless 0 <= range_ratio < 1.
// What servesim matches, and where it departs:
//   * The bounds are computed with the same double arithmetic (L * (1 - r), L * (1 + r), then
//     floor / ceil), so they agree with vLLM bit for bit, quirks included: L = 100, r = 0.1 gives
//     [90, 111] because 100 * 1.1 == 110.00000000000001 in binary floating point.
//   * num_special_tokens is taken as 0 (servesim has no tokenizer). With a Llama tokenizer
//     (one BOS) vLLM samples around input_len - 1 and the server then adds the BOS back.
//   * The output lower bound is raised to 1 as vLLM does. This moves the bound of the uniform
//     range (the samples stay exactly uniform on the new range); it never clamps samples.
//   * vLLM re-tokenizes the decoded prompt and may end a few tokens off the target; servesim's
//     prompt lengths are exactly prefix + sampled input length.
//   * Lengths come from two independent streams ("random.input_len", "random.output_len")
//     instead of one numpy generator, so changing --random-output-len leaves input lengths (and
//     arrivals) unchanged.
#ifndef SERVESIM_WORKLOADS_RANDOM_DATASET_H_
#define SERVESIM_WORKLOADS_RANDOM_DATASET_H_

#include <cstdint>

#include "sim/base/rng.h"
#include "workloads/dataset.h"

namespace servesim::workloads {

// An inclusive integer range [lo, hi] of token counts.
struct LengthRange {
  int64_t lo = 0;
  int64_t hi = 0;
  friend bool operator==(const LengthRange&, const LengthRange&) = default;
};

// vLLM's range for a mean length L and ratio r: [floor(L(1-r)), ceil(L(1+r))], with the lower
// bound raised to `min_lo` (1 for output lengths, 0 for input lengths).
// REQUIRES: L >= 0, 0 <= r < 1.
LengthRange vllm_random_length_range(int64_t mean_len, double range_ratio, int64_t min_lo);

// Older benchmark_serving.py (sample_random_requests): np.random.randint(int(L·r), L + 1), i.e.
// [int(L·r), L], whose --random-range-ratio default was 1.0 (fixed L). r = 0 (servesim's default,
// the current client's "fixed L") is read as that default, so both rules give fixed L by default.
// The lower bound is raised to `min_lo` as above. REQUIRES: L >= 0, 0 <= r <= 1.
LengthRange legacy_random_length_range(int64_t mean_len, double range_ratio, int64_t min_lo);

// Settings of the random dataset (the --random-* flags; see WorkloadConfig for defaults).
struct RandomDatasetParams {
  int64_t num_prompts = 1000;  // --num-prompts
  int32_t input_len = 1024;    // --random-input-len (tokens after the prefix)
  int32_t output_len = 128;    // --random-output-len
  double range_ratio = 0.0;    // --random-range-ratio
  bool legacy_range = false;   // --random-range-rule legacy: legacy_random_length_range
  int32_t prefix_len = 0;      // --random-prefix-len
};

// Request i: prompt = prefix_len + U[input range], output = U[output range]; prefix_group 0 and
// prefix_tokens = prefix_len when prefix_len > 0, else prefix_group -1.
// Lengths are drawn lazily, one request per next(): memory is O(1) in num_prompts.
class RandomDataset final : public Dataset {
 public:
  // REQUIRES: params pass workloads::validate (checked there, not here).
  RandomDataset(const RandomDatasetParams& params, uint64_t seed);

  int64_t size() const override { return params_.num_prompts; }
  RequestSpec next() override;

  LengthRange input_range() const { return input_range_; }  // before the prefix is added
  LengthRange output_range() const { return output_range_; }

 private:
  RandomDatasetParams params_;
  LengthRange input_range_;
  LengthRange output_range_;
  RngStream input_rng_;
  RngStream output_rng_;
};

}  // namespace servesim::workloads

#endif  // SERVESIM_WORKLOADS_RANDOM_DATASET_H_
