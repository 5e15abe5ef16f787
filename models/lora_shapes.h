// LoraShapes: the sizes and the per-step kernel cost of vLLM's LoRA layers for one model and one
// tensor-parallel rank (docs/deployment-modes.md, "LoRA").
//
// vLLM wraps every supported linear layer of a decoder layer in a LoRA layer when --enable-lora
// is on (vllm/lora/model_manager.py) and allocates, at model load and so before the KV cache is
// sized, stacked buffers for max_loras adapters of rank max_lora_rank (create_lora_weights in
// vllm/lora/layers/base_linear.py): for each slice of a layer, A [max_loras, 1, rank, input] and
// B [max_loras, 1, output, rank] in lora_dtype (the model dtype by default). Column-parallel
// layers (qkv_proj: 3 slices, gate_up_proj: 2) keep A whole and split B's output over TP;
// row-parallel layers (o_proj, down_proj) split A's input and keep B whole (fully_sharded_loras
// off, vLLM's default). Per rank and per unit of rank, one slot of one decoder layer is
//   A: 3·h + q/TP + 2·h + I/TP        B: (q + 2·kv)/TP + h + 2·I/TP + h
// elements, q = heads·head_dim, kv = ceil(kv_heads/TP)·head_dim (at least one head per rank),
// h = hidden size, I = intermediate size.
//
// Not counted: LoRA on the embedding and LM head (vLLM's lora_extra_vocab/embedding paths), on
// MoE experts and on MLA projections: models with MoE layers or MLA are refused by the caller.
// Adapters are taken to target every one of these modules at their full rank.
//
// Step cost (Punica/SGMV shrink then expand, vllm/lora/ops/triton_ops): a roofline — labelled
// so, no measured table exists — over the tokens of the batch that carry an adapter (T) and the
// distinct adapters in the batch (D), per layer:
//   FLOPs = 2·T·R·(A + B)
//   bytes = (D·R·(A + B) + T·A + 2·T·B)·dtype + 2·T·R·7·4   (weights once per adapter, inputs,
//           outputs read and written, the fp32 shrink output of the 7 slices written and read)
//   time  = max(FLOPs / (peak FLOP/s · compute efficiency), bytes / (bandwidth · memory eff.))
// summed over the stage's layers. No kernel launch latency (vLLM captures them in CUDA graphs).
#ifndef SERVESIM_MODELS_LORA_SHAPES_H_
#define SERVESIM_MODELS_LORA_SHAPES_H_

#include <algorithm>
#include <cstdint>
#include <string>

#include "hardware/gpu_spec.h"
#include "models/model_spec.h"

namespace servesim::models {

// The roofline of the shrink and expand kernels of one step (file comment), per stage.
struct LoraStepCost {
  double layers = 0;
  double flops_per_token = 0;    // 2·R·(A + B)
  double bytes_per_token = 0;    // (A + 2·B)·dtype + 2·R·7·4
  double bytes_per_adapter = 0;  // R·(A + B)·dtype
  double compute_div = 1;        // peak FLOP/s · compute efficiency
  double memory_div = 1;         // bandwidth · memory efficiency
  // `tokens` tokens carrying an adapter, `adapters` distinct adapters among them; 0 when either
  // is 0.
  double seconds(int64_t tokens, int64_t adapters) const {
    if (tokens <= 0 || adapters <= 0) return 0.0;
    const double t = static_cast<double>(tokens);
    const double flops = flops_per_token * t;
    const double bytes = bytes_per_token * t + bytes_per_adapter * static_cast<double>(adapters);
    return layers * std::max(flops / compute_div, bytes / memory_div);
  }
};

class LoraShapes {
 public:
  // `layers` = decoder layers held by this rank (its pipeline stage). REQUIRES: tp >= 1.
  LoraShapes(const ModelSpec& model, int tp, int64_t layers, int dtype_bytes);

  // Why LoRA cannot be modelled for `model` ("" when it can): MoE or MLA layers.
  static std::string unsupported_reason(const ModelSpec& model);

  // Elements per unit of rank of one slot in one decoder layer on this rank (file comment).
  double a_elements() const { return a_; }
  double b_elements() const { return b_; }
  // GPU bytes of `slots` adapter slots of rank `rank` on this rank: the stacked buffers.
  double slot_bytes(int slots, int rank) const;
  // Bytes of one adapter of rank `rank` as a checkpoint (every layer, unsharded): what a worker
  // reads when the adapter is not in its CPU cache.
  double adapter_file_bytes(int rank) const { return adapter_file_per_rank_ * rank; }
  // Bytes one rank copies into a GPU slot when it activates an adapter of rank `rank`.
  double slot_copy_bytes(int rank) const { return slot_bytes(1, rank); }
  // The step cost of adapters of rank `rank` on `gpu` (LoraStepCost).
  LoraStepCost step_cost(int rank, const hardware::GpuSpec& gpu) const;

 private:
  double a_ = 0;
  double b_ = 0;
  double layers_ = 0;
  double dtype_bytes_ = 0;
  double adapter_file_per_rank_ = 0;
};

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_LORA_SHAPES_H_
