// Tests of the MoE routed-expert kernel tables (hardware/measurements/moe: bf16 grouped GEMMs
// measured on an H100 and an H200): reading, the monotone curves, the transfer to another weight
// format (KernelTimer::moe_gemm_s) and their use by the step cost model. Expected values are the
// measured rows and the closed form of the transfer rule in models/kernel_timer.h.
#include "models/kernel_timer.h"
#include "tests/test_paths.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "hardware/gpu_spec.h"
#include "hardware/kernel_profile.h"
#include "hardware/profiles.h"
#include "models/deployment.h"
#include "models/model_spec.h"
#include "models/roofline_cost_model.h"
#include "sim/base/error.h"

namespace servesim::models {
namespace {

const std::string kRepo = std::string(SERVESIM_REALDATA_DIR) + "/../..";
const std::string kMoeH100 = kRepo + "/hardware/measurements/moe/moe_h100.csv";
const std::string kGemmH100 =
    std::string(SERVESIM_REALDATA_DIR) + "/gpu_kernels_h100_h200/kernels_h100.csv";
const std::string kCatalogH100 = kRepo + "/hardware/measurements/catalog/kernels_catalog_h100.csv";

KernelSource source_of(const std::vector<std::string>& files) {
  std::vector<hardware::KernelRow> rows;
  for (const auto& f : files) {
    const auto r = hardware::read_kernel_csv(f);
    rows.insert(rows.end(), r.begin(), r.end());
  }
  KernelSource s;
  s.profile = std::make_shared<hardware::KernelProfile>(
      hardware::KernelProfile::from_rows(rows, "h100-sxm"));
  s.measured_on = hardware::load_gpu("h100-sxm");
  s.path = "test";
  return s;
}

// The ideal grouped GEMM of models/kernel_timer.h, written out.
double ideal(const hardware::GpuSpec& g, double w, double e, double k_top, double n, double k,
             double tokens) {
  const double rows = tokens * k_top;
  const double touched = expected_experts_touched(e, k_top, tokens);
  return std::max(2 * rows * n * k / g.bf16_flops,
                  (touched * n * k * w + rows * (n + k) * 2) / g.hbm_bandwidth_bytes_per_s);
}

// gpt-oss-120b at TP2: 128 experts, top-4, hidden 2,880, expert width 2,880 / 2 = 1,440.
const hardware::MoeShape kGateUp{"bf16", 128, 4, 2880, 2880};
const hardware::MoeShape kDown{"bf16", 128, 4, 2880, 1440};

TEST_CASE("moe tables: one curve per projection, exact at measured points", "[kernels][moe]") {
  const KernelSource src = source_of({kGemmH100, kMoeH100});
  const auto& moe = src.profile->moe();
  // 22 projections (gpt-oss TP 1-8, Mixtral-8x7B TP 1-8, Mixtral-8x22B TP 2/4/8, × 2), of which
  // gpt-oss's TP2 gate_up and TP1 down are the same GEMM [128 experts, 2,880 × 2,880]: 21.
  CHECK(moe.size() == 21);
  REQUIRE(moe.count(kDown) == 1);
  const KernelTimer t(hardware::load_gpu("h100-sxm"), src);
  // moe_h100.csv: gpt-oss TP2 experts_down 27.48 µs at 1 token, 375.99 µs at 64 (a run the
  // isotonic fit keeps as measured).
  CHECK(*t.moe_gemm_s(kDown, 2.0, "bf16", 1) == Approx(27.48e-6).epsilon(1e-12));
  CHECK(*t.moe_gemm_s(kDown, 2.0, "bf16", 64) == Approx(375.99e-6).epsilon(1e-12));
  // Monotone in the tokens, including between and beyond the measured points.
  double last = 0;
  for (double x = 1; x <= 20000; x *= 1.3) {
    const double y = *t.moe_gemm_s(kGateUp, 2.0, "bf16", x);
    CHECK(y >= last);
    last = y;
  }
  // A shape of other routing is only a last resort: a 128-expert query nearest in (N, K) to a
  // Mixtral shape still takes a 128-expert curve.
  const auto near = src.profile->nearest_moe_shape({"bf16", 128, 4, 4096, 3584});
  REQUIRE(near);
  CHECK(near->experts == 128);
  CHECK(near->top_k == 4);
}

TEST_CASE("moe tables: MXFP4 weights by the ideal grouped-GEMM ratio above the latency",
          "[kernels][moe]") {
  const hardware::GpuSpec h100 = hardware::load_gpu("h100-sxm");
  const KernelSource src = source_of({kGemmH100, kMoeH100});
  const KernelTimer t(h100, src);
  double fastest = 1;
  for (const auto& [s, c] : src.profile->linear()) fastest = std::min(fastest, c.y.front());
  const double w4 = kMxfp4BytesPerWeight;
  for (double x : {1.0, 8.0, 64.0, 1024.0, 8192.0}) {
    const double measured = *t.moe_gemm_s(kGateUp, 2.0, "bf16", x);
    const double lambda = std::min(measured, fastest);
    const double expected = lambda + (measured - lambda) * ideal(h100, w4, 128, 4, 2880, 2880, x) /
                                         ideal(h100, 2.0, 128, 4, 2880, 2880, x);
    CHECK(*t.moe_gemm_s(kGateUp, w4, "bf16", x) == Approx(expected).epsilon(1e-12));
    // Memory-bound at decode sizes: 4.25-bit weights take about a quarter of the bf16 time.
    if (x <= 64) CHECK(*t.moe_gemm_s(kGateUp, w4, "bf16", x) < 0.5 * measured);
  }
  // At 8,192 tokens the MXFP4 ideal is the FLOPs (0.55 ms), the bf16 one still the weights and
  // activations (0.75 ms): the saving shrinks to that ratio, and never goes below the FLOPs.
  const double flops_s = 2.0 * 8192 * 4 * 2880 * 2880 / h100.bf16_flops;
  CHECK(*t.moe_gemm_s(kGateUp, w4, "bf16", 8192) > flops_s);
  CHECK(*t.moe_gemm_s(kGateUp, w4, "bf16", 8192) > 0.7 * *t.moe_gemm_s(kGateUp, 2.0, "bf16", 8192));
  // No moe curve in the table: nullopt (the cost model keeps its roofline op).
  const KernelTimer gemm_only(h100, source_of({kGemmH100}));
  CHECK_FALSE(gemm_only.moe_gemm_s(kGateUp, w4, "bf16", 64).has_value());
}

TEST_CASE("cost model: gpt-oss's routed experts from the measured grouped GEMMs",
          "[kernels][moe][cost]") {
  Deployment d;
  d.model = load_model("gpt-oss-120b");
  d.gpu = hardware::load_gpu("h100-sxm");
  d.tensor_parallel_size = 2;
  d.kernels = source_of({kGemmH100, kCatalogH100});
  const RooflineCostModel roofline_experts(d);
  const KernelSource with_moe = source_of({kGemmH100, kCatalogH100, kMoeH100});
  d.kernels = with_moe;
  const RooflineCostModel measured_experts(d);
  const KernelTimer t(d.gpu, with_moe);
  const RooflineOptions& o = roofline_experts.options();
  const double h = 2880, i = 1440, w = kMxfp4BytesPerWeight;
  for (double x : {1.0, 16.0, 256.0, 1024.0, 8192.0}) {  // measured token counts
    // What the roofline charged: one GEMM of x·4 rows over the expected experts' weights.
    const double touched = expected_experts_touched(128, 4, x);
    const double roof =
        roofline_op_s(o, 2 * 3 * h * i, touched * 3 * h * i * w, (h + 2 * i + i + h) * 2, x * 4,
                      d.gpu.bf16_flops, d.gpu.hbm_bandwidth_bytes_per_s);
    const double table = *t.moe_gemm_s(kGateUp, w, "bf16", x) + *t.moe_gemm_s(kDown, w, "bf16", x);
    CHECK(measured_experts.layer_linear_time_s(x) - roofline_experts.layer_linear_time_s(x) ==
          Approx(table - roof).epsilon(1e-9).margin(1e-12));
  }
  // The grouped kernels reach less than the roofline assumed (docs/validation.md §4a): a 1k-token
  // prefill's experts cost more, and so does a 64-sequence decode.
  CHECK(measured_experts.layer_linear_time_s(1024) > roofline_experts.layer_linear_time_s(1024));
  CHECK(measured_experts.layer_linear_time_s(64) > roofline_experts.layer_linear_time_s(64));
}

TEST_CASE("moe tables: rows and stored curves are checked", "[kernels][moe][errors]") {
  const std::string path = "moe_table_test_bad.csv";
  {
    std::ofstream f(path);
    f << "gpu,kind,dtype,model,tp,op,m_tokens,n,k,batch,q_len,time_us\n"
      << "h100,moe,bf16,x,1,experts_down,8,64,64,8,9,3.0\n";
  }
  try {
    hardware::read_kernel_csv(path);
    FAIL("top-k above the experts was accepted");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("0 < q_len (top-k) <= batch") != std::string::npos);
  }
  std::remove(path.c_str());
  // to_json → from_json keeps the curves.
  const KernelSource src = source_of({kMoeH100});
  const auto j = src.profile->to_json();
  REQUIRE(j.contains("moe"));
  const auto back = hardware::KernelProfile::from_json(j, "test");
  REQUIRE(back.moe().size() == src.profile->moe().size());
  CHECK(back.moe().at(kDown).at(64) == Approx(src.profile->moe().at(kDown).at(64)).epsilon(1e-6));
  nlohmann::json bad = j;
  bad["moe"][0]["top_k"] = 0;
  CHECK_THROWS_AS(hardware::KernelProfile::from_json(bad, "test"), ConfigError);
}

}  // namespace
}  // namespace servesim::models
