// RooflineCostModel: the per-step cost model of DESIGN.md §4; IdealCostModel: its lower bound.
//
// One step of one micro-batch (TP ranks in lock-step, PP stages one after the other) is the sum
// over the model's layers of a fixed set of ops, each timed by a roofline:
//
//   time(op) = max(FLOPs / (peak · η_c(T)), bytes / (bandwidth · η_m)) + op_latency
//   η_c(T)   = η_c · T / (T + compute_ramp_tokens)       (GEMMs with few rows reach less)
//
// Ops per layer: QKV, O, gate_up, down projections (or router + routed experts + shared expert for
// MoE), and attention; then the LM head on the sampled rows, the tensor-parallel all-reduces, the
// pipeline send/recv and the fixed overheads. The constructor turns the model and deployment into
// per-op constants (FLOPs per token, weight bytes, activation bytes per token), so estimate() is
// O(1) in the batch size (O(PP) in the stage count). docs/cost_model.md gives every equation,
// constant and source.
//
// Communication follows the topology (hardware/topology.h): the replica is placed on nodes of
// d.gpus_per_node GPUs; each stage's TP collectives use its group's links (vLLM's custom
// all-reduce inside one NVLink-class node, NCCL's ring over the slowest hop otherwise), and each
// stage boundary sends the hidden states and the residual over the path between the two stages
// (cross-node when they are on different nodes). estimate_pipeline() splits a step into its
// stages and hand-offs for the pipeline timeline (sim/replica/pipeline.h).
//
// Contract (CostModel): estimate() is pure, O(1), never negative or NaN, monotone in every
// BatchShape field, and > 0 for a non-empty shape. An empty shape costs 0. The StepCost parts sum
// to total_s. For the same deployment, IdealCostModel::estimate(s).total_s <=
// RooflineCostModel::estimate(s).total_s for every shape s.
#ifndef SERVESIM_MODELS_ROOFLINE_COST_MODEL_H_
#define SERVESIM_MODELS_ROOFLINE_COST_MODEL_H_

#include <cstdint>
#include <vector>

#include "hardware/gpu_spec.h"
#include "hardware/kernel_profile.h"
#include "models/batch_shape.h"
#include "models/collectives.h"
#include "models/cost_fast_path.h"
#include "models/cost_model.h"
#include "models/deployment.h"
#include "models/linear_attention.h"
#include "models/pipeline_timing.h"

namespace servesim::models {

// Tokens at which a GEMM reaches half its large-GEMM efficiency. Least-squares fit of
// max(FLOPs·(T+a)/(T·peak·η_c), bytes/(bw·η_m)) + t0 to Vidur's per-op GEMM profiles
// (realdata/vidur_profiling, Llama-2-7B/70B, CodeLlama-34B, InternLM-20B, Qwen-72B, TP 1–8,
// 1–4096 tokens): a = 166 on H100, 84 on A100 (η_c 0.75/0.74, η_m 0.93/0.81, t0 6.4/6.8 µs;
// median |log error| 7 % / 5 %). One value for all GPUs, the geometric mean, rounded.
inline constexpr double kDefaultComputeRampTokens = 128;
// Fixed time per modelled kernel (t0 of the same fit, ≈ 6.5 µs on both GPUs). It also stands for
// the small elementwise kernels (RMSNorm, RoPE, SiLU·mul, residual adds) that are not modelled
// one by one; it is what makes a decode step of a deep model slower than its weight stream.
inline constexpr double kDefaultOpLatencyS = 6e-6;

// Free parameters of the roofline. from_gpu() takes efficiencies and overheads from the GPU spec
// (the "uncalibrated" model); ideal() is the physical lower bound; calibration may set any field.
struct RooflineOptions {
  double compute_efficiency = 1.0;  // η_c: fraction of peak FLOP/s a large GEMM reaches, (0, 1]
  double memory_efficiency = 1.0;   // η_m: fraction of peak HBM bandwidth, (0, 1]
  // Serial overheads (the single constant of profiles before host terms existed): added to every
  // step whatever the scheduling mode, so an old profile keeps its meaning.
  double step_overhead_s = 0;     // per step (scheduler, launch, sampling), s
  double per_seq_overhead_s = 0;  // per scheduled sequence per step, s
  // per prompt token computed in the step, s: the prefill work no kernel table times (RMSNorm,
  // RoPE, SiLU·mul, residual adds, activation quantisation, KV-cache writes scale with tokens and
  // are charged only op_latency_s each; docs/validation.md §4a). 0 unless calibrated.
  double per_prefill_token_overhead_s = 0;
  // per step and per tensor-parallel worker beyond the first, s: the driver sends every step's
  // input to the other TP workers before they can run it (V0: vllm/worker/worker_base.py,
  // LocalOrDistributedWorkerBase.execute_model -> broadcast_tensor_dict). 0 unless calibrated.
  double tp_broadcast_overhead_s = 0;
  // Host terms (StepCost::host_s), each with a cause; overlapped with the GPU under async
  // scheduling:
  double host_step_s = 0;               // per step: schedule(), update_from_output(), launch
  double host_per_seq_s = 0;            // per scheduled sequence: request state, block tables
  double host_per_prefill_token_s = 0;  // per prefill token: input ids, positions, slot mapping
  double host_per_sampled_token_s = 0;  // per sampled token: sampler bookkeeping, output handling
  double compute_ramp_tokens = 0;       // a in η_c(T) = η_c·T/(T+a), tokens; 0 = no ramp
  double op_latency_s = 0;              // fixed time added to every modelled kernel, s
  bool cuda_graph_padding = false;      // pad small batches to the CUDA-graph capture sizes
  bool kernel_tables = false;           // time ops from Deployment::kernels when it has a table

  static RooflineOptions from_gpu(const hardware::GpuSpec& gpu);
  // η = 1, no ramp, no latency, no overheads, no padding. Link α–β are kept (a property of the
  // link, not an efficiency), so comm time is the same in both variants.
  static RooflineOptions ideal();
};

// One GEMM-like op under the roofline (docs/cost_model.md §2), 0 for rows <= 0:
//   max(flops_per_token·(rows + a) / (peak·η_c), (weight_bytes + act_bytes_per_token·rows) /
//       (bandwidth·η_m)) + t0
double roofline_op_s(const RooflineOptions& o, double flops_per_token, double weight_bytes,
                     double act_bytes_per_token, double rows, double peak_flops, double bandwidth);

// Expected number of distinct experts that `tokens` tokens touch when each picks top_k of
// num_experts uniformly: E·(1 − (1 − k/E)^tokens). = k at 1 token, → E for many tokens.
double expected_experts_touched(double num_experts, double top_k, double tokens);

// The smallest size in `sizes` (ascending) that is >= tokens; tokens itself when none is (the
// batch runs eagerly).
int64_t cuda_graph_padded_tokens(int64_t tokens, const std::vector<int>& sizes);

class RooflineCostModel : public CostModel, public CostFastPath {
 public:
  // Options from the deployment's GPU spec (RooflineOptions::from_gpu), CUDA-graph padding on
  // unless d.enforce_eager. d.ideal is ignored here (make_cost_model reads it).
  explicit RooflineCostModel(const Deployment& d);
  // REQUIRES: efficiencies in (0, 1]; GPU peaks and bandwidth > 0; model dimensions > 0;
  // tensor_parallel_size and pipeline_parallel_size >= 1. Throws ConfigError otherwise.
  RooflineCostModel(const Deployment& d, const RooflineOptions& opts);

  StepCost estimate(const BatchShape& shape) const override;
  // The model is its own fast path (the three functions below).
  const CostFastPath* fast_path() const override { return this; }
  // Per total tokens and per sampled rows, the caller's memo keeps the linear, TP all-reduce, LM
  // head and logits-gather times; attention and overheads are computed each time. None with
  // pipeline stages.
  std::unique_ptr<CostMemo> make_memo() const override;
  StepCost estimate_memo(const BatchShape& shape, CostMemo* memo) const override;
  // attention_s() for a decode-only shape, split into its constants (CostFastPath::decode_series).
  DecodeSeries decode_series(int64_t rows, CostMemo* memo) const override;
  // The same step split into stages and hand-offs (see PipelineStepTimes). With sliding-window
  // layers every stage is charged the average layer's attention (the sliding layers spread over
  // the stages in proportion to their layers; exact for gpt-oss's alternating layers when a stage
  // holds an even number of them).
  PipelineStepTimes estimate_pipeline(const BatchShape& shape) const;
  // ModelSpec::attention_window(): the window of the sliding-window layers, else 0.
  int64_t sliding_window() const { return sliding_window_; }

  const RooflineOptions& options() const { return opts_; }
  // Where the linear ops' times come from: KernelSource::label() when a table is in use, else
  // "roofline".
  const std::string& kernel_source() const { return kernel_source_; }
  // Where the measured tables, as used for this deployment, are faster than the ideal roofline
  // of the GPU (and so are raised to it): e.g. "GEMMs at 3 of 41 token counts (up to 1.32x
  // below the ideal)"; "" when nowhere, or without tables. Checked at the tables' grid points.
  const std::string& physics_floor() const { return physics_floor_; }
  // Linear time of one layer (all its GEMMs on one rank) at `tokens` rows, as estimate() charges
  // it (no CUDA-graph padding applied here).
  double layer_linear_time_s(double tokens) const { return layer_linear_s(tokens); }
  // The part of layer_linear_time_s that is not GEMMs: the elementwise kernels between them (the
  // measured chain, or t0 per tabled GEMM without one); 0 under the roofline, whose fitted GEMM
  // times carry them.
  double layer_elementwise_time_s(double tokens) const;
  // Tokens the linear ops (and TP all-reduces) run at: total_tokens() padded to the next CUDA-graph
  // capture size when padding is on and total_tokens() <= the largest size, else unchanged.
  int64_t linear_tokens(const BatchShape& shape) const;
  // Data-parallel MoE (Deployment::dp_coupled): estimate() leaves the routed experts out, and
  // every DP rank's step adds this, the routed experts of all MoE layers for `group_tokens`
  // tokens over the DP group (the sum of the ranks' linear tokens) on the busiest GPU, plus
  // vLLM's default all2all (allgather_reducescatter): an all-gather and a reduce-scatter of the
  // group's hidden states over the DP ranks per MoE layer (docs/cost_model.md §3.2.1). 0 when
  // not coupled.
  double dp_group_moe_s(double group_tokens) const;
  bool dp_coupled() const { return dp_coupled_; }
  // The routed experts of one MoE layer for `tokens` tokens on the busiest GPU of the MoE group
  // (expert parallelism: E / group experts per GPU, the expected largest share of the rows;
  // otherwise every expert sliced over the group). fp8 experts on a GPU without FP8 tensor
  // cores run vLLM's Marlin MoE kernel: its blocks' weight reads and padded rows
  // (models/marlin_moe.h).
  double routed_experts_s(double tokens) const;
  // Bytes of weights one TP rank streams per step with a single token in the batch, summed over
  // all layers (all PP stages) plus the LM head: the floor of any decode step is this / bandwidth.
  double min_weight_bytes_per_step() const;
  // Capture sizes in use (ascending); empty when padding is off.
  const std::vector<int>& cuda_graph_sizes() const { return graph_sizes_; }
  // Where the replica's GPUs sit, and the α–β links its collectives and hand-offs use.
  const hardware::Placement& placement() const { return placement_; }
  // The link of stage s's TP all-reduce / all-gather: gpu.scale_up inside one node, else the ring
  // link over the topology (kind = the network's, so all_reduce_s takes NCCL's ring).
  const hardware::LinkSpec& stage_tp_link(int stage) const;
  // The concurrent TP-rank flows from stage s to s + 1 as one α–β link (Topology::flows_link).
  const hardware::LinkSpec& hop_link(int boundary) const;
  // Time of the hand-off from stage `boundary` to the next for `tokens` tokens:
  //   kPipelineTensors · (α + tokens·h·a_b / TP / bw)            each rank sends 1/TP of each
  //   + kPipelineTensors · ring_all_gather(tokens·h·a_b, TP, next stage's link)
  // (GroupCoordinator.send_tensor_dict / recv_tensor_dict with all_gather_group = the TP group).
  double hop_s(int boundary, double tokens) const;

 private:
  // A GEMM-like op of one layer on one rank: time at T rows is
  // max(flops_per_token·(T + a) / (peak·η_c), (weight_bytes + act_bytes_per_token·T) / (bw·η_m)).
  struct LinearOp {
    double flops_per_token = 0;      // 2 · parameters per rank
    double weight_bytes = 0;         // per rank
    double act_bytes_per_token = 0;  // input + output activations per row
    double k_in = 0, n_out = 0;      // GEMM shape on one rank (0 for the routed experts)
    bool tabled = false;             // timed from the kernel table (table_layer_linear_)
    double layer_share = 1.0;        // the fraction of layers that run it (MoE vs dense layers)
    bool marlin = false;             // weight-only fp8 in vLLM's Marlin GEMM (models/marlin_gemm.h)
  };
  // The weight bytes `op` reads at `rows` rows: once, or marlin_weight_reads(rows) times for a
  // Marlin GEMM.
  static double op_weight_bytes(const LinearOp& op, double rows);
  // A [T, k_in] × [k_in, n_out] GEMM on one rank: weights at the deployment's bytes per
  // parameter (Marlin when fp8 weights run without fp8 tensor cores), activations in the model
  // dtype, run on `layer_share` of the layers.
  static LinearOp gemm_op(const Deployment& d, double k_in, double n_out, double layer_share = 1.0);

  double linear_op_s(const LinearOp& op, double rows, double weight_bytes, double peak_flops) const;
  // The physics floor of measured times (docs/cost_model.md, "What a measured table is bound
  // by"): the same op under RooflineOptions::ideal(), as IdealCostModel times it on this GPU.
  // A tabled time below it is raised to it, so that a step is never faster than the ideal step.
  double ideal_op_s(const LinearOp& op, double rows, double weight_bytes, double peak_flops) const;
  double ideal_tabled_linear_s(double tokens) const;  // Σ ideal_op_s of the tabled dense ops
  double ideal_experts_s(double tokens) const;        // the routed experts' ideal at `tokens`
  // Checks the tables' grid points against the floor (constructor): physics_floor_ says where
  // the floor binds.
  void note_physics_floor();
  // Precomputes the table curves above from d.kernels (constructor, when a table applies).
  void use_kernel_tables(const Deployment& d, double heads_rank, double kv_heads_rank,
                         double head_dim);
  // Causal prefill attention of one layer for the step's Σ q(c + q/2) work, from the table.
  double table_prefill_attention_s(double work) const;
  double layer_linear_s(double tokens) const;
  // Parts of StepCost shared by parts() and estimate_memo(): attention of all layers,
  // the LM head on `rows` sampled rows, and overhead_s, host_s and total_s (from the other parts).
  // Attention: the full layers at the shape's full sums, the sliding-window layers at its
  // windowed ones (docs/cost_model.md §3.3.1).
  double attention_s(const BatchShape& shape, double tokens) const;
  // One layer's attention kernel (§3.3) for `prefill_work` Σ causal work of the prefill chunks,
  // `kv_read` KV tokens read, `decode_ctx` decode context and `tokens` new tokens of the step.
  double layer_attention_s(double prefill_work, int64_t kv_read, int64_t decode_ctx,
                           double tokens) const;
  double lm_head_s(double rows) const;
  void add_overheads(const BatchShape& shape, StepCost& c) const;
  // Parts of a step shared by estimate() and estimate_pipeline().
  struct Parts {
    StepCost cost;                   // linear/attention/lm_head/overhead filled; comm_s = TP + PP
    std::vector<double> stage_comm;  // per stage: TP all-reduces (+ logits gather on the last)
    std::vector<double> hop;         // per boundary
  };
  // Without `per_stage` the two vectors stay empty: estimate() allocates nothing per step.
  Parts parts(const BatchShape& shape, bool per_stage) const;

  RooflineOptions opts_;
  std::vector<int> graph_sizes_;  // ascending; empty = no padding
  int64_t max_graph_size_ = 0;

  // Per-layer, per-rank constants (precomputed in the constructor).
  std::vector<LinearOp> dense_ops_;  // QKV, O, gate_up, down (or router + shared expert for MoE)
  bool moe_ = false;
  LinearOp expert_op_;  // one routed expert: flops per routed token, bytes per expert
  // fp8 experts without FP8 tensor cores: vLLM's Marlin MoE kernel (models/marlin_moe.h) pads
  // each expert's rows to its block size and reads the expert's weights once per block.
  bool expert_marlin_ = false;
  // The routed experts under the Marlin MoE kernel for `tokens` tokens, `busiest` of whose
  // routed rows land on this GPU, timed by the roofline under `o`: the padded rows' FLOPs
  // against the blocks' weight reads (compute), or the reads alone (`reads_only`: the floor a
  // measured grouped-GEMM table is raised to).
  double marlin_experts_s(const RooflineOptions& o, double tokens, double busiest,
                          bool reads_only) const;
  double expert_inter_rank_ = 0;  // I_e / t: one expert's intermediate width on one rank
  double num_experts_ = 0;
  double experts_per_gpu_ = 0;  // E, or E / (TP·DP) under expert parallelism
  int moe_group_ = 1;           // GPUs the experts are spread over (TP·DP)
  bool expert_parallel_ = false;
  // Each EP rank's share of the routed rows under --moe-routing-skew; empty = uniform routing.
  std::vector<double> group_shares_;
  bool dp_coupled_ = false;
  int dp_ = 1;
  hardware::LinkSpec dp_link_;  // the links among the DP group's GPUs
  double top_k_ = 0;
  double attn_flops_per_work_ = 0;        // prefill: 4 · heads_per_rank · head_dim (MLA: below)
  double attn_decode_flops_per_ctx_ = 0;  // decode; = attn_flops_per_work_ but under MLA
  double moe_layer_share_ = 1.0;          // MoE layers / layers (DeepSeek's first dense layers)
  double kv_bytes_per_token_ =
      0;  // per layer per rank: 2 · kv_heads_per_rank · head_dim · kv dtype
  double qo_bytes_per_token_ = 0;  // per layer per rank: Q read + O write
  double num_layers_ = 0;          // all layers (Σ over PP stages)
  // Sliding-window layers (ModelSpec::num_sliding_layers, window sliding_window_) and the others;
  // 0 / 0 / num_layers_ for a model without.
  double sliding_layers_ = 0;
  double full_attention_layers_ = 0;
  int64_t sliding_window_ = 0;
  // Gated DeltaNet layers (Qwen3-Next; models/linear_attention.h): their count and the gated
  // delta rule's work on one rank per new token and per scheduled sequence (its state in and
  // out), in the recurrent form (pure-decode steps) and the chunked form (steps with a
  // prefill), the latter also per 64-token chunk. 0: none.
  double linear_attention_layers_ = 0;
  LinearAttentionWork delta_per_token_;
  LinearAttentionWork delta_per_seq_;
  LinearAttentionWork chunked_per_token_;
  LinearAttentionWork chunked_per_chunk_;
  LinearAttentionWork chunked_per_seq_;
  double linear_attention_s(const BatchShape& shape, double tokens) const;
  // Sets the above and the layer shares of the attention and DeltaNet projections
  // (roofline_linear_attention.cpp).
  void add_linear_attention(const Deployment& d);

  // LM head (last stage), per rank.
  LinearOp lm_head_op_;
  double logits_bytes_per_row_ = 0;  // full-vocabulary logits gathered over TP, bytes per row

  // Communication over the topology.
  int tp_ = 1;
  int pp_ = 1;
  hardware::Placement placement_;
  std::vector<double> stage_layers_;            // per stage (vLLM's split)
  std::vector<hardware::LinkSpec> stage_link_;  // per stage: TP collectives
  std::vector<hardware::LinkSpec> hop_link_;    // per boundary: the TP flows to the next stage
  double hidden_act_bytes_ = 0;                 // hidden_size · activation dtype bytes, per token

  // Measured kernel tables (models/kernel_timer.h), precomputed for this deployment on the
  // table's token grid so that a step stays O(log grid): Σ of the tabled dense ops of one layer,
  // the LM head, and causal prefill attention of one layer against the sequence length.
  std::string kernel_source_ = "roofline";
  std::string physics_floor_;  // physics_floor()
  bool table_linear_ = false;
  hardware::MonotoneCurve table_layer_linear_;  // s per layer vs tokens
  double untabled_elementwise_s_ = 0;           // per layer: t0 per tabled op (see .cpp)
  bool table_elementwise_on_ = false;           // replaces untabled_elementwise_s_
  hardware::MonotoneCurve table_elementwise_;   // s per layer vs tokens: the elementwise chain
  double swiglu_width_rank_ = 0;                // SwiGLU outputs per token per rank (× top-k)
  bool table_lm_head_on_ = false;
  hardware::MonotoneCurve table_lm_head_;  // s vs rows
  bool table_prefill_attn_on_ = false;
  hardware::MonotoneCurve table_prefill_attn_;  // s per layer vs equivalent sequence length
  bool table_moe_on_ = false;                   // replaces the routed experts' roofline op
  hardware::MonotoneCurve table_moe_;           // s per layer vs tokens: gate_up + down

  // Peaks.
  double linear_peak_flops_ = 0;  // fp8 under fp8 quantization when the GPU has it, else bf16
  double bf16_peak_flops_ = 0;
  double bandwidth_ = 0;
};

// The roofline with RooflineOptions::ideal(): a lower bound on the step time of the deployment.
class IdealCostModel : public RooflineCostModel {
 public:
  explicit IdealCostModel(const Deployment& d) : RooflineCostModel(d, RooflineOptions::ideal()) {}
};

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_ROOFLINE_COST_MODEL_H_
