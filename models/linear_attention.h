// Gated DeltaNet linear-attention layers (Qwen3-Next) as vLLM serves them: the constant-size
// state each sequence keeps per layer, the hybrid KV-cache layout that holds those states beside
// the full-attention layers' KV pages, and a roofline of the gated delta rule's work per step.
//
// Sources (vLLM; docs/models.md "Qwen3-Next"):
//   state shapes   MambaStateShapeCalculator.gated_delta_net_state_shape
//                  (vllm/model_executor/layers/mamba/mamba_utils.py): conv state
//                  (kernel − 1) × conv_dim/TP, conv_dim = 2·nk·dk + nv·dv; recurrent state
//                  nv/TP × dv × dk. Both at the model dtype with the defaults
//                  (--mamba-cache-dtype auto, --mamba-ssm-cache-dtype auto:
//                  MambaStateDtypeCalculator.gated_delta_net_state_dtype).
//   page sizes     MambaSpec.page_size_bytes (vllm/v1/kv_cache_interface.py) sums the states;
//                  HybridAttentionMambaModelConfig.verify_and_update_config
//                  (vllm/model_executor/models/config.py) raises the attention block size to
//                  16·⌈mamba page / (16 · attention page of one token)⌉ tokens (unless the user's
//                  is larger) and pads the mamba page to the attention page.
//   groups         the hybrid KV-cache manager (vllm/v1/core/kv_cache_utils.py) groups the layers
//                  by the smaller layer count of a type; every block of the shared pool holds one
//                  page for each layer of a group; a request holds ⌈tokens / block_size⌉ blocks per
//                  attention group and one block per mamba group (MambaSpec's block_size is
//                  max_model_len; mamba_cache_mode "none": no prefix caching of the states).
// The roofline counts the recurrent form's arithmetic (fused_recurrent_gated_delta_rule: per
// token and value head, S ← g·S, u = Sᵀk, S += k(β(v − u))ᵀ, o = Sᵀq: 7·dk·dv FLOPs) and the
// causal conv1d; the chunked prefill kernel's intra-chunk products are not counted (a lower
// bound for prefill). Datasheet-only: no kernel of these was measured.
#ifndef SERVESIM_MODELS_LINEAR_ATTENTION_H_
#define SERVESIM_MODELS_LINEAR_ATTENTION_H_

#include <cstdint>

#include "models/model_spec.h"

namespace servesim::models {

// One Gated DeltaNet layer's state for one sequence on one TP rank.
struct DeltaNetState {
  int64_t conv_bytes = 0;       // (kernel − 1) × conv_dim / TP elements
  int64_t recurrent_bytes = 0;  // nv / TP × dv × dk elements
  int64_t bytes() const { return conv_bytes + recurrent_bytes; }
};

// The state of `m`'s linear layers at TP `tp`, `state_dtype_bytes` per element (the model
// dtype under vLLM's defaults). Throws ConfigError when the key or value heads, or conv_dim, do
// not divide by `tp` (vLLM's divide() asserts it) or the model has no linear layers.
DeltaNetState delta_net_state(const ModelSpec& m, int tp, int state_dtype_bytes);

// Parameters of one Gated DeltaNet layer on one TP rank: every projection, the conv1d, dt_bias
// and A_log split over TP (column-parallel in_proj_qkvz / in_proj_ba, row-parallel out_proj), the
// gated RMSNorm of value_head_dim replicated.
double delta_net_params_per_rank(const ModelSpec& m, int tp);

// vLLM's hybrid KV-cache layout for a model with linear and full-attention layers (PP 1).
struct HybridStateLayout {
  int64_t attention_layers = 0;
  int64_t linear_layers = 0;
  int64_t layers_per_group = 0;       // min(attention_layers, linear_layers)
  int attention_groups = 0;           // ⌈attention_layers / layers_per_group⌉
  int mamba_groups = 0;               // ⌈linear_layers / layers_per_group⌉
  int block_size = 0;                 // attention tokens per block
  int64_t attention_token_bytes = 0;  // one token of one attention layer on one rank
  int64_t mamba_page_bytes = 0;       // one layer's state, unpadded (DeltaNetState::bytes)
  int64_t page_bytes = 0;             // block_size × attention_token_bytes; mamba padded to it
  // Bytes of one block of the shared pool: one page for each layer of a group.
  int64_t block_bytes() const { return page_bytes * layers_per_group; }
  // Blocks one request holds with `tokens` tokens in its KV cache.
  int64_t blocks_per_sequence(int64_t tokens) const;
  // Requests of `tokens` tokens each that `num_blocks` blocks hold at once.
  int64_t sequences_that_fit(int64_t num_blocks, int64_t tokens) const;
  // The token count vLLM logs as "GPU KV cache size": num_blocks / groups × block_size.
  int64_t reported_kv_tokens(int64_t num_blocks) const;
};

// The layout at TP `tp` with attention KV at `kv_dtype_bytes`, the states at `state_dtype_bytes`
// and the user's --block-size `requested_block_size` (kept when it is at least vLLM's choice).
// Throws ConfigError as delta_net_state does.
HybridStateLayout hybrid_state_layout(const ModelSpec& m, int tp, int kv_dtype_bytes,
                                      int state_dtype_bytes, int requested_block_size);

// Work of every linear layer in one step on one rank: `tokens` new tokens over `sequences`
// sequences. Each sequence's state is read and written once per step (decode and prefill
// kernels alike); each token reads q, k, v, g, β and writes o at `act_bytes` per element.
struct LinearAttentionWork {
  double flops = 0;
  double bytes = 0;
};
LinearAttentionWork delta_rule_work(const ModelSpec& m, int tp, int state_dtype_bytes,
                                    int act_bytes, double tokens, double sequences);

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_LINEAR_ATTENTION_H_
