// LoRA slot memory and kernel roofline (models/lora_shapes.h) against their closed forms, and the
// KV cache they take from (models/memory_planner.h).
#include "models/lora_shapes.h"

#include <catch2/catch.hpp>

#include <cmath>

#include "models/memory_planner.h"
#include "tests/unit/models/hand_specs.h"

namespace servesim::models {
namespace {

using Catch::Matchers::WithinRel;

TEST_CASE("LoRA slot bytes of Llama-3.1-8B follow vLLM's stacked buffers", "[models][lora]") {
  // h = 4096, I = 14336, q = 32·128 = 4096, kv = 8·128 = 1024, 32 layers, bf16.
  // TP 1, per unit of rank and layer: A = 3h + q + 2h + I = 38912; B = (q + 2kv) + h + 2I + h =
  // 43008; A + B = 81920. 4 slots of rank 16: 81920·16·4·32·2 B = 335544320 B = 320 MiB.
  const ModelSpec m = testing::llama31_8b();
  const LoraShapes tp1(m, 1, m.num_layers, m.dtype_bytes);
  CHECK(tp1.a_elements() == 38912);
  CHECK(tp1.b_elements() == 43008);
  CHECK(tp1.slot_bytes(4, 16) == 335544320.0);
  // TP 2: A = 3h + q/2 + 2h + I/2 = 29696; B = (q/2 + 2·kv/2) + h + I + h = 25600 (KV heads
  // split: 4 per rank).
  const LoraShapes tp2(m, 2, m.num_layers, m.dtype_bytes);
  CHECK(tp2.a_elements() == 29696);
  CHECK(tp2.b_elements() == 25600);
  // TP 16 > 8 KV heads: one KV head per rank (replicated), 128 elements.
  const LoraShapes tp16(m, 16, m.num_layers, m.dtype_bytes);
  CHECK(tp16.b_elements() == 4096.0 / 16 + 2 * 128 + 4096 + 2 * 14336.0 / 16 + 4096);
  // The checkpoint: q, k, v, o, gate, up, down whole: per layer and rank unit
  // (3h + q + 2h + I) + (q + 2kv + h + 2I + h) = 81920 (TP 1's A + B); 32 layers, 2 B.
  CHECK(tp2.adapter_file_bytes(16) == 81920.0 * 16 * 32 * 2);
}

TEST_CASE("the KV cache shrinks by exactly the LoRA slots' bytes", "[models][lora]") {
  Deployment d;
  d.model = testing::llama31_8b();
  d.gpu = testing::h100_sxm();
  MemoryPlanOptions o;
  o.max_num_batched_tokens = 8192;
  o.max_num_seqs = 256;
  const MemoryPlan base = plan_memory(d, o);
  o.lora_slots = 4;
  o.lora_rank = 16;
  const MemoryPlan with = plan_memory(d, o);
  CHECK(with.lora_bytes == 335544320.0);
  CHECK(base.kv_bytes - with.kv_bytes == Approx(335544320.0).epsilon(1e-12));
  // Blocks: floor(kv / block bytes), block bytes = 16 tokens · 128 KiB per token.
  const double block = 16.0 * static_cast<double>(base.kv_bytes_per_token);
  CHECK(with.num_blocks == static_cast<int64_t>(std::floor(with.kv_bytes / block)));
  CHECK(base.num_blocks - with.num_blocks >= static_cast<int64_t>(335544320.0 / block));
  CHECK(base.num_blocks - with.num_blocks <= static_cast<int64_t>(335544320.0 / block) + 1);
  CHECK(base.lora_bytes == 0.0);
}

TEST_CASE("LoRA kernel roofline: memory-bound at decode, compute-bound for long prefills",
          "[models][lora]") {
  const ModelSpec m = testing::llama31_8b();
  const hardware::GpuSpec g = testing::h100_sxm();
  const LoraShapes s(m, 1, m.num_layers, m.dtype_bytes);
  const LoraStepCost c = s.step_cost(16, g);
  CHECK(c.seconds(0, 3) == 0.0);
  CHECK(c.seconds(10, 0) == 0.0);
  // One decode token, one adapter: the adapter's weights dominate the bytes.
  const double bytes1 = c.bytes_per_token + c.bytes_per_adapter;
  CHECK_THAT(c.seconds(1, 1), WithinRel(32 * bytes1 / c.memory_div, 1e-12));
  // Each more adapter in the batch reads its own weights: + bytes_per_adapter / bandwidth.
  CHECK_THAT(c.seconds(1, 2) - c.seconds(1, 1),
             WithinRel(32 * c.bytes_per_adapter / c.memory_div, 1e-9));
  // Monotone in tokens and adapters.
  CHECK(c.seconds(100, 2) > c.seconds(10, 2));
  CHECK(c.seconds(100, 4) > c.seconds(100, 2));
  // The FLOPs: 2·T·R·(A + B) per layer.
  CHECK(c.flops_per_token == 2.0 * 16 * 81920);
}

}  // namespace
}  // namespace servesim::models
