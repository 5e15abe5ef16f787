#include "sim/replica/engine_request.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "sim/base/error.h"
#include "sim/replica/linear_state_config.h"
#include "sim/replica/lora_config.h"
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

// The flags with the release's, the GPU's and the model's defaults filled, and the sliding-window
// KV layout; checked.
EngineConfig resolve_defaults(const EngineRequest& r, const hardware::GpuSpec& gpu,
                              const models::ModelSpec& model) {
  EngineConfig c;
  const VllmVersionInfo& version = vllm_version(r.vllm_version);
  c.vllm_version = version.version;
  const bool v0 = version.engine == EngineGeneration::kV0;
  c.block_size = r.block_size;
  c.long_prefill_token_threshold = r.long_prefill_token_threshold;
  c.scheduling_policy = r.scheduling_policy;
  c.num_gpu_blocks_override = r.num_gpu_blocks_override.value_or(0);
  c.disable_hybrid_kv_cache_manager = r.disable_hybrid_kv_cache_manager;
  c.num_scheduler_steps = r.num_scheduler_steps;
  c.kv_offloading_size = r.kv_offloading_size;
  c.kv_offloading_backend = r.kv_offloading_backend;
  c.spec = r.spec;
  c.lora = r.lora;
  c.max_model_len = r.max_model_len.value_or(static_cast<int>(model.max_position_embeddings));
  if (!r.enable_chunked_prefill) {
    c.enable_chunked_prefill = !v0 || c.max_model_len > 32768;
  } else if (!*r.enable_chunked_prefill && !v0) {
    throw ConfigError(
        "--no-enable-chunked-prefill: modelled for the V0 engine only; expected "
        "--vllm-version 0.6 or 0.7 (vLLM " +
        version.version + " is V1, whose scheduler servesim always runs chunked)");
  } else {
    c.enable_chunked_prefill = *r.enable_chunked_prefill;
  }
  // vLLM's EngineArgs leaves prefix caching off by default for hybrid models (is_hybrid: layers
  // with a recurrent state, here Gated DeltaNet), and asked for explicitly, either turns it off
  // again (MambaModelConfig.verify_and_update_config: "Hybrid or mamba-based model detected
  // without support for prefix caching: disabling") or, in releases with --mamba-cache-mode,
  // caches block-aligned states; servesim models neither, so the flag is refused.
  const bool hybrid = model.linear.num_layers > 0;
  if (hybrid && r.enable_prefix_caching.value_or(false)) {
    throw ConfigError("--enable-prefix-caching: " + model.name + " has " +
                      std::to_string(model.linear.num_layers) +
                      " Gated DeltaNet (linear-attention) layers, whose prefix servesim does not "
                      "cache (vLLM disables prefix caching for hybrid models by default and, "
                      "asked for it, turns it off or caches block-aligned recurrent states, "
                      "which is not modelled); expected the flag unset or "
                      "--no-enable-prefix-caching");
  }
  // Unset: the release's default (V0 EngineArgs: False; V1: True, "V1 turns on prefix caching
  // by default"), off for hybrid models in every release.
  c.enable_prefix_caching =
      r.enable_prefix_caching.value_or(version.prefix_caching_default && !hybrid);
  const BatchDefaults defaults = batch_defaults(version, gpu);
  c.max_num_seqs = r.max_num_seqs.value_or(defaults.max_num_seqs);
  // V0 SchedulerConfig: without chunked prefill a whole prompt must fit one step's budget.
  c.max_num_batched_tokens = r.max_num_batched_tokens.value_or(
      v0 && !c.enable_chunked_prefill ? std::max(c.max_model_len, 2048)
                                      : defaults.max_num_batched_tokens);
  c.gpu_memory_utilization = r.gpu_memory_utilization.value_or(version.gpu_memory_utilization);
  if (c.spec.enabled() || !c.spec.method.empty()) {
    if (v0) {
      throw ConfigError("--speculative-config: modelled for the V1 engine only; vLLM " +
                        version.version + " is V0 (expected --vllm-version 0.8 or newer)");
    }
    if (r.async_scheduling.value_or(false)) {
      throw ConfigError(
          "--async-scheduling with --speculative-config: not modelled together (the "
          "placeholders of 1 + K tokens per request); add --no-async-scheduling");
    }
    c.async_scheduling = false;
    c.spec = resolve_spec_decode(c.spec, model);
  } else if (!r.async_scheduling) {
    c.async_scheduling = version.async_scheduling_default;
  } else if (*r.async_scheduling && !version.async_scheduling_available) {
    throw ConfigError("--async-scheduling: vLLM " + version.version +
                      " has no async scheduling; expected --vllm-version 0.10 or newer");
  } else {
    c.async_scheduling = *r.async_scheduling;
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
    require(!c.enable_chunked_prefill, "--num-scheduler-steps",
            std::to_string(c.num_scheduler_steps),
            "1 with chunked prefill on (servesim models multi-step with V0's prefill-first "
            "scheduler: add --no-enable-chunked-prefill)");
  }
  if (v0 && !c.enable_chunked_prefill) {
    // V0 SchedulerConfig._verify_args: longer prompts could never be scheduled.
    require(c.max_num_batched_tokens >= c.max_model_len, "--max-num-batched-tokens",
            std::to_string(c.max_num_batched_tokens),
            "a value >= --max-model-len (" + std::to_string(c.max_model_len) +
                ") without chunked prefill (vLLM V0 refuses to start otherwise)");
  }
  // Unset (vLLM's None): blocks from memory. An override of 0 blocks could serve nothing, so it is
  // refused (how vLLM itself treats 0 was not checked).
  if (r.num_gpu_blocks_override) {
    require(*r.num_gpu_blocks_override >= 1, "--num-gpu-blocks-override",
            std::to_string(*r.num_gpu_blocks_override), "an integer >= 1");
  }
  return c;
}

}  // namespace

EngineConfig resolve_engine_config(const EngineRequest& request, const models::Deployment& d) {
  EngineConfig c = resolve_defaults(request, d.gpu, d.model);
  c.lora = resolve_lora_config(request.lora, d);
  // Pipeline-parallel replicas run vLLM V0's virtual engines (sim/replica/pipeline.h), whose
  // micro-batches already overlap: no async scheduling; and servesim's virtual engines keep every
  // layer of a stage in each block (docs/semantics.md).
  if (d.pipeline_parallel_size > 1) {
    c.async_scheduling = false;
    c.kv_layers_per_block = 0;
    c.kv_sliding_groups = 0;
    c.kv_sliding_window = 0;
  }
  resolve_linear_state_layout(c, d);  // Qwen3-Next's state pages; no-op otherwise
  return c;
}

EngineConfig resolve_engine_config(const EngineRequest& request, const hardware::GpuSpec& gpu,
                                   const models::ModelSpec& model) {
  models::Deployment d;
  d.gpu = gpu;
  d.model = model;
  return resolve_engine_config(request, d);
}

}  // namespace servesim::sim
