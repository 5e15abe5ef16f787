#include "models/linear_attention.h"

#include <algorithm>
#include <string>

#include "sim/base/error.h"

namespace servesim::models {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t conv_dim(const ModelSpec::LinearAttention& a) {
  return 2 * a.num_key_heads * a.key_head_dim + a.num_value_heads * a.value_head_dim;
}

// vLLM's divide(): the sharded dimensions must split evenly over the TP ranks.
void require_split(const ModelSpec& m, int tp) {
  const ModelSpec::LinearAttention& a = m.linear;
  if (a.num_layers <= 0) {
    throw ConfigError(m.name + ": the model has no linear-attention layers");
  }
  if (tp < 1 || a.num_key_heads % tp != 0 || a.num_value_heads % tp != 0 || conv_dim(a) % tp != 0) {
    throw ConfigError("tensor-parallel-size " + std::to_string(tp) + " does not divide " + m.name +
                      "'s " + std::to_string(a.num_key_heads) + " linear-attention key heads and " +
                      std::to_string(a.num_value_heads) +
                      " value heads; expected a divisor of both (vLLM shards them evenly)");
  }
}

}  // namespace

DeltaNetState delta_net_state(const ModelSpec& m, int tp, int state_dtype_bytes) {
  require_split(m, tp);
  const ModelSpec::LinearAttention& a = m.linear;
  DeltaNetState s;
  s.conv_bytes = (a.conv_kernel - 1) * (conv_dim(a) / tp) * state_dtype_bytes;
  s.recurrent_bytes =
      (a.num_value_heads / tp) * a.value_head_dim * a.key_head_dim * state_dtype_bytes;
  return s;
}

double delta_net_params_per_rank(const ModelSpec& m, int tp) {
  const double norm = static_cast<double>(m.linear.value_head_dim);
  return (m.linear.params_per_layer(m.hidden_size) - norm) / tp + norm;
}

int64_t HybridStateLayout::blocks_per_sequence(int64_t tokens) const {
  return attention_groups * ceil_div(std::max<int64_t>(tokens, 1), block_size) + mamba_groups;
}

int64_t HybridStateLayout::sequences_that_fit(int64_t num_blocks, int64_t tokens) const {
  return num_blocks / blocks_per_sequence(tokens);
}

int64_t HybridStateLayout::reported_kv_tokens(int64_t num_blocks) const {
  return num_blocks / (attention_groups + mamba_groups) * block_size;
}

HybridStateLayout hybrid_state_layout(const ModelSpec& m, int tp, int kv_dtype_bytes,
                                      int state_dtype_bytes, int requested_block_size) {
  HybridStateLayout l;
  l.linear_layers = m.linear.num_layers;
  l.attention_layers = m.num_layers - m.linear.num_layers;
  if (l.attention_layers <= 0) {
    throw ConfigError(m.name + ": a hybrid layout needs full-attention layers");
  }
  l.layers_per_group = std::min(l.attention_layers, l.linear_layers);
  l.attention_groups = static_cast<int>(ceil_div(l.attention_layers, l.layers_per_group));
  l.mamba_groups = static_cast<int>(ceil_div(l.linear_layers, l.layers_per_group));
  l.mamba_page_bytes = delta_net_state(m, tp, state_dtype_bytes).bytes();
  const int64_t kv_heads = std::max<int64_t>(1, m.num_kv_heads / tp);
  l.attention_token_bytes = 2 * kv_heads * m.head_dim * kv_dtype_bytes;
  // HybridAttentionMambaModelConfig: a multiple of 16 tokens (FlashAttention's block sizes).
  const int64_t needed = 16 * ceil_div(l.mamba_page_bytes, 16 * l.attention_token_bytes);
  l.block_size = static_cast<int>(std::max<int64_t>(needed, requested_block_size));
  l.page_bytes = l.block_size * l.attention_token_bytes;
  return l;
}

LinearAttentionWork delta_rule_work(const ModelSpec& m, int tp, int state_dtype_bytes,
                                    int act_bytes, double tokens, double sequences) {
  const DeltaNetState state = delta_net_state(m, tp, state_dtype_bytes);
  const ModelSpec::LinearAttention& a = m.linear;
  const double nv = static_cast<double>(a.num_value_heads / tp);
  const double dk = static_cast<double>(a.key_head_dim);
  const double dv = static_cast<double>(a.value_head_dim);
  const double conv = static_cast<double>(conv_dim(a) / tp);
  const double layers = static_cast<double>(a.num_layers);
  // Per token: the recurrence (7·dk·dv per value head) and the depthwise causal conv1d
  // (2 FLOPs per tap per channel).
  const double flops_per_token =
      7.0 * dk * dv * nv + 2.0 * static_cast<double>(a.conv_kernel) * conv;
  // Per token: q, k, v in (conv_dim), g and β (one per value head) in, o (nv·dv) out.
  const double io_per_token = (conv + 2.0 * nv + nv * dv) * act_bytes;
  LinearAttentionWork w;
  w.flops = layers * tokens * flops_per_token;
  w.bytes = layers * (tokens * io_per_token + sequences * 2.0 * static_cast<double>(state.bytes()));
  return w;
}

int64_t delta_rule_chunks(const BatchShape& shape) {
  if (shape.prefill_seqs <= 0) return 0;
  const int64_t lower =
      std::max(shape.prefill_seqs, ceil_div(shape.prefill_tokens, kDeltaRuleChunk));
  return std::max(shape.prefill_linear_chunks, lower) + shape.decode_seqs;
}

double chunked_delta_rule_flops_per_head(double dk, double dv, double chunk) {
  return 6.0 * dk * dv + 2.0 * chunk * (3.0 * dk + 2.0 * dv) + chunk * chunk / 3.0;
}

LinearAttentionWork chunked_delta_rule_work(const ModelSpec& m, int tp, int state_dtype_bytes,
                                            int act_bytes, double tokens, double chunks,
                                            double sequences) {
  const DeltaNetState state = delta_net_state(m, tp, state_dtype_bytes);
  const ModelSpec::LinearAttention& a = m.linear;
  const double nv = static_cast<double>(a.num_value_heads / tp);
  const double nk = static_cast<double>(a.num_key_heads / tp);
  const double dk = static_cast<double>(a.key_head_dim);
  const double dv = static_cast<double>(a.value_head_dim);
  const double c = static_cast<double>(kDeltaRuleChunk);
  const double conv = static_cast<double>(conv_dim(a) / tp);
  const double layers = static_cast<double>(a.num_layers);
  const double b = act_bytes;
  const double conv_flops = 2.0 * static_cast<double>(a.conv_kernel) * conv;
  // Per token: delta_rule_work's q, k, v, g, β in and o out; the l2norm of q and k (read and
  // write); k read by three more kernels; per value head A in fp32 and its inverse, w, u, v'.
  const double io = (conv + 2.0 * nv + nv * dv) * b;
  const double l2norm = 2.0 * (2.0 * nk * dk) * b;
  const double k_again = 3.0 * nk * dk * b;
  const double inter = nv * (2.0 * c * 4.0 + 2.0 * c * b + 2.0 * (dk + 2.0 * dv) * b);
  LinearAttentionWork w;
  w.flops = layers *
            (chunks * c * nv * chunked_delta_rule_flops_per_head(dk, dv, c) + tokens * conv_flops);
  w.bytes = layers * (tokens * (io + l2norm + k_again + inter) + chunks * nv * 2.0 * dk * dv * b +
                      sequences * (2.0 * static_cast<double>(state.conv_bytes) +
                                   6.0 * static_cast<double>(state.recurrent_bytes)));
  return w;
}

}  // namespace servesim::models
