// SGLang's `generated-shared-prefix` dataset: groups of requests that share a system prompt.
//
// Source read: sgl-project/sglang `python/sglang/benchmark/datasets/generated_shared_prefix.py`,
// function `sample_generated_shared_prefix_requests` (and `GeneratedSharedPrefixDataset.from_args`;
// older releases had the same function in `python/sglang/bench_serving.py`). What it does:
//   * num_groups system prompts, one per group, and num_groups * prompts_per_group questions;
//     lengths from compute_random_lens(L, range_ratio) = randint([max(int(L*r), 1), L]) with
//     `--gsp-range-ratio` defaulting to 1.0, i.e. every system prompt, question and output has
//     exactly the configured length (older releases had no range ratio: always fixed).
//   * requests are built group by group (prompt = system + "\n\n" + question), then
//     `random.shuffle(input_requests)` (skipped only with `--gsp-ordered`).
//   * `--num-prompts` is not passed to the function: the dataset always has
//     num_groups * prompts_per_group requests.
// What servesim matches: fixed lengths (SGLang's default range ratio 1.0; no --gsp-range-ratio
// here), group-major construction, then a uniform Fisher-Yates shuffle in the same direction
// as CPython's random.shuffle (i from n-1 down to 1, j uniform in [0, i]) drawn from the
// RngStream "gsp.shuffle"; size = groups * prompts_per_group, whatever --num-prompts says.
// Departure: prompt_tokens = system + question exactly; SGLang re-tokenizes the joined text, which
// adds the "\n\n" separator and special tokens (a few tokens more).
#ifndef SERVESIM_WORKLOADS_SHARED_PREFIX_DATASET_H_
#define SERVESIM_WORKLOADS_SHARED_PREFIX_DATASET_H_

#include <cstdint>
#include <vector>

#include "workloads/dataset.h"

namespace servesim::workloads {

// Settings of the generated-shared-prefix dataset (the --gsp-* flags).
struct SharedPrefixDatasetParams {
  int32_t num_groups = 64;           // --gsp-num-groups
  int32_t prompts_per_group = 16;    // --gsp-prompts-per-group
  int32_t system_prompt_len = 2048;  // --gsp-system-prompt-len: shared within a group
  int32_t question_len = 128;        // --gsp-question-len: unique per request
  int32_t output_len = 256;          // --gsp-output-len
};

// Every request: prompt = system_prompt_len + question_len, output = output_len,
// prefix_group = its group index in [0, num_groups), prefix_tokens = system_prompt_len.
// Each group appears exactly prompts_per_group times, in shuffled order.
// Memory: one int32 group index per request (the shuffled order); nothing else per request.
class SharedPrefixDataset final : public Dataset {
 public:
  // REQUIRES: params pass workloads::validate (checked there, not here).
  SharedPrefixDataset(const SharedPrefixDatasetParams& params, uint64_t seed);

  int64_t size() const override { return static_cast<int64_t>(group_of_.size()); }
  RequestSpec next() override;

 private:
  SharedPrefixDatasetParams params_;
  std::vector<int32_t> group_of_;  // group index of the request at each send position
  size_t next_ = 0;
};

}  // namespace servesim::workloads

#endif  // SERVESIM_WORKLOADS_SHARED_PREFIX_DATASET_H_
