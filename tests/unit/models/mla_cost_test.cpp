// The step cost of MLA models and of MoE models with dense layers (docs/cost_model.md §3.1–3.3):
// weights a decode streams, latent-space decode attention, decode series equal to estimate().
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>

#include "hardware/gpu_spec.h"
#include "models/deployment.h"
#include "models/memory_planner.h"
#include "models/model_spec.h"
#include "models/roofline_cost_model.h"
#include "tests/unit/models/hand_specs.h"

namespace servesim::models {
namespace {

using Catch::Matchers::WithinRel;
using testing::decode;
using testing::h100_sxm;
using testing::prefill;

Deployment deploy(const std::string& model, int tp) {
  Deployment d;
  d.model = load_model(model);
  d.gpu = h100_sxm();
  d.tensor_parallel_size = tp;
  return d;
}

TEST_CASE("DeepSeek-V3 at TP 8: a batch-1 decode streams every weight it touches once",
          "[models][cost]") {
  // FP8 checkpoint: linear weights 1 byte; router and LM head 16-bit. Per rank, per layer:
  // attention q_a + kv_a 7168 x (1536 + 576), q_b 1536 x 16·192, kv_b 512 x 16·256,
  // o 16·128 x 7168; the 3 dense layers' MLP 3 x 7168 x 18432 / 8; the 58 MoE layers' router
  // 7168 x 256 x 2 B, shared expert 3 x 7168 x 2048 / 8 and the 8 experts one token picks
  // (E_touched(1) = k), 3 x 7168 x 2048 / 8 each; LM head 7168 x 129280 / 8 x 2 B.
  const Deployment d = deploy("deepseek-v3", 8);
  const double attention = 7168.0 * 2112 + 1536.0 * 3072 + 512.0 * 4096 + 2048.0 * 7168;
  const double dense = 3.0 * 7168 * 18432 / 8;
  const double moe = 7168.0 * 256 * 2 + 3.0 * 7168 * 2048 / 8 + 8 * 3.0 * 7168 * 2048 / 8;
  const double lm_head = 7168.0 * 129280 / 8 * 2;
  const double want = 61 * attention + 3 * dense + 58 * moe + lm_head;
  const RooflineCostModel roofline(d);
  CHECK_THAT(roofline.min_weight_bytes_per_step(), WithinRel(want, 1e-12));
  CHECK(roofline.estimate(decode(1, 100)).total_s >=
        want / (d.gpu.hbm_bandwidth_bytes_per_s * d.gpu.memory_efficiency));
}

TEST_CASE("MLA decode attention: latent-space FLOPs and one latent vector per cached token",
          "[models][cost]") {
  // DeepSeek-V3 at TP 1 (128 heads), 64 sequences x 4,096 cached tokens, one layer:
  // FLOPs = 2·128·(2·512 + 64)·C, bytes = 576·2·(C + T) + 128·(2·512 + 64)·2·T, C = 262,144,
  // T = 64: ~242 FLOP/B, near the H100's ridge (254 FLOP/B with the catalog efficiencies, so
  // memory-bound by 11 %; a GQA decode is at H/K = 8); attention_s = 61 · (max + t0).
  const Deployment d = deploy("deepseek-v3", 1);
  const RooflineCostModel roofline(d);
  const RooflineOptions o = RooflineOptions::from_gpu(d.gpu);
  const double ctx = 64.0 * 4096, t = 64;
  const double flops = 2.0 * 128 * 1088 * ctx;
  const double bytes = 576.0 * 2 * (ctx + t) + 128.0 * 1088 * 2 * t;
  const double compute = flops / (d.gpu.bf16_flops * o.compute_efficiency);
  const double memory = bytes / (d.gpu.hbm_bandwidth_bytes_per_s * o.memory_efficiency);
  CHECK_THAT(compute / memory, WithinRel(0.90, 0.02));
  CHECK_THAT(roofline.estimate(decode(64, 4096)).attention_s,
             WithinRel(61 * (std::max(compute, memory) + o.op_latency_s), 1e-12));
  // At TP 8 the heads split (16 per rank) but every rank reads the whole latent cache:
  // memory-bound, and not 8x cheaper.
  const RooflineCostModel tp8(deploy("deepseek-v3", 8));
  const double t8 = tp8.estimate(decode(64, 4096)).attention_s;
  CHECK(t8 > roofline.estimate(decode(64, 4096)).attention_s / 8 * 1.5);
  // Prefill runs on decompressed K/V: 2·128·(128 + 64 + 128) FLOPs per (query, key) pair.
  const double work = 4096.0 * 2048;  // one 4,096-token prompt: q(c + q/2)
  const double pflops = 2.0 * 128 * 320 * work;
  const double pbytes = 576.0 * 2 * (4096 + 4096) + 128.0 * 1088 * 2 * 4096;
  CHECK_THAT(
      roofline.estimate(prefill(4096)).attention_s,
      WithinRel(61 * (std::max(pflops / (d.gpu.bf16_flops * o.compute_efficiency),
                               pbytes / (d.gpu.hbm_bandwidth_bytes_per_s * o.memory_efficiency)) +
                      o.op_latency_s),
                1e-12));
}

TEST_CASE("MLA and dense-layer MoE: decode series equal estimate() bit for bit", "[models][cost]") {
  for (const auto& [model, tp] : {std::pair<std::string, int>{"deepseek-v3", 8},
                                  {"kimi-k2", 8},
                                  {"glm-4.5-air", 2},
                                  {"qwen3-30b-a3b", 1}}) {
    INFO(model << " TP " << tp);
    const RooflineCostModel m(deploy(model, tp));
    const std::unique_ptr<CostMemo> memo = m.make_memo();
    for (int64_t rows : {1, 7, 100, 513}) {
      const DecodeSeries s = m.decode_series(rows, memo.get());
      REQUIRE(s.valid);
      for (int64_t ctx : {int64_t{0}, rows * 1000 + 17, rows * 65535}) {
        BatchShape shape;
        shape.decode_seqs = rows;
        shape.sampled_seqs = rows;
        shape.decode_context_tokens = ctx;
        CHECK(s.total_s(ctx) == m.estimate(shape).total_s);
      }
    }
  }
}

TEST_CASE("memory plan: DeepSeek-R1 FP8 on 8 x H200 holds an MLA cache the same on every rank",
          "[models][memory]") {
  // Weights per rank ~ 671 G params / 8 at 1 byte (+ 16-bit embeddings); the KV cache per token
  // is 70,272 B on every rank: the tokens are the KV budget / 70,272, not 8x that.
  Deployment d = deploy("deepseek-r1", 8);
  d.gpu = hardware::load_gpu("h200");
  const MemoryPlan p = plan_memory(d, MemoryPlanOptions{});
  CHECK(p.kv_bytes_per_token == 70272);
  CHECK(p.weight_bytes / testing::kGiB > 76);
  CHECK(p.weight_bytes / testing::kGiB < 82);
  CHECK(p.kv_tokens == p.num_blocks * 16);
  CHECK(p.num_blocks == static_cast<int64_t>(p.kv_bytes / (16.0 * 70272)));
}

}  // namespace
}  // namespace servesim::models
