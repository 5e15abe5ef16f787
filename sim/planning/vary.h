// Value lists for studies: the swept axis (`--request-rate 1:40:1`, `--max-concurrency 1,2,4`)
// and what-if knobs (`--vary max-num-seqs=64,128,256`).
//
// Contract:
//  - parse_axis_values() reads "start:stop:step" (inclusive of stop) or a comma list, and returns
//    the values sorted ascending without duplicates. Range values are start + k·step (never an
//    accumulated sum), rounded to 10 decimals so that 0.1:0.5:0.1 gives 0.3, not
//    0.30000000000000004. Every value must be finite and > 0 (rates in requests/s, concurrencies >=
//    1). Errors (ConfigError, one line naming the flag and the text): empty text, a non-number,
//    "inf", a start above stop, a step <= 0, a value <= 0, a non-integer when `integers` is set,
//    more than kMaxAxisValues values.
//  - parse_vary() reads "KNOB=v1,v2,..." where KNOB is a flag name with or without the leading
//    "--" (max-num-seqs, --max-num-seqs and max_num_seqs all work) from vary_knobs(). Each value
//    is converted to the JSON type of its config field (integer, number, string or bool), so a
//    VaryPoint's `settings` can be applied with app::apply_config_json(config, settings, "--vary")
//    — the same field table as the CLI flags and --config files. Errors name the knob and value.
//  - vary_product() is the cartesian product of several axes, in order: the first axis varies
//    slowest (like nested loops written in flag order). No axes → one point with empty settings.
//
// This header has no dependency on sim/app (the planning library sits below the CLI), which is why
// the knob types are listed here; a test checks them against the app's field table.
#ifndef SERVESIM_SIM_PLANNING_VARY_H_
#define SERVESIM_SIM_PLANNING_VARY_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace servesim::planning {

inline constexpr int64_t kMaxAxisValues = 10000;

// Parses a swept axis. `flag` is used in error messages ("--request-rate").
// REQUIRES: nothing; every bad input throws ConfigError.
std::vector<double> parse_axis_values(const std::string& flag, const std::string& text,
                                      bool integers);

enum class KnobType { kInt, kDouble, kString, kBool };

struct KnobInfo {
  std::string flag;  // "max-num-seqs" (no leading dashes)
  std::string key;   // "max_num_seqs": the config key (run_config.h field table)
  KnobType type;
  // "" for a run field; else the field whose JSON value holds the key ("speculative_config":
  // vary_spec.h applies those).
  std::string within = "";
};

// The knobs --vary accepts: the deployment and engine flags that change serving behaviour
// (max-num-seqs, max-num-batched-tokens, gpu-memory-utilization, block-size,
// tensor-parallel-size, pipeline-parallel-size, gpu, quantization, kv-cache-dtype,
// enable-prefix-caching, enforce-eager, max-model-len, long-prefill-token-threshold,
// scheduling-policy, model, num-gpu-blocks-override, num-replicas, router, kv-offloading-size,
// the disaggregated prefill/decode pools: prefill-replicas, decode-replicas,
// prefill-/decode-tensor-parallel-size, prefill-/decode-gpu, kv-transfer-link,
// pd-local-prefill-threshold), LoRA's (enable-lora, max-loras, max-lora-rank, max-cpu-loras,
// and the workload's num-lora-adapters and lora-zipf-exponent), and speculative decoding's keys
// within --speculative-config (num-speculative-tokens, spec-acceptance-rate,
// spec-acceptance-length: vary_spec.h). The swept axis (request rate, concurrency) and the rest
// of the workload are not knobs.
const std::vector<KnobInfo>& vary_knobs();

struct VaryAxis {
  KnobInfo knob;
  std::vector<nlohmann::json> values;  // typed, in the order given
  std::vector<std::string> texts;      // as given, for labels
};

// Parses one --vary argument. Bools accept true/false/1/0/on/off; "none"/"" for quantization
// means "no quantization" (the empty string). Duplicate values are an error.
VaryAxis parse_vary(const std::string& text);

struct VaryPoint {
  nlohmann::json settings = nlohmann::json::object();  // config key -> typed value
  std::string label;  // "max-num-seqs=64 gpu=h200"; "" when there are no axes
};

// Cartesian product, first axis slowest. Also rejects the same knob given twice.
std::vector<VaryPoint> vary_product(const std::vector<VaryAxis>& axes);

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_VARY_H_
