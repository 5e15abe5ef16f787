// Workload: what the benchmark client sends — arrival times and request lengths — with the
// semantics of `vllm bench serve` (REFERENCE.md §2.2, §5) and SGLang's generated-shared-prefix set.
//
// A Workload is built once from a WorkloadConfig and a seed; next() hands out requests in arrival
// order. Same config + seed ⇒ same sequence, on every platform. The arrival process, the lengths
// and the prefixes each draw from their own named RngStream, so changing one knob never reshuffles
// the others.
#ifndef SERVESIM_WORKLOADS_WORKLOAD_H_
#define SERVESIM_WORKLOADS_WORKLOAD_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "workloads/request_spec.h"

namespace servesim::workloads {

struct WorkloadConfig {
  // --- arrivals (vllm bench serve) ---
  // --request-rate: requests/s; +infinity = all requests at t=0 ("inf").
  double request_rate = std::numeric_limits<double>::infinity();
  // --burstiness: gamma shape of inter-arrival times (1 = Poisson); only when rate is finite.
  double burstiness = 1.0;
  // --arrival-process: "poisson" (gamma with `burstiness`) or "constant" (every 1/rate).
  std::string arrival_process = "poisson";
  // --num-prompts. Ignored by generated-shared-prefix, whose size is groups × prompts per group
  // (as in SGLang), and by trace, which replays every row of its window; prefix_repetition sends
  // num_prefixes × (num_prompts / num_prefixes) (vLLM's integer division).
  int64_t num_prompts = 1000;
  uint64_t seed = 0;  // --seed
  // --arrival-rescale: "on" = vllm bench serve's rule (cumulated delays rescaled so the last
  // arrival is at n / rate); "off" = older benchmark_serving.py (first request at t = 0, then one
  // unrescaled gap after each). "" = the --vllm-version's rule (sim::resolved_workload); the
  // workload itself reads "" as "on".
  std::string arrival_rescale;

  // --- dataset ---
  // --dataset-name: random | generated-shared-prefix | sharegpt | sharegpt-multiturn | custom |
  // burstgpt | sonnet | prefix_repetition | trace. sharegpt-multiturn is servesim's: the shipped
  // multi-turn ShareGPT lengths with vLLM's sharegpt sampling (length_datasets.h).
  std::string dataset_name = "random";
  // --dataset-path: the dataset file (sharegpt: ShareGPT JSON, or a pre-tokenised lengths CSV when
  // it ends in .csv; custom: JSONL; burstgpt: CSV). "" = sharegpt's shipped first-turn lengths.
  std::string dataset_path;
  bool disable_shuffle = false;     // --disable-shuffle (sharegpt, sharegpt-multiturn, custom)
  bool no_oversample = false;       // --no-oversample (sharegpt, sharegpt-multiturn, custom)
  int32_t sharegpt_output_len = 0;  // --sharegpt-output-len (0 = as recorded)
  double sharegpt_chars_per_token = 4.0;  // --sharegpt-chars-per-token (text files only)
  int32_t custom_output_len = 256;        // --custom-output-len (-1 = each line's output_tokens)
  // sonnet: fixed lengths with a shared prefix (vLLM's sonnet defaults; no poem text needed)
  int32_t sonnet_input_len = 550;   // --sonnet-input-len
  int32_t sonnet_output_len = 150;  // --sonnet-output-len
  int32_t sonnet_prefix_len = 200;  // --sonnet-prefix-len
  // prefix_repetition (vLLM PrefixRepetitionRandomDataset)
  int32_t prefix_repetition_prefix_len = 256;   // --prefix-repetition-prefix-len
  int32_t prefix_repetition_suffix_len = 256;   // --prefix-repetition-suffix-len
  int32_t prefix_repetition_num_prefixes = 10;  // --prefix-repetition-num-prefixes
  int32_t prefix_repetition_output_len = 128;   // --prefix-repetition-output-len
  // trace replay (trace_replay.h); --request-rate, when finite, rescales the recorded arrivals
  std::string trace;              // --trace: the trace file
  std::string trace_format;       // --trace-format: azure | mooncake | burstgpt | vidur |
                                  //   splitwise | vllm-result | csv
  double trace_time_scale = 1.0;  // --trace-time-scale: multiplies every arrival time
  double trace_start = 0.0;       // --trace-start: seconds into the trace to start from
  double trace_duration = 0.0;    // --trace-duration: seconds to replay (0 = to the end)
  // random (vLLM current RandomDataset semantics)
  int32_t random_input_len = 1024;  // --random-input-len
  int32_t random_output_len = 128;  // --random-output-len
  double random_range_ratio = 0.0;  // --random-range-ratio, in [0, 1) ([0, 1] when legacy)
  // --random-range-rule: "symmetric" = lengths on [floor(L(1−r)), ceil(L(1+r))] (vllm bench
  // serve); "legacy" = [int(L·r), L] (older benchmark_serving.py, whose default r was 1.0: r = 0
  // is read as that default, i.e. fixed L). "" = the --vllm-version's rule; read as symmetric.
  std::string random_range_rule;
  int32_t random_prefix_len = 0;  // --random-prefix-len: one prefix shared by all requests
  // generated-shared-prefix (SGLang bench_serving names)
  int32_t gsp_num_groups = 64;           // --gsp-num-groups
  int32_t gsp_prompts_per_group = 16;    // --gsp-prompts-per-group
  int32_t gsp_system_prompt_len = 2048;  // --gsp-system-prompt-len (shared within a group)
  int32_t gsp_question_len = 128;        // --gsp-question-len (unique per request)
  int32_t gsp_output_len = 256;          // --gsp-output-len

  // --- workload classes (workload_classes.h) ---
  // --workload: a workload file mixing classes (share, lengths, priority, SLOs). "" = none. The
  // classes replace the dataset's lengths; arrivals still come from --request-rate etc.
  std::string workload_file;

  // --- multi-turn sessions (session_workload.h) ---
  bool multi_turn = false;  // --multi-turn: --num-prompts counts conversations
  int32_t num_turns = 5;    // --num-turns: requests per conversation
  double think_time = 0.0;  // --think-time: seconds between an answer and the next turn
  // --think-time-dist: "constant" (every pause = think_time) or "exponential" (mean think_time)
  std::string think_time_dist = "constant";

  // --- LoRA adapters the requests name (lora_workload.h) ---
  int32_t num_lora_adapters = 0;         // --num-lora-adapters: 0 = every request: base model
  std::string lora_popularity = "zipf";  // --lora-popularity: zipf | uniform
  double lora_zipf_exponent = 1.0;       // --lora-zipf-exponent: s of the Zipf law
  double lora_request_fraction = 1.0;    // --lora-request-fraction: share naming an adapter

  // --- endpoint (chat_template_workload.h) ---
  // --endpoint: "/v1/completions" or "/v1/chat/completions". On the chat endpoint every prompt
  // gains the model's chat template: chat_template_tokens (>= 1), of which chat_template_leading
  // precede the message. sim::resolved_workload sets both from the model.
  std::string endpoint = "/v1/completions";
  int32_t chat_template_tokens = 0;
  int32_t chat_template_leading = 0;
};

// True when `config` sends to /v1/chat/completions.
bool chat_endpoint(const WorkloadConfig& config);

// Checks every field; throws ConfigError naming the flag, the value and what was expected.
void validate(const WorkloadConfig& config);

class Workload {
 public:
  virtual ~Workload() = default;
  // The next request in arrival order, or nullopt when all have been handed out.
  virtual std::optional<RequestSpec> next() = 0;
  // Total number of requests this workload will produce.
  virtual int64_t size() const = 0;
  // Closed-loop workloads (multi-turn sessions): request `id`, sent at `sent` (after any
  // --max-concurrency wait), completed (or failed) and the client learnt it at `now`. Returns the
  // request this releases — a conversation's next turn, with arrival >= now — or nullopt (the
  // default: open-loop workloads, and a conversation's last turn). Called once per request, in
  // completion order. Requests returned here are not handed out by next(); ids stay unique in
  // [0, size()).
  virtual std::optional<RequestSpec> on_done(int64_t /*id*/, SimTime /*sent*/, SimTime /*now*/) {
    return std::nullopt;
  }
  // Names of the workload classes that RequestSpec::class_id indexes; empty when none.
  virtual std::vector<std::string> class_names() const { return {}; }
};

// Builds the workload described by `config`. REQUIRES: validate(config) passes (it is called).
std::unique_ptr<Workload> make_workload(const WorkloadConfig& config);

// The lengths file the dataset reads: --dataset-path, or the shipped set of sharegpt (no path) and
// sharegpt-multiturn; "" for the datasets that read none (trace reads --trace).
std::string dataset_file(const WorkloadConfig& config);

// Arrival times for n requests at `rate` (finite) with gamma shape `burstiness`, from a stream
// seeded by `seed`: exposed for tests of the arrival process. Times in seconds, nondecreasing.
// `rescale` false: the older client's times (see WorkloadConfig::arrival_rescale).
std::vector<double> arrival_times_s(int64_t n, double rate, double burstiness,
                                    const std::string& process, uint64_t seed, bool rescale = true);

}  // namespace servesim::workloads

#endif  // SERVESIM_WORKLOADS_WORKLOAD_H_
