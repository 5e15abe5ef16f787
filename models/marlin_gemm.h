// vLLM's Marlin GEMM for weight-only layers: FP8 checkpoints on GPUs without FP8 tensor cores
// (Ampere) run W8A16, the 1-byte weights dequantised to bf16 inside the GEMM
// (vllm/model_executor/layers/quantization/utils/marlin_utils_fp8.py, apply_fp8_marlin_linear;
// Fp8LinearMethod picks it below compute capability 8.9).
//
// The kernel (csrc/quantization/gptq_marlin/gptq_marlin.cu, marlin_mm) tiles the rows in blocks
// of at most 4 × 16 = 64 (max_thread_m_blocks 4): a GEMM of M > 64 rows runs as ceil(M / 64)
// independent 64-row problems ("par" slices, up to max_par of them per launch, the rest in
// further launches), and every slice streams the whole weight matrix through its own tiles and
// dequantises it again. At 64 rows per 1-byte weight read a slice does 2 · 64 = 128 FLOPs per
// byte, below an A100's ridge point (312 TFLOP/s / 2.04 TB/s = 153 FLOP/B): past 64 rows the
// GEMM is bound by these reads, where the bf16 GEMM of the same shape is compute-bound.
//
// Model: the weight traffic of a Marlin GEMM at M rows is marlin_weight_reads(M) times the weight
// bytes. Reads of one slice that L2 serves to another are not credited: this is the traffic the
// kernel's partition issues, an upper bound of what reaches HBM. The dequantisation's own ALU
// work is not charged.
#ifndef SERVESIM_MODELS_MARLIN_GEMM_H_
#define SERVESIM_MODELS_MARLIN_GEMM_H_

#include <cmath>

namespace servesim::models {

// Rows per Marlin slice: max_thread_m_blocks (4) × the 16-row tile.
inline constexpr double kMarlinSliceRows = 64;

// How many times a Marlin GEMM of `rows` rows reads its weights: 1 up to 64 rows (one slice;
// none for no rows), ceil(rows / 64) above.
inline double marlin_weight_reads(double rows) {
  return rows <= 0 ? 0.0 : std::ceil(rows / kMarlinSliceRows);
}

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_MARLIN_GEMM_H_
