// Workload = ArrivalSequence (arrival_process.h) x Dataset (random_dataset.h,
// shared_prefix_dataset.h): arrival i goes to the dataset's i-th request, as in vLLM's
// get_request, which walks input_requests in order and pairs request i with delay_ts[i].
#include "workloads/workload.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "sim/base/error.h"
#include "workloads/arrival_process.h"
#include "workloads/dataset.h"
#include "workloads/flag_format.h"
#include "workloads/random_dataset.h"
#include "workloads/shared_prefix_dataset.h"

namespace servesim::workloads {
namespace {

using detail::format_flag_value;

constexpr int64_t kMaxTokens = std::numeric_limits<int32_t>::max();
// Arrival times become int64 nanoseconds; 1e9 s (about 31.7 years) stays far inside that range.
constexpr double kMaxSpanS = 1e9;

std::string str(int64_t v) { return std::to_string(v); }

[[noreturn]] void fail(const std::string& flag, const std::string& value,
                       const std::string& expected) {
  throw ConfigError(flag + ": " + value + " is out of range; expected " + expected);
}

void require_at_least(const char* flag, int64_t value, int64_t min) {
  if (value < min) {
    fail(flag, str(value), "an integer >= " + str(min));
  }
}

RandomDatasetParams random_params(const WorkloadConfig& c) {
  RandomDatasetParams p;
  p.num_prompts = c.num_prompts;
  p.input_len = c.random_input_len;
  p.output_len = c.random_output_len;
  p.range_ratio = c.random_range_ratio;
  p.prefix_len = c.random_prefix_len;
  return p;
}

SharedPrefixDatasetParams gsp_params(const WorkloadConfig& c) {
  SharedPrefixDatasetParams p;
  p.num_groups = c.gsp_num_groups;
  p.prompts_per_group = c.gsp_prompts_per_group;
  p.system_prompt_len = c.gsp_system_prompt_len;
  p.question_len = c.gsp_question_len;
  p.output_len = c.gsp_output_len;
  return p;
}

// Checks the --random-* flags with vLLM's rules (RandomDataset.sample / get_sampling_params).
void validate_random(const WorkloadConfig& c) {
  const double r = c.random_range_ratio;
  if (!(r >= 0.0 && r < 1.0)) {  // also rejects NaN
    fail("--random-range-ratio", format_flag_value(r), "a value in [0, 1)");
  }
  // vLLM accepts an empty body (input len 0) when a prefix carries the prompt; see below.
  require_at_least("--random-input-len", c.random_input_len, 0);
  require_at_least("--random-prefix-len", c.random_prefix_len, 0);
  // Output lengths are generated exactly (ignore_eos); 0 would be silently raised to 1 by vLLM.
  require_at_least("--random-output-len", c.random_output_len, 1);

  const LengthRange in = vllm_random_length_range(c.random_input_len, r, 0);
  const LengthRange out = vllm_random_length_range(c.random_output_len, r, 1);
  // RandomDataset.sample: "the minimum possible total input tokens (prefix + sampled)" >= 1.
  if (c.random_prefix_len + in.lo < 1) {
    throw ConfigError("--random-input-len: " + str(c.random_input_len) +
                      " is too small; with --random-range-ratio " + format_flag_value(r) +
                      " and --random-prefix-len " + str(c.random_prefix_len) +
                      " the shortest prompt would have " + str(c.random_prefix_len + in.lo) +
                      " tokens; expected prefix_len + floor(input_len * (1 - range_ratio)) >= 1");
  }
  if (c.random_prefix_len + in.hi > kMaxTokens) {
    throw ConfigError("--random-input-len: " + str(c.random_input_len) +
                      " with --random-prefix-len " + str(c.random_prefix_len) +
                      " gives prompts of up to " + str(c.random_prefix_len + in.hi) +
                      " tokens; expected at most " + str(kMaxTokens));
  }
  if (out.hi > kMaxTokens) {
    fail("--random-output-len", str(c.random_output_len),
         "a length whose range stays within " + str(kMaxTokens) + " tokens");
  }
}

// Checks the --gsp-* flags. SGLang's fixed-length mode (range ratio 1) needs every length >= 1.
void validate_gsp(const WorkloadConfig& c) {
  require_at_least("--gsp-num-groups", c.gsp_num_groups, 1);
  require_at_least("--gsp-prompts-per-group", c.gsp_prompts_per_group, 1);
  require_at_least("--gsp-system-prompt-len", c.gsp_system_prompt_len, 1);
  require_at_least("--gsp-question-len", c.gsp_question_len, 1);
  require_at_least("--gsp-output-len", c.gsp_output_len, 1);
  const int64_t total =
      static_cast<int64_t>(c.gsp_num_groups) * static_cast<int64_t>(c.gsp_prompts_per_group);
  if (total > kMaxTokens) {
    throw ConfigError("--gsp-prompts-per-group: " + str(c.gsp_num_groups) + " groups x " +
                      str(c.gsp_prompts_per_group) + " prompts = " + str(total) +
                      " requests; expected at most " + str(kMaxTokens));
  }
  const int64_t prompt =
      static_cast<int64_t>(c.gsp_system_prompt_len) + static_cast<int64_t>(c.gsp_question_len);
  if (prompt > kMaxTokens) {
    throw ConfigError("--gsp-question-len: system prompt " + str(c.gsp_system_prompt_len) +
                      " + question " + str(c.gsp_question_len) + " = " + str(prompt) +
                      " tokens; expected at most " + str(kMaxTokens));
  }
}

// Number of requests the config produces: --num-prompts for random; groups x prompts per group
// for generated-shared-prefix, which (like SGLang) does not read --num-prompts.
int64_t request_count(const WorkloadConfig& c) {
  if (c.dataset_name == "generated-shared-prefix") {
    return static_cast<int64_t>(c.gsp_num_groups) * static_cast<int64_t>(c.gsp_prompts_per_group);
  }
  return c.num_prompts;
}

void validate_arrivals(double rate, double burstiness, const std::string& process, int64_t n) {
  if (!(rate > 0.0)) {  // also rejects NaN; +inf is allowed
    fail("--request-rate", format_flag_value(rate), "a number of requests/s > 0, or inf");
  }
  if (!(burstiness > 0.0)) {  // also rejects NaN; +inf is vLLM's constant-rate limit
    fail("--burstiness", format_flag_value(burstiness),
         "a value > 0 (1 = Poisson, < 1 burstier, > 1 more regular)");
  }
  if (process != "poisson" && process != "constant") {
    throw ConfigError("--arrival-process: \"" + process +
                      "\" is not supported; expected poisson or constant");
  }
  if (process == "constant" && burstiness != 1.0) {
    throw ConfigError("--burstiness: " + format_flag_value(burstiness) +
                      " has no effect with --arrival-process constant; expected 1 (the default)");
  }
  if (std::isfinite(rate) && static_cast<double>(n) / rate > kMaxSpanS) {
    throw ConfigError("--request-rate: " + format_flag_value(rate) + " with " + str(n) +
                      " requests spans " + format_flag_value(static_cast<double>(n) / rate) +
                      " s of simulated time; expected at most " + format_flag_value(kMaxSpanS) +
                      " s");
  }
}

// Pairs the i-th arrival with the dataset's i-th request; ids count up in that (arrival) order.
class ComposedWorkload final : public Workload {
 public:
  ComposedWorkload(std::unique_ptr<Dataset> dataset, ArrivalSequence arrivals)
      : dataset_(std::move(dataset)), arrivals_(std::move(arrivals)) {
    SERVESIM_CHECK(dataset_->size() == arrivals_.size(), "arrival and dataset sizes differ");
  }

  std::optional<RequestSpec> next() override {
    if (next_id_ == dataset_->size()) {
      return std::nullopt;
    }
    RequestSpec spec = dataset_->next();
    spec.id = next_id_++;
    spec.arrival = SimTime::from_seconds_ceil(arrivals_.next_s());
    return spec;
  }

  int64_t size() const override { return dataset_->size(); }

 private:
  std::unique_ptr<Dataset> dataset_;
  ArrivalSequence arrivals_;
  int64_t next_id_ = 0;
};

}  // namespace

void validate(const WorkloadConfig& config) {
  require_at_least("--num-prompts", config.num_prompts, 1);
  if (config.dataset_name == "random") {
    validate_random(config);
  } else if (config.dataset_name == "generated-shared-prefix") {
    validate_gsp(config);
  } else {
    throw ConfigError("--dataset-name: \"" + config.dataset_name +
                      "\" is not supported; expected random or generated-shared-prefix");
  }
  validate_arrivals(config.request_rate, config.burstiness, config.arrival_process,
                    request_count(config));
}

std::unique_ptr<Workload> make_workload(const WorkloadConfig& config) {
  validate(config);
  std::unique_ptr<Dataset> dataset;
  if (config.dataset_name == "generated-shared-prefix") {
    dataset = std::make_unique<SharedPrefixDataset>(gsp_params(config), config.seed);
  } else {
    dataset = std::make_unique<RandomDataset>(random_params(config), config.seed);
  }
  ArrivalSequence arrivals(dataset->size(), config.request_rate, config.burstiness,
                           config.arrival_process, config.seed);
  return std::make_unique<ComposedWorkload>(std::move(dataset), std::move(arrivals));
}

std::vector<double> arrival_times_s(int64_t n, double rate, double burstiness,
                                    const std::string& process, uint64_t seed) {
  require_at_least("--num-prompts", n, 1);
  validate_arrivals(rate, burstiness, process, n);
  ArrivalSequence arrivals(n, rate, burstiness, process, seed);
  std::vector<double> times;
  times.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    times.push_back(arrivals.next_s());
  }
  return times;
}

}  // namespace servesim::workloads
