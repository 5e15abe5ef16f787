// fp8 weights on a GPU without FP8 tensor cores (models/marlin_gemm.h): vLLM's Marlin W8A16 GEMM
// reads the 1-byte weights once per slice of at most 64 rows and computes at the bf16 peak.
#include <catch2/catch.hpp>

#include <algorithm>

#include "models/deployment.h"
#include "models/marlin_gemm.h"
#include "models/roofline_cost_model.h"
#include "tests/unit/models/hand_specs.h"

namespace servesim::models {
namespace {

using Catch::Matchers::WithinRel;
using testing::a100_40gb;
using testing::decode;
using testing::h100_sxm;
using testing::llama31_8b;

TEST_CASE("Marlin slices: one weight read up to 64 rows, ceil(rows / 64) above", "[models][cost]") {
  CHECK(marlin_weight_reads(0) == 0);
  CHECK(marlin_weight_reads(1) == 1);
  CHECK(marlin_weight_reads(64) == 1);
  CHECK(marlin_weight_reads(65) == 2);
  CHECK(marlin_weight_reads(256) == 4);
  CHECK(marlin_weight_reads(2048) == 32);
}

TEST_CASE("fp8 weights on an A100 run as Marlin W8A16: 1-byte weights read per 64-row slice",
          "[models][cost]") {
  // Llama 3.1 8B, TP1, per layer (k_in × n_out): QKV 4096 × 6144, O 4096 × 4096, gate_up
  // 4096 × 28672, down 14336 × 4096: Σ n·k = 218,103,808 weights, Σ (n + k) = 69,632.
  // The ideal model (η = 1, no tables): each GEMM takes max(2·M·n·k / 312e12,
  // (reads(M)·n·k·1 B + M·(n + k)·2 B) / 1.555e12) on an A100-40GB. A slice does 2·64 = 128
  // FLOPs per weight byte, below the A100's 312e12 / 1.555e12 = 200.6 FLOP/B ridge, so every
  // M is read-bound:
  //   linear_s(M) = 32 layers · (reads(M) · 218,103,808 B + M · 69,632 · 2 B) / 1.555e12.
  Deployment d;
  d.model = llama31_8b();
  d.gpu = a100_40gb();
  d.quantization = "fp8";
  REQUIRE(d.weight_only_fp8());
  CHECK(d.linear_compute_dtype() == "bf16");
  const double nk = 218103808.0, n_plus_k = 69632.0, layers = 32, bw = 1.555e12;
  const IdealCostModel fp8(d);
  for (const double m : {16.0, 64.0, 65.0, 256.0, 1000.0}) {
    INFO("M = " << m);
    const double expected = layers * (marlin_weight_reads(m) * nk + 2.0 * m * n_plus_k) / bw;
    CHECK_THAT(fp8.estimate(decode(static_cast<int64_t>(m), 100)).linear_s,
               WithinRel(expected, 1e-9));
  }
  // Against the bf16 checkpoint (2-byte weights read once, compute-bound past 200 rows): fp8 is
  // faster while one read suffices and slower once the slices re-read the weights.
  Deployment bf = d;
  bf.quantization.clear();
  REQUIRE_FALSE(bf.weight_only_fp8());
  const IdealCostModel bf16(bf);
  CHECK(fp8.estimate(decode(16, 100)).linear_s < 0.6 * bf16.estimate(decode(16, 100)).linear_s);
  const double bf16_256 = layers * 2.0 * 256 * nk / 312e12;  // compute-bound
  CHECK_THAT(bf16.estimate(decode(256, 100)).linear_s, WithinRel(bf16_256, 1e-9));
  CHECK(fp8.estimate(decode(256, 100)).linear_s > 1.5 * bf16_256);

  // An H100 has FP8 tensor cores: w8a8 at the fp8 peak, the weights read once at any M.
  Deployment h = d;
  h.gpu = h100_sxm();
  CHECK_FALSE(h.weight_only_fp8());
  CHECK(h.linear_compute_dtype() == "fp8");
  const double h100_256 =
      layers * std::max(2.0 * 256 * nk / 1979e12, (nk + 2.0 * 256 * n_plus_k) / 3.35e12);
  CHECK_THAT(IdealCostModel(h).estimate(decode(256, 100)).linear_s, WithinRel(h100_256, 1e-9));
}

}  // namespace
}  // namespace servesim::models
