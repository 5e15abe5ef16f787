// The KV-cache layout of a model with Gated DeltaNet linear-attention layers (Qwen3-Next) as
// vLLM's hybrid KV-cache manager builds it (models/linear_attention.h, docs/models.md
// "Qwen3-Next"), and the refusals of what servesim does not model with it.
#ifndef SERVESIM_SIM_REPLICA_LINEAR_STATE_CONFIG_H_
#define SERVESIM_SIM_REPLICA_LINEAR_STATE_CONFIG_H_

#include "models/deployment.h"
#include "sim/replica/engine_config.h"

namespace servesim::sim {

// For a model with linear-attention layers (d.model.linear.num_layers > 0) on a resolved config:
// block_size becomes vLLM's hybrid block size (HybridAttentionMambaModelConfig: the user's when
// larger), kv_layers_per_block the layers of a group, kv_mamba_groups the state groups, and
// prefix caching is off (vLLM disables it for hybrid models). Throws ConfigError naming the flag
// for a vLLM version without the model (before 0.10) or the V0 engine,
// --disable-hybrid-kv-cache-manager, pipeline parallelism, speculative decoding, LoRA and KV
// offloading, none of which is modelled with the state pages. No-op for other models.
void resolve_linear_state_layout(EngineConfig& c, const models::Deployment& d);

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_LINEAR_STATE_CONFIG_H_
