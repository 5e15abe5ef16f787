// RooflineCostModel's step time: estimate(), estimate_pipeline() and the fast path
// (estimate_memo(), decode_series(): the same operations as estimate(), in the same order, side
// by side with it). The constructor is in roofline_constants.cpp.
#include "models/roofline_cost_model.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "models/marlin_gemm.h"
#include "models/marlin_moe.h"
#include "models/moe_routing.h"

namespace servesim::models {

double expected_experts_touched(double num_experts, double top_k, double tokens) {
  if (num_experts <= 0 || top_k <= 0 || tokens <= 0) {
    return 0;
  }
  const double k = std::min(top_k, num_experts);
  // 1 − (1 − k/E)^T, computed as −expm1(T·log1p(−k/E)) to stay accurate for E ≫ k.
  if (k >= num_experts) {
    return num_experts;
  }
  return num_experts * -std::expm1(tokens * std::log1p(-k / num_experts));
}

int64_t cuda_graph_padded_tokens(int64_t tokens, const std::vector<int>& sizes) {
  auto it = std::lower_bound(sizes.begin(), sizes.end(), tokens,
                             [](int size, int64_t t) { return static_cast<int64_t>(size) < t; });
  return it == sizes.end() ? tokens : static_cast<int64_t>(*it);
}

int64_t RooflineCostModel::linear_tokens(const BatchShape& shape) const {
  const int64_t tokens = shape.total_tokens();
  if (max_graph_size_ > 0 && tokens > 0 && tokens <= max_graph_size_) {
    return cuda_graph_padded_tokens(tokens, graph_sizes_);
  }
  return tokens;
}

double RooflineCostModel::min_weight_bytes_per_step() const {
  double per_layer = 0;
  for (const LinearOp& op : dense_ops_) {
    per_layer += op.layer_share * op.weight_bytes;
  }
  if (moe_) {
    per_layer += moe_layer_share_ * expected_experts_touched(experts_per_gpu_, top_k_, 1) *
                 expert_op_.weight_bytes;
  }
  return num_layers_ * per_layer + lm_head_op_.weight_bytes;
}

double roofline_op_s(const RooflineOptions& o, double flops_per_token, double weight_bytes,
                     double act_bytes_per_token, double rows, double peak_flops, double bandwidth) {
  if (rows <= 0) {
    return 0;
  }
  // FLOPs / (peak · η_c · rows/(rows + a)) = flops_per_token · (rows + a) / (peak · η_c).
  const double compute =
      flops_per_token * (rows + o.compute_ramp_tokens) / (peak_flops * o.compute_efficiency);
  const double memory =
      (weight_bytes + act_bytes_per_token * rows) / (bandwidth * o.memory_efficiency);
  return std::max(compute, memory) + o.op_latency_s;
}

double RooflineCostModel::linear_op_s(const LinearOp& op, double rows, double weight_bytes,
                                      double peak_flops) const {
  return roofline_op_s(opts_, op.flops_per_token, weight_bytes, op.act_bytes_per_token, rows,
                       peak_flops, bandwidth_);
}

double RooflineCostModel::ideal_op_s(const LinearOp& op, double rows, double weight_bytes,
                                     double peak_flops) const {
  static const RooflineOptions kIdeal = RooflineOptions::ideal();
  return roofline_op_s(kIdeal, op.flops_per_token, weight_bytes, op.act_bytes_per_token, rows,
                       peak_flops, bandwidth_);
}

double RooflineCostModel::op_weight_bytes(const LinearOp& op, double rows) {
  return op.marlin ? op.weight_bytes * marlin_weight_reads(rows) : op.weight_bytes;
}

double RooflineCostModel::ideal_tabled_linear_s(double tokens) const {
  double s = 0;
  for (const LinearOp& op : dense_ops_) {
    if (op.tabled)
      s += op.layer_share * ideal_op_s(op, tokens, op_weight_bytes(op, tokens), linear_peak_flops_);
  }
  return s;
}

double RooflineCostModel::ideal_experts_s(double tokens) const {
  return ideal_op_s(
      expert_op_, tokens * top_k_,
      expected_experts_touched(experts_per_gpu_, top_k_, tokens) * expert_op_.weight_bytes,
      linear_peak_flops_);
}

double RooflineCostModel::layer_linear_s(double tokens) const {
  double s = 0;
  if (table_linear_ && tokens > 0) {
    s += std::max(table_layer_linear_.at(tokens), ideal_tabled_linear_s(tokens)) +
         untabled_elementwise_s_;
    if (table_elementwise_on_) s += table_elementwise_.at(tokens);
  }
  for (const LinearOp& op : dense_ops_) {
    if (!op.tabled)
      s +=
          op.layer_share * linear_op_s(op, tokens, op_weight_bytes(op, tokens), linear_peak_flops_);
  }
  if (moe_ && tokens > 0 && !dp_coupled_) s += moe_layer_share_ * routed_experts_s(tokens);
  return s;
}

double RooflineCostModel::routed_experts_s(double tokens) const {
  if (!moe_ || tokens <= 0) return 0;
  // Expert parallelism: the busiest GPU's rows (models/moe_routing.h) over its E/g experts; the
  // grouped-GEMM curves map tokens to rows as tokens·k, so that GPU runs as `equivalent` tokens.
  // A routing skew takes the hot rank's share (group_shares_) instead of equal groups.
  const double busiest = !expert_parallel_ ? tokens * top_k_
                         : group_shares_.empty()
                             ? expected_max_group_rows(tokens, top_k_, num_experts_, moe_group_)
                             : expected_max_group_rows(tokens, top_k_, num_experts_, group_shares_);
  const double equivalent = busiest / top_k_;
  // Measured grouped GEMMs where the table has them (never faster than the Marlin MoE kernel's
  // weight reads, as the dense Marlin GEMMs); else the roofline: routed tokens·k rows over the
  // experts hit, weights of the expected distinct experts, or Marlin's blocks.
  if (table_moe_on_) {
    const double t = std::max(table_moe_.at(equivalent), ideal_experts_s(equivalent));
    return expert_marlin_ ? std::max(t, marlin_experts_s(opts_, tokens, busiest, true)) : t;
  }
  if (expert_marlin_) return marlin_experts_s(opts_, tokens, busiest, false);
  return linear_op_s(
      expert_op_, equivalent * top_k_,
      expected_experts_touched(experts_per_gpu_, top_k_, equivalent) * expert_op_.weight_bytes,
      linear_peak_flops_);
}

double RooflineCostModel::marlin_experts_s(const RooflineOptions& o, double tokens, double busiest,
                                           bool reads_only) const {
  // A token routes to one given expert of this GPU with probability busiest / (tokens · E_gpu):
  // top_k / E without expert parallelism, the busiest rank's share with it.
  const MarlinMoeWork w =
      marlin_moe_work(tokens, top_k_, experts_per_gpu_, busiest / (tokens * experts_per_gpu_));
  const double memory =
      (w.blocks * expert_op_.weight_bytes + expert_op_.act_bytes_per_token * busiest) /
      (bandwidth_ * o.memory_efficiency);
  if (reads_only) return memory;
  const double compute = expert_op_.flops_per_token * (w.padded_rows + o.compute_ramp_tokens) /
                         (linear_peak_flops_ * o.compute_efficiency);
  return std::max(compute, memory) + o.op_latency_s;
}

double RooflineCostModel::dp_group_moe_s(double group_tokens) const {
  if (!dp_coupled_ || group_tokens <= 0) return 0;
  const double moe_layers = num_layers_ * moe_layer_share_;
  const double gather = ring_all_gather_s(group_tokens * hidden_act_bytes_, dp_, dp_link_);
  return moe_layers * (routed_experts_s(group_tokens) + 2.0 * gather);
}

double RooflineCostModel::layer_elementwise_time_s(double tokens) const {
  if (!table_linear_ || tokens <= 0) return 0;
  return untabled_elementwise_s_ + (table_elementwise_on_ ? table_elementwise_.at(tokens) : 0.0);
}

double RooflineCostModel::table_prefill_attention_s(double work) const {
  if (work <= 0) return 0;
  // One causal sequence of length L does L²/2 work: the step's work as one equivalent sequence.
  const double len = std::sqrt(2.0 * work);
  const hardware::MonotoneCurve& c = table_prefill_attn_;
  // Never below the ideal (all-FLOPs-at-peak) time of that work: beyond the longest measured
  // sequence the curve grows ∝ L, the work ∝ L².
  const double floor = attn_flops_per_work_ * work / bf16_peak_flops_;
  if (len >= c.x.front()) return std::max(c.at(len), floor);
  // ∝ work below the table
  return std::max(c.y.front() * work / (0.5 * c.x.front() * c.x.front()), floor);
}

const hardware::LinkSpec& RooflineCostModel::stage_tp_link(int stage) const {
  return stage_link_.at(static_cast<size_t>(stage));
}

const hardware::LinkSpec& RooflineCostModel::hop_link(int boundary) const {
  return hop_link_.at(static_cast<size_t>(boundary));
}

double RooflineCostModel::hop_s(int boundary, double tokens) const {
  if (tokens <= 0) {
    return 0;
  }
  const hardware::LinkSpec& link = hop_link_.at(static_cast<size_t>(boundary));
  const double bytes = tokens * hidden_act_bytes_;  // one [T, h] tensor
  // Each TP rank sends its 1/TP slice to its peer in the next stage (all at once, sharing any
  // common edge: Topology::flows_link), then the next stage all-gathers it over its TP group.
  const double send = link.latency_s + bytes / tp_ / link.bandwidth_bytes_per_s;
  const double gather =
      ring_all_gather_s(bytes, tp_, stage_link_[static_cast<size_t>(boundary) + 1]);
  return kPipelineTensors * (send + gather);
}

RooflineCostModel::Parts RooflineCostModel::parts(const BatchShape& shape, bool per_stage) const {
  Parts p;
  StepCost& c = p.cost;
  const double tokens = static_cast<double>(shape.total_tokens());
  const double lin_tokens = static_cast<double>(linear_tokens(shape));

  // Linear ops of every layer (Σ over PP stages = all layers).
  c.linear_s = num_layers_ * layer_linear_s(lin_tokens);

  c.attention_s = attention_s(shape, tokens);

  // LM head on the sampled rows only: vLLM computes logits outside the CUDA graph, unpadded.
  const double rows = static_cast<double>(shape.sampled_seqs);
  // The LM head stays 16-bit under fp8 weight quantization: bf16 peak.
  c.lm_head_s = lm_head_s(rows);

  // Tensor parallel, per stage on its own group's link: 2 all-reduces of [T, h] per layer (after
  // O and after down); the last stage also all-gathers the vocabulary-parallel logits.
  // Pipeline: each boundary hands [T, h] hidden states and residual to the next stage.
  const double layer_msg = lin_tokens * hidden_act_bytes_;
  c.comm_s = 0;
  for (int s = 0; s < pp_; ++s) {
    const hardware::LinkSpec& link = stage_link_[static_cast<size_t>(s)];
    double comm = stage_layers_[static_cast<size_t>(s)] * 2.0 * all_reduce_s(layer_msg, tp_, link);
    if (s + 1 == pp_) {
      comm += ring_all_gather_s(rows * logits_bytes_per_row_, tp_, link);
    }
    if (per_stage) p.stage_comm.push_back(comm);
    c.comm_s += comm;
  }
  for (int b = 0; b + 1 < pp_; ++b) {
    const double hop = hop_s(b, lin_tokens);
    if (per_stage) p.hop.push_back(hop);
    c.comm_s += hop;
  }

  add_overheads(shape, c);
  return p;
}

double RooflineCostModel::layer_attention_s(double prefill_work, int64_t kv_read,
                                            int64_t decode_ctx, double tokens) const {
  // One varlen kernel per layer for prefill chunks and decodes together.
  const double ctx = static_cast<double>(decode_ctx);
  const double attn_flops =
      attn_decode_flops_per_ctx_ == attn_flops_per_work_
          ? attn_flops_per_work_ * (prefill_work + ctx)
          : attn_flops_per_work_ * prefill_work + attn_decode_flops_per_ctx_ * ctx;
  const double attn_bytes =
      kv_bytes_per_token_ * (static_cast<double>(kv_read) + tokens) + qo_bytes_per_token_ * tokens;
  double attn_compute_s;
  if (table_prefill_attn_on_) {
    // Measured causal prefill; the decode rows keep the roofline (the table's decode attention
    // is SDPA over contiguous K/V, not vLLM's paged kernel).
    attn_compute_s = table_prefill_attention_s(prefill_work) +
                     attn_decode_flops_per_ctx_ * static_cast<double>(decode_ctx) /
                         (bf16_peak_flops_ * opts_.compute_efficiency);
  } else {
    attn_compute_s = attn_flops / (bf16_peak_flops_ * opts_.compute_efficiency);
  }
  return std::max(attn_compute_s, attn_bytes / (bandwidth_ * opts_.memory_efficiency)) +
         opts_.op_latency_s;
}

double RooflineCostModel::attention_s(const BatchShape& shape, double tokens) const {
  const double full = layer_attention_s(
      shape.prefill_attn_work,
      shape.prefill_context_tokens + shape.prefill_tokens + shape.decode_context_tokens,
      shape.decode_context_tokens, tokens);
  if (linear_attention_layers_ > 0) {
    return full_attention_layers_ * full + linear_attention_s(shape, tokens);
  }
  if (sliding_window_ == 0) return num_layers_ * full;
  // Sliding-window layers: the windowed prefill sums, and at most W context tokens per decoding
  // sequence (min(C, n·W): exact when each has >= W, an upper bound of Σ min(c_i, W) otherwise).
  // The KV write and the Q/O traffic are those of the full layers.
  const int64_t decode_window =
      std::min(shape.decode_context_tokens, shape.decode_seqs * sliding_window_);
  const double windowed =
      layer_attention_s(shape.prefill_window_attn_work,
                        shape.prefill_window_context_tokens + shape.prefill_tokens + decode_window,
                        decode_window, tokens);
  return full_attention_layers_ * full + sliding_layers_ * windowed;
}

double RooflineCostModel::lm_head_s(double rows) const {
  // The LM head stays 16-bit under fp8 weight quantization: bf16 peak.
  return table_lm_head_on_
             ? (rows > 0 ? std::max(table_lm_head_.at(rows),
                                    ideal_op_s(lm_head_op_, rows, lm_head_op_.weight_bytes,
                                               bf16_peak_flops_))
                         : 0.0)
             : linear_op_s(lm_head_op_, rows, lm_head_op_.weight_bytes, bf16_peak_flops_);
}

void RooflineCostModel::add_overheads(const BatchShape& shape, StepCost& c) const {
  c.overhead_s =
      opts_.step_overhead_s +
      opts_.per_seq_overhead_s * static_cast<double>(shape.prefill_seqs + shape.decode_seqs) +
      opts_.per_prefill_token_overhead_s * static_cast<double>(shape.prefill_tokens) +
      opts_.tp_broadcast_overhead_s * static_cast<double>(tp_ - 1);
  c.host_s = opts_.host_step_s +
             opts_.host_per_seq_s * static_cast<double>(shape.prefill_seqs + shape.decode_seqs) +
             opts_.host_per_prefill_token_s * static_cast<double>(shape.prefill_tokens) +
             opts_.host_per_sampled_token_s * static_cast<double>(shape.sampled_seqs);
  c.total_s = c.linear_s + c.attention_s + c.lm_head_s + c.comm_s + c.overhead_s + c.host_s;
}

namespace {

// The memo of one caller (CostMemo): per total tokens, the linear time of all layers and the TP
// all-reduces; per sampled rows, the LM head and the logits all-gather; −1 = not computed yet.
// Grown on demand up to kMemoLimit entries; larger counts are computed each time.
struct RooflineMemo : CostMemo {
  static constexpr int64_t kMemoLimit = int64_t{1} << 17;
  std::vector<double> linear, tp_comm;  // by total_tokens()
  std::vector<double> lm_head, gather;  // by sampled_seqs
};

void grow(std::vector<double>& a, std::vector<double>& b, int64_t index) {
  const auto n = static_cast<size_t>(std::min<int64_t>(
      RooflineMemo::kMemoLimit, std::max<int64_t>(index + 1, 2 * static_cast<int64_t>(a.size()))));
  a.resize(n, -1.0);
  b.resize(n, -1.0);
}

}  // namespace

std::unique_ptr<CostMemo> RooflineCostModel::make_memo() const {
  if (pp_ != 1) return nullptr;  // pipeline steps: estimate() as it is
  return std::make_unique<RooflineMemo>();
}

StepCost RooflineCostModel::estimate_memo(const BatchShape& shape, CostMemo* memo) const {
  // The same operations as parts() with one stage (pp_ == 1), in the same order; only values that
  // depend on the token count alone or the row count alone come from the memo.
  const int64_t t = shape.total_tokens();
  const int64_t r = shape.sampled_seqs;
  if (memo == nullptr || t <= 0 || t >= RooflineMemo::kMemoLimit || r < 0 ||
      r >= RooflineMemo::kMemoLimit) {
    return estimate(shape);
  }
  auto& m = *static_cast<RooflineMemo*>(memo);
  const auto ti = static_cast<size_t>(t);
  const auto ri = static_cast<size_t>(r);
  if (ti >= m.linear.size()) grow(m.linear, m.tp_comm, t);
  if (ri >= m.lm_head.size()) grow(m.lm_head, m.gather, r);
  const hardware::LinkSpec& link = stage_link_[0];
  if (m.linear[ti] < 0) {
    const double lin_tokens = static_cast<double>(linear_tokens(shape));
    m.linear[ti] = num_layers_ * layer_linear_s(lin_tokens);
    const double layer_msg = lin_tokens * hidden_act_bytes_;
    m.tp_comm[ti] = stage_layers_[0] * 2.0 * all_reduce_s(layer_msg, tp_, link);
  }
  const double rows = static_cast<double>(shape.sampled_seqs);
  if (m.lm_head[ri] < 0) {
    m.lm_head[ri] = lm_head_s(rows);
    m.gather[ri] = ring_all_gather_s(rows * logits_bytes_per_row_, tp_, link);
  }
  StepCost c;
  c.linear_s = m.linear[ti];
  c.attention_s = attention_s(shape, static_cast<double>(t));
  c.lm_head_s = m.lm_head[ri];
  double comm = m.tp_comm[ti];
  comm += m.gather[ri];
  c.comm_s = 0;
  c.comm_s += comm;
  add_overheads(shape, c);
  return c;
}

DecodeSeries RooflineCostModel::decode_series(int64_t rows, CostMemo* memo) const {
  BatchShape shape;
  shape.decode_seqs = rows;
  shape.sampled_seqs = rows;
  // Everything but attention depends on the row count alone: taken from the estimate itself.
  const StepCost c = estimate_memo(shape, memo);
  DecodeSeries d;
  d.rows = static_cast<double>(rows);
  d.valid = linear_attention_layers_ == 0;  // the DeltaNet term is not in DecodeSeries' form
  if (!d.valid) return d;
  // attention_s() with prefill_attn_work = prefill tokens = prefill context = 0: the FLOPs are
  // attn_flops_per_work_ · (0 + C) = attn_flops_per_work_ · C, the prefill table's time at 0 work
  // is 0 (0 + x = x), the KV read is C; the same products and quotients follow. The sliding
  // layers' the same at min(C, rows·W), added after the full layers' product.
  if (sliding_window_ == 0) {
    d.layers = num_layers_;
  } else {
    d.layers = full_attention_layers_;
    d.sliding_layers = sliding_layers_;
    d.window_tokens = rows * sliding_window_;
  }
  d.attn_flops_per_ctx = attn_decode_flops_per_ctx_;
  d.compute_div = bf16_peak_flops_ * opts_.compute_efficiency;
  d.kv_bytes = kv_bytes_per_token_;
  d.qo_bytes = qo_bytes_per_token_;
  d.memory_div = bandwidth_ * opts_.memory_efficiency;
  d.latency = opts_.op_latency_s;
  d.linear_s = c.linear_s;
  d.lm_head_s = c.lm_head_s;
  d.comm_s = c.comm_s;
  d.overhead_s = c.overhead_s;
  d.host_s = c.host_s;
  return d;
}

StepCost RooflineCostModel::estimate(const BatchShape& shape) const {
  if (shape.empty()) {
    return StepCost{};
  }
  return parts(shape, /*per_stage=*/false).cost;
}

PipelineStepTimes RooflineCostModel::estimate_pipeline(const BatchShape& shape) const {
  PipelineStepTimes t;
  t.stage_s.assign(static_cast<size_t>(pp_), 0.0);
  t.hop_s.assign(static_cast<size_t>(pp_ - 1), 0.0);
  if (shape.empty()) {
    return t;
  }
  const Parts p = parts(shape, /*per_stage=*/true);
  t.overhead_s = p.cost.overhead_s + p.cost.host_s;  // V0 virtual engines: host work is serial
  // Per-layer work is the same on every stage (with sliding-window layers, the average layer's);
  // the LM head runs on the last.
  const double per_layer = (p.cost.linear_s + p.cost.attention_s) / num_layers_;
  for (int s = 0; s < pp_; ++s) {
    const size_t i = static_cast<size_t>(s);
    t.stage_s[i] = stage_layers_[i] * per_layer + p.stage_comm[i];
    if (s + 1 == pp_) {
      t.stage_s[i] += p.cost.lm_head_s;
    }
  }
  t.hop_s = p.hop;
  return t;
}

}  // namespace servesim::models
