#include "sim/app/run_config.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>

#include "sim/base/error.h"
#include "sim/base/json_file.h"
#include "sim/base/number_text.h"
#include "sim/replica/speculative_config.h"
#include "sim/replica/vllm_version.h"

namespace servesim::app {
namespace {

using nlohmann::json;
using sim::SimulationConfig;

template <typename T>
T as(const json& v) {
  T out{};
  std::string expected;
  if (!json_value_fits(v, out, expected)) throw BadValue{expected};
  return out;
}

// A JSON list of strings (list-valued fields; the command line splits "a,b" into one).
std::vector<std::string> string_list(const json& v) {
  if (!v.is_array()) throw BadValue{"a list of strings"};
  std::vector<std::string> out;
  for (const json& item : v) {
    if (!item.is_string()) throw BadValue{"a list of strings"};
    out.push_back(item.get<std::string>());
  }
  return out;
}

// Typed field constructors: each binds a key to a member through small lambdas.
template <typename T>
ConfigField field(std::string key, FieldKind kind, std::string help, T SimulationConfig::*member,
                  std::string alias = "") {
  return ConfigField{std::move(key),
                     kind,
                     std::move(help),
                     std::move(alias),
                     [member](SimulationConfig& c, const json& v) { c.*member = as<T>(v); },
                     [member](const SimulationConfig& c) { return json(c.*member); }};
}
template <typename T>
ConfigField engine_field(std::string key, FieldKind kind, std::string help,
                         T sim::EngineRequest::*member) {
  return ConfigField{std::move(key),
                     kind,
                     std::move(help),
                     "",
                     [member](SimulationConfig& c, const json& v) { c.engine.*member = as<T>(v); },
                     [member](const SimulationConfig& c) { return json(c.engine.*member); }};
}
// A flag whose unset value is decided elsewhere (by vLLM, or by another flag): `at(config)` is
// its std::optional; a value sets it; the echo writes an unset flag as `unset_echo`, what config
// files have always carried for it (0 for the counts, null for the utilisation, true for prefix
// caching).
template <typename T, typename At>
ConfigField optional_field(std::string key, FieldKind kind, std::string help, At at,
                           json unset_echo) {
  return ConfigField{std::move(key),
                     kind,
                     std::move(help),
                     "",
                     [at](SimulationConfig& c, const json& v) {
                       // null: unset (a --config file's echo of an unset flag, ConfigField::unset)
                       at(c) = v.is_null() ? std::nullopt : std::optional<T>(as<T>(v));
                     },
                     [at, unset_echo](const SimulationConfig& c) {
                       const std::optional<T>& value = at(c);
                       return value ? json(*value) : unset_echo;
                     },
                     unset_echo};
}
// An engine flag whose default vLLM decides (sim/replica/engine_request.h).
template <typename T>
ConfigField optional_engine_field(std::string key, FieldKind kind, std::string help,
                                  std::optional<T> sim::EngineRequest::*member, json unset_echo) {
  return optional_field<T>(
      std::move(key), kind,
      std::move(help), [member](auto& c) -> auto& { return c.engine.*member; },
      std::move(unset_echo));
}
// --enable-lora and its flags (sim/replica/lora_config.h).
template <typename T>
ConfigField lora_field(std::string key, FieldKind kind, std::string help,
                       T sim::LoraConfig::*member) {
  return ConfigField{
      std::move(key),
      kind,
      std::move(help),
      "",
      [member](SimulationConfig& c, const json& v) { c.engine.lora.*member = as<T>(v); },
      [member](const SimulationConfig& c) { return json(c.engine.lora.*member); }};
}
template <typename T>
ConfigField workload_field(std::string key, FieldKind kind, std::string help,
                           T workloads::WorkloadConfig::*member) {
  return ConfigField{
      std::move(key),
      kind,
      std::move(help),
      "",
      [member](SimulationConfig& c, const json& v) { c.workload.*member = as<T>(v); },
      [member](const SimulationConfig& c) { return json(c.workload.*member); }};
}

std::vector<ConfigField> build_fields() {
  using K = FieldKind;
  std::vector<ConfigField> f;
  // Deployment (vllm serve).
  f.push_back(field("model", K::kString,
                    "model: catalog name or Hugging Face id ORG/NAME (see `servesim list`), or "
                    "path to an HF config.json or a snapshot folder holding one [llama-3.1-8b]",
                    &SimulationConfig::model));
  f.push_back(field("gpu", K::kString, "GPU: catalog name or path to a GPU JSON file [h100-sxm]",
                    &SimulationConfig::gpu));
  f.push_back(field("tensor_parallel_size", K::kInt, "tensor-parallel GPUs per replica [1]",
                    &SimulationConfig::tensor_parallel_size, "-tp"));
  f.push_back(field("pipeline_parallel_size", K::kInt, "pipeline stages per replica [1]",
                    &SimulationConfig::pipeline_parallel_size, "-pp"));
  f.push_back(field("data_parallel_size", K::kInt,
                    "data-parallel ranks per replica, each TP x PP GPUs with its own scheduler "
                    "and KV cache; an MoE model's ranks step together (docs/semantics.md) [1]",
                    &SimulationConfig::data_parallel_size, "-dp"));
  f.push_back(field("enable_expert_parallel", K::kBool,
                    "MoE: hold E / (TP x DP) whole experts per GPU instead of slicing every "
                    "expert [false]",
                    &SimulationConfig::enable_expert_parallel));
  f.push_back(field("moe_routing_skew", K::kDouble,
                    "what-if, no measured default: Zipf exponent s of expert popularity under "
                    "expert parallelism, the hot experts on one rank (docs/cost_model.md) [0]",
                    &SimulationConfig::moe_routing_skew));
  f.push_back(field("gpus_per_node", K::kInt,
                    "GPUs per node: a replica of TP x PP GPUs spans ceil(TP*PP / N) nodes [8]",
                    &SimulationConfig::gpus_per_node));
  f.push_back(field("inter_node_link", K::kString,
                    "network between nodes: infiniband-hdr | infiniband-ndr | ethernet-tcp or a "
                    "link JSON file [HDR for A100, else NDR]",
                    &SimulationConfig::inter_node_link));
  f.push_back(
      field("quantization", K::kString,
            "weight quantization: fp8 or mxfp4 (MoE experts), or unset for the checkpoint's format",
            &SimulationConfig::quantization));
  f.push_back(field("kv_cache_dtype", K::kString, "KV cache dtype: auto | fp8 [auto]",
                    &SimulationConfig::kv_cache_dtype));
  f.push_back(field("mamba_cache_dtype", K::kString,
                    "dtype of the Gated DeltaNet (mamba) states: auto, the model dtype; other "
                    "values are refused (not modelled) [auto]",
                    &SimulationConfig::mamba_cache_dtype));
  f.push_back(field("mamba_ssm_cache_dtype", K::kString,
                    "dtype of the Gated DeltaNet recurrent state alone: auto, as "
                    "--mamba-cache-dtype; other values are refused (not modelled) [auto]",
                    &SimulationConfig::mamba_ssm_cache_dtype));
  f.push_back(field("dtype", K::kString,
                    "weight and activation dtype, vLLM's --dtype: auto | bfloat16 | float16 | "
                    "float32; auto serves a float32 checkpoint in 16 bits as vLLM does [auto]",
                    &SimulationConfig::dtype));
  f.push_back(field("enforce_eager", K::kBool, "disable CUDA graphs (no decode padding) [false]",
                    &SimulationConfig::enforce_eager));
  f.push_back(field("ideal", K::kBool,
                    "ideal hardware: 100% of peak, zero overheads (the lower bound) [false]",
                    &SimulationConfig::ideal));
  // Cluster (sim/cluster/router.h).
  f.push_back(field("num_replicas", K::kPositiveInt,
                    "identical replicas of the deployment behind the router [1]",
                    &SimulationConfig::num_replicas));
  f.push_back(field("router", K::kString,
                    "request routing: round-robin | least-outstanding | prefix-aware "
                    "[round-robin]",
                    &SimulationConfig::router));
  // Disaggregated prefill/decode (sim/cluster/pd_simulation.h, docs/deployment-modes.md).
  f.push_back(field("prefill_replicas", K::kInt,
                    "disaggregated prefill/decode: prefill instances (with --decode-replicas; "
                    "0 = aggregated) [0]",
                    &SimulationConfig::prefill_replicas));
  f.push_back(field("decode_replicas", K::kInt,
                    "disaggregated prefill/decode: decode instances (with --prefill-replicas) [0]",
                    &SimulationConfig::decode_replicas));
  // Unset: the pool takes -tp (an echo writes 0 for it).
  f.push_back(optional_field<int>(
      "prefill_tensor_parallel_size", K::kPositiveInt,
      "P/D: tensor-parallel GPUs per prefill instance [-tp]",
      [](auto& c) -> auto& { return c.prefill_tensor_parallel_size; }, json(0)));
  f.push_back(optional_field<int>(
      "decode_tensor_parallel_size", K::kPositiveInt,
      "P/D: tensor-parallel GPUs per decode instance, a multiple of the prefill TP [-tp]",
      [](auto& c) -> auto& { return c.decode_tensor_parallel_size; }, json(0)));
  f.push_back(field("prefill_gpu", K::kString, "P/D: GPU of the prefill pool [--gpu]",
                    &SimulationConfig::prefill_gpu));
  f.push_back(field("decode_gpu", K::kString, "P/D: GPU of the decode pool [--gpu]",
                    &SimulationConfig::decode_gpu));
  f.push_back(field("kv_transfer_link", K::kString,
                    "P/D: link the KV cache crosses: nvlink (pools in one node) | "
                    "infiniband-ndr | infiniband-hdr | ethernet-tcp or a link JSON file [the "
                    "decode GPU's network]",
                    &SimulationConfig::kv_transfer_link));
  f.push_back(field("pd_local_prefill_threshold", K::kInt,
                    "P/D: prefill on the decode instance when the prompt less its prefix-cache "
                    "hit is at most this many tokens (Dynamo's max_local_prefill_length); 0 = "
                    "always remote [0]",
                    &SimulationConfig::pd_local_prefill_threshold));
  f.push_back(field("calibration", K::kString,
                    "calibration profile from servesim calibrate, or none for datasheet + catalog "
                    "defaults [the profile shipped for the GPU in hardware/calibration, if any]",
                    &SimulationConfig::calibration));
  f.push_back(
      field("kernel_table", K::kString,
            "measured kernel times for the linear ops and prefill attention: a profile "
            "from servesim calibrate --kernels, or none for the roofline [the calibration's "
            "kernels, else hardware/kernels/<gpu>.json, else one of the same architecture, "
            "transferred]",
            &SimulationConfig::kernel_table));
  // Engine (vllm serve).
  f.push_back(engine_field("vllm_version", K::kString,
                           "vLLM release whose defaults and behaviour apply: 0.6 ... 0.19 "
                           "(docs/semantics.md) [0.19]",
                           &sim::EngineRequest::vllm_version));
  f.push_back(optional_engine_field("async_scheduling", K::kBool,
                                    "overlap host scheduling with the GPU step; "
                                    "--no-async-scheduling turns it off [the version's: on from "
                                    "0.14]",
                                    &sim::EngineRequest::async_scheduling, json(nullptr)));
  f.push_back(
      optional_engine_field("max_num_seqs", K::kPositiveInt,
                            "max running requests [1024 on >=70 GiB non-A100 GPUs, else 256]",
                            &sim::EngineRequest::max_num_seqs, json(0)));
  f.push_back(
      optional_engine_field("max_num_batched_tokens", K::kPositiveInt,
                            "per-step token budget [8192 on >=70 GiB non-A100 GPUs, else 2048]",
                            &sim::EngineRequest::max_num_batched_tokens, json(0)));
  f.push_back(engine_field("block_size", K::kInt, "KV block size in tokens [16]",
                           &sim::EngineRequest::block_size));
  f.push_back(optional_engine_field("gpu_memory_utilization", K::kDouble,
                                    "fraction of GPU memory vLLM may use [the version's: 0.9]",
                                    &sim::EngineRequest::gpu_memory_utilization, json(nullptr)));
  // Unset, the echo writes the release's default (true from 0.8, false on V0 rows), as config
  // files have always carried it for V1 rows; the hybrid models' off is not known here. The row
  // is looked up without vllm_version()'s throw: an unknown version is refused where the engine
  // is resolved, with its own message, and the echo must not pre-empt that error.
  f.push_back(
      ConfigField{"enable_prefix_caching", K::kBool,
                  "prefix caching of full KV blocks; --no-enable-prefix-caching turns it off [the "
                  "version's: true from 0.8, false on 0.6 and 0.7 (V0); false for models with "
                  "linear-attention layers, which refuse true]",
                  "",
                  [](SimulationConfig& c, const json& v) {
                    c.engine.enable_prefix_caching =
                        v.is_null() ? std::nullopt : std::optional<bool>(v.get<bool>());
                  },
                  [](const SimulationConfig& c) {
                    if (c.engine.enable_prefix_caching)
                      return json(*c.engine.enable_prefix_caching);
                    const std::string minor = sim::vllm_minor_version(c.engine.vllm_version);
                    for (const sim::VllmVersionInfo& row : sim::vllm_version_table()) {
                      if (row.version == minor) return json(row.prefix_caching_default);
                    }
                    return json(true);
                  },
                  json(nullptr)});
  f.push_back(engine_field("long_prefill_token_threshold", K::kInt,
                           "per-request per-step prefill chunk cap, 0 = off [0]",
                           &sim::EngineRequest::long_prefill_token_threshold));
  f.push_back(
      optional_engine_field("max_model_len", K::kPositiveInt,
                            "longest prompt+output accepted [model's max_position_embeddings]",
                            &sim::EngineRequest::max_model_len, json(0)));
  f.push_back(engine_field("scheduling_policy", K::kString, "fcfs | priority [fcfs]",
                           &sim::EngineRequest::scheduling_policy));
  f.push_back(optional_engine_field("num_gpu_blocks_override", K::kPositiveInt,
                                    "force the KV block count per replica [from memory]",
                                    &sim::EngineRequest::num_gpu_blocks_override, json(0)));
  f.push_back(engine_field("disable_hybrid_kv_cache_manager", K::kBool,
                           "sliding-window layers keep KV blocks for every token, not only their "
                           "window (docs/semantics.md) [false: hybrid from 0.9]",
                           &sim::EngineRequest::disable_hybrid_kv_cache_manager));
  f.push_back(engine_field("kv_offloading_size", K::kDouble,
                           "GiB of host memory for vLLM's native KV offloading, the total over "
                           "the TP x PP ranks; 0 = off (docs/deployment-modes.md) [0]",
                           &sim::EngineRequest::kv_offloading_size));
  f.push_back(engine_field("kv_offloading_backend", K::kString,
                           "KV offloading backend: native (lmcache is refused) [native]",
                           &sim::EngineRequest::kv_offloading_backend));
  f.push_back(optional_engine_field(
      "enable_chunked_prefill", K::kBool,
      "split long prompts over steps; --no-enable-chunked-prefill turns it off, which on V0 rows "
      "selects V0's prefill-first scheduler [the version's: V1 on; V0 on when max-model-len > "
      "32768]",
      &sim::EngineRequest::enable_chunked_prefill, json(nullptr)));
  f.push_back(engine_field("num_scheduler_steps", K::kPositiveInt,
                           "V0 multi-step scheduling: decode steps per scheduler call (vLLM "
                           "0.6-0.7, with --no-enable-chunked-prefill) [1]",
                           &sim::EngineRequest::num_scheduler_steps));
  f.push_back(ConfigField{
      "speculative_config", K::kString,
      "speculative decoding, vLLM's JSON: method ngram | eagle | eagle3 | mtp | draft_model, "
      "num_speculative_tokens, model, ..., plus servesim's acceptance_length or "
      "acceptance_rates (docs/deployment-modes.md) [off]",
      "",
      [](SimulationConfig& c, const json& v) {
        c.engine.spec = v.is_null() ? sim::SpecDecode{}
                                    : sim::parse_speculative_config(v, "--speculative-config");
      },
      [](const SimulationConfig& c) {
        return c.engine.spec.method.empty() ? json(nullptr)
                                            : sim::speculative_config_json(c.engine.spec);
      }});
  // LoRA adapters (docs/deployment-modes.md, "LoRA").
  f.push_back(lora_field("enable_lora", K::kBool,
                         "serve LoRA adapters (vLLM --enable-lora) [false]",
                         &sim::LoraConfig::enable_lora));
  f.push_back(lora_field("max_loras", K::kPositiveInt,
                         "LoRA: distinct adapters in one batch, the GPU slots [1]",
                         &sim::LoraConfig::max_loras));
  f.push_back(lora_field("max_lora_rank", K::kPositiveInt,
                         "LoRA: the slots' rank, 1|8|16|32|64|128|256|320|512 [16]",
                         &sim::LoraConfig::max_lora_rank));
  f.push_back(lora_field("max_cpu_loras", K::kInt,
                         "LoRA: adapters kept in CPU memory, >= --max-loras; 0 = --max-loras [0]",
                         &sim::LoraConfig::max_cpu_loras));
  f.push_back(lora_field("lora_load_bandwidth", K::kDouble,
                         "LoRA: GB/s reading an adapter not in the CPU cache (assumed) [2]",
                         &sim::LoraConfig::load_gbps));
  f.push_back(lora_field("lora_h2d_bandwidth", K::kDouble,
                         "LoRA: GB/s copying a cached adapter into a GPU slot (assumed) [25]",
                         &sim::LoraConfig::h2d_gbps));
  // Load (vllm bench serve).
  f.push_back(ConfigField{
      "request_rate", K::kRate,
      "requests/s, or inf to send all at t=0; with a trace, rescales its arrivals to this mean "
      "rate (inf = as recorded) [inf]",
      "",
      [](SimulationConfig& c, const json& v) {
        c.workload.request_rate =
            v.is_string() ? std::numeric_limits<double>::infinity() : v.get<double>();
      },
      [](const SimulationConfig& c) {
        return std::isinf(c.workload.request_rate) ? json("inf") : json(c.workload.request_rate);
      }});
  f.push_back(workload_field("burstiness", K::kDouble,
                             "gamma shape of inter-arrival times, 1 = Poisson [1.0]",
                             &workloads::WorkloadConfig::burstiness));
  f.push_back(workload_field("arrival_process", K::kString, "poisson | constant [poisson]",
                             &workloads::WorkloadConfig::arrival_process));
  f.push_back(workload_field("num_prompts", K::kInt, "requests to send [1000]",
                             &workloads::WorkloadConfig::num_prompts));
  f.push_back(workload_field("seed", K::kInt, "random seed [0]", &workloads::WorkloadConfig::seed));
  f.push_back(workload_field("dataset_name", K::kString,
                             "random | generated-shared-prefix | sharegpt | sharegpt-multiturn | "
                             "custom | burstgpt | sonnet | prefix_repetition | trace [random]",
                             &workloads::WorkloadConfig::dataset_name));
  f.push_back(workload_field("random_input_len", K::kInt, "input tokens per request [1024]",
                             &workloads::WorkloadConfig::random_input_len));
  f.push_back(workload_field("random_output_len", K::kInt, "output tokens per request [128]",
                             &workloads::WorkloadConfig::random_output_len));
  f.push_back(workload_field("random_range_ratio", K::kDouble,
                             "lengths uniform on [L(1-r), L(1+r)] [0.0]",
                             &workloads::WorkloadConfig::random_range_ratio));
  f.push_back(workload_field("random_range_rule", K::kString,
                             "symmetric = [L(1-r), L(1+r)] (vllm bench serve) | legacy = "
                             "[int(L*r), L] (benchmark_serving.py <= 0.8) [the version's]",
                             &workloads::WorkloadConfig::random_range_rule));
  f.push_back(workload_field("arrival_rescale", K::kString,
                             "on = arrivals rescaled so the last is at n/rate (vllm bench serve) | "
                             "off = first at t=0, unrescaled gaps (<= 0.10) [the version's]",
                             &workloads::WorkloadConfig::arrival_rescale));
  f.push_back(workload_field("random_prefix_len", K::kInt,
                             "tokens of one prefix shared by all requests [0]",
                             &workloads::WorkloadConfig::random_prefix_len));
  f.push_back(workload_field("gsp_num_groups", K::kInt, "shared-prefix groups [64]",
                             &workloads::WorkloadConfig::gsp_num_groups));
  f.push_back(workload_field("gsp_prompts_per_group", K::kInt, "prompts per group [16]",
                             &workloads::WorkloadConfig::gsp_prompts_per_group));
  f.push_back(workload_field("gsp_system_prompt_len", K::kInt,
                             "shared system prompt tokens per group [2048]",
                             &workloads::WorkloadConfig::gsp_system_prompt_len));
  f.push_back(workload_field("gsp_question_len", K::kInt, "unique question tokens [128]",
                             &workloads::WorkloadConfig::gsp_question_len));
  f.push_back(workload_field("gsp_output_len", K::kInt, "output tokens [256]",
                             &workloads::WorkloadConfig::gsp_output_len));
  using W = workloads::WorkloadConfig;
  f.push_back(workload_field("dataset_path", K::kString,
                             "dataset file: sharegpt JSON or lengths .csv, custom JSONL, burstgpt "
                             "CSV [sharegpt: the shipped first-turn ShareGPT lengths]",
                             &W::dataset_path));
  f.push_back(workload_field("disable_shuffle", K::kBool,
                             "sharegpt/custom: take the file's order instead of a seeded shuffle",
                             &W::disable_shuffle));
  f.push_back(workload_field("no_oversample", K::kBool,
                             "sharegpt/custom: send only the requests the file has [false]",
                             &W::no_oversample));
  f.push_back(workload_field("sharegpt_output_len", K::kInt,
                             "sharegpt: output tokens of every request, 0 = as recorded [0]",
                             &W::sharegpt_output_len));
  f.push_back(workload_field("sharegpt_chars_per_token", K::kDouble,
                             "sharegpt/custom text: characters per token (an estimate) [4.0]",
                             &W::sharegpt_chars_per_token));
  f.push_back(workload_field("custom_output_len", K::kInt,
                             "custom: output tokens per request, -1 = each line's output_tokens "
                             "[256]",
                             &W::custom_output_len));
  f.push_back(workload_field("sonnet_input_len", K::kInt, "sonnet: prompt tokens [550]",
                             &W::sonnet_input_len));
  f.push_back(workload_field("sonnet_output_len", K::kInt, "sonnet: output tokens [150]",
                             &W::sonnet_output_len));
  f.push_back(workload_field("sonnet_prefix_len", K::kInt,
                             "sonnet: prompt tokens shared by every request [200]",
                             &W::sonnet_prefix_len));
  f.push_back(workload_field("prefix_repetition_prefix_len", K::kInt,
                             "prefix_repetition: tokens of each shared prefix [256]",
                             &W::prefix_repetition_prefix_len));
  f.push_back(workload_field("prefix_repetition_suffix_len", K::kInt,
                             "prefix_repetition: unique tokens after the prefix [256]",
                             &W::prefix_repetition_suffix_len));
  f.push_back(workload_field("prefix_repetition_num_prefixes", K::kInt,
                             "prefix_repetition: distinct prefixes [10]",
                             &W::prefix_repetition_num_prefixes));
  f.push_back(workload_field("prefix_repetition_output_len", K::kInt,
                             "prefix_repetition: output tokens [128]",
                             &W::prefix_repetition_output_len));
  f.push_back(workload_field("trace", K::kString, "trace: the trace file to replay", &W::trace));
  f.push_back(workload_field("trace_format", K::kString,
                             "trace: azure | mooncake | burstgpt | vidur | splitwise | "
                             "vllm-result | csv",
                             &W::trace_format));
  f.push_back(workload_field("trace_time_scale", K::kDouble,
                             "trace: multiplies every arrival time (2 = half the rate) [1.0]",
                             &W::trace_time_scale));
  f.push_back(workload_field("trace_start", K::kDouble,
                             "trace: seconds into the trace where the replay starts [0]",
                             &W::trace_start));
  f.push_back(workload_field("trace_duration", K::kDouble,
                             "trace: seconds of the trace to replay, 0 = to the end [0]",
                             &W::trace_duration));
  f.push_back(workload_field("workload", K::kString,
                             "workload file mixing request classes (share, lengths, priority, "
                             "SLOs; docs/workloads.md) [none]",
                             &W::workload_file));
  f.push_back(workload_field("multi_turn", K::kBool,
                             "multi-turn conversations: each turn resends the history; "
                             "--num-prompts counts conversations; with --dataset-name trace, the "
                             "trace's sessions (a session_id column, or Mooncake hash ids) [false]",
                             &W::multi_turn));
  f.push_back(workload_field("num_turns", K::kPositiveInt,
                             "multi-turn: requests per conversation [5]", &W::num_turns));
  f.push_back(workload_field("think_time", K::kDouble,
                             "multi-turn: seconds from an answer to the next turn [0]",
                             &W::think_time));
  f.push_back(workload_field("think_time_dist", K::kString,
                             "multi-turn: constant | exponential (mean --think-time) [constant]",
                             &W::think_time_dist));
  f.push_back(workload_field("num_lora_adapters", K::kInt,
                             "LoRA adapters the requests name, 0 = none (needs --enable-lora) [0]",
                             &W::num_lora_adapters));
  f.push_back(workload_field("lora_popularity", K::kString,
                             "which adapter a request names: zipf | uniform [zipf]",
                             &W::lora_popularity));
  f.push_back(workload_field("lora_zipf_exponent", K::kDouble,
                             "exponent s of the Zipf popularity, 0 = uniform [1.0]",
                             &W::lora_zipf_exponent));
  f.push_back(workload_field("lora_request_fraction", K::kDouble,
                             "share of requests that name an adapter, the rest the base model "
                             "[1.0]",
                             &W::lora_request_fraction));
  f.push_back(workload_field("endpoint", K::kString,
                             "vllm bench serve's endpoint: /v1/completions | /v1/chat/completions "
                             "(each prompt plus the model's chat template tokens) "
                             "[/v1/completions]",
                             &W::endpoint));
  f.push_back(field("max_concurrency", K::kInt,
                    "client-side cap on outstanding requests (with --multi-turn: on active "
                    "conversations), 0 = none [0]",
                    &SimulationConfig::max_concurrency));
  f.push_back(field("warmup_requests", K::kInt, "first N requests excluded from metrics [0]",
                    &SimulationConfig::warmup_requests));
  // Metrics (vllm bench serve).
  f.push_back(ConfigField{
      "percentile_metrics", K::kStringList,
      "metrics with percentiles: ttft,tpot,itl,e2el [ttft,tpot,itl]", "",
      [](SimulationConfig& c, const json& v) {
        static const std::vector<std::string> kKnown = {
            "ttft", "tpot", "itl", "e2el", "client_queue_time", "e2el_including_client_queue"};
        c.metrics.percentile_metrics = string_list(v);
        for (const std::string& m : c.metrics.percentile_metrics) {
          if (std::find(kKnown.begin(), kKnown.end(), m) == kKnown.end()) {
            throw ConfigError("--percentile-metrics: '" + m +
                              "' is not a metric; expected a list of ttft, tpot, itl, e2el");
          }
        }
      },
      [](const SimulationConfig& c) { return json(c.metrics.percentile_metrics); }});
  f.push_back(ConfigField{
      "metric_percentiles", K::kStringList, "percentiles to report, e.g. 50,90,99 [99]", "",
      [](SimulationConfig& c, const json& v) {
        // Each percentile is computed and reported for every metric and workload class (and
        // judged per SLO): a bound, not vLLM's, that no report needs to reach.
        constexpr size_t kMaxMetricPercentiles = 100;
        if (v.is_array() && v.size() > kMaxMetricPercentiles) {
          throw ConfigError("--metric-percentiles: " + std::to_string(v.size()) +
                            " percentiles; expected at most " +
                            std::to_string(kMaxMetricPercentiles));
        }
        c.metrics.metric_percentiles.clear();
        for (const auto& item : v) {
          if (item.is_number()) {
            const double p = item.get<double>();
            if (!(p >= 0 && p <= 100)) throw BadValue{"a list of numbers in [0, 100]"};
            c.metrics.metric_percentiles.push_back(p);
            continue;
          }
          if (!item.is_string()) throw BadValue{"a list of numbers in [0, 100]"};
          const std::string s = item.get<std::string>();
          const double p = parse_finite_double(s).value_or(-1);  // -1: not a number, refused below
          if (!(p >= 0 && p <= 100)) {
            throw ConfigError("--metric-percentiles: '" + s +
                              "' is invalid; expected numbers in [0, 100] such as 50,90,99");
          }
          c.metrics.metric_percentiles.push_back(p);
        }
      },
      [](const SimulationConfig& c) { return json(c.metrics.metric_percentiles); }});
  f.push_back(ConfigField{"goodput", K::kStringList,
                          "SLOs in ms for goodput, e.g. ttft:500 tpot:50", "",
                          [](SimulationConfig& c, const json& v) {
                            c.metrics.goodput_slo_ms = metrics::parse_goodput(string_list(v));
                          },
                          [](const SimulationConfig& c) {
                            json out = json::array();
                            for (const auto& [k, v] : c.metrics.goodput_slo_ms) {
                              std::ostringstream os;
                              os << k << ":" << v;
                              out.push_back(os.str());
                            }
                            return out;
                          }});
  return f;
}

}  // namespace

const std::vector<ConfigField>& config_fields() {
  static const std::vector<ConfigField> fields = build_fields();  // immutable after first use
  return fields;
}
json config_to_json(const SimulationConfig& config) {
  json out = json::object();
  for (const ConfigField& f : config_fields()) out[f.key] = f.get(config);
  // Echoed when set, so that the files of runs that do not set it stay as they were.
  if (config.dtype == "auto") out.erase("dtype");
  if (config.mamba_cache_dtype == "auto") out.erase("mamba_cache_dtype");
  if (config.mamba_ssm_cache_dtype == "auto") out.erase("mamba_ssm_cache_dtype");
  if (config.moe_routing_skew == 0) out.erase("moe_routing_skew");
  if (config.engine.kv_offloading_size == 0) out.erase("kv_offloading_size");
  if (config.engine.kv_offloading_backend.empty()) out.erase("kv_offloading_backend");
  // The P/D pools' keys likewise, only for runs that use them (sim/cluster/pd_simulation.h).
  if (config.prefill_replicas == 0 && config.decode_replicas == 0) {
    for (const char* k : {"prefill_replicas", "decode_replicas", "prefill_tensor_parallel_size",
                          "decode_tensor_parallel_size", "prefill_gpu", "decode_gpu",
                          "kv_transfer_link", "pd_local_prefill_threshold"}) {
      out.erase(k);
    }
  }
  if (out["speculative_config"].is_null()) out.erase("speculative_config");
  if (!config.engine.lora.enable_lora) {
    for (const char* k : {"enable_lora", "max_loras", "max_lora_rank", "max_cpu_loras",
                          "lora_load_bandwidth", "lora_h2d_bandwidth"}) {
      out.erase(k);
    }
  }
  if (!workloads::chat_endpoint(config.workload)) out.erase("endpoint");
  if (config.workload.num_lora_adapters == 0) {
    for (const char* k :
         {"num_lora_adapters", "lora_popularity", "lora_zipf_exponent", "lora_request_fraction"}) {
      out.erase(k);
    }
  }
  return out;
}

}  // namespace servesim::app
