// fp8 experts on a GPU without FP8 tensor cores, and MXFP4 experts below compute capability 9.0
// (models/marlin_moe.h): vLLM's fused_marlin_moe picks a block size from the rows per expert, pads
// each expert's rows to whole blocks and reads the expert's weights once per block.
#include <catch2/catch.hpp>

#include <cmath>

#include "models/deployment.h"
#include "models/marlin_moe.h"
#include "models/moe_routing.h"
#include "models/roofline_cost_model.h"
#include "tests/unit/models/hand_specs.h"

namespace servesim::models {
namespace {

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
using testing::a100_40gb;

// E[ceil(n / b)] for n ~ Binomial(n_trials, p), each term's probability from lgamma on its own:
// an independent evaluation of what expected_marlin_blocks sums by neighbour ratios.
double direct_blocks(int n_trials, double p, int b) {
  double s = 0;
  for (int x = 0; x <= n_trials; ++x) {
    const double log_pmf = std::lgamma(n_trials + 1.0) - std::lgamma(x + 1.0) -
                           std::lgamma(n_trials - x + 1.0) + x * std::log(p) +
                           (n_trials - x) * std::log1p(-p);
    s += std::exp(log_pmf) * std::ceil(static_cast<double>(x) / b);
  }
  return s;
}

// Qwen3-235B-A22B's MoE dimensions: hidden 4096, 128 experts of intermediate 1536, top-8.
ModelSpec qwen3_235b_like() {
  ModelSpec m = testing::llama_like("qwen3-235b-like", 4096, 12288, 94, 64, 4, 151936, 40960);
  m.num_experts = 128;
  m.experts_per_token = 8;
  m.moe_intermediate_size = 1536;
  return m;
}

TEST_CASE("Marlin MoE block size: fused_marlin_moe's rule on tokens·top_k / experts",
          "[models][cost]") {
  // The first of 8, 16, 32, 48, 64 with rows / size < 0.9, else 64; rows = T·k / E.
  // T·8/128 = T/16 rows per expert.
  CHECK(marlin_moe_block_size(1, 8, 128) == 8);      // 0.0625 rows: 0.0078 < 0.9
  CHECK(marlin_moe_block_size(112, 8, 128) == 8);    // 7 rows: 7/8 = 0.875
  CHECK(marlin_moe_block_size(128, 8, 128) == 16);   // 8 rows: 8/8 = 1, 8/16 = 0.5
  CHECK(marlin_moe_block_size(224, 8, 128) == 16);   // 14 rows: 14/16 = 0.875
  CHECK(marlin_moe_block_size(240, 8, 128) == 32);   // 15 rows: 15/16 = 0.94, 15/32 = 0.47
  CHECK(marlin_moe_block_size(256, 8, 128) == 32);   // 16 rows: 16/32 = 0.5
  CHECK(marlin_moe_block_size(448, 8, 128) == 32);   // 28 rows: 28/32 = 0.875
  CHECK(marlin_moe_block_size(464, 8, 128) == 48);   // 29 rows: 29/32 = 0.91, 29/48 = 0.60
  CHECK(marlin_moe_block_size(688, 8, 128) == 48);   // 43 rows: 43/48 = 0.896
  CHECK(marlin_moe_block_size(704, 8, 128) == 64);   // 44 rows: 44/48 = 0.917
  CHECK(marlin_moe_block_size(2048, 8, 128) == 64);  // 128 rows: the largest size
  // Expert parallelism: E = the 32 experts of one of 4 ranks, so 256 tokens count 64 rows per
  // expert (64/48 = 1.33: size 64) though each local expert receives 16 on average.
  CHECK(marlin_moe_block_size(256, 8, 32) == 64);
}

TEST_CASE("Marlin MoE blocks: E[ceil(n / b)] over the binomial rows of one expert",
          "[models][cost]") {
  // No rows, no blocks.
  CHECK(expected_marlin_blocks(0, 0.5, 8) == 0);
  CHECK(expected_marlin_blocks(100, 0, 8) == 0);
  // p = 1: every token routes to the expert: ceil(n / b) exactly.
  CHECK(expected_marlin_blocks(100, 1.0, 32) == 4);
  // b = 1: ceil(n) = n, so the expected blocks are the mean rows n·p = 256/16 = 16.
  CHECK_THAT(expected_marlin_blocks(256, 1.0 / 16, 1), WithinRel(16.0, 1e-12));
  // n = 2, p = 1/2, b = 2: P(0, 1, 2) = 1/4, 1/2, 1/4; ceil(x/2) = 0, 1, 1: 3/4.
  CHECK_THAT(expected_marlin_blocks(2, 0.5, 2), WithinRel(0.75, 1e-12));
  // b >= n: one block whenever a row arrives: 1 − (1 − p)^n.
  CHECK_THAT(expected_marlin_blocks(64, 1.0 / 16, 64),
             WithinRel(1 - std::pow(15.0 / 16, 64), 1e-12));
  // A decode of 256 tokens on Qwen3-235B (p = 8/128): mean 16 rows, block 32, mostly one block:
  // 1 − P(0) + P(n > 32) + ..., against the term-by-term sum.
  CHECK_THAT(expected_marlin_blocks(256, 1.0 / 16, 32),
             WithinRel(direct_blocks(256, 1.0 / 16, 32), 1e-12));
  // A 2,048-token prefill: mean 128 rows per expert, block 64: 2 blocks plus P(n > 128) ≈ 1/2.
  const double prefill = expected_marlin_blocks(2048, 1.0 / 16, 64);
  CHECK_THAT(prefill, WithinRel(direct_blocks(2048, 1.0 / 16, 64), 1e-12));
  CHECK(prefill > 2.4);
  CHECK(prefill < 2.6);
  // Rows are whole tokens: 255.6 tokens count as 256.
  CHECK(expected_marlin_blocks(255.6, 1.0 / 16, 32) == expected_marlin_blocks(256, 1.0 / 16, 32));
}

TEST_CASE("Marlin MoE work: blocks over a rank's experts and the padded rows", "[models][cost]") {
  // 2,048 tokens, top-8 of 128, every expert on the rank: block 64, 128 experts × E[ceil(n/64)].
  const MarlinMoeWork w = marlin_moe_work(2048, 8, 128, 8.0 / 128);
  CHECK(w.block_size == 64);
  CHECK_THAT(w.rows_per_expert, WithinRel(128.0, 1e-12));
  CHECK_THAT(w.blocks, WithinRel(128 * direct_blocks(2048, 1.0 / 16, 64), 1e-12));
  CHECK_THAT(w.padded_rows, WithinRel(64 * w.blocks, 1e-12));
  // One token: block 8, exactly top_k = 8 experts hit, one block each: 64 padded rows for 8.
  const MarlinMoeWork one = marlin_moe_work(1, 8, 128, 8.0 / 128);
  CHECK(one.block_size == 8);
  CHECK_THAT(one.blocks, WithinRel(8.0, 1e-12));
  CHECK_THAT(one.padded_rows, WithinRel(64.0, 1e-12));
}

TEST_CASE("fp8 experts on an A100 run the Marlin MoE kernel: weights read once per block",
          "[models][cost]") {
  // Qwen3-235B-like at TP8 on an A100-40GB with fp8 weights (no FP8 tensor cores): every rank
  // holds all 128 experts, each sliced to 1536/8 = 192 columns: 3·4096·192 = 2,359,296 one-byte
  // weights per expert; activations 2·(4096 + 3·192 + 4096) = 17,536 bytes per routed row;
  // 6·4096·192 = 4,718,592 FLOPs per padded row. The ideal model (η = 1, no ramp, no t0):
  //   experts_s(T) = max(4,718,592 · padded(T) / 312e12,
  //                      (2,359,296 · blocks(T) + 17,536 · 8T) / 1.555e12).
  Deployment d;
  d.model = qwen3_235b_like();
  d.gpu = a100_40gb();
  d.tensor_parallel_size = 8;
  d.quantization = "fp8";
  REQUIRE(d.weight_only_fp8());
  const IdealCostModel ideal(d);
  const double wb = 3.0 * 4096 * 192, act = 2.0 * (4096 + 3 * 192 + 4096), flops = 6.0 * 4096 * 192;
  auto expected = [&](double tokens) {
    const MarlinMoeWork w = marlin_moe_work(tokens, 8, 128, 8.0 / 128);
    return std::max(flops * w.padded_rows / 312e12, (wb * w.blocks + act * 8 * tokens) / 1.555e12);
  };
  for (const double t : {1.0, 16.0, 256.0, 2048.0, 8192.0}) {
    INFO("T = " << t);
    CHECK_THAT(ideal.routed_experts_s(t), WithinRel(expected(t), 1e-12));
  }
  // One token: 8 experts read once, 8 · 2,359,296 B + 8 · 17,536 B at 1.555 TB/s.
  CHECK_THAT(ideal.routed_experts_s(1), WithinRel(8 * (wb + act) / 1.555e12, 1e-12));
  // A 2,048-token prefill reads each expert ≈ 2.5 times (block 64, mean 128 rows): slower than
  // the grouped GEMM's one read per expert hit would make it, and read-bound
  // (64 rows per 1-byte read: 128 FLOP/B against the A100's 200.6).
  const double one_read =
      std::max(flops * 2048 * 8 / 312e12, (wb * 128 + act * 8 * 2048) / 1.555e12);
  CHECK(ideal.routed_experts_s(2048) > 1.2 * one_read);

  // The bf16 checkpoint on the same GPU keeps the grouped-GEMM roofline: tokens·k rows, each
  // touched expert's 2-byte weights read once.
  Deployment bf = d;
  bf.quantization.clear();
  const double touched = expected_experts_touched(128, 8, 2048);
  CHECK_THAT(
      IdealCostModel(bf).routed_experts_s(2048),
      WithinRel(std::max(flops * 2048 * 8 / 312e12, (2 * wb * touched + act * 8 * 2048) / 1.555e12),
                1e-12));
}

TEST_CASE("Marlin MoE under expert parallelism: vLLM's block size from the local experts",
          "[models][cost]") {
  // TP4 + --enable-expert-parallel: 32 whole experts per rank (3·4096·1536 = 18,874,368 B), the
  // busiest rank's rows from models/moe_routing.h spread over its 32 experts. The block size
  // comes from T·8/32 (w1.size(0) = the local experts), 4 times the rows a local expert gets.
  Deployment d;
  d.model = qwen3_235b_like();
  d.gpu = a100_40gb();
  d.tensor_parallel_size = 4;
  d.enable_expert_parallel = true;
  d.quantization = "fp8";
  const IdealCostModel ideal(d);
  const double wb = 3.0 * 4096 * 1536, act = 2.0 * (4096 + 3 * 1536 + 4096),
               flops = 6.0 * 4096 * 1536;
  for (const double t : {1.0, 256.0, 2048.0}) {
    INFO("T = " << t);
    const double busiest = expected_max_group_rows(t, 8, 128, 4);
    const double share = busiest / (t * 32);
    const int b = marlin_moe_block_size(t, 8, 32);
    const double blocks = 32 * expected_marlin_blocks(t, share, b);
    const double want =
        std::max(flops * blocks * b / 312e12, (wb * blocks + act * busiest) / 1.555e12);
    CHECK_THAT(ideal.routed_experts_s(t), WithinRel(want, 1e-12));
  }
  CHECK(marlin_moe_block_size(256, 8, 32) == 64);
  // At 256 tokens each local expert gets ~16 rows (a little more on the busiest rank): almost
  // always one 64-row block, so about 32 · (1 − (1 − share)^256) reads.
  const double share = expected_max_group_rows(256, 8, 128, 4) / (256 * 32);
  CHECK_THAT(marlin_moe_work(256, 8, 32, share).blocks,
             WithinAbs(32 * (1 - std::pow(1 - share, 256)), 1e-6));
}

TEST_CASE("Marlin MXFP4 padding: the intermediate width to 128, the hidden size to 256",
          "[models][cost]") {
  // Mxfp4MoEMethod.create_weights under the Marlin backend: round_up(I/partition, 128),
  // round_up(hidden, 256). gpt-oss: hidden 2880 → 3072; 2880 → 2944 (TP1), 720 → 768 (TP4),
  // 360 → 384 (TP8); multiples stay as they are.
  CHECK(marlin_mxfp4_padded(2880, 2880).hidden == 3072);
  CHECK(marlin_mxfp4_padded(2880, 2880).intermediate == 2944);
  CHECK(marlin_mxfp4_padded(2880, 720).intermediate == 768);
  CHECK(marlin_mxfp4_padded(2880, 360).intermediate == 384);
  CHECK(marlin_mxfp4_padded(4096, 1536).hidden == 4096);
  CHECK(marlin_mxfp4_padded(4096, 1536).intermediate == 1536);
  // The boundaries: one past a multiple rounds up a whole multiple.
  CHECK(marlin_mxfp4_padded(2817, 129).hidden == 3072);
  CHECK(marlin_mxfp4_padded(2816, 128).hidden == 2816);
  CHECK(marlin_mxfp4_padded(2816, 129).intermediate == 256);
}

TEST_CASE("MXFP4 experts below compute capability 9.0 run the Marlin MoE kernel, padded",
          "[models][cost]") {
  // gpt-oss-like MoE (hidden 2880, 128 experts of intermediate 2880, top-4) at TP4 on an Ampere
  // GPU: vLLM's get_mxfp4_backend picks Marlin below capability 9.0. One expert on a rank is
  // 3·3072·768 padded weights at 0.53125 B; a routed row moves 2·(3072 + 3·768) bf16 bytes;
  // a padded row costs 6·3072·768 FLOPs. The ideal model (η = 1, no ramp, no t0):
  //   experts_s(T) = max(flops · padded(T) / 312e12, (wb · blocks(T) + act · 4T) / 1.555e12).
  ModelSpec m = testing::llama_like("gpt-oss-like", 2880, 2880, 36, 64, 8, 201088, 131072);
  m.num_experts = 128;
  m.experts_per_token = 4;
  m.moe_intermediate_size = 2880;
  m.checkpoint_quantization = "mxfp4";
  Deployment d;
  d.model = m;
  d.gpu = a100_40gb();
  d.gpu.architecture = "ampere";
  d.tensor_parallel_size = 4;
  REQUIRE(d.mxfp4_marlin());
  REQUIRE(d.marlin_experts());
  const IdealCostModel ideal(d);
  const double w = kMxfp4BytesPerWeight;
  const double wb = 3.0 * 3072 * 768 * w, act = 2.0 * (3072 + 3 * 768 + 3072),
               flops = 6.0 * 3072 * 768;
  for (const double t : {1.0, 64.0, 256.0, 2048.0}) {
    INFO("T = " << t);
    const MarlinMoeWork work = marlin_moe_work(t, 4, 128, 4.0 / 128);
    const double want =
        std::max(flops * work.padded_rows / 312e12, (wb * work.blocks + act * 4 * t) / 1.555e12);
    CHECK_THAT(ideal.routed_experts_s(t), WithinRel(want, 1e-12));
  }
  // On Hopper the experts run triton_kernels at their own shape: not Marlin.
  Deployment hopper = d;
  hopper.gpu.architecture = "hopper";
  CHECK_FALSE(hopper.mxfp4_marlin());
  CHECK_FALSE(hopper.marlin_experts());
  // Ada (sm89) has FP8 tensor cores but still takes Marlin for MXFP4; a bf16 checkpoint never.
  Deployment ada = d;
  ada.gpu.architecture = "ada";
  ada.gpu.fp8_flops = 733e12;
  CHECK(ada.mxfp4_marlin());
  Deployment bf = d;
  bf.model.checkpoint_quantization.clear();
  CHECK_FALSE(bf.mxfp4_marlin());
}

}  // namespace
}  // namespace servesim::models
