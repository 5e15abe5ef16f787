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
#include "sim/base/resource_limits.h"
#include "workloads/arrival_process.h"
#include "workloads/chat_template_workload.h"
#include "workloads/dataset.h"
#include "workloads/flag_format.h"
#include "workloads/length_datasets.h"
#include "workloads/lora_workload.h"
#include "workloads/random_dataset.h"
#include "workloads/session_workload.h"
#include "workloads/shared_prefix_dataset.h"
#include "workloads/trace_replay.h"
#include "workloads/trace_sessions.h"
#include "workloads/workload_classes.h"

namespace servesim::workloads {
namespace {

using detail::format_flag_value;

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
  p.legacy_range = c.random_range_rule == "legacy";
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
  const bool legacy = c.random_range_rule == "legacy";
  if (!c.random_range_rule.empty() && !legacy && c.random_range_rule != "symmetric") {
    throw ConfigError("--random-range-rule: \"" + c.random_range_rule +
                      "\" is not a rule; expected symmetric or legacy");
  }
  if (legacy ? !(r >= 0.0 && r <= 1.0) : !(r >= 0.0 && r < 1.0)) {  // also rejects NaN
    fail("--random-range-ratio", format_flag_value(r),
         legacy ? "a value in [0, 1] (legacy rule)" : "a value in [0, 1)");
  }
  // vLLM accepts an empty body (input len 0) when a prefix carries the prompt; see below.
  require_at_least("--random-input-len", c.random_input_len, 0);
  require_at_least("--random-prefix-len", c.random_prefix_len, 0);
  // Output lengths are generated exactly (ignore_eos); 0 would be silently raised to 1 by vLLM.
  require_at_least("--random-output-len", c.random_output_len, 1);

  const LengthRange in = legacy ? legacy_random_length_range(c.random_input_len, r, 0)
                                : vllm_random_length_range(c.random_input_len, r, 0);
  const LengthRange out = legacy ? legacy_random_length_range(c.random_output_len, r, 1)
                                 : vllm_random_length_range(c.random_output_len, r, 1);
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
  if (c.dataset_name == "prefix_repetition") {
    return (c.num_prompts / c.prefix_repetition_num_prefixes) * c.prefix_repetition_num_prefixes;
  }
  return c.num_prompts;
}

const char* kDatasetNames =
    "random, generated-shared-prefix, sharegpt, sharegpt-multiturn, custom, burstgpt, sonnet, "
    "prefix_repetition or trace";

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void validate_file_datasets(const WorkloadConfig& c) {
  const std::string& d = c.dataset_name;
  if (d == "sharegpt-multiturn" && !c.dataset_path.empty()) {
    throw ConfigError(
        "--dataset-path: set with --dataset-name sharegpt-multiturn, which reads the "
        "shipped multi-turn lengths; expected --dataset-name sharegpt to read '" +
        c.dataset_path + "'");
  }
  if (d == "sharegpt" || d == "sharegpt-multiturn") {
    if (!(c.sharegpt_chars_per_token > 0) || !std::isfinite(c.sharegpt_chars_per_token)) {
      fail("--sharegpt-chars-per-token", format_flag_value(c.sharegpt_chars_per_token),
           "a number of characters per token > 0 (4 for English text)");
    }
    require_at_least("--sharegpt-output-len", c.sharegpt_output_len, 0);
  } else if (d == "custom" || d == "burstgpt") {
    if (c.dataset_path.empty()) {
      throw ConfigError("--dataset-path: missing; --dataset-name " + d + " needs its " +
                        (d == "custom" ? "JSONL" : "CSV") + " file");
    }
    if (d == "custom" && c.custom_output_len != -1) {
      require_at_least("--custom-output-len", c.custom_output_len, 1);
    }
    if (d == "custom" && !(c.sharegpt_chars_per_token > 0)) {
      fail("--sharegpt-chars-per-token", format_flag_value(c.sharegpt_chars_per_token),
           "a number of characters per token > 0");
    }
  } else if (d == "sonnet") {
    require_at_least("--sonnet-input-len", c.sonnet_input_len, 1);
    require_at_least("--sonnet-output-len", c.sonnet_output_len, 1);
    require_at_least("--sonnet-prefix-len", c.sonnet_prefix_len, 0);
    if (c.sonnet_prefix_len > c.sonnet_input_len) {
      throw ConfigError("--sonnet-prefix-len: " + str(c.sonnet_prefix_len) +
                        " is longer than --sonnet-input-len " + str(c.sonnet_input_len) +
                        "; expected prefix <= input");
    }
  } else if (d == "prefix_repetition") {
    require_at_least("--prefix-repetition-prefix-len", c.prefix_repetition_prefix_len, 1);
    require_at_least("--prefix-repetition-suffix-len", c.prefix_repetition_suffix_len, 1);
    require_at_least("--prefix-repetition-num-prefixes", c.prefix_repetition_num_prefixes, 1);
    require_at_least("--prefix-repetition-output-len", c.prefix_repetition_output_len, 1);
    if (c.num_prompts < c.prefix_repetition_num_prefixes) {
      throw ConfigError("--num-prompts: " + str(c.num_prompts) +
                        " is smaller than --prefix-repetition-num-prefixes " +
                        str(c.prefix_repetition_num_prefixes) +
                        "; expected at least one prompt per prefix (vLLM raises here too)");
    }
    if (int64_t{c.prefix_repetition_prefix_len} + c.prefix_repetition_suffix_len > kMaxTokens) {
      fail("--prefix-repetition-suffix-len", str(c.prefix_repetition_suffix_len),
           "prefix + suffix <= " + str(kMaxTokens));
    }
  }
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
  ComposedWorkload(std::unique_ptr<Dataset> dataset, ArrivalSequence arrivals,
                   std::vector<std::string> class_names = {})
      : dataset_(std::move(dataset)),
        arrivals_(std::move(arrivals)),
        class_names_(std::move(class_names)) {
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
  std::vector<std::string> class_names() const override { return class_names_; }

 private:
  std::unique_ptr<Dataset> dataset_;
  ArrivalSequence arrivals_;
  std::vector<std::string> class_names_;
  int64_t next_id_ = 0;
};

// Checks --multi-turn, --num-turns, --think-time, --think-time-dist and --workload against the
// dataset. The workload file itself is checked when it is loaded (load_workload_classes).
void validate_sessions_and_classes(const WorkloadConfig& c) {
  if (c.dataset_name == "trace" && !c.workload_file.empty()) {
    throw ConfigError(
        "--workload: set with --dataset-name trace; a trace replays its recorded "
        "arrivals and lengths; expected another --dataset-name (or no --workload)");
  }
  if (c.dataset_name == "trace" && c.multi_turn) {
    // The trace gives the sessions, their turns and the think times (trace_sessions.h).
    if (c.think_time != 0.0 || c.think_time_dist != "constant") {
      throw ConfigError(
          "--think-time: set with --dataset-name trace --multi-turn; the think "
          "times come from the trace's send times; expected no --think-time / "
          "--think-time-dist");
    }
    // Whether the file carries sessions is checked when it is opened (TraceSessionWorkload).
    return;
  }
  if (!c.workload_file.empty() && c.dataset_name != "random") {
    throw ConfigError("--workload: set with --dataset-name " + c.dataset_name +
                      "; a workload file's classes give the lengths; expected --dataset-name "
                      "random (the default) or no --workload");
  }
  if (!c.multi_turn) return;
  require_at_least("--num-turns", c.num_turns, 1);
  if (!(c.think_time >= 0.0) || !std::isfinite(c.think_time) || c.think_time > kMaxSpanS) {
    fail("--think-time", format_flag_value(c.think_time),
         "seconds between an answer and the next turn, >= 0");
  }
  if (c.think_time_dist != "constant" && c.think_time_dist != "exponential") {
    throw ConfigError("--think-time-dist: \"" + c.think_time_dist +
                      "\" is not supported; expected constant or exponential");
  }
  if (c.dataset_name == "generated-shared-prefix" || c.dataset_name == "prefix_repetition" ||
      c.dataset_name == "sonnet" || c.random_prefix_len > 0) {
    throw ConfigError("--multi-turn: set with a shared-prefix dataset (" + c.dataset_name +
                      (c.random_prefix_len > 0 ? " with --random-prefix-len" : "") +
                      "); a conversation's prefix is its own history; expected --dataset-name "
                      "random (without --random-prefix-len), sharegpt, sharegpt-multiturn, "
                      "custom or burstgpt");
  }
  const int64_t total = c.num_prompts * static_cast<int64_t>(c.num_turns);
  if (c.num_prompts > kMaxTokens || total > kMaxTokens) {
    throw ConfigError("--num-turns: " + str(c.num_turns) + " turns x " + str(c.num_prompts) +
                      " conversations = " + str(total) + " requests; expected at most " +
                      str(kMaxTokens));
  }
  check_fits_in_memory("--num-prompts x --num-turns", total, "requests", 1024);
}

// Checks --endpoint: the two endpoints vllm bench serve sends to, and what the chat template
// cannot be added to.
void validate_endpoint(const WorkloadConfig& c) {
  if (c.endpoint != "/v1/completions" && c.endpoint != "/v1/chat/completions") {
    throw ConfigError("--endpoint: \"" + c.endpoint +
                      "\" is not modelled; expected /v1/completions or /v1/chat/completions");
  }
  if (!chat_endpoint(c)) return;
  if (c.dataset_name == "trace") {
    throw ConfigError(
        "--endpoint: /v1/chat/completions with --dataset-name trace is not modelled (a trace's "
        "lengths and prefix hashes are what its server prefilled, whatever the endpoint); "
        "expected --endpoint /v1/completions");
  }
  if (c.multi_turn) {
    throw ConfigError(
        "--endpoint: /v1/chat/completions with --multi-turn is not modelled (the template wraps "
        "every message of a conversation's history); expected --endpoint /v1/completions");
  }
  if (c.chat_template_tokens < 1 || c.chat_template_leading < 0 ||
      c.chat_template_leading > c.chat_template_tokens) {
    throw ConfigError(
        "--endpoint: /v1/chat/completions needs the model's chat template tokens "
        "(got " +
        str(c.chat_template_tokens) + ", " + str(c.chat_template_leading) +
        " leading); expected >= 1");
  }
}

}  // namespace

bool chat_endpoint(const WorkloadConfig& config) {
  return config.endpoint == "/v1/chat/completions";
}

void validate(const WorkloadConfig& config) {
  require_at_least("--num-prompts", config.num_prompts, 1);
  validate_endpoint(config);
  validate_sessions_and_classes(config);
  const std::string& d = config.dataset_name;
  if (d == "random") {
    validate_random(config);
  } else if (d == "generated-shared-prefix") {
    validate_gsp(config);
  } else if (d == "sharegpt" || d == "sharegpt-multiturn" || d == "custom" || d == "burstgpt" ||
             d == "sonnet" || d == "prefix_repetition") {
    validate_file_datasets(config);
  } else if (d == "trace") {
    if (config.trace.empty()) {
      throw ConfigError("--trace: missing; --dataset-name trace needs a trace file");
    }
    if (config.trace_format.empty()) {
      throw ConfigError(
          "--trace-format: missing; expected azure, mooncake, burstgpt, vidur, "
          "splitwise, vllm-result or csv");
    }
    // The trace carries its own arrival times; only the rate (if finite) is used, to rescale.
    if (!(config.request_rate > 0.0)) {
      fail("--request-rate", format_flag_value(config.request_rate),
           "a number of requests/s > 0 (rescales the trace), or inf (as recorded)");
    }
    return;
  } else {
    throw ConfigError("--dataset-name: \"" + d + "\" is not supported; expected " + kDatasetNames);
  }
  if (!config.dataset_path.empty() && d != "sharegpt" && d != "custom" && d != "burstgpt") {
    // vLLM's _ValidateDatasetArgs rejects a path with the random dataset for the same reason.
    throw ConfigError("--dataset-path: set, but --dataset-name " + d +
                      " reads no file; expected --dataset-name sharegpt, custom or burstgpt");
  }
  if (!config.trace.empty()) {
    throw ConfigError("--trace: set, but --dataset-name is " + d +
                      "; expected --dataset-name trace to replay a trace");
  }
  validate_arrivals(config.request_rate, config.burstiness, config.arrival_process,
                    request_count(config));
  // A request costs its spec, its record and its replica state: about 1 KiB all told (sizeof of
  // the three plus vector slack, rounded up).
  check_fits_in_memory(config.dataset_name == "generated-shared-prefix"
                           ? "--gsp-num-groups x --gsp-prompts-per-group"
                           : "--num-prompts",
                       request_count(config), "requests", 1024);
  if (!config.arrival_rescale.empty() && config.arrival_rescale != "on" &&
      config.arrival_rescale != "off") {
    throw ConfigError("--arrival-rescale: \"" + config.arrival_rescale +
                      "\" is invalid; expected on or off");
  }
}

namespace {

// The workload of the dataset, arrivals and sessions, without LoRA adapters.
std::unique_ptr<Workload> make_base_workload(const WorkloadConfig& config) {
  const std::string& d = config.dataset_name;
  if (d == "trace") {
    TraceReplayOptions o;
    o.path = config.trace;
    o.format = config.trace_format;
    o.time_scale = config.trace_time_scale;
    o.start_s = config.trace_start;
    o.duration_s = config.trace_duration;
    o.request_rate = config.request_rate;
    if (config.multi_turn) {
      if (open_trace(config.trace, config.trace_format)->has_lora_adapters()) {
        throw ConfigError("--trace: " + config.trace +
                          " has a lora_adapter column, which --multi-turn replay does not "
                          "model; expected a trace without it");
      }
      return std::make_unique<TraceSessionWorkload>(o);
    }
    return std::make_unique<TraceReplayWorkload>(o);
  }
  std::shared_ptr<const WorkloadClasses> classes;
  std::vector<std::string> class_names;
  if (!config.workload_file.empty()) {
    classes = std::make_shared<WorkloadClasses>(load_workload_classes(config.workload_file));
    class_names = classes->names();
  }
  // A conversation draws one body per turn from the dataset (a class mix: one per conversation,
  // the later turns from its class).
  const int64_t num_bodies = config.multi_turn && classes == nullptr
                                 ? config.num_prompts * config.num_turns
                                 : config.num_prompts;
  std::unique_ptr<Dataset> dataset;
  if (classes != nullptr) {
    dataset = std::make_unique<ClassMixDataset>(classes, num_bodies, config.seed);
  } else if (d == "generated-shared-prefix") {
    dataset = std::make_unique<SharedPrefixDataset>(gsp_params(config), config.seed);
  } else if (d == "prefix_repetition") {
    // vLLM: num_prefixes groups of num_requests // num_prefixes prompts, then random.shuffle.
    SharedPrefixDatasetParams p;
    p.num_groups = config.prefix_repetition_num_prefixes;
    p.prompts_per_group =
        static_cast<int32_t>(config.num_prompts / config.prefix_repetition_num_prefixes);
    p.system_prompt_len = config.prefix_repetition_prefix_len;
    p.question_len = config.prefix_repetition_suffix_len;
    p.output_len = config.prefix_repetition_output_len;
    dataset = std::make_unique<SharedPrefixDataset>(p, config.seed);
  } else if (d == "sonnet") {
    // Fixed lengths: sonnet_input_len tokens of which the first sonnet_prefix_len are shared.
    RandomDatasetParams p;
    p.num_prompts = config.num_prompts;
    p.input_len = config.sonnet_input_len - config.sonnet_prefix_len;
    p.output_len = config.sonnet_output_len;
    p.prefix_len = config.sonnet_prefix_len;
    dataset = std::make_unique<RandomDataset>(p, config.seed);
  } else if (d == "sharegpt" || d == "sharegpt-multiturn" || d == "custom" || d == "burstgpt") {
    LengthSampling s;
    s.num_prompts = num_bodies;
    s.shuffle = !config.disable_shuffle;
    s.oversample = !config.no_oversample;
    std::vector<LengthPair> pairs;
    const std::string source = dataset_file(config);
    if (d == "sharegpt" || d == "sharegpt-multiturn") {
      s.mode = LengthSampling::Mode::kShareGpt;
      s.output_override = config.sharegpt_output_len;
      // The shipped first-turn set holds requests vLLM's filter already kept (length_datasets.h).
      s.filtered_upstream = d == "sharegpt" && config.dataset_path.empty();
      pairs = ends_with(source, ".csv")
                  ? read_lengths_csv(source, "--dataset-path")
                  : read_sharegpt_json(source, config.sharegpt_chars_per_token);
    } else if (d == "custom") {
      s.mode = LengthSampling::Mode::kFirstN;
      pairs = read_custom_jsonl(source, config.sharegpt_chars_per_token, config.custom_output_len);
    } else {
      s.mode = LengthSampling::Mode::kDrawN;
      pairs = read_burstgpt_csv(source);
    }
    dataset = std::make_unique<SampledLengthDataset>(std::move(pairs), s, config.seed, source);
  } else {
    RandomDatasetParams p = random_params(config);
    p.num_prompts = num_bodies;
    dataset = std::make_unique<RandomDataset>(p, config.seed);
  }
  if (config.multi_turn) {
    ArrivalSequence starts(config.num_prompts, config.request_rate, config.burstiness,
                           config.arrival_process, config.seed, config.arrival_rescale != "off");
    SessionOptions o;
    o.num_sessions = config.num_prompts;
    o.num_turns = config.num_turns;
    o.think_time_s = config.think_time;
    o.exponential_think = config.think_time_dist == "exponential";
    o.seed = config.seed;
    return std::make_unique<SessionWorkload>(std::move(dataset), std::move(starts), o,
                                             std::move(class_names));
  }
  ArrivalSequence arrivals(dataset->size(), config.request_rate, config.burstiness,
                           config.arrival_process, config.seed, config.arrival_rescale != "off");
  return std::make_unique<ComposedWorkload>(std::move(dataset), std::move(arrivals),
                                            std::move(class_names));
}

}  // namespace

std::unique_ptr<Workload> make_workload(const WorkloadConfig& config) {
  validate(config);
  validate_lora_workload(config);
  std::unique_ptr<Workload> w = make_base_workload(config);
  if (chat_endpoint(config)) {
    w = std::make_unique<ChatTemplateWorkload>(std::move(w), config.chat_template_tokens,
                                               config.chat_template_leading);
  }
  if (config.num_lora_adapters == 0) return w;
  return std::make_unique<LoraWorkload>(std::move(w), config);
}

std::string dataset_file(const WorkloadConfig& config) {
  const std::string& d = config.dataset_name;
  if (d == "sharegpt-multiturn") return shipped_sharegpt_multiturn_path();
  if (d == "sharegpt" && config.dataset_path.empty()) return shipped_sharegpt_first_turn_path();
  if (d == "sharegpt" || d == "custom" || d == "burstgpt") return config.dataset_path;
  return "";
}

std::vector<double> arrival_times_s(int64_t n, double rate, double burstiness,
                                    const std::string& process, uint64_t seed, bool rescale) {
  require_at_least("--num-prompts", n, 1);
  validate_arrivals(rate, burstiness, process, n);
  ArrivalSequence arrivals(n, rate, burstiness, process, seed, rescale);
  std::vector<double> times;
  times.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    times.push_back(arrivals.next_s());
  }
  return times;
}

}  // namespace servesim::workloads
