// RooflineCostModel's Gated DeltaNet part (Qwen3-Next): which layers run which projections, and
// the gated delta rule's roofline in vLLM's two forms, chunked when the step has a prefill,
// recurrent otherwise (models/linear_attention.h; docs/models.md "Qwen3-Next").
// Datasheet-only: no DeltaNet kernel was measured.
#include <algorithm>

#include "models/linear_attention.h"
#include "models/roofline_cost_model.h"

namespace servesim::models {

void RooflineCostModel::add_linear_attention(const Deployment& d) {
  const ModelSpec& m = d.model;
  const double t = tp_;
  const double h = static_cast<double>(m.hidden_size);
  auto gemm = [&](double k_in, double n_out, double share) {
    return gemm_op(d, k_in, n_out, share);
  };
  const double layers = static_cast<double>(m.num_layers);
  const double linear = static_cast<double>(m.linear.num_layers);
  linear_attention_layers_ = linear;
  full_attention_layers_ = layers - linear;
  const double full_share = full_attention_layers_ / layers;
  // dense_ops_[0..1] are the attention projections (the constructor's non-MLA branch): they run
  // on the full-attention layers only; with the output gate (attn_output_gate) q_proj is twice
  // as wide: [h, (2·H + 2·KV)·head_dim / TP].
  const double d_head = static_cast<double>(m.head_dim);
  const double heads_rank = static_cast<double>(m.num_heads) / t;
  const double kv_heads_rank =
      static_cast<double>(std::max<int64_t>(1, (m.num_kv_heads + tp_ - 1) / tp_));
  const double q_width = m.attention_output_gate ? 2 * heads_rank : heads_rank;
  dense_ops_[0] = gemm(h, (q_width + 2 * kv_heads_rank) * d_head, full_share);
  dense_ops_[1].layer_share = full_share;
  // Qwen3NextGatedDeltaNet: in_proj_qkvz [h, 2·key + 2·value] and in_proj_ba [h, 2·nv]
  // column-parallel, out_proj [value, h] row-parallel.
  const ModelSpec::LinearAttention& a = m.linear;
  const double key = static_cast<double>(a.num_key_heads * a.key_head_dim);
  const double value = static_cast<double>(a.num_value_heads * a.value_head_dim);
  const double nv = static_cast<double>(a.num_value_heads);
  const double linear_share = linear / layers;
  dense_ops_.push_back(gemm(h, (2 * key + 2 * value) / t, linear_share));
  dense_ops_.push_back(gemm(h, 2 * nv / t, linear_share));
  dense_ops_.push_back(gemm(value / t, h, linear_share));
  // The states at the model dtype (vLLM's "auto" mamba cache dtypes).
  const int b = m.dtype_bytes;
  delta_per_token_ = delta_rule_work(m, tp_, b, b, 1, 0);
  delta_per_seq_ = delta_rule_work(m, tp_, b, b, 0, 1);
  chunked_per_token_ = chunked_delta_rule_work(m, tp_, b, b, 1, 0, 0);
  chunked_per_chunk_ = chunked_delta_rule_work(m, tp_, b, b, 0, 1, 0);
  chunked_per_seq_ = chunked_delta_rule_work(m, tp_, b, b, 0, 0, 1);
}

double RooflineCostModel::linear_attention_s(const BatchShape& shape, double tokens) const {
  const double seqs = static_cast<double>(shape.prefill_seqs + shape.decode_seqs);
  double flops = 0;
  double bytes = 0;
  double kernels = 0;
  const double chunks = static_cast<double>(delta_rule_chunks(shape));
  if (chunks > 0) {
    // vLLM (Qwen3NextGatedDeltaNet._forward_core): any prefill in the step sends every
    // sequence through chunk_gated_delta_rule, each decode as a chunk of one token. Its six
    // kernels (cumsum, kkt, solve_tril, w/u, fwd_h, fwd_o) and the two l2norms of q and k.
    flops = chunked_per_token_.flops * tokens + chunked_per_chunk_.flops * chunks;
    bytes = chunked_per_token_.bytes * tokens + chunked_per_chunk_.bytes * chunks +
            chunked_per_seq_.bytes * seqs;
    kernels = 8;
  } else {
    // A pure-decode step: fused_recurrent_gated_delta_rule, one fused kernel per layer (the
    // conv1d update, the recurrence on the states in place).
    flops = delta_per_token_.flops * tokens;
    bytes = delta_per_token_.bytes * tokens + delta_per_seq_.bytes * seqs;
    kernels = 1;
  }
  return std::max(flops / (bf16_peak_flops_ * opts_.compute_efficiency),
                  bytes / (bandwidth_ * opts_.memory_efficiency)) +
         linear_attention_layers_ * kernels * opts_.op_latency_s;
}

}  // namespace servesim::models
