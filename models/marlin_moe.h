// vLLM's Marlin MoE kernel for fp8 experts on a GPU without FP8 tensor cores (Ampere): the work
// of one MoE layer's routed experts as `fused_marlin_moe` runs them.
//
// Where vLLM takes it: Fp8MoEMethod (vllm/model_executor/layers/quantization/fp8.py) sets
// use_marlin below compute capability 8.9, prepares the fp8 expert weights for Marlin
// (marlin_utils_fp8.py, prepare_moe_fp8_layer_for_marlin) and runs them weight-only (W8A16, the
// 1-byte weights dequantised to bf16 in the kernel) through fused_marlin_moe
// (vllm/model_executor/layers/fused_moe/fused_marlin_moe.py). That function:
//   1. picks the block size: the first of 8, 16, 32, 48, 64 with M·top_k / E / size < 0.9, else
//      64, where M is the tokens of the step on this rank and E = w1.size(0), the experts this
//      rank holds (E / EP under expert parallelism, all of them otherwise). Under expert
//      parallelism M·top_k counts every pick, those of other ranks' experts included, so the
//      rule sees EP times the rows a local expert receives and picks larger blocks than the
//      rows need. (Activations quantised to 1 byte raise the size to at least 16: not the
//      default, get_marlin_input_dtype() is None, and not modelled.)
//   2. moe_align_block_size pads every expert's rows to a multiple of the block size: an expert
//      with n rows runs ceil(n / size) blocks (none for n = 0).
//   3. moe_wna16_marlin_gemm runs gate_up, then (after silu_and_mul) down, over those blocks;
//      each block multiplies its rows by its expert's whole weight matrix, streaming those
//      weights through the kernel's tiles and dequantising them again. Both GEMMs share the
//      blocks.
//
// Model: each of a rank's experts receives n ~ Binomial(T, p) rows (T tokens, each picking
// top_k of the E_global experts uniformly: p = top_k / E_global, the routing of
// models::expected_experts_touched). The expected blocks per expert are
//   E[ceil(n / b)] = Σ_{j >= 0} P(n > j·b),
// the weight traffic is (blocks on the rank) × (one expert's weight bytes on the rank), and the
// tensor-core work runs on the padded rows, blocks × b (the MMA tiles cover the block whether
// its rows are there or not). Reads one block's weights that L2 serves to another are not
// credited (the traffic the kernel's partition issues, an upper bound of what reaches HBM, as in
// models/marlin_gemm.h); the dequantisation's ALU work is not charged.
//
// MXFP4 experts (gpt-oss) take the same kernel below compute capability 9.0: Mxfp4MoEMethod's
// Marlin backend (vllm/model_executor/layers/quantization/mxfp4.py: get_mxfp4_backend,
// prepare_moe_fp4_layer_for_marlin) runs them weight-only through fused_marlin_moe, the 4-bit
// weights and their e8m0 scales dequantised to bf16, with the weights padded as
// marlin_mxfp4_padded() says.
//
// Not modelled here: AWQ/GPTQ (w4a16/w8a16) experts through fused_marlin_moe keep the
// grouped-GEMM rule at their bytes per weight (docs/models.md).
#ifndef SERVESIM_MODELS_MARLIN_MOE_H_
#define SERVESIM_MODELS_MARLIN_MOE_H_

namespace servesim::models {

// One MXFP4 expert as vLLM allocates it for Marlin (Mxfp4MoEMethod.create_weights, MARLIN
// backend): the kernel needs n % 256 == 0 and k % 128 == 0 in both GEMMs, so the intermediate
// width per partition is rounded up to a multiple of 128 and the hidden size to a multiple of
// 256, zero-padded. gpt-oss's 2,880-wide experts hold 3,072 × 2,944 at TP 1 (+9 % weights) and
// 3,072 × 768 for 720 columns at TP 4 (+14 %): the padding is stored, read and multiplied.
struct MarlinPaddedExpert {
  double hidden = 0;        // round_up(hidden, 256)
  double intermediate = 0;  // round_up(intermediate per partition, 128)
};
MarlinPaddedExpert marlin_mxfp4_padded(double hidden, double intermediate_rank);

// The block size fused_marlin_moe picks for `tokens` tokens routed top-`top_k` over the
// `local_experts` experts of one rank: the first of 8, 16, 32, 48, 64 with
// tokens·top_k / local_experts / size < 0.9, else 64. REQUIRES: local_experts > 0.
int marlin_moe_block_size(double tokens, double top_k, double local_experts);

// E[ceil(n / block)] for n ~ Binomial(trials, p): the expected blocks of one expert. trials is
// rounded to the nearest integer; 0 for trials < 1 or p <= 0. REQUIRES: block >= 1, p <= 1.
double expected_marlin_blocks(double trials, double p, int block);

// One MoE layer's routed experts on one rank under the Marlin MoE kernel.
struct MarlinMoeWork {
  int block_size = 0;          // fused_marlin_moe's block_size_m
  double rows_per_expert = 0;  // expected rows one of the rank's experts receives, T·p
  double blocks = 0;           // expected blocks over the rank's experts
  double padded_rows = 0;      // blocks × block_size: the rows the tensor cores run
};

// The work for `tokens` tokens on a rank holding `local_experts` experts. `expert_share` is the
// probability that a token routes to one given local expert: top_k / E_global for uniform
// routing (each token picks top_k of E_global); a larger value stands for the busiest rank of
// expert parallelism or a skewed router (the caller's models/moe_routing.h rows, spread over its
// local experts). The block size follows vLLM's rule on tokens·top_k / local_experts whatever
// the share. REQUIRES: tokens >= 0, top_k >= 1, local_experts > 0, 0 <= expert_share <= 1.
MarlinMoeWork marlin_moe_work(double tokens, double top_k, double local_experts,
                              double expert_share);

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_MARLIN_MOE_H_
