// RooflineCostModel's construction: the deployment turned into per-op constants (placement and
// links, CUDA-graph sizes, the layers' GEMMs, attention, LM head, peaks), and the measured kernel
// tables precomputed on their token grids. estimate() and the fast path are in
// roofline_cost_model.cpp.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <string>

#include "hardware/topology.h"
#include "models/kernel_timer.h"
#include "models/marlin_moe.h"
#include "models/moe_routing.h"
#include "models/roofline_cost_model.h"
#include "sim/base/error.h"

namespace servesim::models {

namespace {

double ceil_div_as_double(int64_t a, int64_t b) { return static_cast<double>((a + b - 1) / b); }

void require(bool ok, const std::string& what) {
  if (!ok) {
    throw ConfigError("cost model: " + what);
  }
}

}  // namespace

RooflineOptions RooflineOptions::from_gpu(const hardware::GpuSpec& gpu) {
  RooflineOptions o;
  o.compute_efficiency = gpu.compute_efficiency;
  o.memory_efficiency = gpu.memory_efficiency;
  o.step_overhead_s = gpu.step_overhead_s;
  o.per_seq_overhead_s = gpu.per_seq_overhead_s;
  o.compute_ramp_tokens = kDefaultComputeRampTokens;
  o.op_latency_s = kDefaultOpLatencyS;
  o.cuda_graph_padding = true;
  o.kernel_tables = true;
  return o;
}

RooflineOptions RooflineOptions::ideal() { return RooflineOptions{}; }

RooflineCostModel::LinearOp RooflineCostModel::gemm_op(const Deployment& d, double k_in,
                                                       double n_out, double layer_share) {
  LinearOp op;
  op.flops_per_token = 2.0 * k_in * n_out;
  op.weight_bytes = k_in * n_out * d.weight_bytes_per_param();
  // Activations stay in the model dtype under fp8 weights.
  op.act_bytes_per_token = (k_in + n_out) * d.model.dtype_bytes;
  op.k_in = k_in;
  op.n_out = n_out;
  op.layer_share = layer_share;
  op.marlin = d.weight_only_fp8();
  return op;
}

RooflineCostModel::RooflineCostModel(const Deployment& d)
    : RooflineCostModel(d, RooflineOptions::from_gpu(d.gpu)) {}

RooflineCostModel::RooflineCostModel(const Deployment& d, const RooflineOptions& opts)
    : opts_(opts) {
  const ModelSpec& m = d.model;
  const hardware::GpuSpec& g = d.gpu;
  require(opts_.compute_efficiency > 0 && opts_.compute_efficiency <= 1,
          "compute_efficiency must be in (0, 1], got " + std::to_string(opts_.compute_efficiency));
  require(opts_.memory_efficiency > 0 && opts_.memory_efficiency <= 1,
          "memory_efficiency must be in (0, 1], got " + std::to_string(opts_.memory_efficiency));
  require(opts_.compute_ramp_tokens >= 0 && opts_.op_latency_s >= 0 && opts_.step_overhead_s >= 0 &&
              opts_.per_seq_overhead_s >= 0 && opts_.per_prefill_token_overhead_s >= 0 &&
              opts_.tp_broadcast_overhead_s >= 0 && opts_.host_step_s >= 0 &&
              opts_.host_per_seq_s >= 0 && opts_.host_per_prefill_token_s >= 0 &&
              opts_.host_per_sampled_token_s >= 0,
          "ramp, latency and overheads must be >= 0");
  require(g.bf16_flops > 0 && g.hbm_bandwidth_bytes_per_s > 0,
          "GPU " + g.name + " needs bf16_flops and hbm_bandwidth_bytes_per_s > 0");
  require(m.hidden_size > 0 && m.num_layers > 0 && m.num_heads > 0 && m.num_kv_heads > 0 &&
              m.head_dim > 0 && m.vocab_size > 0 && m.dtype_bytes > 0,
          "model " + m.name + " has a zero dimension");
  require(d.tensor_parallel_size >= 1 && d.pipeline_parallel_size >= 1,
          "tensor/pipeline parallel sizes must be >= 1");
  tp_ = d.tensor_parallel_size;
  pp_ = d.pipeline_parallel_size;
  require(tp_ == 1 || g.scale_up.bandwidth_bytes_per_s > 0,
          "GPU " + g.name + " needs a scale_up link bandwidth for tensor parallelism");
  require(pp_ == 1 || g.scale_up.bandwidth_bytes_per_s > 0,
          "GPU " + g.name + " needs a scale_up link bandwidth for pipeline parallelism");

  // Placement and topology: per-stage TP links and per-boundary hand-off links.
  placement_ = hardware::place_replica(tp_, pp_, d.gpus_per_node);
  for (int64_t layers : pipeline_stage_layers(m.num_layers, pp_)) {
    stage_layers_.push_back(static_cast<double>(layers));
  }
  if (placement_.num_gpus() == 1) {
    stage_link_.push_back(g.scale_up);
  } else {
    hardware::NetworkLinkSpec net = d.inter_node;
    if (placement_.num_nodes > 1 && net.link.kind.empty()) {
      net = hardware::load_network_link(hardware::default_network_link_name(g));
    }
    const hardware::Topology topo(placement_.num_nodes, d.gpus_per_node, g.scale_up, net);
    for (int s = 0; s < pp_; ++s) {
      stage_link_.push_back(topo.ring_link(placement_.stage_gpus[static_cast<size_t>(s)]));
      if (s + 1 < pp_) {
        std::vector<std::pair<int, int>> flows;
        for (int r = 0; r < tp_; ++r) {
          flows.emplace_back(
              placement_.stage_gpus[static_cast<size_t>(s)][static_cast<size_t>(r)],
              placement_.stage_gpus[static_cast<size_t>(s + 1)][static_cast<size_t>(r)]);
        }
        hop_link_.push_back(topo.flows_link(flows));
      }
    }
  }

  // CUDA graphs: explicit sizes, else vLLM's default for max_num_seqs = 256 (the deployment does
  // not know max_num_seqs; the replica fills cuda_graph_sizes explicitly). No token cap here.
  if (opts_.cuda_graph_padding && !d.enforce_eager) {
    graph_sizes_ =
        d.cuda_graph_sizes.empty() ? default_cuda_graph_sizes(256, INT_MAX) : d.cuda_graph_sizes;
    std::sort(graph_sizes_.begin(), graph_sizes_.end());
    max_graph_size_ = graph_sizes_.empty() ? 0 : graph_sizes_.back();
  }

  const double t = tp_;
  const double h = static_cast<double>(m.hidden_size);
  const double d_head = static_cast<double>(m.head_dim);
  const double heads_rank = static_cast<double>(m.num_heads) / t;
  // KV heads are split over TP, and replicated once TP exceeds them (each rank keeps >= 1).
  const double kv_heads_rank = ceil_div_as_double(m.num_kv_heads, tp_);
  const double ab = m.dtype_bytes;  // activations stay in the model dtype under fp8 weights

  auto gemm = [&](double k_in, double n_out) { return gemm_op(d, k_in, n_out); };
  if (m.is_mla()) {
    // MLA (vLLM DeepseekV2MLAAttention; ModelSpec::Mla): the down projections q_a (or q) and
    // kv_a replicated on every rank, q_b, kv_b and o split. kv_b runs once per new token in both
    // forms: prefill decompresses the new tokens' K/V with it, decode multiplies the absorbed
    // W_UK / W_UV into q and the output (the same FLOPs and weight bytes per token). Prefill
    // over cached context also decompresses that context's K/V: not charged (docs/models.md).
    const ModelSpec::Mla& a = m.mla;
    const double qk = static_cast<double>(a.qk_nope_head_dim + a.qk_rope_head_dim);
    if (a.q_lora_rank > 0) {
      dense_ops_.push_back(gemm(h, static_cast<double>(a.q_lora_rank + a.latent_width())));
      dense_ops_.push_back(gemm(static_cast<double>(a.q_lora_rank), heads_rank * qk));
    } else {
      dense_ops_.push_back(gemm(h, heads_rank * qk));
      dense_ops_.push_back(gemm(h, static_cast<double>(a.latent_width())));
    }
    dense_ops_.push_back(gemm(static_cast<double>(a.kv_lora_rank),
                              heads_rank * static_cast<double>(a.qk_nope_head_dim + a.v_head_dim)));
    dense_ops_.push_back(gemm(heads_rank * static_cast<double>(a.v_head_dim), h));
  } else {
    // Attention projections (column-parallel QKV, row-parallel O).
    dense_ops_.push_back(gemm(h, (heads_rank + 2 * kv_heads_rank) * d_head));
    dense_ops_.push_back(gemm(heads_rank * d_head, h));
  }
  if (m.is_moe()) {
    moe_ = true;
    moe_layer_share_ = static_cast<double>(m.num_moe_layers()) / static_cast<double>(m.num_layers);
    num_experts_ = static_cast<double>(m.num_experts);
    top_k_ = static_cast<double>(std::max<int64_t>(1, m.experts_per_token));
    require(d.data_parallel_size >= 1, "data-parallel size must be >= 1");
    dp_ = d.data_parallel_size;
    moe_group_ = d.moe_group_size();
    expert_parallel_ = d.enable_expert_parallel && moe_group_ > 1;
    dp_coupled_ = d.dp_coupled();
    experts_per_gpu_ = expert_parallel_ ? num_experts_ / moe_group_ : num_experts_;
    if (expert_parallel_ && d.moe_routing_skew > 0) {
      group_shares_ = skewed_group_shares(static_cast<int>(top_k_), static_cast<int>(m.num_experts),
                                          moe_group_, d.moe_routing_skew);
    }
    if (dp_coupled_) {
      // The DP group's GPUs (TP·DP of them, node by node): NVLink inside a node, else the ring
      // over the topology, as for a TP group (§3.5).
      const hardware::Placement group = hardware::place_replica(tp_ * dp_, 1, d.gpus_per_node);
      if (group.num_nodes == 1) {
        dp_link_ = g.scale_up;
      } else {
        hardware::NetworkLinkSpec net = d.inter_node;
        if (net.link.kind.empty()) {
          net = hardware::load_network_link(hardware::default_network_link_name(g));
        }
        dp_link_ = hardware::Topology(group.num_nodes, d.gpus_per_node, g.scale_up, net)
                       .ring_link(group.stage_gpus[0]);
      }
    }
    // One routed expert: gate_up [h, 2·I_e/g] and down [I_e/g, h], sliced over the MoE group g
    // (TP, or TP·DP with data parallelism), or whole under expert parallelism.
    const double moe_i = static_cast<double>(m.moe_intermediate_size > 0 ? m.moe_intermediate_size
                                                                         : m.intermediate_size) /
                         (expert_parallel_ ? 1.0 : static_cast<double>(moe_group_));
    expert_inter_rank_ = moe_i;
    // MXFP4 experts on Marlin are stored, read and multiplied at their padded shape.
    const MarlinPaddedExpert shape =
        d.mxfp4_marlin() ? marlin_mxfp4_padded(h, moe_i) : MarlinPaddedExpert{h, moe_i};
    const double eh = shape.hidden, ei = shape.intermediate;
    expert_op_.flops_per_token = 2.0 * 3.0 * eh * ei;
    expert_op_.weight_bytes = 3.0 * eh * ei * d.expert_weight_bytes_per_param();
    expert_op_.act_bytes_per_token = (eh + 2 * ei + ei + eh) * ab;
    // fp8 experts without FP8 tensor cores (Fp8MoEMethod's use_marlin) and MXFP4 experts below
    // compute capability 9.0 (Mxfp4MoEMethod's Marlin backend): models/marlin_moe.h.
    expert_marlin_ = d.marlin_experts();
    // Router (replicated, tiny) and the shared expert (always active).
    LinearOp router = gemm(h, num_experts_);
    router.weight_bytes = h * num_experts_ * m.dtype_bytes;  // routers stay unquantized
    router.marlin = false;
    router.layer_share = moe_layer_share_;
    dense_ops_.push_back(router);
    // The routed experts' SwiGLU is a kernel of its own in vLLM's fused MoE (silu_and_mul on the
    // intermediate cache), except under MXFP4 on triton_kernels, whose matmul_ogs fuses it into
    // the gate_up GEMM's epilogue (FusedActivation "swiglu"): then it moves no extra bytes. The
    // Marlin backend runs the activation on its (padded) intermediate cache between the GEMMs.
    swiglu_width_rank_ = d.weight_format() == "mxfp4" && !d.mxfp4_marlin() ? 0.0 : top_k_ * ei;
    if (m.shared_expert_intermediate_size > 0) {
      const double si = static_cast<double>(m.shared_expert_intermediate_size) / t;
      dense_ops_.push_back(gemm(h, 2 * si));
      dense_ops_.push_back(gemm(si, h));
      dense_ops_[dense_ops_.size() - 2].layer_share = moe_layer_share_;
      dense_ops_.back().layer_share = moe_layer_share_;
      swiglu_width_rank_ += si;
    }
    if (m.num_dense_layers > 0) {  // DeepSeek/GLM's first layers: a dense MLP
      const double ii = static_cast<double>(m.intermediate_size) / t;
      dense_ops_.push_back(gemm(h, 2 * ii));
      dense_ops_.push_back(gemm(ii, h));
      dense_ops_[dense_ops_.size() - 2].layer_share = 1.0 - moe_layer_share_;
      dense_ops_.back().layer_share = 1.0 - moe_layer_share_;
      swiglu_width_rank_ = moe_layer_share_ * swiglu_width_rank_ + (1.0 - moe_layer_share_) * ii;
    }
  } else {
    const double ii = static_cast<double>(m.intermediate_size) / t;
    swiglu_width_rank_ = ii;
    dense_ops_.push_back(gemm(h, 2 * ii));  // fused gate_up (column-parallel)
    dense_ops_.push_back(gemm(ii, h));      // down (row-parallel)
  }

  if (m.is_mla()) {
    // Prefill attends with decompressed K/V (q·k over nope + rope, p·v over v_head_dim); decode
    // attends in the latent space, MQA-style: q·k over kv_lora + rope, p·v over kv_lora
    // (vllm/v1/attention/backends/mla/common.py). The cache holds one latent vector per token
    // (written and read whole on every rank); decode reads q and writes o in the latent width.
    const ModelSpec::Mla& a = m.mla;
    const double lat = static_cast<double>(a.latent_width());
    const double lora = static_cast<double>(a.kv_lora_rank);
    attn_flops_per_work_ =
        2.0 * heads_rank *
        static_cast<double>(a.qk_nope_head_dim + a.qk_rope_head_dim + a.v_head_dim);
    attn_decode_flops_per_ctx_ = 2.0 * heads_rank * (lat + lora);
    kv_bytes_per_token_ = lat * d.kv_dtype_bytes();
    qo_bytes_per_token_ = heads_rank * (lat + lora) * ab;
  } else {
    attn_flops_per_work_ = 4.0 * heads_rank * d_head;
    attn_decode_flops_per_ctx_ = attn_flops_per_work_;
    kv_bytes_per_token_ = 2.0 * kv_heads_rank * d_head * d.kv_dtype_bytes();
    qo_bytes_per_token_ = 2.0 * heads_rank * d_head * ab;
  }
  num_layers_ = static_cast<double>(m.num_layers);
  if (m.num_sliding_layers > 0) {
    require(m.sliding_window > 0 && m.num_sliding_layers <= m.num_layers,
            "model " + m.name + " needs sliding_window > 0 and at most num_layers sliding layers");
    sliding_layers_ = static_cast<double>(m.num_sliding_layers);
    sliding_window_ = m.sliding_window;
  }
  full_attention_layers_ = static_cast<double>(m.num_full_attention_layers());
  if (m.linear.num_layers > 0) add_linear_attention(d);

  // LM head: [rows, h] × [h, V/t], weights in the model dtype (not quantized).
  const double v_rank = static_cast<double>(m.vocab_size) / t;
  lm_head_op_.flops_per_token = 2.0 * h * v_rank;
  lm_head_op_.weight_bytes = h * v_rank * m.dtype_bytes;
  lm_head_op_.act_bytes_per_token = (h + v_rank) * ab;
  lm_head_op_.k_in = h;
  lm_head_op_.n_out = v_rank;
  logits_bytes_per_row_ = static_cast<double>(m.vocab_size) * ab;

  hidden_act_bytes_ = h * ab;
  bf16_peak_flops_ = g.bf16_flops;
  linear_peak_flops_ =
      (d.linear_compute_dtype() == "fp8" && g.fp8_flops > 0) ? g.fp8_flops : g.bf16_flops;
  bandwidth_ = g.hbm_bandwidth_bytes_per_s;

  if (opts_.kernel_tables && d.kernels.profile && m.dtype_bytes == 2) {
    use_kernel_tables(d, heads_rank, kv_heads_rank, d_head);
  }
}

void RooflineCostModel::use_kernel_tables(const Deployment& d, double heads_rank,
                                          double kv_heads_rank, double head_dim) {
  const KernelTimer timer(d.gpu, d.kernels);
  const hardware::KernelProfile& prof = *d.kernels.profile;
  const std::string dtype = d.linear_compute_dtype();
  // Integer weights (w4a16, w8a16) and weight-only fp8 (w8a16): the bf16 curves carried to their
  // bytes per weight.
  const double int_weight_bytes =
      d.integer_weights() || d.weight_only_fp8() ? d.weight_bytes_per_param() : 0.0;
  // The token grid: every token count measured for a GEMM of this dtype.
  std::vector<double> grid;
  for (const auto& [shape, curve] : prof.linear()) {
    if (shape.dtype == dtype) grid.insert(grid.end(), curve.x.begin(), curve.x.end());
  }
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
  if (!grid.empty()) {
    for (LinearOp& op : dense_ops_) {
      // The MoE router (N = number of experts) is far from any measured shape: roofline.
      op.tabled = !(moe_ && op.n_out == num_experts_);
    }
    std::vector<std::pair<double, double>> samples;
    for (double x : grid) {
      double sum = 0;
      for (const LinearOp& op : dense_ops_) {
        if (!op.tabled) continue;
        double t = *timer.linear_s(dtype, op.n_out, op.k_in, x, int_weight_bytes);
        // Marlin: past 64 rows each slice streams the weights again (models/marlin_gemm.h).
        if (op.marlin) {
          t = std::max(t, op_weight_bytes(op, x) / (bandwidth_ * opts_.memory_efficiency));
        }
        sum += op.layer_share * t;
      }
      samples.emplace_back(x, sum);
    }
    table_layer_linear_ = hardware::MonotoneCurve::fit(std::move(samples));
    table_linear_ = true;
    // The table times the GEMMs alone. The roofline's per-op latency t0 also stood for the
    // small kernels between them (RMSNorm, RoPE, SiLU·mul, residual adds), which are not in the
    // GEMM table: where the table has no elementwise curve (below), keep that allowance, one t0
    // per tabled op, so that a table does not drop them.
    for (const LinearOp& op : dense_ops_) {
      if (op.tabled) untabled_elementwise_s_ += opts_.op_latency_s;
    }
  }
  // The elementwise chain measured per layer (kernels between the GEMMs; their traffic grows
  // with the tokens, which one t0 per GEMM could not follow: docs/cost_model.md §2.1). It
  // replaces the t0 allowance; the GEMMs' dtype decides whether the chain quantises to fp8.
  const hardware::ElementwiseShape elem{dtype,
                                        std::llround(static_cast<double>(d.model.hidden_size)),
                                        std::llround(swiglu_width_rank_),
                                        std::llround(heads_rank),
                                        std::llround(kv_heads_rank),
                                        std::llround(head_dim)};
  // MLA's chain (two latent RMSNorms, RoPE on the rope part) is not the measured GQA chain: the
  // t0 allowance stays.
  if (table_linear_ && elem.q_heads > 0 && !d.model.is_mla()) {
    if (auto near = prof.nearest_elementwise_shape(elem)) {
      std::vector<std::pair<double, double>> samples;
      for (double x : prof.elementwise().at(*near).x) {
        samples.emplace_back(x, *timer.elementwise_layer_s(elem, x));
      }
      table_elementwise_ = hardware::MonotoneCurve::fit(std::move(samples));
      table_elementwise_on_ = true;
      untabled_elementwise_s_ = 0;
    }
  }
  // The LM head stays 16-bit under fp8 quantization.
  std::vector<double> bf16_grid;
  for (const auto& [shape, curve] : prof.linear()) {
    if (shape.dtype == "bf16") bf16_grid.insert(bf16_grid.end(), curve.x.begin(), curve.x.end());
  }
  std::sort(bf16_grid.begin(), bf16_grid.end());
  bf16_grid.erase(std::unique(bf16_grid.begin(), bf16_grid.end()), bf16_grid.end());
  if (!bf16_grid.empty()) {
    std::vector<std::pair<double, double>> samples;
    for (double x : bf16_grid) {
      samples.emplace_back(x, *timer.linear_s("bf16", lm_head_op_.n_out, lm_head_op_.k_in, x));
    }
    table_lm_head_ = hardware::MonotoneCurve::fit(std::move(samples));
    table_lm_head_on_ = true;
  }
  if (d.model.is_mla()) {
    // The shipped prefill-attention tables are GQA shapes; MLA's prefill keeps the roofline.
  } else if (auto near = prof.nearest_attention_shape(
                 {std::llround(heads_rank), std::llround(kv_heads_rank), std::llround(head_dim)})) {
    std::vector<std::pair<double, double>> samples;
    for (double x : prof.prefill_attention().at(*near).x) {
      samples.emplace_back(x, *timer.prefill_attention_s(heads_rank, kv_heads_rank, head_dim, x));
    }
    table_prefill_attn_ = hardware::MonotoneCurve::fit(std::move(samples));
    table_prefill_attn_on_ = true;
  }
  // The routed experts as vLLM runs them, one grouped GEMM per projection over the experts hit
  // (measured in bf16; another weight format or GPU is carried by the ideal grouped-GEMM ratio,
  // KernelTimer::moe_gemm_s). The roofline op treats them as one GEMM of tokens·top-k rows and
  // was 21–24 % too fast against these measurements (docs/validation.md §4a).
  if (moe_ && !prof.moe().empty()) {
    const double h = static_cast<double>(d.model.hidden_size);
    const auto e = static_cast<long long>(experts_per_gpu_), k = static_cast<long long>(top_k_);
    const hardware::MoeShape gate_up{"bf16", e, k, std::llround(2 * expert_inter_rank_),
                                     std::llround(h)};
    const hardware::MoeShape down{"bf16", e, k, std::llround(h), std::llround(expert_inter_rank_)};
    const double w = d.expert_weight_bytes_per_param();
    if (auto near = prof.nearest_moe_shape(gate_up)) {
      std::vector<std::pair<double, double>> samples;
      for (double x : prof.moe().at(*near).x) {
        samples.emplace_back(
            x, *timer.moe_gemm_s(gate_up, w, dtype, x) + *timer.moe_gemm_s(down, w, dtype, x));
      }
      table_moe_ = hardware::MonotoneCurve::fit(std::move(samples));
      table_moe_on_ = true;
    }
  }
  kernel_source_ = d.kernels.label();
  note_physics_floor();
}

void RooflineCostModel::note_physics_floor() {
  std::string note;
  auto check = [&](const char* what, const char* unit, bool on, const hardware::MonotoneCurve& c,
                   auto floor_at) {
    if (!on) return;
    size_t below = 0;
    double worst = 1;
    for (size_t i = 0; i < c.x.size(); ++i) {
      const double floor = floor_at(c.x[i]);
      if (c.y[i] < floor) {
        ++below;
        worst = std::max(worst, floor / c.y[i]);
      }
    }
    if (below == 0) return;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s at %zu of %zu %s (up to %.3gx faster than the ideal)", what,
                  below, c.x.size(), unit, worst);
    note += (note.empty() ? "" : "; ") + std::string(buf);
  };
  check("GEMMs", "token counts", table_linear_, table_layer_linear_,
        [&](double x) { return ideal_tabled_linear_s(x); });
  check("LM head", "row counts", table_lm_head_on_, table_lm_head_, [&](double x) {
    return ideal_op_s(lm_head_op_, x, lm_head_op_.weight_bytes, bf16_peak_flops_);
  });
  check("prefill attention", "sequence lengths", table_prefill_attn_on_, table_prefill_attn_,
        [&](double x) { return attn_flops_per_work_ * 0.5 * x * x / bf16_peak_flops_; });
  check("MoE experts", "token counts", table_moe_on_, table_moe_,
        [&](double x) { return ideal_experts_s(x); });
  physics_floor_ = std::move(note);
}

}  // namespace servesim::models
