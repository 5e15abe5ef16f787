// The KV-cache layout of a model with Gated DeltaNet linear-attention layers (Qwen3-Next) as
// vLLM's hybrid KV-cache manager builds it (models/linear_attention.h, docs/models.md
// "Qwen3-Next"), and the refusals of what servesim does not model with it.
#ifndef SERVESIM_SIM_REPLICA_LINEAR_STATE_CONFIG_H_
#define SERVESIM_SIM_REPLICA_LINEAR_STATE_CONFIG_H_

#include "models/deployment.h"
#include "sim/replica/engine_config.h"

namespace servesim::sim {

// A step of resolve_engine_config (engine_request.h), on the config it is building: for a model
// with linear-attention layers (d.model.linear.num_layers > 0), block_size becomes vLLM's hybrid
// block size (HybridAttentionMambaModelConfig: the user's when larger), kv_layers_per_block the
// layers of a group and kv_mamba_groups the state groups (prefix caching, off for such a model,
// is decided with the other defaults). Throws ConfigError naming the flag
// for a vLLM version without the model (before 0.10) or the V0 engine,
// --disable-hybrid-kv-cache-manager, pipeline parallelism, speculative decoding, LoRA and KV
// offloading, none of which is modelled with the state pages. No-op for other models.
void resolve_linear_state_layout(EngineConfig& c, const models::Deployment& d);

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_LINEAR_STATE_CONFIG_H_
