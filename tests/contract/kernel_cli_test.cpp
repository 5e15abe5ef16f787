// Kernel tables as a user meets them: simulate says which table timed the GPU work, the
// --kernel-table choices, its errors, and kernel-check on the real H100 table.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/app/cli.h"
#include "tests/contract/cli_outcome.h"

namespace servesim::app {
namespace {

namespace fs = std::filesystem;

using testing::Outcome;
using testing::run;

std::vector<std::string> small(const std::string& gpu) {
  return {"simulate",       "--model", "llama-3.1-8b",        "--gpu", gpu, "--num-prompts", "50",
          "--request-rate", "10",      "--random-output-len", "16"};
}

TEST_CASE("simulate reports where the kernel times come from", "[cli][kernels]") {
  Outcome own = run(small("h100-sxm"));
  REQUIRE(own.code == 0);
  CHECK(own.out.find("measured (hardware/kernels/h100-sxm.json)") != std::string::npos);
  Outcome pcie = run(small("h100-pcie"));
  REQUIRE(pcie.code == 0);
  CHECK(pcie.out.find("transferred from h100-sxm (hardware/kernels/h100-sxm.json)") !=
        std::string::npos);
  auto none = small("h100-sxm");
  none.insert(none.end(), {"--kernel-table", "none"});
  Outcome roof = run(none);
  REQUIRE(roof.code == 0);
  CHECK(roof.out.find("Kernel times:                            roofline") != std::string::npos);
  // An explicit table of another GPU is transferred.
  auto h200 = small("h200");
  h200.insert(h200.end(), {"--kernel-table", "hardware/kernels/h100-sxm.json"});
  Outcome tr = run(h200);
  REQUIRE(tr.code == 0);
  CHECK(tr.out.find("transferred from h100-sxm (hardware/kernels/h100-sxm.json)") !=
        std::string::npos);
}

TEST_CASE("kernel table flag: a profile without kernels is one clear error",
          "[cli][kernels][errors]") {
  auto args = small("h100-sxm");
  args.insert(args.end(), {"--kernel-table", "hardware/calibration/h100-sxm.json"});
  Outcome o = run(args);
  CHECK(o.code == 2);
  CHECK(o.err.find("--kernel-table: hardware/calibration/h100-sxm.json has no 'kernels'") !=
        std::string::npos);
}

TEST_CASE("kernel-check on the real H100 table", "[cli][kernels][realdata]") {
  Outcome o = run({"kernel-check", "--measured",
                   "data/realdata/gpu_kernels_h100_h200/kernels_h100.csv", "--gpu", "h100-sxm"});
  REQUIRE(o.code == 0);
  CHECK(o.out.find("Kernel check: 1511 rows") != std::string::npos);
  CHECK(o.out.find("llama-3.1-8b") != std::string::npos);  // the all-layers linear time
  // Σ of the four measured GEMMs × 32 layers at 256 tokens = 6.48 ms, and the step model's GEMMs
  // are those rows (a monotone series): 0.0 % (the elementwise chain is charged apart).
  const auto row = o.out.find("llama-3.1-8b       1  bf16");
  REQUIRE(row != std::string::npos);
  const std::string line = o.out.substr(row, o.out.find('\n', row) - row);
  CHECK(line.find("6.48          6.48    +0.0%") != std::string::npos);
}

TEST_CASE("kernel-check on the catalog models' H100 measurements", "[cli][kernels][realdata]") {
  // hardware/measurements/catalog: shapes the first table lacks, in the shipped table since.
  Outcome o = run({"kernel-check", "--measured",
                   "hardware/measurements/catalog/kernels_catalog_h100.csv", "--gpu", "h100-sxm"});
  REQUIRE(o.code == 0);
  CHECK(o.out.find("Kernel check: 2190 rows") != std::string::npos);
  CHECK(o.out.find("attn_prefill bf16          78       0.0%") != std::string::npos);
  CHECK(o.out.find("qwen3-32b          4  bf16") != std::string::npos);
}

TEST_CASE("kernel-check on the MoE experts' grouped GEMMs", "[cli][kernels][realdata]") {
  // hardware/measurements/moe: 264 rows, all in the shipped H100 table (exact up to the monotone
  // fit); against the roofline op they were 20.8 % faster in median (docs/validation.md §4a).
  Outcome o = run({"kernel-check", "--measured", "hardware/measurements/moe/moe_h100.csv", "--gpu",
                   "h100-sxm"});
  REQUIRE(o.code == 0);
  CHECK(o.out.find("moe bf16                  264       0.0%") != std::string::npos);
  Outcome roof = run({"kernel-check", "--measured", "hardware/measurements/moe/moe_h100.csv",
                      "--gpu", "h100-sxm", "--kernel-table", "none"});
  REQUIRE(roof.code == 0);
  CHECK(roof.out.find("moe bf16                  264") != std::string::npos);
  CHECK(roof.out.find("roofline") != std::string::npos);
}

TEST_CASE("kernel-check --output: one field per column on every row", "[cli][kernels][realdata]") {
  // The fp8 check rows are predicted from the bf16 curves, and --leave-shape-out rows from the
  // nearest shape: their source labels must not split the row (they once held a comma).
  const fs::path out = fs::temp_directory_path() / "servesim_kernel_check_fields.csv";
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--measured", "hardware/measurements/moe/moe_fp8_check_h100.csv"},
        std::vector<std::string>{"--measured",
                                 "data/realdata/gpu_kernels_h100_h200/kernels_h100.csv",
                                 "--leave-shape-out"}}) {
    std::vector<std::string> args = {"kernel-check", "--gpu", "h100-sxm", "--output", out.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    Outcome o = run(args);
    REQUIRE(o.code == 0);
    std::ifstream f(out);
    std::string line;
    size_t rows = 0, bad = 0, labelled = 0;
    while (std::getline(f, line)) {
      ++rows;
      if (std::count(line.begin(), line.end(), ',') != 17) ++bad;
      if (line.find("(nearest shape)") != std::string::npos ||
          line.find("(bf16 curve to fp8)") != std::string::npos) {
        ++labelled;
      }
    }
    CHECK(rows > 500);
    CHECK(bad == 0);
    CHECK(labelled > 0);
  }
  fs::remove(out);
}

}  // namespace
}  // namespace servesim::app
