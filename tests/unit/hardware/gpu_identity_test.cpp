#include "hardware/gpu_identity.h"

#include <catch2/catch.hpp>

#include <string>

#include "sim/base/error.h"

namespace servesim::hardware {
namespace {

using Catch::Matchers::Contains;

// Expectations: identities compare by name and by each figure within kGpuFigureRelTolerance
// (1 %), tested at just inside and just outside the tolerance; a file's name alone means the
// catalog GPU; a same-name GPU with other figures is refused naming the file, the figure and
// both values; the gpu column names a GPU or its family.
TEST_CASE("GPU identities: figures agree within 1 %, the first differing one is named",
          "[hardware][identity]") {
  const GpuIdentity h100 = GpuIdentity::of(load_gpu("h100-sxm"));
  GpuIdentity g = h100;
  CHECK(differing_figure(h100, g).empty());
  g.hbm_bandwidth_bytes_per_s = h100.hbm_bandwidth_bytes_per_s * 1.0099;  // inside 1 %
  CHECK(differing_figure(h100, g).empty());
  g.hbm_bandwidth_bytes_per_s = h100.hbm_bandwidth_bytes_per_s * 1.0101;  // outside
  CHECK_THAT(differing_figure(h100, g), Contains("HBM bandwidth 3.35 TB/s vs 3.384 TB/s"));
  g = h100;
  g.bf16_flops = h100.bf16_flops / 4;
  CHECK_THAT(differing_figure(h100, g), Contains("dense bf16 peak 989 TFLOP/s vs 247.2"));
  g = h100;
  g.memory_bytes = 141e9;
  CHECK_THAT(differing_figure(h100, g), Contains("memory"));
  // H200 and H100 SXM: same bf16 peak, other bandwidth and memory.
  CHECK_THAT(differing_figure(h100, GpuIdentity::of(load_gpu("h200"))), Contains("HBM bandwidth"));
}

TEST_CASE("GPU identities: JSON round trip, the catalog for a bare name, refusals",
          "[hardware][identity]") {
  const GpuIdentity h200 = GpuIdentity::of(load_gpu("h200"));
  const GpuIdentity back = GpuIdentity::from_json(h200.to_json(), "p.json");
  CHECK(back.name == "h200");
  CHECK(back.architecture == h200.architecture);
  CHECK(differing_figure(h200, back).empty());
  nlohmann::json bad = h200.to_json();
  bad["hbm_bandwidth_bytes_per_s"] = -1;
  CHECK_THROWS_WITH(GpuIdentity::from_json(bad, "p.json"),
                    Contains("p.json: gpu_identity.hbm_bandwidth_bytes_per_s"));

  REQUIRE(identity_for_name("h100-sxm").has_value());
  CHECK(identity_for_name("h100-sxm")->hbm_bandwidth_bytes_per_s == 3.35e12);
  CHECK_FALSE(identity_for_name("no-such-gpu").has_value());
  CHECK_FALSE(identity_for_name("").has_value());
  CHECK(measured_identity(h200, "h100-sxm")->name == "h200");  // recorded wins over the name

  // A GPU JSON named like a catalog GPU, with a quarter of its bandwidth.
  GpuSpec quarter = load_gpu("h100-sxm");
  quarter.hbm_bandwidth_bytes_per_s /= 4;
  const GpuIdentity h100 = *identity_for_name("h100-sxm");
  CHECK_THROWS_WITH(refuse_same_name_other_figures(h100, quarter, "k.json", "kernel table", "X"),
                    Contains("k.json: kernel table measured on h100-sxm") &&
                        Contains("HBM bandwidth 3.35 TB/s vs 0.8375 TB/s") &&
                        Contains("expected X"));
  CHECK_NOTHROW(refuse_same_name_other_figures(h100, load_gpu("h100-sxm"), "k", "t", "X"));
  CHECK_NOTHROW(refuse_same_name_other_figures(h100, load_gpu("h200"), "k", "t", "X"));
  // spec_of: the catalog spec when the figures are the catalog's, else the figures alone.
  CHECK(spec_of(h100).scale_up.bandwidth_bytes_per_s > 0);
  GpuIdentity custom = h100;
  custom.name = "my-gpu";
  CHECK(spec_of(custom).hbm_bandwidth_bytes_per_s == h100.hbm_bandwidth_bytes_per_s);
}

TEST_CASE("GPU identities: a kernel CSV's gpu column names the GPU or its family",
          "[hardware][identity]") {
  const GpuSpec sxm = load_gpu("h100-sxm");
  CHECK(label_names_gpu("h100-sxm", sxm));
  CHECK(label_names_gpu("h100", sxm));
  CHECK_FALSE(label_names_gpu("h10", sxm));
  CHECK_FALSE(label_names_gpu("h200", sxm));
  CHECK_FALSE(label_names_gpu("", sxm));
  CHECK_FALSE(label_names_gpu("h100", load_gpu("rtx-4090")));
}

}  // namespace
}  // namespace servesim::hardware
