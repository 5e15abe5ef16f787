// Tests of the measured elementwise chain (hardware/measurements/elementwise: RMSNorms, RoPE, the
// KV-cache write, SiLU·mul, fp8 quantisation per layer) in the kernel tables, the kernel timer,
// the step cost model and the kernel check. The expected values are the measured rows themselves
// and closed forms of the transfer rule (models/kernel_timer.h).
#include "models/kernel_timer.h"
#include "tests/test_paths.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <string>

#include "hardware/gpu_spec.h"
#include "hardware/kernel_profile.h"
#include "hardware/profiles.h"
#include "models/kernel_check.h"
#include "models/roofline_cost_model.h"
#include "tests/unit/models/hand_specs.h"

namespace servesim::models {
namespace {

const std::string kMeasurements =
    std::string(SERVESIM_REALDATA_DIR) + "/../../hardware/measurements/elementwise";
const std::string kElemH100 = kMeasurements + "/elementwise_h100.csv";
const std::string kElemH200 = kMeasurements + "/elementwise_h200.csv";
const std::string kGemmH100 =
    std::string(SERVESIM_REALDATA_DIR) + "/gpu_kernels_h100_h200/kernels_h100.csv";

// Llama-3.1-8B on one GPU: hidden 4,096, SwiGLU 14,336, 32 q / 8 kv heads of 128.
const hardware::ElementwiseShape kLlama8bBf16{"bf16", 4096, 14336, 32, 8, 128};

double measured_row(const std::string& csv, const hardware::ElementwiseShape& s, long long m) {
  for (const auto& r : hardware::read_kernel_csv(csv)) {
    if (r.kind == "elementwise" && r.op == "layer_compiled" && r.dtype == s.dtype &&
        r.n == s.hidden && r.k == s.width && r.q_heads == s.q_heads && r.kv_heads == s.kv_heads &&
        r.head_dim == s.head_dim && r.m_tokens == m) {
      return r.time_s;
    }
  }
  FAIL("row not found");
  return 0;
}

KernelSource source_of(const std::string& gpu, const std::vector<std::string>& csvs) {
  std::vector<hardware::KernelRow> rows;
  for (const auto& f : csvs) {
    auto some = hardware::read_kernel_csv(f);
    rows.insert(rows.end(), some.begin(), some.end());
  }
  KernelSource s;
  s.profile =
      std::make_shared<hardware::KernelProfile>(hardware::KernelProfile::from_rows(rows, gpu));
  s.measured_on = hardware::load_gpu(gpu);
  s.path = csvs.front();
  return s;
}

TEST_CASE("elementwise table: the measured H100 file", "[kernels][realdata]") {
  const auto rows = hardware::read_kernel_csv(kElemH100);
  REQUIRE(rows.size() == 576);
  int compiled = 0, eager = 0;
  for (const auto& r : rows) {
    REQUIRE(r.kind == "elementwise");
    compiled += r.op == "layer_compiled";
    eager += r.op == "layer_eager";
  }
  CHECK(compiled == 288);  // 24 (model, TP, dtype) shapes × 12 token counts
  CHECK(eager == 288);
  const auto p = hardware::KernelProfile::from_rows(rows, "h100-sxm");
  CHECK(p.elementwise().size() == 24);  // compiled rows only
  CHECK(p.linear().empty());
  // Llama-3.1-70B fp8 TP1 at 8,192 tokens (hardware/measurements/elementwise/README.md).
  const hardware::ElementwiseShape l70{"fp8", 8192, 28672, 64, 8, 128};
  CHECK(p.elementwise().at(l70).at(8192) == Approx(1157.10e-6).epsilon(1e-9));
  // The chain's ideal traffic per token, by hand: 2·8192·(3·2+1) + 2·72·128·2 + 4·8·128·2
  // + 28672·(2·2+1) + 64·128·(2+1) = 327,680 bytes.
  CHECK(hardware::elementwise_bytes_per_token(l70) == 327680);
  // JSON round trip: stable, and the curves come back to the nanosecond.
  const auto j = p.to_json();
  const auto q = hardware::KernelProfile::from_json(nlohmann::json::parse(j.dump()), "test");
  CHECK(q.to_json() == j);
  CHECK(std::fabs(q.elementwise().at(l70).at(8192) - 1157.10e-6) <= 0.5e-9);
}

TEST_CASE("elementwise table: reader errors name the line", "[kernels]") {
  const std::string path = "/tmp/servesim_elem_bad.csv";
  {
    std::ofstream f(path);
    f << "gpu,kind,dtype,model,tp,op,m_tokens,n,k,batch,q_len,kv_len,q_heads,kv_heads,head_dim,"
         "time_us,tflops,gbps\n"
      << "x,elementwise,bf16,m,1,layer_compiled,8,4096,14336,,,,32,,128,10.0,,\n";
  }
  REQUIRE_THROWS_WITH(
      hardware::read_kernel_csv(path),
      Catch::Contains("servesim_elem_bad.csv:2") && Catch::Contains("an elementwise row needs"));
}

TEST_CASE("elementwise timer: exact on its own GPU, memory-bound transfer above the latency",
          "[kernels][realdata]") {
  const hardware::GpuSpec h100 = hardware::load_gpu("h100-sxm");
  const hardware::GpuSpec h200 = hardware::load_gpu("h200");
  KernelSource src = source_of("h100-sxm", {kElemH100});
  const KernelTimer own(h100, src);
  for (long long m : {1LL, 64LL, 512LL, 8192LL}) {
    CHECK(*own.elementwise_layer_s(kLlama8bBf16, double(m)) ==
          Approx(src.profile->elementwise().at(kLlama8bBf16).at(double(m))).epsilon(1e-12));
  }
  // Where the measured series is monotone the curve is the measured row itself (to 1 ns).
  CHECK(*own.elementwise_layer_s(kLlama8bBf16, 8192) ==
        Approx(measured_row(kElemH100, kLlama8bBf16, 8192)).epsilon(1e-6));

  // To the H200: λ (the one-token time) stays, the rest scales with the bandwidth ratio.
  src.transferred = true;
  const KernelTimer to_h200(h200, src);
  const auto& c = src.profile->elementwise().at(kLlama8bBf16);
  const double lambda = c.y.front();
  CHECK(*to_h200.elementwise_layer_s(kLlama8bBf16, 8192) ==
        Approx(lambda + (c.at(8192) - lambda) * h100.hbm_bandwidth_bytes_per_s /
                            h200.hbm_bandwidth_bytes_per_s)
            .epsilon(1e-12));
  CHECK(*to_h200.elementwise_layer_s(kLlama8bBf16, 1) == Approx(lambda).epsilon(1e-12));

  // An unmeasured shape (a model 10 % wider) takes the nearest shape's curve × the traffic ratio.
  const hardware::ElementwiseShape wider{"bf16", 4506, 15770, 32, 8, 128};
  const auto near = src.profile->nearest_elementwise_shape(wider);
  REQUIRE(near);
  const double ratio =
      hardware::elementwise_bytes_per_token(wider) / hardware::elementwise_bytes_per_token(*near);
  const auto& cn = src.profile->elementwise().at(*near);
  CHECK(*own.elementwise_layer_s(wider, 4096) ==
        Approx(cn.y.front() + (cn.at(4096) - cn.y.front()) * ratio).epsilon(1e-12));
  // No curve of the dtype: nullopt (the cost model keeps its allowance).
  const KernelTimer gemm_only(h100, source_of("h100-sxm", {kGemmH100}));
  CHECK_FALSE(gemm_only.elementwise_layer_s(kLlama8bBf16, 64).has_value());
}

TEST_CASE("cost model: the measured chain replaces the t0-per-GEMM allowance", "[kernels]") {
  const KernelSource gemm_table = source_of("h100-sxm", {kGemmH100});
  const KernelSource full_table = source_of("h100-sxm", {kGemmH100, kElemH100});
  Deployment d;
  d.model = testing::llama31_8b();
  d.gpu = hardware::load_gpu("h100-sxm");
  // GEMMs only: the layer's linear time is the GEMMs + 4 t0, whatever the tokens.
  d.kernels = gemm_table;
  const RooflineCostModel gemms(d);
  // GEMMs and the chain: the GEMMs + the measured chain at the tokens.
  d.kernels = full_table;
  const RooflineCostModel both(d);
  const double t0 = gemms.options().op_latency_s;
  const auto& chain = full_table.profile->elementwise().at(kLlama8bBf16);
  for (double m : {1.0, 8.0, 64.0, 256.0, 2048.0, 8192.0}) {
    CHECK(both.layer_linear_time_s(m) ==
          Approx(gemms.layer_linear_time_s(m) - 4 * t0 + chain.at(m)).epsilon(1e-12));
    // The non-GEMM part each reports (what kernel-check subtracts to compare the GEMMs alone):
    // the chain with it, 4 t0 without; the GEMMs left over are the same either way.
    CHECK(both.layer_elementwise_time_s(m) == Approx(chain.at(m)).epsilon(1e-12));
    CHECK(gemms.layer_elementwise_time_s(m) == Approx(4 * t0).epsilon(1e-12));
    CHECK(both.layer_linear_time_s(m) - both.layer_elementwise_time_s(m) ==
          Approx(gemms.layer_linear_time_s(m) - gemms.layer_elementwise_time_s(m)).epsilon(1e-12));
  }
  // Under the roofline the fitted GEMM times carry these kernels: nothing to subtract.
  d.kernels = KernelSource{};
  CHECK(RooflineCostModel(d).layer_elementwise_time_s(256) == 0.0);
  d.kernels = full_table;
  // At decode sizes the chain is below the old allowance (4 t0 = 24 µs; 15.3 µs measured at 64
  // tokens); at an 8k-token prefill chunk it is ~27× more (644 µs).
  CHECK(chain.at(64) < 4 * t0);
  CHECK(chain.at(8192) > 20 * 4 * t0);
  // fp8 weights take the fp8 chain (with the quantisation), which costs more at many tokens.
  d.quantization = "fp8";
  const RooflineCostModel fp8(d);
  d.kernels = gemm_table;
  const RooflineCostModel fp8_gemms(d);
  const auto& chain_fp8 = full_table.profile->elementwise().at({"fp8", 4096, 14336, 32, 8, 128});
  CHECK(fp8.layer_linear_time_s(8192) ==
        Approx(fp8_gemms.layer_linear_time_s(8192) - 4 * t0 + chain_fp8.at(8192)).epsilon(1e-12));
  CHECK(chain_fp8.at(8192) > chain.at(8192));
}

TEST_CASE("kernel check: elementwise rows against their own table", "[kernels][realdata]") {
  const hardware::GpuSpec h200 = hardware::load_gpu("h200");
  KernelCheckOptions o;
  o.roofline = RooflineOptions::from_gpu(h200);
  o.kernels = source_of("h200", {kElemH200});
  const auto rows = check_kernels(hardware::read_kernel_csv(kElemH200), h200, o);
  REQUIRE(rows.size() == 288);  // layer_eager rows are not checked
  for (const auto& r : rows) REQUIRE(r.source == "table");
  CHECK(median_abs_error(rows) < 1e-3);
  // Without a curve: the allowance (4 t0), far off at many tokens.
  o.kernels = {};
  const auto allowance = check_kernels(hardware::read_kernel_csv(kElemH200), h200, o);
  CHECK(allowance.front().source == "allowance");
  CHECK(median_abs_error(allowance) > 0.5);
}

}  // namespace
}  // namespace servesim::models
