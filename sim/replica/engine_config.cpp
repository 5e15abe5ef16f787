#include "sim/replica/engine_config.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "sim/base/error.h"
#include "sim/replica/speculative_config.h"
#include "sim/replica/vllm_version.h"

namespace servesim::sim {
namespace {

void require(bool ok, const std::string& flag, const std::string& value, const std::string& what) {
  if (!ok) throw ConfigError(flag + ": " + value + " is invalid; expected " + what);
}

std::string num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

}  // namespace

EngineConfig resolve_engine_config(const EngineConfig& config, const hardware::GpuSpec& gpu,
                                   const models::ModelSpec& model) {
  EngineConfig c = config;
  const VllmVersionInfo& version = vllm_version(c.vllm_version);
  c.vllm_version = version.version;
  const bool v0 = version.engine == EngineGeneration::kV0;
  if (c.max_model_len == 0) c.max_model_len = static_cast<int>(model.max_position_embeddings);
  if (c.enable_chunked_prefill < 0) {
    c.enable_chunked_prefill = !v0 || c.max_model_len > 32768 ? 1 : 0;
  } else if (c.enable_chunked_prefill == 0 && !v0) {
    throw ConfigError(
        "--no-enable-chunked-prefill: modelled for the V0 engine only; expected "
        "--vllm-version 0.6 or 0.7 (vLLM " +
        version.version + " is V1, whose scheduler servesim always runs chunked)");
  }
  const BatchDefaults defaults = batch_defaults(version, gpu);
  if (c.max_num_seqs == 0) c.max_num_seqs = defaults.max_num_seqs;
  if (c.max_num_batched_tokens == 0) {
    // V0 SchedulerConfig: without chunked prefill a whole prompt must fit one step's budget.
    c.max_num_batched_tokens = v0 && c.enable_chunked_prefill == 0
                                   ? std::max(c.max_model_len, 2048)
                                   : defaults.max_num_batched_tokens;
  }
  if (std::isnan(c.gpu_memory_utilization))
    c.gpu_memory_utilization = version.gpu_memory_utilization;
  if (c.spec.enabled() || !c.spec.method.empty()) {
    if (v0) {
      throw ConfigError("--speculative-config: modelled for the V1 engine only; vLLM " +
                        version.version + " is V0 (expected --vllm-version 0.8 or newer)");
    }
    if (c.async_scheduling > 0) {
      throw ConfigError(
          "--async-scheduling with --speculative-config: not modelled together (the "
          "placeholders of 1 + K tokens per request); add --no-async-scheduling");
    }
    c.async_scheduling = 0;
    c.spec = resolve_spec_decode(c.spec, model);
  }
  if (c.async_scheduling < 0) {
    c.async_scheduling = version.async_scheduling_default ? 1 : 0;
  } else if (c.async_scheduling > 0 && !version.async_scheduling_available) {
    throw ConfigError("--async-scheduling: vLLM " + version.version +
                      " has no async scheduling; expected --vllm-version 0.10 or newer");
  }
  // Hybrid KV layout: vLLM groups the layers by the smallest layer count of a type; servesim
  // models the case where that is the full-attention count (one full group, as gpt-oss's 18 + 18
  // and Gemma-3's 1 : 5 give).
  c.kv_layers_per_block = 0;
  c.kv_sliding_groups = 0;
  c.kv_sliding_window = 0;
  c.attention_window = model.attention_window();
  const int64_t full_layers = model.num_full_attention_layers();
  if (version.hybrid_kv_cache && !c.disable_hybrid_kv_cache_manager &&
      model.num_sliding_layers > 0 && full_layers > 0 && full_layers <= model.num_sliding_layers) {
    c.kv_layers_per_block = full_layers;
    c.kv_sliding_groups =
        static_cast<int>((model.num_sliding_layers + full_layers - 1) / full_layers);
    c.kv_sliding_window = model.sliding_window;
  }

  if (c.spec.enabled() && c.kv_sliding_groups > 0) {
    throw ConfigError("--speculative-config with " + model.name +
                      "'s sliding-window KV groups: not modelled together; add "
                      "--disable-hybrid-kv-cache-manager");
  }
  require(c.max_num_seqs >= 1, "--max-num-seqs", std::to_string(c.max_num_seqs), "an integer >= 1");
  require(c.max_num_batched_tokens >= 1, "--max-num-batched-tokens",
          std::to_string(c.max_num_batched_tokens), "an integer >= 1");
  // vLLM SchedulerConfig._verify_args: the budget must cover one token per running sequence.
  require(c.max_num_batched_tokens >= c.max_num_seqs, "--max-num-batched-tokens",
          std::to_string(c.max_num_batched_tokens),
          "a value >= --max-num-seqs (" + std::to_string(c.max_num_seqs) + ")");
  require(c.block_size >= 1 && c.block_size <= 1024, "--block-size", std::to_string(c.block_size),
          "a block size in [1, 1024] (vLLM uses 8, 16, 32, ...)");
  require(c.gpu_memory_utilization > 0 && c.gpu_memory_utilization <= 1, "--gpu-memory-utilization",
          num(c.gpu_memory_utilization), "a fraction in (0, 1]");
  require(c.long_prefill_token_threshold >= 0, "--long-prefill-token-threshold",
          std::to_string(c.long_prefill_token_threshold), "an integer >= 0");
  require(c.max_model_len >= 2, "--max-model-len", std::to_string(c.max_model_len),
          "an integer >= 2");
  require(c.scheduling_policy == "fcfs" || c.scheduling_policy == "priority", "--scheduling-policy",
          "'" + c.scheduling_policy + "'", "'fcfs' or 'priority'");
  require(c.num_scheduler_steps >= 1, "--num-scheduler-steps",
          std::to_string(c.num_scheduler_steps), "an integer >= 1");
  if (c.num_scheduler_steps > 1) {
    require(v0, "--num-scheduler-steps", std::to_string(c.num_scheduler_steps),
            "1 on vLLM " + version.version +
                " (multi-step scheduling is a V0 feature: "
                "--vllm-version 0.6 or 0.7)");
    require(c.enable_chunked_prefill == 0, "--num-scheduler-steps",
            std::to_string(c.num_scheduler_steps),
            "1 with chunked prefill on (servesim models multi-step with V0's prefill-first "
            "scheduler: add --no-enable-chunked-prefill)");
  }
  if (v0 && c.enable_chunked_prefill == 0) {
    // V0 SchedulerConfig._verify_args: longer prompts could never be scheduled.
    require(c.max_num_batched_tokens >= c.max_model_len, "--max-num-batched-tokens",
            std::to_string(c.max_num_batched_tokens),
            "a value >= --max-model-len (" + std::to_string(c.max_model_len) +
                ") without chunked prefill (vLLM V0 refuses to start otherwise)");
  }
  require(c.num_gpu_blocks_override >= 0, "--num-gpu-blocks-override",
          std::to_string(c.num_gpu_blocks_override), "an integer >= 0");
  return c;
}

}  // namespace servesim::sim
