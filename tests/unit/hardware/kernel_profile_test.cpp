#include "hardware/kernel_profile.h"
#include "tests/test_paths.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "hardware/profiles.h"
#include "sim/base/error.h"

namespace servesim::hardware {
namespace {

const std::string kReal = SERVESIM_REALDATA_DIR;
const std::string kH100 = kReal + "/gpu_kernels_h100_h200/kernels_h100.csv";

std::string write_temp(const std::string& name, const std::string& text) {
  const auto p = std::filesystem::temp_directory_path() / name;
  std::ofstream(p) << text;
  return p.string();
}

TEST_CASE("monotone curve: exact at measured points, log-log between, proportional beyond",
          "[kernels]") {
  const MonotoneCurve c = MonotoneCurve::fit({{1, 10e-6}, {8, 12e-6}, {64, 40e-6}, {512, 300e-6}});
  REQUIRE(c.x == std::vector<double>{1, 8, 64, 512});
  // Exact at every point (the samples are monotone, so the isotonic fit keeps them).
  CHECK(c.at(1) == Approx(10e-6).epsilon(1e-12));
  CHECK(c.at(8) == Approx(12e-6).epsilon(1e-12));
  CHECK(c.at(64) == Approx(40e-6).epsilon(1e-12));
  CHECK(c.at(512) == Approx(300e-6).epsilon(1e-12));
  // Log-log linear: at the geometric mean of two points, the geometric mean of their times.
  CHECK(c.at(std::sqrt(8.0 * 64.0)) == Approx(std::sqrt(12e-6 * 40e-6)).epsilon(1e-12));
  // Before the first point: the first time; after the last: proportional to x.
  CHECK(c.at(0.5) == Approx(10e-6).epsilon(1e-12));
  CHECK(c.at(2048) == Approx(300e-6 * 4).epsilon(1e-12));
  // Non-decreasing everywhere, including across each point (dense sweep).
  double prev = 0;
  for (double x = 0.5; x < 4096; x *= 1.01) {
    const double y = c.at(x);
    REQUIRE(y >= prev);
    prev = y;
  }
}

TEST_CASE("monotone curve: isotonic regression pools decreasing points at their geometric mean",
          "[kernels]") {
  // 9.80 µs at 64 tokens, then 9.19 µs at 128 (a real H100 fp8 pair): pooled to one level.
  const MonotoneCurve c =
      MonotoneCurve::fit({{32, 8.03e-6}, {64, 9.80e-6}, {128, 9.19e-6}, {256, 13.70e-6}});
  const double pooled = std::sqrt(9.80e-6 * 9.19e-6);
  CHECK(c.at(32) == Approx(8.03e-6).epsilon(1e-12));
  CHECK(c.at(64) == Approx(pooled).epsilon(1e-12));
  CHECK(c.at(128) == Approx(pooled).epsilon(1e-12));
  CHECK(c.at(256) == Approx(13.70e-6).epsilon(1e-12));
  // Repeated x: one point at the mean log time (weight 2), then pooled with a lower neighbour.
  const MonotoneCurve r = MonotoneCurve::fit({{1, 4.0}, {1, 9.0}, {2, 5.0}});
  REQUIRE(r.x.size() == 2);
  // x = 1 is exp((log 4 + log 9)/2) = 6 with weight 2; 6 > 5 at x = 2, so the two pool at
  // exp((2 log 6 + log 5)/3).
  CHECK(r.at(2) == Approx(std::exp((2 * std::log(6.0) + std::log(5.0)) / 3)).epsilon(1e-12));
  CHECK(r.at(1) == Approx(r.at(2)).epsilon(1e-12));
}

TEST_CASE("kernel table reader: the real H100 file", "[kernels][realdata]") {
  const std::vector<KernelRow> rows = read_kernel_csv(kH100);
  REQUIRE(rows.size() == 1511);
  int lin_bf16 = 0, lin_fp8 = 0, prefill = 0, decode = 0;
  for (const KernelRow& r : rows) {
    if (r.kind == "linear") (r.dtype == "bf16" ? lin_bf16 : lin_fp8)++;
    prefill += r.kind == "attn_prefill";
    decode += r.kind == "attn_decode";
  }
  CHECK(lin_bf16 == 600);
  CHECK(lin_fp8 == 588);  // no fp8 lm_head for CodeLlama-34B TP2 (N = 16,008; README)
  CHECK(prefill == 54);
  CHECK(decode == 269);
  // The README's sanity row: Llama-3.1-8B gate_up_proj (28,672 × 4,096) bf16 at 1 token, 82.54 µs.
  bool found = false;
  for (const KernelRow& r : rows) {
    if (r.kind == "linear" && r.dtype == "bf16" && r.n == 28672 && r.k == 4096 && r.m_tokens == 1) {
      CHECK(r.time_s == Approx(82.54e-6).epsilon(1e-12));
      CHECK(r.model == "llama-3.1-8b");
      CHECK(r.op == "gate_up_proj");
      found = true;
    }
  }
  CHECK(found);

  const KernelProfile p = KernelProfile::from_rows(rows, "h100-sxm");
  CHECK(p.linear().size() == 99);
  CHECK(p.prefill_attention().size() == 9);
  // Exact at every measured point of a series that was measured monotone; every series monotone.
  int exact = 0;
  for (const auto& [shape, curve] : p.linear()) {
    for (size_t i = 1; i < curve.y.size(); ++i) REQUIRE(curve.y[i] >= curve.y[i - 1]);
  }
  std::map<LinearShape, std::vector<std::pair<long long, double>>> series;
  for (const KernelRow& r : rows) {
    if (r.kind == "linear") series[{r.dtype, r.n, r.k}].emplace_back(r.m_tokens, r.time_s);
  }
  for (auto& [shape, pts] : series) {
    std::sort(pts.begin(), pts.end());
    bool monotone = true;
    for (size_t i = 1; i < pts.size(); ++i) monotone &= pts[i].second >= pts[i - 1].second;
    if (!monotone) continue;
    for (const auto& [m, t] : pts) {
      REQUIRE(*p.linear_time_s(shape, static_cast<double>(m)) == Approx(t).epsilon(1e-12));
      ++exact;
    }
  }
  // 6 of the 99 series were measured monotone at all 12 token counts; in the others the
  // isotonic fit pools the runs that decrease (mostly timer noise on the flat, memory-bound part).
  CHECK(exact == 72);
  CHECK_FALSE(p.linear_time_s({"bf16", 12345, 678}, 1).has_value());
  // Nearest shape: a shape 1% wider than gate_up finds gate_up.
  const auto near = p.nearest_linear_shape({"bf16", 28900, 4096});
  REQUIRE(near);
  CHECK(near->n == 28672);
  CHECK(near->k == 4096);
}

TEST_CASE("kernel profile JSON round trip is stable to the nanosecond", "[kernels][realdata]") {
  const KernelProfile p = KernelProfile::from_rows(read_kernel_csv(kH100), "h100-sxm");
  const auto j1 = p.to_json();
  const KernelProfile q = KernelProfile::from_json(nlohmann::json::parse(j1.dump()), "test");
  CHECK(q.gpu() == "h100-sxm");
  CHECK(q.to_json() == j1);
  for (const auto& [shape, curve] : p.linear()) {
    for (size_t i = 0; i < curve.x.size(); ++i) {
      REQUIRE(std::fabs(*q.linear_time_s(shape, curve.x[i]) - curve.y[i]) <= 0.5e-9);
    }
  }
}

TEST_CASE("kernel table reader: errors name the file, the line and the column", "[kernels]") {
  const std::string header =
      "gpu,kind,dtype,model,tp,op,m_tokens,n,k,batch,q_len,kv_len,q_heads,kv_heads,head_dim,"
      "time_us,tflops,gbps\n";
  const std::string bad_time = write_temp("servesim_kt_bad_time.csv",
                                          header + "x,linear,bf16,m,1,qkv,1,64,64,,,,,,,abc,,\n");
  REQUIRE_THROWS_WITH(read_kernel_csv(bad_time), Catch::Contains("servesim_kt_bad_time.csv:2") &&
                                                     Catch::Contains("'time_us' has 'abc'"));
  const std::string bad_kind =
      write_temp("servesim_kt_bad_kind.csv", header + "x,conv,bf16,m,1,qkv,1,64,64,,,,,,,1.0,,\n");
  REQUIRE_THROWS_WITH(read_kernel_csv(bad_kind), Catch::Contains("'kind' has 'conv'"));
  const std::string bad_dtype = write_temp("servesim_kt_bad_dtype.csv",
                                           header + "x,linear,int4,m,1,qkv,1,64,64,,,,,,,1.0,,\n");
  REQUIRE_THROWS_WITH(read_kernel_csv(bad_dtype), Catch::Contains("expected bf16 or fp8"));
  const std::string no_col =
      write_temp("servesim_kt_no_col.csv", "gpu,kind,dtype\nx,linear,bf16\n");
  REQUIRE_THROWS_WITH(read_kernel_csv(no_col), Catch::Contains("missing column 'm_tokens'"));
  const std::string zero =
      write_temp("servesim_kt_zero.csv", header + "x,linear,bf16,m,1,qkv,1,64,64,,,,,,,0,,\n");
  REQUIRE_THROWS_WITH(read_kernel_csv(zero), Catch::Contains("expected a time > 0"));
  // Found by fuzz_kernel_tables: an integer cell of 5.6e83 was cast to long long (UB) before the
  // integrality check.
  const std::string huge = write_temp("servesim_kt_huge.csv",
                                      header + "x,linear,bf16,m,1,qkv,5.6e83,64,64,,,,,,,1.0,,\n");
  REQUIRE_THROWS_WITH(read_kernel_csv(huge),
                      Catch::Contains("servesim_kt_huge.csv:2") &&
                          Catch::Contains("column 'm_tokens' has '5.6e83'; "
                                          "expected a non-negative integer"));
}

// Found by fuzz_kernel_tables: a "linear" or "attention_prefill" that is an object or a number was
// indexed by position, and nlohmann's type_error escaped as an internal error (exit 1, not 2).
TEST_CASE("kernel profile JSON: shape lists that are not lists", "[kernels][fuzz]") {
  for (const char* text :
       {R"({"linear": {"dtype": "bf16"}})", R"({"linear": 3})",
        R"({"attention_prefill": {"q_heads": 1}})", R"({"attention_prefill": "x"})"}) {
    CAPTURE(text);
    REQUIRE_THROWS_AS(KernelProfile::from_json(nlohmann::json::parse(text), "k.json"), ConfigError);
    REQUIRE_THROWS_WITH(
        KernelProfile::from_json(nlohmann::json::parse(text), "k.json"),
        Catch::StartsWith("k.json: kernels.") && Catch::Contains("expected a list of shapes"));
  }
}

}  // namespace
}  // namespace servesim::hardware
