#include "sim/replica/linear_state_config.h"

#include <string>

#include "models/linear_attention.h"
#include "sim/base/error.h"
#include "sim/replica/vllm_version.h"

namespace servesim::sim {

void resolve_linear_state_layout(EngineConfig& c, const models::Deployment& d) {
  const models::ModelSpec& m = d.model;
  if (m.linear.num_layers == 0) return;
  const std::string what = m.name + "'s Gated DeltaNet state pages";
  const VllmVersionInfo& version = vllm_version(c.vllm_version);
  // Qwen3NextForCausalLM came with vLLM 0.10.2 (V1 only).
  if (version.engine == EngineGeneration::kV0 || !version.hybrid_kv_cache ||
      std::stoi(vllm_minor_version(version.version).substr(2)) < 10) {
    throw ConfigError("--vllm-version " + version.version + ": " + m.name +
                      " (Qwen3-Next) is served by vLLM 0.10.2 and later; expected 0.10 or newer");
  }
  if (c.disable_hybrid_kv_cache_manager) {
    throw ConfigError("--disable-hybrid-kv-cache-manager with " + what +
                      ": vLLM needs the hybrid KV-cache manager for them; remove the flag");
  }
  if (d.pipeline_parallel_size > 1) {
    throw ConfigError("--pipeline-parallel-size " + std::to_string(d.pipeline_parallel_size) +
                      " with " + what + ": not modelled; expected 1");
  }
  if (c.spec.enabled()) {
    throw ConfigError("--speculative-config with " + what +
                      ": not modelled (the drafter's extra state blocks); remove the flag");
  }
  if (c.lora.enable_lora) {
    throw ConfigError("--enable-lora with " + what +
                      ": not modelled (the DeltaNet projections' adapters); remove the flag");
  }
  if (c.kv_offloading_size > 0) {
    throw ConfigError("--kv-offloading-size with " + what + ": not modelled; remove the flag");
  }
  const models::HybridStateLayout l = models::hybrid_state_layout(
      m, d.tensor_parallel_size, d.kv_dtype_bytes(), m.dtype_bytes, c.block_size);
  if (l.attention_groups != 1) {
    throw ConfigError(m.name + ": " + std::to_string(l.attention_layers) +
                      " full-attention layers against " + std::to_string(l.linear_layers) +
                      " linear ones make several attention groups; not modelled");
  }
  c.block_size = l.block_size;
  c.kv_layers_per_block = l.layers_per_group;
  c.kv_mamba_groups = l.mamba_groups;
}

}  // namespace servesim::sim
