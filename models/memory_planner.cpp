// Memory plan of one replica rank, following vLLM V1's KV sizing (REFERENCE.md §1.2):
//
//   budget      = device_bytes · gpu_memory_utilization
//   weights     = per-rank parameters (see below) + RoPE cos/sin cache
//   activations = peak of vLLM's profiling run (dummy forward of max_num_batched_tokens tokens,
//                 then a dummy sampler over min(max_num_seqs, mbt) rows)
//   other       = gpu.non_torch_memory_bytes (+ NCCL buffers when the replica spans GPUs)
//   lora        = the LoRA slots' buffers with --enable-lora (models/lora_shapes.h), else 0
//   kv          = budget − weights − lora − activations − other
//   blocks      = floor(kv / (block_size · kv_bytes_per_token_per_rank))
//
// Activation peak (per rank, bytes):
//   forward = (mbt · 3·h + mlp) · dtype_bytes
//     The peak sits inside one layer's MLP, where three hidden-size tensors (residual, normed
//     input, layer output) are alive besides the MLP's own intermediates `mlp` (elements):
//     dense: mbt · 3·I/TP, the fused gate_up output (2·I/TP) and the SiLU·mul output (I/TP).
//     MoE: the largest of the dense layers' (if any), the shared experts' (mbt · 3·I_shared/TP)
//     and the fused-MoE workspace of the routed experts, allocated for M = min(tokens, 32768)
//     tokens (VLLM_FUSED_MOE_CHUNK_SIZE, vllm/envs.py; tokens = mbt, or DP · mbt when the DP
//     ranks' tokens are gathered into the MoE layer) and top_k picks each:
//       M · top_k · (max(N, K) + N/2)   from vLLM 0.8 (PR #13625: cache1 [N] and cache3 [K] share
//                                       one buffer, cache2 [N/2] apart; fused_moe.py
//                                       fused_experts_impl; fused_marlin_moe sizes its caches the
//                                       same way)
//       M · top_k · (N + N/2 + K)       before (MemoryPlanOptions::fused_moe_separate_caches)
//       M · top_k · (max(N/2, K) + max(N, K))   unquantized experts from vLLM 0.14 (the modular
//                                       kernel's TritonExperts.workspace_shapes, PR #31052;
//                                       MemoryPlanOptions::fused_moe_modular_workspace); the
//                                       quantized experts keep the 0.8 form (docs/cost_model.md §4)
//     with N = 2·I_part (gate_up width of one expert on this rank: moe_intermediate / (TP·DP), or
//     whole under --enable-expert-parallel) and K = hidden; MXFP4 experts on Marlin at their
//     padded shape. DeepSeek-R1 at TP 8 and mbt 32,000 on vLLM 0.7: 3.78 GiB, where the public
//     0.7.3 log's activation peak exceeds the dense-layer formula by 3.2 GiB (docs/models.md).
//   sampler = 3 · min(max_num_seqs, mbt) · vocab · 4
//     the dummy sampler run holds about three fp32 [rows, vocab] tensors (logits cast to fp32,
//     probabilities, and the bf16 logits + top-k/top-p workspace).
//   activations = forward + sampler
//
// Fit to the real KV capacities (docs/cost_model.md §4.1 has the table):
//   CodeLlama-34B on H100, vLLM 0.11 (vllm.log): weights 62.8571 GiB (ours 62.8570 with the RoPE
//   cache). KV 7.43 GiB at mbt 4096 / 256 seqs and 8.18 GiB at mbt 64 / 32 seqs: the difference,
//   0.742 GiB, is pure activation; the formula gives 0.761 GiB (+2.5 %; a free multiplier would be
//   0.97). With 79.19 GiB visible, the logs then imply non-torch memory of 0.197 and 0.215 GiB;
//   the catalog's 0.214 GiB predicts 2531 (−0.24 %) and 2791 (+0.04 %) blocks vs 2537 and 2790.
//   Llama-3.1-8B on H100 (third-party vLLM V1 log, mbt 8192, 256 seqs): activation peak logged
//   1.21 GiB; the formula gives 1.211 GiB.
//   Llama-3.1-8B on RTX 4090, vLLM 0.19 (meta.json, 2588 blocks): budget − weights − KV leaves
//   1.120 GiB; the formula's activations are 0.578 GiB, so that GPU/version's non-torch memory is
//   0.542 GiB — 2.5× the H100/0.11 value; recent vLLM also reserves CUDA-graph memory before
//   sizing the KV cache (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS), which plausibly explains it.
//
// Weights per rank: linear layers at weight_bytes_per_param (routed experts at
// expert_weight_bytes_per_param; MXFP4 experts on Marlin at their padded shape,
// models/marlin_moe.h), embeddings/LM head at the model dtype, both sharded over TP (KV projections
// replicated once TP > num_kv_heads); norms and the RoPE cache replicated. Pipeline parallel: the
// planner sizes the most loaded stage, ceil(L/PP) layers plus one of the embedding / LM head (both
// when PP = 1), and its KV holds those layers only.
#include "models/memory_planner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "models/linear_attention.h"
#include "models/lora_shapes.h"
#include "models/marlin_moe.h"
#include "sim/base/error.h"

namespace servesim::models {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// Hidden-size activation tensors alive at the MLP peak of the profiling run (see above).
constexpr double kForwardHiddenTensors = 3;
// fp32 [rows, vocab] tensors alive at the sampler peak of the profiling run.
constexpr double kSamplerFp32Copies = 3;
// NCCL communicators and vLLM's custom all-reduce buffers per rank when TP·PP > 1.
// AIConfigurator systems/*.yaml: nccl_mem 342–392 MB per GPU.
constexpr double kNcclBytesPerRank = 0.35 * kGiB;
// VLLM_FUSED_MOE_CHUNK_SIZE's default (vllm/envs.py): the fused-MoE workspace holds at most this
// many tokens; longer inputs are processed in chunks.
constexpr int64_t kFusedMoeChunkTokens = 32768;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct Sizes {
  double weights = 0;
  double lora = 0;  // LoRA slots (0 without --enable-lora)
  double activations = 0;
  double other = 0;
  double budget = 0;
  int64_t kv_bytes_per_token = 0;
};

Sizes compute_sizes(const Deployment& d, int tp, const MemoryPlanOptions& opts) {
  const ModelSpec& m = d.model;
  const int pp = d.pipeline_parallel_size;
  const double h = static_cast<double>(m.hidden_size);
  // The rotary cos/sin cache spans the rotated width (MLA: qk_rope_head_dim only).
  const double hd = static_cast<double>(m.is_mla() ? m.mla.qk_rope_head_dim : m.head_dim);

  // Parameters of one decoder layer on one rank; an MoE model's dense and MoE layers averaged
  // (exact for the whole model; a pipeline stage gets the average layer).
  double attn = m.attention_params_per_rank(tp);
  if (m.linear.num_layers > 0) {  // Qwen3-Next: Gated DeltaNet on linear.num_layers layers
    const double linear = static_cast<double>(m.linear.num_layers);
    const double layers = static_cast<double>(m.num_layers);
    attn = ((layers - linear) * attn + linear * delta_net_params_per_rank(m, tp)) / layers;
  }
  double mlp = 0;
  double expert_params = 0;  // the routed experts' share of mlp (MXFP4 stores them in 4.25 bits)
  const double mbt = opts.max_num_batched_tokens;
  double mlp_peak = 0;  // MLP intermediates at the profiling run's peak, elements (see above)
  if (m.is_moe()) {
    const double moe_share =
        static_cast<double>(m.num_moe_layers()) / static_cast<double>(m.num_layers);
    const double moe_i = static_cast<double>(m.moe_intermediate_size > 0 ? m.moe_intermediate_size
                                                                         : m.intermediate_size);
    const double shared_i = static_cast<double>(m.shared_expert_intermediate_size);
    // The routed experts spread over the MoE group (TP, or TP x DP: sliced, or whole under
    // --enable-expert-parallel; the bytes per GPU are the same), the shared experts TP-sharded,
    // the router replicated.
    const double router = h * static_cast<double>(m.num_experts);
    const double routed = 3 * h * moe_i * static_cast<double>(m.num_experts);
    const double shared = m.moe_mlp_params(m.num_experts) - router - routed;
    const double group = static_cast<double>(tp) * d.data_parallel_size;
    // MXFP4 experts on Marlin are allocated at their padded shape (models/marlin_moe.h): E / group
    // whole experts under expert parallelism, else every expert's slice of the group.
    const bool ep = d.enable_expert_parallel && group > 1;
    double routed_gpu = routed / group;
    double i_part = ep ? moe_i : moe_i / group;  // one expert's intermediate width on this rank
    double k = h;
    if (d.mxfp4_marlin()) {
      const MarlinPaddedExpert e = marlin_mxfp4_padded(h, i_part);
      routed_gpu =
          3 * e.hidden * e.intermediate * static_cast<double>(m.num_experts) / (ep ? group : 1.0);
      i_part = e.intermediate;
      k = e.hidden;
    }
    mlp = moe_share * (routed_gpu + shared / tp + router) +
          (1.0 - moe_share) * m.dense_mlp_params() / tp;
    expert_params = moe_share * routed_gpu;
    const double n = 2 * i_part;
    const bool modular = opts.fused_moe_modular_workspace && d.weight_format().empty();
    const double per_pick = opts.fused_moe_separate_caches ? n + n / 2 + k
                            : modular                      ? std::max(n / 2, k) + std::max(n, k)
                                                           : std::max(n, k) + n / 2;
    const double moe_tokens =
        std::min(mbt * d.data_parallel_size, static_cast<double>(kFusedMoeChunkTokens));
    mlp_peak = std::max(moe_tokens * static_cast<double>(m.experts_per_token) * per_pick,
                        mbt * 3 * shared_i / tp);
    if (m.num_dense_layers > 0) {
      mlp_peak = std::max(mlp_peak, mbt * 3 * static_cast<double>(m.intermediate_size) / tp);
    }
  } else {
    mlp = m.dense_mlp_params() / tp;
    mlp_peak = mbt * 3 * static_cast<double>(m.intermediate_size) / tp;
  }
  const double norms = m.norm_params_per_layer();
  const double layer_params = attn + mlp + norms;

  const int64_t layers_stage = ceil_div(m.num_layers, pp);
  const double vocab_matrix = static_cast<double>(m.vocab_size) * h / tp;  // one of embed/LM head
  double embedding_params = vocab_matrix;
  if (pp == 1 && !m.tie_word_embeddings) {
    embedding_params += vocab_matrix;  // embedding and LM head on the same (only) stage
  }
  const double rope_cache = static_cast<double>(m.max_position_embeddings) * hd * m.dtype_bytes;

  Sizes s;
  // Experts at their own bytes per weight; the correction term is exactly 0 when the experts are
  // stored like the other linear weights (bf16, fp8).
  const double expert_extra_bytes =
      expert_params * (d.expert_weight_bytes_per_param() - d.weight_bytes_per_param());
  s.weights = static_cast<double>(layers_stage) *
                  (layer_params * d.weight_bytes_per_param() + expert_extra_bytes) +
              (embedding_params + h) * m.dtype_bytes + rope_cache;
  // A multimodal checkpoint's vision encoder (Gemma-3, Llama-4), TP-sharded like vLLM's
  // vision towers, in the model dtype; 0 for language models.
  s.weights += m.encoder_params / tp * m.dtype_bytes;
  s.weights += static_cast<double>(layers_stage) *
               mla_extra_weight_bytes_per_layer(d, tp, opts.mla_absorbed_weights);

  const double forward = (mbt * kForwardHiddenTensors * h + mlp_peak) * m.dtype_bytes;
  const double rows = std::min(opts.max_num_seqs, opts.max_num_batched_tokens);
  const double sampler = kSamplerFp32Copies * rows * static_cast<double>(m.vocab_size) * 4.0;
  s.activations = forward + sampler;

  if (opts.lora_slots > 0) {
    s.lora =
        LoraShapes(m, tp, layers_stage, m.dtype_bytes).slot_bytes(opts.lora_slots, opts.lora_rank);
  }
  s.other = d.gpu.non_torch_memory_bytes + (tp * pp > 1 ? kNcclBytesPerRank : 0.0);
  s.budget = d.gpu.memory_bytes * opts.gpu_memory_utilization;
  const int64_t kv_layers = m.num_layers - m.linear.num_layers;  // layers with a per-token KV
  int64_t per_token = m.kv_bytes_per_token_per_rank(d.kv_dtype_bytes(), tp);
  if (m.is_mla() && opts.mla_entry_align_bytes > 0) {
    const int64_t entry = m.mla.latent_width() * d.kv_dtype_bytes();
    per_token =
        m.num_layers * ceil_div(entry, opts.mla_entry_align_bytes) * opts.mla_entry_align_bytes;
  }
  s.kv_bytes_per_token = per_token / kv_layers * ceil_div(kv_layers, pp);
  return s;
}

bool fits(const Sizes& s, int block_size) {
  const double kv = s.budget - s.weights - s.lora - s.activations - s.other;
  return kv >= static_cast<double>(block_size) * static_cast<double>(s.kv_bytes_per_token);
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace

double mla_extra_weight_bytes_per_layer(const Deployment& d, int tp, bool absorbed_weights) {
  const ModelSpec& m = d.model;
  if (!m.is_mla()) return 0;
  const double heads = static_cast<double>(m.num_heads / tp);
  const bool fp8 = d.weight_format() == "fp8";
  const double kv_b = fp8 ? heads * static_cast<double>(m.mla.qk_nope_head_dim + m.mla.v_head_dim) *
                                static_cast<double>(m.mla.kv_lora_rank) * m.dtype_bytes
                          : 0.0;
  if (!absorbed_weights) return kv_b;
  const double q_in =
      static_cast<double>(m.mla.q_lora_rank > 0 ? m.mla.q_lora_rank : m.hidden_size);
  const double latent = heads * static_cast<double>(m.mla.kv_lora_rank);
  const double absorbed = fp8 ? 1.0 : m.dtype_bytes;
  const double w_qr = q_in * heads * static_cast<double>(m.mla.qk_rope_head_dim) * m.dtype_bytes;
  const double w_q_uk = q_in * latent * absorbed;
  const double w_uv_o = latent * static_cast<double>(m.hidden_size) * absorbed;
  return w_qr + w_q_uk + w_uv_o + kv_b;
}

MemoryPlan plan_memory(const Deployment& d, const MemoryPlanOptions& opts) {
  const ModelSpec& m = d.model;
  if (!(opts.gpu_memory_utilization > 0 && opts.gpu_memory_utilization <= 1)) {
    throw ConfigError("gpu-memory-utilization must be in (0, 1], got " +
                      std::to_string(opts.gpu_memory_utilization));
  }
  if (opts.block_size < 1 || opts.max_num_batched_tokens < 1 || opts.max_num_seqs < 1) {
    throw ConfigError("block-size, max-num-batched-tokens and max-num-seqs must be >= 1");
  }
  if (d.tensor_parallel_size < 1 || d.pipeline_parallel_size < 1) {
    throw ConfigError("tensor-parallel-size and pipeline-parallel-size must be >= 1");
  }
  if (m.hidden_size <= 0 || m.num_layers <= 0 || m.num_heads <= 0 || m.num_kv_heads <= 0 ||
      m.head_dim <= 0 || m.vocab_size <= 0) {
    throw ConfigError("model " + m.name + " has a zero dimension");
  }
  if (d.gpu.memory_bytes <= 0) {
    throw ConfigError("GPU " + d.gpu.name + " has no memory_bytes");
  }

  const Sizes s = compute_sizes(d, d.tensor_parallel_size, opts);
  MemoryPlan plan;
  plan.device_bytes = d.gpu.memory_bytes;
  plan.budget_bytes = s.budget;
  plan.weight_bytes = s.weights;
  plan.activation_bytes = s.activations;
  plan.non_torch_bytes = s.other;
  plan.lora_bytes = s.lora;
  plan.kv_bytes = s.budget - s.weights - s.lora - s.activations - s.other;
  plan.kv_bytes_per_token = s.kv_bytes_per_token;

  double block_bytes =
      static_cast<double>(opts.block_size) * static_cast<double>(s.kv_bytes_per_token);
  const int64_t layers_stage = ceil_div(m.num_layers, d.pipeline_parallel_size);
  if (opts.kv_layers_per_block > 0 && opts.kv_layers_per_block < layers_stage) {
    // A hybrid block holds kv_layers_per_block layers (kv_bytes_per_token covers every attention
    // layer; a linear-attention layer's padded state page is an attention page:
    // models/linear_attention.h).
    block_bytes = static_cast<double>(opts.block_size) *
                  static_cast<double>(s.kv_bytes_per_token / (layers_stage - m.linear.num_layers) *
                                      opts.kv_layers_per_block);
  }
  if (plan.kv_bytes < block_bytes) {
    // vLLM: "No available memory for the cache blocks". We also refuse a cache that cannot hold
    // one block, since no request could ever run.
    std::string where = m.name + " does not fit on " + d.gpu.name + " with tensor-parallel-size " +
                        std::to_string(d.tensor_parallel_size);
    if (d.pipeline_parallel_size > 1) {
      where += " and pipeline-parallel-size " + std::to_string(d.pipeline_parallel_size);
    }
    std::string what;
    const std::string lora =
        s.lora > 0 ? " + LoRA slots " + fmt("%.1f", s.lora / kGiB) + " GiB" : std::string();
    const std::string parts = "weights " + fmt("%.1f", s.weights / kGiB) + " GiB" + lora +
                              " + activations " + fmt("%.1f", s.activations / kGiB) +
                              " GiB + other " + fmt("%.1f", s.other / kGiB) + " GiB";
    const std::string budget = "the " + fmt("%.1f", s.budget / kGiB) +
                               " GiB budget (gpu-memory-utilization " +
                               fmt("%.2f", opts.gpu_memory_utilization) + ")";
    if (plan.kv_bytes <= 0) {
      what = parts + " exceed " + budget + " by " + fmt("%.1f", -plan.kv_bytes / kGiB) + " GiB";
    } else {
      what = parts + " leave " + fmt("%.1f", plan.kv_bytes / (1024.0 * 1024.0)) + " MiB of " +
             budget + " for the KV cache, less than one " + std::to_string(opts.block_size) +
             "-token block (" + fmt("%.1f", block_bytes / (1024.0 * 1024.0)) + " MiB)";
    }
    std::string hint = "; the smallest tensor-parallel-size that fits is none up to 8";
    for (int tp : {1, 2, 4, 8}) {
      if (m.num_heads % tp != 0) {
        continue;
      }
      if (fits(compute_sizes(d, tp, opts), opts.block_size)) {
        hint = "; the smallest tensor-parallel-size that fits is " + std::to_string(tp);
        break;
      }
    }
    throw ConfigError(where + ": " + what + hint);
  }

  plan.num_blocks = static_cast<int64_t>(std::floor(plan.kv_bytes / block_bytes));
  if (opts.num_gpu_blocks_override > 0) {
    plan.num_blocks = opts.num_gpu_blocks_override;
  }
  plan.kv_tokens = plan.num_blocks / std::max(1, opts.kv_cache_groups) * opts.block_size;
  return plan;
}

}  // namespace servesim::models
