// ModelSpec's parameter and KV arithmetic (REFERENCE.md §4) and --dtype; reading a config.json
// is model_config.cpp's.
#include "models/model_spec.h"

#include <algorithm>
#include <string>

#include "sim/base/error.h"

namespace servesim::models {
namespace {

// Parameters of every decoder layer with `experts` routed experts counted per MoE layer
// (REFERENCE.md §4): attention, the dense or MoE MLP, the norms.
double decoder_params(const ModelSpec& m, int64_t experts) {
  const double layers = static_cast<double>(m.num_layers);
  const double moe_layers = static_cast<double>(m.num_moe_layers());
  const double linear = static_cast<double>(m.linear.num_layers);
  return (layers - linear) * m.attention_params_per_rank(1) +
         linear * m.linear.params_per_layer(m.hidden_size) + layers * m.norm_params_per_layer() +
         (layers - moe_layers) * m.dense_mlp_params() + moe_layers * m.moe_mlp_params(experts);
}

}  // namespace

double ModelSpec::norm_params_per_layer() const {
  return static_cast<double>(hidden_norms_per_layer * hidden_size) +
         (qk_norm_weights ? 2.0 * static_cast<double>(head_dim) : 0.0);
}

double ModelSpec::LinearAttention::params_per_layer(int64_t hidden) const {
  const double h = static_cast<double>(hidden);
  const double key = static_cast<double>(num_key_heads * key_head_dim);
  const double value = static_cast<double>(num_value_heads * value_head_dim);
  const double nv = static_cast<double>(num_value_heads);
  return h * (2 * key + 2 * value) + h * 2 * nv + (2 * key + value) * conv_kernel + 2 * nv +
         static_cast<double>(value_head_dim) + value * h;
}

double ModelSpec::embedding_param_count() const {
  return static_cast<double>(vocab_size) * static_cast<double>(hidden_size) *
         (tie_word_embeddings ? 1.0 : 2.0);
}

double ModelSpec::attention_params_per_rank(int tp) const {
  const double h = static_cast<double>(hidden_size);
  const double t = tp;
  if (is_mla()) {
    // vLLM DeepseekV2MLAAttention: q_a_proj [h, q_lora] + q_a_layernorm, kv_a_proj_with_mqa
    // [h, kv_lora + rope] + kv_a_layernorm (replicated on every rank); q_b_proj (or q_proj)
    // [q_lora, H·(nope + rope)], kv_b_proj [kv_lora, H·(nope + v)], o_proj [H·v, h] (split).
    const double heads = static_cast<double>(num_heads) / t;
    const double qk = static_cast<double>(mla.qk_nope_head_dim + mla.qk_rope_head_dim);
    const double lora = static_cast<double>(mla.kv_lora_rank);
    double p = h * static_cast<double>(mla.latent_width()) + lora;
    if (mla.q_lora_rank > 0) {
      const double ql = static_cast<double>(mla.q_lora_rank);
      p += h * ql + ql + ql * heads * qk;
    } else {
      p += h * heads * qk;
    }
    p += lora * heads * static_cast<double>(mla.qk_nope_head_dim + mla.v_head_dim);
    return p + heads * static_cast<double>(mla.v_head_dim) * h;
  }
  const double q = static_cast<double>(num_heads * head_dim) / t;
  // ceil(n_kv / tp), at least 1: with tp > n_kv each KV head is replicated on tp / n_kv ranks.
  const double kv =
      static_cast<double>(std::max<int64_t>(1, (num_kv_heads + tp - 1) / tp) * head_dim);
  double p = h * q * (attention_output_gate ? 2 : 1) + 2 * h * kv + q * h;
  if (qkv_bias) p += q + 2 * kv;
  return p;
}

double ModelSpec::dense_mlp_params() const {
  return 3.0 * static_cast<double>(hidden_size) * static_cast<double>(intermediate_size);
}

double ModelSpec::moe_mlp_params(int64_t experts) const {
  const double h = static_cast<double>(hidden_size);
  double p = 3 * h * static_cast<double>(moe_intermediate_size) * static_cast<double>(experts);
  p += h * static_cast<double>(num_experts);  // router
  p += 3 * h * static_cast<double>(shared_expert_intermediate_size);
  if (shared_expert_gate) p += h;
  return p;
}

double ModelSpec::param_count() const {
  return decoder_params(*this, num_experts) + embedding_param_count() +
         static_cast<double>(hidden_size) + encoder_params;  // + final norm, vision encoder
}

double ModelSpec::active_param_count() const {
  if (!is_moe()) return param_count() - encoder_params;
  return decoder_params(*this, experts_per_token) + embedding_param_count() +
         static_cast<double>(hidden_size);
}

int64_t ModelSpec::kv_bytes_per_token(int kv_dtype_bytes) const {
  return kv_bytes_per_token_per_rank(kv_dtype_bytes, 1);
}

int64_t ModelSpec::kv_bytes_per_token_per_rank(int kv_dtype_bytes, int tp) const {
  if (tp < 1) {
    throw ConfigError("tensor-parallel size must be >= 1 (got " + std::to_string(tp) + ")");
  }
  // MLA: one latent vector per token and layer, the same on every rank (vLLM MLAAttentionSpec:
  // num_kv_heads 1, head_size kv_lora_rank + qk_rope_head_dim).
  if (is_mla()) return num_layers * mla.latent_width() * kv_dtype_bytes;
  // ceil(n_kv / tp), at least 1: with tp > n_kv each KV head is replicated on tp / n_kv ranks.
  const int64_t heads_per_rank = std::max<int64_t>(1, (num_kv_heads + tp - 1) / tp);
  // Linear-attention layers (Qwen3-Next) keep a per-sequence state, not a per-token KV.
  return 2 * (num_layers - linear.num_layers) * heads_per_rank * head_dim * kv_dtype_bytes;
}

void apply_dtype(ModelSpec& m, const std::string& dtype) {
  if (dtype == "auto" || dtype == "bfloat16" || dtype == "float16" || dtype == "half") {
    m.dtype_bytes = 2;  // "auto": a 16-bit checkpoint as it is, a float32 one downcast
  } else if (dtype == "float32" || dtype == "float") {
    m.dtype_bytes = 4;
  } else {
    throw ConfigError("--dtype: '" + dtype +
                      "' is not supported; expected auto, bfloat16, float16 (half) or float32 "
                      "(float)");
  }
}

}  // namespace servesim::models
