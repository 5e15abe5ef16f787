// Tests of measured kernel tables in the step cost model (models/kernel_timer.h,
// RooflineCostModel with Deployment::kernels) and of the kernel check (models/kernel_check.h).
// The expected values are the measured rows themselves and closed forms of the transfer rule.
#include "models/kernel_timer.h"
#include "tests/test_paths.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "hardware/gpu_spec.h"
#include "hardware/profiles.h"
#include "models/kernel_check.h"
#include "models/roofline_cost_model.h"
#include "sim/calibration/profile.h"
#include "tests/unit/models/hand_specs.h"

namespace servesim::models {
namespace {

const std::string kReal = SERVESIM_REALDATA_DIR;
const std::string kH100 = kReal + "/gpu_kernels_h100_h200/kernels_h100.csv";
const std::string kH200 = kReal + "/gpu_kernels_h100_h200/kernels_h200.csv";

KernelSource table_of(const std::string& gpu_name, const std::string& csv) {
  KernelSource s;
  s.profile = std::make_shared<hardware::KernelProfile>(
      hardware::KernelProfile::from_rows(hardware::read_kernel_csv(csv), gpu_name));
  s.measured_on = hardware::load_gpu(gpu_name);
  s.path = csv;
  return s;
}

double measured(const std::string& csv, const std::string& dtype, long long n, long long k,
                long long m) {
  for (const auto& r : hardware::read_kernel_csv(csv)) {
    if (r.kind == "linear" && r.dtype == dtype && r.n == n && r.k == k && r.m_tokens == m) {
      return r.time_s;
    }
  }
  FAIL("row not found");
  return 0;
}

TEST_CASE("kernel timer: a measured shape on its own GPU is the measured time", "[kernels]") {
  const hardware::GpuSpec h100 = hardware::load_gpu("h100-sxm");
  const KernelTimer t(h100, table_of("h100-sxm", kH100));
  // Llama-3.1-8B gate_up (28,672 × 4,096) bf16: 82.54 µs at 1 token, 101.85 µs at 256.
  CHECK(*t.linear_s("bf16", 28672, 4096, 1) == Approx(82.54e-6).epsilon(1e-12));
  CHECK(*t.linear_s("bf16", 28672, 4096, 256) == Approx(101.85e-6).epsilon(1e-12));
  CHECK(t.has_exact_shape("bf16", 28672, 4096));
  CHECK_FALSE(t.has_exact_shape("bf16", 28000, 4096));
}

TEST_CASE("kernel timer: transfer to another GPU scales by the ideal roofline", "[kernels]") {
  const hardware::GpuSpec h100 = hardware::load_gpu("h100-sxm");
  const hardware::GpuSpec h200 = hardware::load_gpu("h200");
  KernelSource src = table_of("h100-sxm", kH100);
  src.transferred = true;
  const KernelTimer t(h200, src);
  // 1 token: memory-bound on both GPUs, so the time above the fixed latency t_min (the table's
  // fastest GEMM) scales with the bandwidth ratio.
  double t_min = 1;
  for (const auto& [shape, curve] : src.profile->linear()) {
    t_min = std::min(t_min, curve.y.front());
  }
  CHECK(t_min == Approx(4.63e-6).epsilon(0.05));  // the H100's fastest GEMM: a few µs
  const double t1 = measured(kH100, "bf16", 28672, 4096, 1);
  CHECK(
      *t.linear_s("bf16", 28672, 4096, 1) ==
      Approx(t_min + (t1 - t_min) * h100.hbm_bandwidth_bytes_per_s / h200.hbm_bandwidth_bytes_per_s)
          .epsilon(1e-12));
  // 8192 tokens: compute-bound on both, the same bf16 peak: the same time.
  const double t8k = measured(kH100, "bf16", 28672, 4096, 8192);
  CHECK(*t.linear_s("bf16", 28672, 4096, 8192) == Approx(t8k).epsilon(1e-12));
}

TEST_CASE("kernel timer: integer weights carry the bf16 curve to their weight bytes", "[kernels]") {
  const hardware::GpuSpec h100 = hardware::load_gpu("h100-sxm");
  const KernelSource src = table_of("h100-sxm", kH100);
  const KernelTimer t(h100, src);
  double t_min = 1;
  for (const auto& [shape, curve] : src.profile->linear()) {
    t_min = std::min(t_min, curve.y.front());
  }
  // w4a16 with 128-weight groups and zero points: 4 + (16 + 4) / 128 = 4.15625 bits per weight.
  const double w4 = 4.15625 / 8;
  const double n = 28672, k = 4096;
  // 1 token: memory-bound both ways, so the time above t_min scales with the bytes moved:
  // (n·k·w4 + k·2 + n·2) / (n·k·2 + k·2 + n·2), about 0.26.
  const double t1 = measured(kH100, "bf16", 28672, 4096, 1);
  const double ratio = (n * k * w4 + k * 2 + n * 2) / (n * k * 2 + k * 2 + n * 2);
  CHECK(*t.linear_s("bf16", n, k, 1, w4) == Approx(t_min + (t1 - t_min) * ratio).epsilon(1e-12));
  CHECK(*t.linear_s("bf16", n, k, 1, w4) < t1);
  // 8192 tokens: compute-bound at the bf16 peak whatever the weight bytes: the measured time.
  const double t8k = measured(kH100, "bf16", 28672, 4096, 8192);
  CHECK(*t.linear_s("bf16", n, k, 8192, w4) == Approx(t8k).epsilon(1e-12));
  // 0 (the default) is the dtype's own bytes: the measured row itself.
  CHECK(*t.linear_s("bf16", n, k, 1, 0) == Approx(t1).epsilon(1e-12));
}

KernelSource t_src() { return table_of("h100-sxm", kH100); }

TEST_CASE("kernel timer: an unmeasured shape borrows the nearest shape's efficiency", "[kernels]") {
  const hardware::GpuSpec h100 = hardware::load_gpu("h100-sxm");
  const KernelSource src = t_src();
  const KernelTimer t(h100, src);
  // N = 30,000 × K = 4,096 is not in the table; its nearest shape is gate_up (28,672 × 4,096;
  // the next, Llama's TP4 LM head, has N = 32,064). At 8,192 tokens both are compute-bound, so
  // the time above the fixed latency t_min scales with the FLOPs: × 30,000 / 28,672.
  double t_min = 1;
  for (const auto& [shape, curve] : src.profile->linear()) {
    t_min = std::min(t_min, curve.y.front());
  }
  const double t8k = measured(kH100, "bf16", 28672, 4096, 8192);
  const auto wide = t.linear_s("bf16", 30000, 4096, 8192);
  REQUIRE(wide);
  CHECK(*wide == Approx(t_min + (t8k - t_min) * 30000.0 / 28672).epsilon(1e-9));
  CHECK_FALSE(t.linear_s("fp16", 4096, 4096, 1).has_value());  // no table of that dtype
}

TEST_CASE("kernel source: own table, same-architecture transfer, or roofline", "[kernels]") {
  const auto h100 = find_kernel_source(hardware::load_gpu("h100-sxm"));
  REQUIRE(h100.profile);
  CHECK_FALSE(h100.transferred);
  CHECK(h100.label() == "measured (hardware/kernels/h100-sxm.json)");
  const auto pcie = find_kernel_source(hardware::load_gpu("h100-pcie"));
  REQUIRE(pcie.profile);
  CHECK(pcie.transferred);
  CHECK(pcie.measured_on.name == "h100-sxm");  // nearer than h200 in (peak, bandwidth)
  CHECK(pcie.label() == "transferred from h100-sxm (hardware/kernels/h100-sxm.json)");
  const auto a100_40 = find_kernel_source(hardware::load_gpu("a100-40gb"));
  REQUIRE(a100_40.profile);
  CHECK(a100_40.measured_on.name == "a100-80gb");
  // No measured GPU of its architecture: the roofline.
  CHECK(find_kernel_source(hardware::load_gpu("l40s")).label() == "roofline");
  CHECK(find_kernel_source(hardware::load_gpu("mi300x")).label() == "roofline");
  // --kernel-table none, and a file without kernels.
  CHECK(resolve_kernel_source("none", hardware::load_gpu("h100-sxm"), nullptr, "").label() ==
        "roofline");
}

Deployment llama8b_h100(bool table) {
  Deployment d;
  d.model = testing::llama31_8b();
  d.gpu = hardware::load_gpu("h100-sxm");
  if (table) d.kernels = find_kernel_source(d.gpu);
  return d;
}

TEST_CASE("cost model with a table: a layer's linear time is the measured GEMMs at a grid point",
          "[kernels]") {
  const Deployment d = llama8b_h100(true);
  const RooflineCostModel cm(d);
  REQUIRE(cm.kernel_source() == "measured (hardware/kernels/h100-sxm.json)");
  const hardware::KernelProfile& table = *d.kernels.profile;
  const std::vector<std::pair<long long, long long>> shapes = {
      {6144, 4096}, {4096, 4096}, {28672, 4096}, {4096, 14336}};  // QKV, O, gate_up, down
  // The elementwise kernels between them (RMSNorms, RoPE, KV write, SiLU·mul), measured for this
  // very shape (hardware/measurements/elementwise; tests in elementwise_table_test.cpp).
  const hardware::MonotoneCurve& chain = table.elementwise().at({"bf16", 4096, 14336, 32, 8, 128});
  for (long long m : {1LL, 8LL, 64LL, 256LL, 512LL, 2048LL, 8192LL}) {
    // Σ of the table's four curves at a grid point, + the chain at the same tokens.
    double sum = 0;
    for (const auto& [n, k] : shapes) sum += *table.linear_time_s({"bf16", n, k}, double(m));
    CHECK(cm.layer_linear_time_s(static_cast<double>(m)) ==
          Approx(sum + chain.at(double(m))).epsilon(1e-12));
  }
  // Where the four series were measured monotone, that is the measured rows themselves (to the
  // table's nanosecond rounding): 256 tokens, the example.
  double raw = 0;
  for (const auto& [n, k] : shapes) raw += measured(kH100, "bf16", n, k, 256);
  CHECK(cm.layer_linear_time_s(256) == Approx(raw + chain.at(256)).epsilon(1e-4));
  // Between grid points: between its neighbours (monotone).
  CHECK(cm.layer_linear_time_s(300) >= cm.layer_linear_time_s(256));
  CHECK(cm.layer_linear_time_s(300) <= cm.layer_linear_time_s(512));
}

TEST_CASE("cost model with a table: monotone, above the ideal, parts still sum", "[kernels]") {
  const Deployment d = llama8b_h100(true);
  const RooflineCostModel cm(d);
  Deployment ideal_d = d;
  const IdealCostModel ideal(ideal_d);
  double prev = 0;
  for (int64_t b = 1; b <= 1100; ++b) {
    const BatchShape s = testing::decode(b, 1000);
    const StepCost c = cm.estimate(s);
    REQUIRE(c.total_s >= prev);
    prev = c.total_s;
    REQUIRE(ideal.estimate(s).total_s <= c.total_s);
    REQUIRE(c.linear_s + c.attention_s + c.lm_head_s + c.comm_s + c.overhead_s ==
            Approx(c.total_s).epsilon(1e-12));
  }
  prev = 0;
  for (int64_t q = 1; q <= 16384; q = q * 5 / 4 + 1) {
    const StepCost c = cm.estimate(testing::prefill(q, 0));
    REQUIRE(c.total_s >= prev);
    REQUIRE(ideal.estimate(testing::prefill(q, 0)).total_s <= c.total_s);
    prev = c.total_s;
  }
}

TEST_CASE("kernel check: H100 rows against the H100 table", "[kernels][realdata]") {
  const hardware::GpuSpec h100 = hardware::load_gpu("h100-sxm");
  KernelCheckOptions o;
  o.roofline = RooflineOptions::from_gpu(h100);
  o.kernels = find_kernel_source(h100);
  const auto rows = check_kernels(hardware::read_kernel_csv(kH100), h100, o);
  std::vector<KernelCheckRow> linear, prefill;
  for (const auto& r : rows) {
    if (r.row.kind == "linear") linear.push_back(r);
    if (r.row.kind == "attn_prefill") prefill.push_back(r);
  }
  // The table's own rows: only the isotonic fit separates prediction and measurement.
  CHECK(median_abs_error(linear) < 1e-3);
  CHECK(median_abs_error(prefill) < 1e-3);
  // Decode attention is not tabled (SDPA is not vLLM's paged kernel): the roofline predicts it.
  for (const auto& r : rows) {
    if (r.row.kind == "attn_decode") REQUIRE(r.source == "roofline");
  }
}

}  // namespace
}  // namespace servesim::models
