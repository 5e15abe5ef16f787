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
//   kernels       Qwen3NextGatedDeltaNet._forward_core (vllm/model_executor/models/qwen3_next.py
//                  @ 6365b387): a step with any prefill (attn_metadata.num_prefills > 0) runs
//                  chunk_gated_delta_rule over ALL its sequences, decodes included; a pure-decode
//                  step runs fused_recurrent_gated_delta_rule on the states in place.
//                  chunk_gated_delta_rule_fwd (vllm/model_executor/layers/fla/ops/chunk.py)
//                  works in chunks of 64 tokens per sequence (chunk_local_cumsum(g,
//                  chunk_size=64)): kkt, solve_tril, recompute_w_u, fwd_h, fwd_o.
// The roofline of the recurrent form: per token and value head, S ← g·S, u = Sᵀk,
// S += k(β(v − u))ᵀ, o = Sᵀq: 7·dk·dv FLOPs. Of the chunked form: per chunk token and value head
// (C = 64) 6·dk·dv + 2C·(3·dk + 2·dv) + C²/3 FLOPs (chunked_delta_rule_flops_per_head), on whole
// chunks: a sequence's last chunk, and a decode's one token, fill a 64-row tile. Both add the
// causal conv1d. Elementwise work (gates, decays) is not counted. Datasheet-only: no kernel of
// these was measured (scripts/profile_deltanet.py measures them).
#ifndef SERVESIM_MODELS_LINEAR_ATTENTION_H_
#define SERVESIM_MODELS_LINEAR_ATTENTION_H_

#include <cstdint>

#include "models/batch_shape.h"
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

// Tokens per chunk of chunk_gated_delta_rule (vLLM's chunk_local_cumsum(g, chunk_size=64) and
// the kernels' BT).
inline constexpr int64_t kDeltaRuleChunk = 64;

// The chunks chunk_gated_delta_rule runs `shape` in: 0 for a step without prefill (vLLM runs
// the recurrent form), else the prefills' chunks (BatchShape::prefill_linear_chunks, at least
// its lower bound max(prefill_seqs, ⌈prefill_tokens / 64⌉)) + one chunk per decode.
int64_t delta_rule_chunks(const BatchShape& shape);

// FLOPs of the chunked form per chunk token and value head, C = chunk tokens, matrix products
// only (2 FLOPs a multiply-add):
//   kkt        A = β·K·Kᵀ (C × dk × C)                         2·C·dk
//   solve_tril (I + A)⁻¹, unit lower-triangular C × C          C²/3
//   w, u       A·(β·K·e^g) (C × C × dk), A·(β·V) (C × C × dv)  2·C·dk + 2·C·dv
//   fwd_h      v' = u − W·H, H += Kᵀ·v' (C × dk × dv twice)     4·dk·dv
//   fwd_o      Q·H (C × dk × dv), (Q·Kᵀ ⊙ M)·v'                2·dk·dv + 2·C·dk + 2·C·dv
// Sum: 6·dk·dv + 2·C·(3·dk + 2·dv) + C²/3 (Qwen3-Next, dk = dv = 128, C = 64: 181,589⅓).
double chunked_delta_rule_flops_per_head(double dk, double dv, double chunk);

// Work of every linear layer in one step on one rank that runs the chunked form: `tokens` new
// tokens in `chunks` chunks (Σ ⌈q / 64⌉ over the step's sequences, a decode one chunk) over
// `sequences` sequences.
//   FLOPs  chunks · 64 · nv/TP · chunked_delta_rule_flops_per_head + tokens · conv1d
//   bytes  per token: what delta_rule_work moves, q and k through the two l2norm kernels
//          (read and written), k read again by three kernels, and per value head the
//          intermediates written once and read once: A (64 fp32), its inverse (64), w (dk),
//          u (dv) and v' (dv) at `act_bytes`;
//          per chunk and value head: the chunk state H (dk·dv) written by fwd_h, read by fwd_o;
//          per sequence: the conv state read and written, the recurrent state gathered
//          (ssm_state[idx].contiguous(): read + write), read by the kernel, the final state
//          written and scattered back (read + write): 6 × the recurrent state.
LinearAttentionWork chunked_delta_rule_work(const ModelSpec& m, int tp, int state_dtype_bytes,
                                            int act_bytes, double tokens, double chunks,
                                            double sequences);

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_LINEAR_ATTENTION_H_
