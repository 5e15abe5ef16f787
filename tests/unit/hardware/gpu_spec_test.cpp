#include "hardware/gpu_spec.h"

#include <catch2/catch.hpp>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/base/error.h"

namespace servesim::hardware {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using Catch::Matchers::WithinRel;

std::string write_temp(const std::string& file_name, const std::string& text) {
  const fs::path dir =
      fs::temp_directory_path() / ("servesim_gpu_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path p = dir / file_name;
  std::ofstream(p) << text;
  return p.string();
}

// A minimal valid GPU file; `extra` is spliced into the top-level object.
std::string minimal_gpu(const std::string& extra = "") {
  return R"({"memory_bytes": 1e10, "hbm_bandwidth_bytes_per_s": 1e12, "bf16_flops": 1e14,
             "scale_up": {"kind": "pcie", "bandwidth_bytes_per_s": 3.2e10, "latency_s": 1e-5})" +
         extra + "}";
}

TEST_CASE("every catalog GPU loads with sourced defaults", "[hardware]") {
  const auto names = gpu_catalog_names();
  REQUIRE(names == std::vector<std::string>{"a100-40gb", "a100-80gb", "b200", "h100-nvl",
                                            "h100-pcie", "h100-sxm", "h200", "l40s", "mi300x",
                                            "rtx-4090", "rtx-pro-6000"});
  for (const auto& n : names) {
    INFO(n);
    const GpuSpec g = load_gpu(n);
    CHECK(g.name == n);
    CHECK_FALSE(g.display_name.empty());
    // Dense peaks only: FP8 is 2x BF16 on every part that has it, never 4x (a sparse figure).
    // 2% tolerance: the L40S sheet gives 733 / 362.05 = 2.02.
    if (g.fp8_flops > 0) CHECK_THAT(g.fp8_flops / g.bf16_flops, WithinRel(2.0, 0.02));
    CHECK(g.compute_efficiency > 0);
    CHECK(g.compute_efficiency <= 1);
    CHECK(g.memory_efficiency > 0);
    CHECK(g.memory_efficiency <= 1);
    CHECK(g.non_torch_memory_bytes < 1e9);  // well under 1 GB on every derivation
    CHECK(g.price_per_hour_usd > 0);
    // Every number carries a note saying where it comes from.
    for (const char* field :
         {"memory_bytes", "hbm_bandwidth_bytes_per_s", "bf16_flops", "fp8_flops", "scale_up",
          "compute_efficiency", "memory_efficiency", "step_overhead_s", "per_seq_overhead_s",
          "non_torch_memory_bytes", "price_per_hour_usd"}) {
      INFO(field);
      CHECK(g.sources.contains(field));
    }
  }
}

TEST_CASE("H100 SXM datasheet and derived values", "[hardware]") {
  // REFERENCE.md §3: 3.35 TB/s, 989 dense BF16 TFLOPS (not the sparse 1979), NVLink 450 GB/s.
  const GpuSpec g = load_gpu("h100-sxm");
  CHECK(g.memory_bytes == 81090.0 * 1024 * 1024);  // torch's 81090 MiB
  CHECK(g.hbm_bandwidth_bytes_per_s == 3.35e12);
  CHECK(g.bf16_flops == 989e12);
  CHECK(g.fp8_flops == 1979e12);
  CHECK(g.scale_up.kind == "nvlink");
  CHECK(g.scale_up.bandwidth_bytes_per_s == 450e9);
  // scripts/derive_gpu_efficiencies.py on realdata (Vidur H100 GEMMs; vLLM 0.11 CodeLlama-34B).
  CHECK(g.compute_efficiency == 0.713);
  CHECK(g.memory_efficiency == 0.827);
  // CodeLlama-34B synchronous ITL 26.02 ms − the full roofline decode step 25.84 ms.
  CHECK(g.step_overhead_s == 0.18e-3);
  // Ampere has no FP8 tensor cores.
  CHECK(load_gpu("a100-80gb").fp8_flops == 0);
}

TEST_CASE("loading by path", "[hardware]") {
  SECTION("minimal file: defaults and name from the file stem") {
    const GpuSpec g = load_gpu(write_temp("my-gpu.json", minimal_gpu()));
    CHECK(g.name == "my-gpu");
    CHECK(g.display_name == "my-gpu");
    CHECK(g.compute_efficiency == 1.0);
    CHECK(g.memory_efficiency == 1.0);
    CHECK(g.step_overhead_s == 0);
    CHECK(g.fp8_flops == 0);
    CHECK(g.scale_up.latency_s == 1e-5);
    CHECK(g.sources.is_object());
  }
  SECTION("an explicit name and comment keys") {
    const GpuSpec g =
        load_gpu(write_temp("x.json", minimal_gpu(R"(, "name": "lab-card", "_note": "hi")")));
    CHECK(g.name == "lab-card");
  }
}

TEST_CASE("a catalog GPU is found in any case, under its catalog name", "[hardware]") {
  const GpuSpec upper = load_gpu("H100-SXM");
  CHECK(upper.name == "h100-sxm");
  CHECK(upper.bf16_flops == load_gpu("h100-sxm").bf16_flops);
  CHECK(load_gpu("H200").name == "h200");
}

TEST_CASE("errors name the file and the field", "[hardware]") {
  SECTION("unknown name lists the catalog") {
    CHECK_THROWS_WITH(load_gpu("h1000"),
                      Contains("unknown GPU 'h1000'; known: a100-40gb, a100-80gb, ") &&
                          Contains("rtx-pro-6000") &&
                          Contains("(or give a path to a GPU JSON file)"));
  }
  SECTION("a family name lists its entries and picks none") {
    CHECK_THROWS_WITH(load_gpu("h100"),
                      Equals("unknown GPU 'h100'; the catalog has h100-nvl, h100-pcie, h100-sxm: "
                             "pass one of them (servesim list gpus)"));
    CHECK_THROWS_WITH(load_gpu("A100"), Contains("a100-40gb, a100-80gb: pass one of them"));
  }
  SECTION("missing field") {
    const std::string p = write_temp("nobw.json",
                                     R"({"memory_bytes": 1e10, "bf16_flops": 1e14,
            "scale_up": {"kind": "pcie", "bandwidth_bytes_per_s": 3.2e10, "latency_s": 0}})");
    CHECK_THROWS_WITH(
        load_gpu(p), Contains(p) && Contains("missing required field 'hbm_bandwidth_bytes_per_s'"));
  }
  SECTION("efficiency outside (0, 1]") {
    const std::string p = write_temp("eff.json", minimal_gpu(R"(, "memory_efficiency": 1.2)"));
    CHECK_THROWS_WITH(load_gpu(p),
                      Contains(p) && Contains("'memory_efficiency'") && Contains("1.2"));
    const std::string z = write_temp("eff0.json", minimal_gpu(R"(, "compute_efficiency": 0)"));
    CHECK_THROWS_WITH(load_gpu(z), Contains("'compute_efficiency'"));
    // The boundary 1.0 itself is allowed.
    CHECK(load_gpu(write_temp("eff1.json", minimal_gpu(R"(, "compute_efficiency": 1.0)")))
              .compute_efficiency == 1.0);
  }
  SECTION("non-positive peak, negative overhead, bad link") {
    CHECK_THROWS_WITH(load_gpu(write_temp("neg.json", minimal_gpu(R"(, "bf16_flops": -1)"))),
                      Contains("'bf16_flops'"));
    CHECK_THROWS_WITH(
        load_gpu(write_temp("ovh.json", minimal_gpu(R"(, "step_overhead_s": -0.001)"))),
        Contains("'step_overhead_s'"));
    const std::string p =
        write_temp("link.json",
                   R"({"memory_bytes": 1e10, "hbm_bandwidth_bytes_per_s": 1e12, "bf16_flops": 1e14,
            "scale_up": {"kind": "pcie", "latency_s": 0}})");
    CHECK_THROWS_WITH(load_gpu(p),
                      Contains(p) && Contains("scale_up") && Contains("'bandwidth_bytes_per_s'"));
  }
  SECTION("unknown key (a typo) is rejected") {
    CHECK_THROWS_WITH(
        load_gpu(write_temp("typo.json", minimal_gpu(R"(, "memory_efficency": 0.8)"))),
        Contains("unknown field 'memory_efficency'"));
  }
  SECTION("malformed JSON") {
    const std::string p = write_temp("broken.json", R"({"memory_bytes": )");
    CHECK_THROWS_WITH(load_gpu(p), Contains(p) && Contains("malformed JSON"));
  }
}

}  // namespace
}  // namespace servesim::hardware
