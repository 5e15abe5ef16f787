#include "models/lora_shapes.h"

#include <algorithm>

namespace servesim::models {

namespace {
// Slices with a LoRA shrink output per decoder layer: q, k, v, o, gate, up, down.
constexpr double kSlicesPerLayer = 7;
// Punica's shrink output is fp32 (vllm/lora/ops/triton_ops/lora_shrink_op.py).
constexpr double kShrinkOutputBytes = 4;
}  // namespace

LoraShapes::LoraShapes(const ModelSpec& m, int tp, int64_t layers, int dtype_bytes)
    : layers_(static_cast<double>(layers)), dtype_bytes_(dtype_bytes) {
  const double t = tp;
  const double h = static_cast<double>(m.hidden_size);
  const double i = static_cast<double>(m.intermediate_size);
  const double q = static_cast<double>(m.num_heads * m.head_dim);
  const double kv_rank =
      static_cast<double>(std::max<int64_t>(1, (m.num_kv_heads + tp - 1) / tp) * m.head_dim);
  a_ = 3 * h + q / t + 2 * h + i / t;
  b_ = (q / t + 2 * kv_rank) + h + 2 * i / t + h;
  // The checkpoint: q, k, v, o, gate, up, down of every layer, whole.
  const double kv = static_cast<double>(m.num_kv_heads * m.head_dim);
  const double per_layer = (3 * h + q + 2 * h + i) + (q + 2 * kv + h + 2 * i + h);
  adapter_file_per_rank_ = per_layer * static_cast<double>(m.num_layers) * dtype_bytes;
}

std::string LoraShapes::unsupported_reason(const ModelSpec& m) {
  if (m.is_moe()) return "LoRA on MoE expert layers is not modelled";
  if (m.is_mla()) return "LoRA on multi-head latent attention is not modelled";
  return "";
}

double LoraShapes::slot_bytes(int slots, int rank) const {
  return static_cast<double>(slots) * static_cast<double>(rank) * (a_ + b_) * layers_ *
         dtype_bytes_;
}

LoraStepCost LoraShapes::step_cost(int rank, const hardware::GpuSpec& gpu) const {
  const double r = rank;
  LoraStepCost c;
  c.layers = layers_;
  c.flops_per_token = 2 * r * (a_ + b_);
  c.bytes_per_token = (a_ + 2 * b_) * dtype_bytes_ + 2 * r * kSlicesPerLayer * kShrinkOutputBytes;
  c.bytes_per_adapter = r * (a_ + b_) * dtype_bytes_;
  c.compute_div = gpu.bf16_flops * gpu.compute_efficiency;
  c.memory_div = gpu.hbm_bandwidth_bytes_per_s * gpu.memory_efficiency;
  return c;
}

}  // namespace servesim::models
