// Hand-built ModelSpec / GpuSpec values for the models tests, with the real numbers of
// REFERENCE.md §3/§4 (HF config.json fields, datasheet peaks), so that these tests do not depend on
// the JSON catalogs or their loaders.
#ifndef SERVESIM_TESTS_UNIT_MODELS_HAND_SPECS_H_
#define SERVESIM_TESTS_UNIT_MODELS_HAND_SPECS_H_

#include <string>

#include "hardware/gpu_spec.h"
#include "models/batch_shape.h"
#include "models/model_spec.h"

namespace servesim::models::testing {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

inline ModelSpec llama_like(std::string name, int64_t h, int64_t inter, int64_t layers,
                            int64_t heads, int64_t kv, int64_t vocab, int64_t max_pos) {
  ModelSpec m;
  m.name = std::move(name);
  m.hidden_size = h;
  m.intermediate_size = inter;
  m.num_layers = layers;
  m.num_heads = heads;
  m.num_kv_heads = kv;
  m.head_dim = h / heads;
  m.vocab_size = vocab;
  m.max_position_embeddings = max_pos;
  m.dtype_bytes = 2;
  return m;
}

inline ModelSpec llama31_8b() {
  return llama_like("llama-3.1-8b", 4096, 14336, 32, 32, 8, 128256, 131072);
}
inline ModelSpec llama31_70b() {
  return llama_like("llama-3.1-70b", 8192, 28672, 80, 64, 8, 128256, 131072);
}
inline ModelSpec llama2_70b() {
  return llama_like("llama-2-70b", 8192, 28672, 80, 64, 8, 32000, 4096);
}
// CodeLlama-34b-Instruct-hf: max_position_embeddings 16384 (rope_theta 1e6).
inline ModelSpec codellama_34b() {
  return llama_like("codellama-34b", 8192, 22016, 48, 64, 8, 32000, 16384);
}
// Llama-3.1-405B dimensions: too big for 8 x 40 GB.
inline ModelSpec llama31_405b() {
  return llama_like("llama-3.1-405b", 16384, 53248, 126, 128, 8, 128256, 131072);
}
inline ModelSpec mixtral_8x7b() {
  ModelSpec m = llama_like("mixtral-8x7b", 4096, 14336, 32, 32, 8, 32000, 32768);
  m.num_experts = 8;
  m.experts_per_token = 2;
  m.moe_intermediate_size = 14336;
  return m;
}

// H100 SXM: 989 TFLOP/s bf16 dense, 1979 fp8, 3.35 TB/s, NVLink4 450 GB/s per direction.
// Same numbers as hardware/catalog/h100-sxm.json (memory 85,029,027,840 B = 79.19 GiB as torch
// reports it; efficiencies 0.713/0.827 from Vidur's GEMM profiles; non-torch 230 MB from the
// CodeLlama-34B vLLM 0.11 logs), except step overhead 0 so the tests see the pure roofline.
inline hardware::GpuSpec h100_sxm() {
  hardware::GpuSpec g;
  g.name = "h100-sxm";
  g.memory_bytes = 85029027840.0;
  g.hbm_bandwidth_bytes_per_s = 3.35e12;
  g.bf16_flops = 989e12;
  g.fp8_flops = 1979e12;
  g.scale_up = {"nvlink", 450e9, 5e-6};
  g.compute_efficiency = 0.713;
  g.memory_efficiency = 0.827;
  g.step_overhead_s = 0;
  g.per_seq_overhead_s = 0;
  g.non_torch_memory_bytes = 230e6;
  return g;
}

// A100-SXM4-40GB: 312 TFLOP/s bf16, no fp8, 1.555 TB/s, NVLink3 300 GB/s; as
// hardware/catalog/a100-40gb.json (memory 42,294,312,960 B = 39.39 GiB), step overhead 0.
inline hardware::GpuSpec a100_40gb() {
  hardware::GpuSpec g;
  g.name = "a100-sxm-40gb";
  g.memory_bytes = 42294312960.0;
  g.hbm_bandwidth_bytes_per_s = 1.555e12;
  g.bf16_flops = 312e12;
  g.fp8_flops = 0;
  g.scale_up = {"nvlink", 300e9, 8e-6};
  g.compute_efficiency = 0.747;
  g.memory_efficiency = 0.752;
  g.non_torch_memory_bytes = 230e6;
  return g;
}

// GeForce RTX 4090: device_total_memory_bytes from the vLLM 0.19 run's meta.json; 1008 GB/s,
// 165 TFLOP/s bf16 dense. Non-torch memory 0.542 GiB fitted to that run with this planner's
// activation model (see memory_planner_test.cpp); the catalog's 422 MB was fitted with another one.
inline hardware::GpuSpec rtx4090() {
  hardware::GpuSpec g;
  g.name = "rtx-4090";
  g.memory_bytes = 25250627584.0;
  g.hbm_bandwidth_bytes_per_s = 1.008e12;
  g.bf16_flops = 165.2e12;
  g.fp8_flops = 330.3e12;
  g.scale_up = {"pcie", 32e9, 10e-6};
  g.compute_efficiency = 0.747;
  g.memory_efficiency = 0.89;
  g.non_torch_memory_bytes = 0.542 * kGiB;
  return g;
}

// `seqs` decoding requests, each attending to `context_each` cached tokens.
inline BatchShape decode(int64_t seqs, int64_t context_each) {
  BatchShape s;
  s.decode_seqs = seqs;
  s.decode_context_tokens = seqs * context_each;
  s.sampled_seqs = seqs;
  return s;
}

// One prefill chunk of `q` new tokens after `c` cached ones; it finishes its prompt (samples).
inline BatchShape prefill(int64_t q, int64_t c = 0) {
  BatchShape s;
  s.prefill_seqs = 1;
  s.prefill_tokens = q;
  s.prefill_attn_work = static_cast<double>(q) * (static_cast<double>(c) + q / 2.0);
  s.prefill_context_tokens = c;
  s.sampled_seqs = 1;
  return s;
}

}  // namespace servesim::models::testing

#endif  // SERVESIM_TESTS_UNIT_MODELS_HAND_SPECS_H_
