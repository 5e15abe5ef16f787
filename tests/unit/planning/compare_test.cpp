// servesim compare end to end: pairing by seed, determinism, verdict wording, CLI errors.
#include <catch2/catch.hpp>

#include <sstream>

#include "sim/app/cli.h"
#include "sim/base/error.h"
#include "sim/planning/compare.h"

namespace servesim::planning {
namespace {

using Catch::Matchers::Contains;

CompareSide side(const std::string& label, int max_num_seqs) {
  CompareSide s;
  s.label = label;
  s.config.workload.num_prompts = 300;
  s.config.workload.request_rate = 20;
  s.config.engine.max_num_seqs = max_num_seqs;
  return s;
}

TEST_CASE("A against itself: identical on every seed", "[planning][compare]") {
  // Same config and the same seeds ⇒ the same runs ⇒ every difference is exactly 0.
  CompareOptions o;
  o.seeds = 3;
  const CompareResult r = run_compare(side("a", 256), side("b", 256), o, nullptr, nullptr);
  CHECK(r.seeds == std::vector<uint64_t>{0, 1, 2});
  for (const CompareMetric& m : r.metrics) {
    CHECK(m.a == m.b);
    CHECK(verdict(m, 0.95) == "A and B are identical at " + m.name + " on every seed");
  }
}

TEST_CASE("compare is deterministic for any --jobs", "[planning][compare][determinism]") {
  CompareOptions o1, o2;
  o1.seeds = o2.seeds = 4;
  o1.jobs = 1;
  o2.jobs = 2;
  const CompareSide a = side("a", 32), b = side("b", 256);
  const auto j1 = compare_to_json(run_compare(a, b, o1, nullptr, nullptr), a, b, o1, {}, {});
  const auto j2 = compare_to_json(run_compare(a, b, o2, nullptr, nullptr), a, b, o2, {}, {});
  CHECK(j1.dump() == j2.dump());
  // max-num-seqs 32 at 20 req/s queues requests that 256 would admit: B has lower P99 TTFT on
  // every seed.
  const auto& p99 = j1["metrics"][1];
  CHECK(p99["key"] == "p99_ttft_ms");
  CHECK(p99["mean_diff"].get<double>() < 0);
  CHECK(p99["sign_negative"] == 4);
}

TEST_CASE("verdict wording", "[planning][compare]") {
  // Built with its fields initialised, not assigned after default construction: assigning a short
  // literal to the default-constructed `unit` made g++ 12 -O3 warn (-Wmaybe-uninitialized, a false
  // positive inside std::string's small-buffer copy).
  CompareMetric m{
      .key = "p99_ttft_ms", .name = "P99 TTFT", .unit = "ms", .a = {1, 2}, .b = {1, 2}, .test = {}};
  m.test.sd_diff = 3;
  m.test.mean_diff = -12.3;
  m.test.ci_low = -16.5;
  m.test.ci_high = -8.1;
  m.test.p_value = 0.001;
  CHECK(verdict(m, 0.95) == "B is faster at P99 TTFT by 12.30 ms (95% CI 8.10–16.50 ms), p=0.001");
  m.test.mean_diff = 0.4;
  m.test.ci_low = -1.2;
  m.test.ci_high = 2.0;
  m.test.p_value = 0.41;
  CHECK(verdict(m, 0.95) ==
        "no significant difference in P99 TTFT: B−A = +0.40 ms (95% CI -1.20 to 2.00 ms), p=0.41");
}

TEST_CASE("compare CLI errors", "[planning][compare][cli]") {
  std::ostringstream out, err;
  CHECK(app::run_cli({"compare", "--num-prompts", "10"}, out, err) == 2);
  CHECK_THAT(err.str(), Contains("give two config files"));
  err.str("");
  CHECK(app::run_cli({"compare", "--vary", "max-num-seqs=1,2,3"}, out, err) == 2);
  CHECK_THAT(err.str(), Contains("exactly two configurations"));
  err.str("");
  CHECK(app::run_cli({"compare", "--vary", "max-num-seqs=64,128", "--seeds", "1"}, out, err) == 2);
  CHECK_THAT(err.str(), Contains("--seeds: 1 is invalid"));
}

TEST_CASE("compare CLI with --vary prints the table and the verdicts", "[planning][compare][cli]") {
  std::ostringstream out, err;
  REQUIRE(app::run_cli({"compare", "--vary", "max-num-seqs=32,256", "--request-rate", "20",
                        "--num-prompts", "200", "--seeds", "3"},
                       out, err) == 0);
  CHECK_THAT(out.str(), Contains("A: max-num-seqs=32"));
  CHECK_THAT(out.str(), Contains("P99 TTFT ms"));
  CHECK_THAT(out.str(), Contains("95% CI"));
  // Both sides take the H100 profile outside its domain: one line says so.
  CHECK_THAT(out.str(), Contains("Prediction basis (both): transferred — "
                                 "hardware/calibration/h100-sxm.json fitted on this GPU"));
}

TEST_CASE("compare says what each side's prediction rests on when they differ",
          "[planning][compare][cli]") {
  // An H100 (host terms fitted on its runs) against an H200 (no profile for the 0.19 line: its
  // measured kernels and the catalog's host overheads): part of any difference is the profiles'.
  std::ostringstream out, err;
  REQUIRE(app::run_cli({"compare", "--vary", "gpu=h100-sxm,h200", "--request-rate", "5",
                        "--num-prompts", "100", "--seeds", "2"},
                       out, err) == 0);
  CHECK_THAT(out.str(), Contains("Prediction basis of A: transferred — "
                                 "hardware/calibration/h100-sxm.json"));
  CHECK_THAT(out.str(), Contains("Prediction basis of B: datasheet-only — no calibration profile: "
                                 "kernel times measured (hardware/kernels/h200.json)"));
  // The JSON records it per side.
  CompareSide a = side("h100", 256), b = side("h200", 256);
  b.config.gpu = "h200";
  CompareOptions o;
  o.seeds = 2;
  const CompareResult r = run_compare(a, b, o, nullptr, nullptr);
  const nlohmann::ordered_json j = compare_to_json(r, a, b, o, nullptr, nullptr);
  CHECK(j["a"]["prediction_basis"] == "transferred");
  CHECK(j["b"]["prediction_basis"] == "datasheet-only");
  CHECK(j["b"]["prediction_basis_reason"] == r.b_basis.reason);
}

}  // namespace
}  // namespace servesim::planning
