// `servesim plan` with deployment modes in its search (sim/app/cmd_plan.cpp): speculative
// decoding as --vary knobs, and aggregated and P/D candidates in one run (--pd-ratios).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/app/cli.h"

namespace servesim::app {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct CliRun {
  int code;
  std::string out, err;
};

CliRun run(std::vector<std::string> args) {
  std::ostringstream out, err;
  const int code = run_cli(args, out, err);
  return {code, out.str(), err.str()};
}

// Llama-3.1-8B on one H100 at 4 req/s, P99 TPOT <= 4 ms, 256 in / 128 out, an EAGLE-3 head with
// K = 3. One decode step of the 8B model takes 4.49 ms at 100% of peak (its weights over HBM
// bandwidth), so without speculation no load meets 4 ms; with every draft accepted a step emits
// K + 1 = 4 tokens, so TPOT is about a quarter of a (slightly longer) verify step: ~1.5-2.5 ms.
std::vector<std::string> spec_plan(const std::string& vary) {
  return {"plan",
          "--model",
          "llama-3.1-8b",
          "--gpu",
          "h100-sxm",
          "-tp",
          "1",
          "--target-qps",
          "4",
          "--slo",
          "p99_tpot_ms<=4",
          "--random-input-len",
          "256",
          "--random-output-len",
          "128",
          "--num-prompts",
          "300",
          "--seeds",
          "1",
          "--speculative-config",
          R"({"method": "eagle3", "model": "head", "num_speculative_tokens": 3,
              "acceptance_rates": [1, 1, 1]})",
          "--vary",
          vary};
}

TEST_CASE("plan searches speculative decoding's K and acceptance as candidates",
          "[planning][plan][cli][spec]") {
  const CliRun k = run(spec_plan("num-speculative-tokens=0,3"));
  INFO(k.out << k.err);
  REQUIRE(k.code == 0);
  CHECK(k.out.find("h100-sxm TP1 num-speculative-tokens=0: infeasible — cannot meet the SLOs at "
                   "any load") != std::string::npos);
  CHECK(k.out.find("Answer: 1 × h100-sxm (1 replica × TP1) with num-speculative-tokens=3 meets") !=
        std::string::npos);
  // The answer's vllm serve carries the drafter, with vLLM's keys only.
  CHECK(k.out.find(R"(--speculative-config '{"method":"eagle3","model":"head",)"
                   R"("num_speculative_tokens":3}')") != std::string::npos);
  // Acceptance 0: every step verifies 1 + 3 tokens and emits one, slower than no speculation,
  // so it cannot meet what K = 0 cannot.
  const CliRun a = run(spec_plan("spec-acceptance-rate=0,1"));
  INFO(a.out << a.err);
  REQUIRE(a.code == 0);
  CHECK(a.out.find("h100-sxm TP1 spec-acceptance-rate=0: infeasible") != std::string::npos);
  CHECK(a.out.find("with spec-acceptance-rate=1.0 meets") != std::string::npos);
}

// The plan's JSON, run with `extra` flags after `args`.
json plan_json(std::vector<std::string> args, const std::vector<std::string>& extra,
               const fs::path& file) {
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--output", file.string()});
  const CliRun r = run(args);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  return json::parse(std::ifstream(file));
}

// The joint plan's answer is the cheaper of the aggregated-only and the P/D-only plans, with the
// same figures: every candidate is the same pure function of its config in either run.
void check_joint_is_cheaper_of_two(const std::vector<std::string>& args, const fs::path& dir,
                                   bool pd_should_win) {
  const std::string link = "infiniband-ndr";
  const json joint =
      plan_json(args, {"--pd-ratios", "1:1,1:2", "--kv-transfer-link", link}, dir / "joint.json");
  const json agg = plan_json(args, {}, dir / "agg.json");
  const json pd = plan_json(args,
                            {"--prefill-replicas", "1", "--decode-replicas", "1", "--vary",
                             "decode-replicas=1,2", "--kv-transfer-link", link},
                            dir / "pd.json");
  // Both kinds are candidates of the joint run: the aggregated one and a unit per ratio.
  REQUIRE(joint["candidates"].size() == 3);
  const json& a = agg["candidates"][0];
  const json& p = pd["candidates"][0];
  const json& best = joint["candidates"][0];
  const bool pd_cheaper =
      p["cost_per_hour_usd"].get<double>() < a["cost_per_hour_usd"].get<double>();
  CHECK(pd_cheaper == pd_should_win);
  const json& cheaper = pd_cheaper ? p : a;
  // P/D labels of the separate run add the --vary point ("... decode-replicas=1").
  CHECK(cheaper["label"].get<std::string>().rfind(best["label"].get<std::string>(), 0) == 0);
  for (const char* key : {"total_gpus", "replicas", "cost_per_hour_usd", "per_replica_max_qps",
                          "at_target", "prediction_basis"}) {
    INFO(key);
    CHECK(best[key] == cheaper[key]);
  }
}

TEST_CASE("plan --pd-ratios answers with the cheaper of aggregated and P/D",
          "[planning][plan][cli][pd]") {
  const fs::path dir =
      fs::temp_directory_path() / ("servesim_plan_modes_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::vector<std::string> common = {"plan", "--model", "llama-3.1-8b",  "--gpu", "h100-sxm",
                                           "-tp",  "1",       "--num-prompts", "300",   "--seeds",
                                           "1"};
  SECTION("8000-token prompts under a 12 ms P99 TPOT: P/D wins") {
    // Aggregated, each decode step that carries a prefill chunk of 8000-token prompts stretches
    // TPOT; a decode instance steps at the pure decode time.
    std::vector<std::string> args = common;
    args.insert(args.end(),
                {"--target-qps", "3", "--slo", "p99_tpot_ms<=12", "--slo", "p99_ttft_ms<=3000",
                 "--random-input-len", "8000", "--random-output-len", "250"});
    check_joint_is_cheaper_of_two(args, dir, true);
  }
  SECTION("short prompts at 2 req/s: aggregated wins") {
    // One TP1 replica serves 2 req/s of 256/64-token requests within the SLOs, and the smallest
    // P/D unit is two GPUs (one prefill, one decode instance).
    std::vector<std::string> args = common;
    args.insert(args.end(), {"--target-qps", "2", "--slo", "p99_ttft_ms<=500", "--random-input-len",
                             "256", "--random-output-len", "64"});
    check_joint_is_cheaper_of_two(args, dir, false);
  }
  fs::remove_all(dir);
}

TEST_CASE("plan --pd-ratios refuses pool counts and a ratio knob", "[planning][plan][cli][pd]") {
  const std::vector<std::string> base = {"plan", "--model", "llama-3.1-8b",     "--target-qps",
                                         "2",    "--slo",   "p99_ttft_ms<=500", "--pd-ratios",
                                         "1:1"};
  std::vector<std::string> with_pools = base;
  with_pools.insert(with_pools.end(), {"--prefill-replicas", "1", "--decode-replicas", "1"});
  const CliRun r = run(with_pools);
  CHECK(r.code == 2);
  CHECK(r.err.find("--pd-ratios: the P/D units come from the ratios") != std::string::npos);
  std::vector<std::string> knob = base;
  knob.insert(knob.end(), {"--vary", "decode-replicas=1,2"});
  const CliRun k = run(knob);
  CHECK(k.code == 2);
  CHECK(k.err.find("--vary decode-replicas: --pd-ratios sets the P/D units") != std::string::npos);
}

}  // namespace
}  // namespace servesim::app
