#include "workloads/shared_prefix_dataset.h"

#include <utility>

#include "sim/base/error.h"
#include "sim/base/rng.h"

namespace servesim::workloads {

SharedPrefixDataset::SharedPrefixDataset(const SharedPrefixDatasetParams& params, uint64_t seed)
    : params_(params) {
  SERVESIM_CHECK(params.num_groups >= 1 && params.prompts_per_group >= 1,
                 "generated-shared-prefix needs at least one group and one prompt per group");
  const auto n =
      static_cast<size_t>(params.num_groups) * static_cast<size_t>(params.prompts_per_group);
  // Group-major order, as sample_generated_shared_prefix_requests builds input_requests.
  group_of_.reserve(n);
  for (int32_t g = 0; g < params.num_groups; ++g) {
    for (int32_t p = 0; p < params.prompts_per_group; ++p) {
      group_of_.push_back(g);
    }
  }
  // random.shuffle(input_requests): Fisher-Yates from the end, j uniform on [0, i]. Requests of
  // one group are identical (fixed lengths), so shuffling their group labels is the same thing.
  RngStream rng(seed, "gsp.shuffle");
  for (size_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(i)));
    std::swap(group_of_[i], group_of_[j]);
  }
}

RequestSpec SharedPrefixDataset::next() {
  SERVESIM_CHECK(next_ < group_of_.size(), "SharedPrefixDataset::next called past its size");
  RequestSpec spec;
  // validate() bounds system + question by INT32_MAX.
  spec.prompt_tokens = params_.system_prompt_len + params_.question_len;
  spec.output_tokens = params_.output_len;
  spec.prefix_group = group_of_[next_++];
  spec.prefix_tokens = params_.system_prompt_len;
  return spec;
}

}  // namespace servesim::workloads
