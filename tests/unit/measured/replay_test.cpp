// Replaying measured runs: the trace workload, the arrival rules, the calibration hook, and the
// round trip "simulate -> treat the result as a measurement -> validate" which must give zero
// error (the replay is the same simulation).
#include <catch2/catch.hpp>
#include "tests/test_paths.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "models/roofline_cost_model.h"
#include "sim/app/cli.h"
#include "sim/app/run_config.h"
#include "sim/base/error.h"
#include "sim/calibration/prediction_basis.h"
#include "sim/calibration/profile.h"
#include "sim/cluster/simulation.h"
#include "sim/measured/measured_run.h"
#include "sim/measured/readers.h"
#include "sim/measured/replay.h"
#include "sim/measured/validation.h"
#include "workloads/trace_workload.h"

namespace servesim::measured {
namespace {

// These tests state expectations of the datasheet + catalog model; the profiles shipped in
// hardware/calibration would otherwise apply by default.
sim::SimulationConfig uncalibrated(sim::SimulationConfig c) {
  c.calibration = "none";
  return c;
}

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kData = SERVESIM_TEST_DATA_DIR;

workloads::RequestSpec spec(double arrival_s, int32_t in, int32_t out) {
  workloads::RequestSpec s;
  s.arrival = SimTime::from_seconds_ceil(arrival_s);
  s.prompt_tokens = in;
  s.output_tokens = out;
  return s;
}

// A small synthetic run: 20 requests, send times every 0.1 s, lengths 100..290 / 20..39.
MeasuredRun synthetic_run() {
  MeasuredRun r;
  r.id = r.path = "synthetic";
  r.format = "test";
  r.deployment.set("model", "llama-3.1-8b", "test");
  r.deployment.set("gpu", "h100-sxm", "test");
  r.deployment.set("tensor_parallel_size", 1, "test");
  for (int i = 0; i < 20; ++i) {
    MeasuredRequest q;
    q.start_s = 0.1 * i;
    q.input_tokens = 100 + 10 * i;
    q.output_tokens = 20 + i;
    r.requests.push_back(q);
  }
  r.has_start_times = true;
  r.num_prompts = 20;
  r.request_rate = 10;
  return r;
}

TEST_CASE("TraceWorkload: arrival order (stable for ties), ids renumbered, bad input rejected",
          "[measured]") {
  workloads::TraceWorkload w({spec(0.5, 10, 2), spec(0.1, 20, 3), spec(0.5, 30, 4)});
  REQUIRE(w.size() == 3);
  auto a = w.next(), b = w.next(), c = w.next();
  CHECK(a->prompt_tokens == 20);
  CHECK(a->id == 0);
  CHECK(b->prompt_tokens == 10);  // tie at 0.5 s: input order
  CHECK(c->prompt_tokens == 30);
  CHECK(c->id == 2);
  CHECK_FALSE(w.next().has_value());
  CHECK_THROWS_AS(workloads::TraceWorkload({}), ConfigError);
  CHECK_THROWS_AS(workloads::TraceWorkload({spec(0, 0, 1)}), ConfigError);
  CHECK_THROWS_AS(workloads::TraceWorkload({spec(0, 1, 0)}), ConfigError);
  auto bad_prefix = spec(0, 10, 1);
  bad_prefix.prefix_group = 0;
  bad_prefix.prefix_tokens = 11;
  CHECK_THROWS_AS(workloads::TraceWorkload({bad_prefix}), ConfigError);
}

TEST_CASE("a run's engine version selects the vLLM version and the client's arrival rule",
          "[measured][version]") {
  // llm-k8s ran vLLM 0.8.3 with benchmark_serving.py: version row 0.8, whose client sends the
  // first request at t = 0 and sleeps unrescaled gaps (arrival_rescale off).
  MeasuredRun r = synthetic_run();
  r.has_start_times = false;
  r.deployment.engine_version = "0.8.3";
  r.deployment.source["engine_version"] = "sidecar.json";
  sim::SimulationConfig c = simulation_config(r, app::apply_config_json);
  CHECK(c.engine.vllm_version == "0.8");
  CHECK(sim::resolved_workload(c).arrival_rescale == "off");
  CHECK(sim::resolved_workload(c).random_range_rule == "legacy");
  const auto specs = replay_requests(r, 0, false);
  const std::vector<double> t = workloads::arrival_times_s(20, 10.0, 1.0, "poisson", 0, false);
  CHECK(t[0] == 0.0);
  for (size_t i = 0; i < 20; ++i) CHECK(specs[i].arrival == SimTime::from_seconds_ceil(t[i]));
  // A "vllm_version" key in the deployment wins over the engine version.
  r.deployment.set("vllm_version", "0.11", "sidecar.json");
  CHECK(simulation_config(r, app::apply_config_json).engine.vllm_version == "0.11");
  // A version servesim does not model is an error naming where it came from.
  r.deployment.config.erase("vllm_version");
  r.deployment.engine_version = "0.4.2";
  CHECK_THROWS_WITH(simulation_config(r, app::apply_config_json),
                    Catch::Contains("sidecar.json: engine_version") && Catch::Contains("0.4.2"));
}

TEST_CASE(
    "replay_requests: trace keeps send times, poisson uses the workloads arrival sequence, "
    "closed and burst send at t=0",
    "[measured]") {
  MeasuredRun r = synthetic_run();
  auto specs = replay_requests(r, 0);
  REQUIRE(specs.size() == 20);
  CHECK(specs[3].arrival == SimTime::from_seconds_ceil(0.3));
  CHECK(specs[3].prompt_tokens == 130);

  r.has_start_times = false;  // as llm-k8s: lengths but no send times, Poisson at 10 req/s
  for (uint64_t seed : {0u, 7u}) {
    specs = replay_requests(r, seed);
    const std::vector<double> t = workloads::arrival_times_s(20, 10.0, 1.0, "poisson", seed);
    for (size_t i = 0; i < 20; ++i) {
      CHECK(specs[i].arrival == SimTime::from_seconds_ceil(t[i]));
      CHECK(specs[i].output_tokens == 20 + int(i));  // lengths stay in send order
    }
  }
  r.request_rate = std::numeric_limits<double>::infinity();
  specs = replay_requests(r, 0);
  for (const auto& s : specs) CHECK(s.arrival == SimTime::zero());

  r.shared_prefix_tokens = 150;  // capped at each prompt: request 0 has 100 tokens
  specs = replay_requests(r, 0);
  CHECK(specs[0].prefix_group == 0);
  CHECK(specs[0].prefix_tokens == 100);
  CHECK(specs[10].prefix_tokens == 150);

  MeasuredRun means;  // no per-request data: mean lengths, rounded
  means.num_prompts = 4;
  means.mean_input_tokens = 550.4;
  means.mean_output_tokens = 127.6;
  specs = replay_requests(means, 0);
  REQUIRE(specs.size() == 4);
  CHECK(specs[2].prompt_tokens == 550);
  CHECK(specs[2].output_tokens == 128);
}

TEST_CASE("replay: the simulator's own run, read back as a measurement, validates with zero error",
          "[measured]") {
  sim::SimulationConfig cfg;
  cfg.model = "llama-3.1-8b";
  cfg.gpu = "h100-sxm";
  cfg.workload.num_prompts = 60;
  cfg.workload.request_rate = 20;
  cfg.workload.random_input_len = 512;
  cfg.workload.random_output_len = 64;
  cfg.workload.random_range_ratio = 0.5;
  cfg.workload.seed = 3;
  cfg.metrics.percentile_metrics = {"ttft", "tpot", "itl", "e2el"};
  cfg.metrics.metric_percentiles = {50, 90, 99};
  cfg.calibration = "none";
  const sim::PreparedDeployment prepared = sim::prepare_deployment(cfg);
  const sim::SimulationResult result = sim::run_simulation(cfg, prepared);

  // The run as a measurement: send times, lengths and TTFT/E2E per request (seconds).
  MeasuredRun m;
  m.id = m.path = "self";
  m.deployment.set("model", "llama-3.1-8b", "test");
  m.deployment.set("gpu", "h100-sxm", "test");
  m.deployment.set("tensor_parallel_size", 1, "test");
  for (const auto& rec : result.records) {
    MeasuredRequest q;
    q.start_s = rec.arrival.seconds();
    q.input_tokens = rec.prompt_tokens;
    q.output_tokens = rec.output_tokens;
    q.ttft_s = (rec.first_token - rec.arrival).seconds();
    q.e2e_s = (rec.last_token - rec.arrival).seconds();
    m.requests.push_back(q);
  }
  m.has_start_times = true;
  m.num_prompts = 60;
  m.request_rate = 20;
  fill_metrics_from_requests(m);
  // fill_metrics_from_requests = vLLM's definitions = compute_metrics (TTFT, TPOT, E2E).
  CHECK(m.metrics.at("mean_ttft_ms") ==
        Approx(result.metrics.summaries.at("ttft").mean_ms).epsilon(1e-9));
  CHECK(m.metrics.at("p99_tpot_ms") ==
        Approx(result.metrics.summaries.at("tpot").percentiles_ms.back().second).epsilon(1e-9));

  const sim::SimulationConfig rc = uncalibrated(simulation_config(m, app::apply_config_json));
  const Prediction p = simulate_measured_run(m, rc, Calibration{}, ReplayOptions{});
  CHECK(p.arrivals == "trace");
  const auto rows = compare(m, p);
  CHECK(rows.size() >= 13);  // ttft/tpot/e2el x 4 stats + throughput
  // Send times pass through double seconds and back: at most 1 ns moves per request.
  for (const auto& row : rows) {
    INFO(row.key << ": measured " << row.measured << ", predicted " << row.predicted);
    CHECK(std::fabs(row.error_pct) < 1e-4);
  }
  // Deterministic.
  const Prediction again = simulate_measured_run(m, rc, Calibration{}, ReplayOptions{});
  CHECK(again.metrics == p.metrics);
}

TEST_CASE("calibration hook: a cost-model factory and a TTFT offset change the prediction",
          "[measured]") {
  const MeasuredRun r = synthetic_run();
  const sim::SimulationConfig cfg = uncalibrated(simulation_config(r, app::apply_config_json));
  const Prediction base = simulate_measured_run(r, cfg, Calibration{}, ReplayOptions{});

  Calibration offset;
  offset.source = "test";
  offset.ttft_offset_s = 0.05;
  const Prediction shifted = simulate_measured_run(r, cfg, offset, ReplayOptions{});
  // Every TTFT and E2E gains exactly 50 ms; TPOT is unchanged ((E2E − TTFT) is).
  CHECK(shifted.metrics.at("mean_ttft_ms") ==
        Approx(base.metrics.at("mean_ttft_ms") + 50).epsilon(1e-9));
  CHECK(shifted.metrics.at("mean_e2el_ms") ==
        Approx(base.metrics.at("mean_e2el_ms") + 50).epsilon(1e-9));
  CHECK(shifted.metrics.at("mean_tpot_ms") ==
        Approx(base.metrics.at("mean_tpot_ms")).epsilon(1e-9));

  Calibration ideal;
  ideal.source = "test";
  ideal.make_cost = [](const models::Deployment& d) -> std::unique_ptr<models::CostModel> {
    return std::make_unique<models::IdealCostModel>(d);
  };
  const Prediction fast = simulate_measured_run(r, cfg, ideal, ReplayOptions{});
  // The ideal roofline is a lower bound on every step, so every request is faster.
  CHECK(fast.metrics.at("mean_tpot_ms") < base.metrics.at("mean_tpot_ms"));
  CHECK(fast.metrics.at("mean_ttft_ms") < base.metrics.at("mean_ttft_ms"));
  CHECK(Calibration{}.describe() == "uncalibrated (datasheet + catalog defaults)");
  CHECK(ideal.describe() == "calibration from test (fitted on: not stated)");
}

TEST_CASE("validate with the shipped profiles labels each run by its own GPU's profile",
          "[measured]") {
  // What validate does without --calibration: the source names the shipped profiles, and each
  // run's deployment carries its own GPU's (or none). A GPU without a shipped profile is
  // datasheet-only, not "transferred" (the label before 2026-11-26 for every such run).
  Calibration shipped;
  shipped.source = "the profiles shipped for the GPUs (hardware/calibration/h100-sxm.json)";
  shipped.shipped_per_gpu = true;
  MeasuredRun rtx = synthetic_run();
  rtx.deployment.set("gpu", "rtx-4090", "test");
  rtx.deployment.set("max_model_len", int64_t{4096}, "test");  // the default needs 16 GiB of KV
  const sim::SimulationConfig rtx_cfg = simulation_config(rtx, app::apply_config_json);
  REQUIRE_FALSE(calibration::default_calibration_path("rtx-4090", sim::host_line(rtx_cfg.engine)));
  CHECK(simulate_measured_run(rtx, rtx_cfg, shipped, ReplayOptions{}).basis.label ==
        "datasheet-only");

  const MeasuredRun h100 = synthetic_run();
  const sim::SimulationConfig h100_cfg = simulation_config(h100, app::apply_config_json);
  const calibration::PredictionBasis own = sim::prepare_deployment(h100_cfg).basis;
  REQUIRE(own.label != "datasheet-only");  // the shipped H100 profile applies
  const Prediction p = simulate_measured_run(h100, h100_cfg, shipped, ReplayOptions{});
  CHECK(p.basis.label == own.label);
  CHECK(p.basis.reason.find("h100-sxm.json") != std::string::npos);

  // A calibration that changes the model without a profile to classify by stays "transferred".
  Calibration offset;
  offset.source = "test";
  offset.ttft_offset_s = 0.05;
  CHECK(simulate_measured_run(h100, h100_cfg, offset, ReplayOptions{}).basis.label ==
        "transferred");
}

TEST_CASE("replay: poisson runs average seeds, the arrivals say so", "[measured]") {
  MeasuredRun r = synthetic_run();
  r.has_start_times = false;
  r.seed = 5;
  const sim::SimulationConfig cfg = uncalibrated(simulation_config(r, app::apply_config_json));
  ReplayOptions one;
  one.seeds = 1;
  ReplayOptions three;
  three.seeds = 3;
  const Prediction p1 = simulate_measured_run(r, cfg, Calibration{}, one);
  const Prediction p3 = simulate_measured_run(r, cfg, Calibration{}, three);
  CHECK(p1.arrivals == "poisson");
  CHECK(p3.arrivals_detail == "poisson at 10 req/s, seeds 5-7 averaged");
  // Mean over seeds 5, 6, 7 of the single-seed predictions.
  double sum = 0;
  for (uint64_t s = 5; s <= 7; ++s) {
    MeasuredRun rs = r;
    rs.seed = s;
    sum += simulate_measured_run(rs, cfg, Calibration{}, one).metrics.at("mean_ttft_ms");
  }
  CHECK(p3.metrics.at("mean_ttft_ms") == Approx(sum / 3).epsilon(1e-12));
}

TEST_CASE("load_calibration_file: fit set, client TTFT overhead and roofline parameters",
          "[measured]") {
  const fs::path p =
      fs::temp_directory_path() / ("servesim_calib_" + std::to_string(::getpid()) + ".json");
  std::ofstream(p)
      << R"({"servesim_calibration": 1, "gpu": "h100-sxm", "fit_set": ["a.json", "b.jsonl#2"],
                          "parameters": {"client_ttft_overhead_s": {"value": 0.01},
                                         "memory_efficiency": {"value": 0.5}}})";
  const Calibration c = load_calibration_file(p.string());
  CHECK(c.fitted_on.size() == 2);
  CHECK(c.ttft_offset_s == 0.01);
  REQUIRE(c.make_cost);
  const MeasuredRun r = synthetic_run();
  const sim::SimulationConfig cfg = uncalibrated(simulation_config(r, app::apply_config_json));
  const Prediction base = simulate_measured_run(r, cfg, Calibration{}, ReplayOptions{});
  const Prediction slow = simulate_measured_run(r, cfg, c, ReplayOptions{});
  CHECK(slow.metrics.at("mean_tpot_ms") > base.metrics.at("mean_tpot_ms"));  // η_m 0.827 -> 0.5
  CHECK(c.describe() ==
        "calibration from " + p.string() + " for h100-sxm (fitted on: a.json, b.jsonl#2)");

  std::ofstream(p)
      << R"({"servesim_calibration": 1, "gpu": "h100-sxm", "parameters": {"warp_speed": {"value": 9}}})";
  CHECK_THROWS_WITH(load_calibration_file(p.string()), Catch::Contains("warp_speed"));
  fs::remove(p);
}

TEST_CASE("validation: holdout split, fit-set check, median |error|", "[measured]") {
  std::vector<std::string> ids;
  for (int i = 0; i < 10; ++i) ids.push_back("/data/run" + std::to_string(i) + ".json");
  const auto scored = holdout_scored(ids, 0.3);
  CHECK(std::count(scored.begin(), scored.end(), true) == 3);  // ceil(0.3 · 10)
  // Independent of the order the runs are given in.
  std::vector<std::string> rev(ids.rbegin(), ids.rend());
  const auto scored_rev = holdout_scored(rev, 0.3);
  for (size_t i = 0; i < ids.size(); ++i) CHECK(scored[i] == scored_rev[ids.size() - 1 - i]);
  const auto all = holdout_scored(ids, 1.0);
  CHECK(std::count(all.begin(), all.end(), true) == 10);
  CHECK_THROWS_AS(holdout_scored(ids, 0.0), ConfigError);

  CHECK(in_fit_set("/data/x.jsonl#2", {"/data/x.jsonl"}));  // a file covers all its runs
  CHECK(in_fit_set("/data/x.jsonl#2", {"/data/x.jsonl#2"}));
  CHECK_FALSE(in_fit_set("/data/x.jsonl#1", {"/data/x.jsonl#2"}));
  CHECK_FALSE(in_fit_set("/data/y.json", {"/data/x.json"}));

  ValidationTable t;
  for (double e : {-4.0, 10.0, 2.0, -30.0}) {
    RunValidation r;
    r.rows.push_back({"mean_ttft_ms", 100, 100 + e, e});
    t.runs.push_back(r);
  }
  summarize(t);
  // |errors| 2, 4, 10, 30: np.median = (4 + 10) / 2 = 7.
  CHECK(t.median_abs_error_pct.at("mean_ttft_ms") == 7.0);
  CHECK(t.runs_per_metric.at("mean_ttft_ms") == 4);
}

TEST_CASE("validate_runs: a scored run in the fit set is flagged", "[measured]") {
  const MeasuredRun r = synthetic_run();
  Calibration c;
  c.source = "cal.json";
  c.fitted_on = {"synthetic"};
  MeasuredRun m = r;
  m.metrics["mean_ttft_ms"] = 50;
  const ValidationTable t = validate_runs(
      {m}, {uncalibrated(simulation_config(m, app::apply_config_json))}, c, ReplayOptions{}, 1);
  REQUIRE(t.runs.size() == 1);
  CHECK(t.runs[0].in_fit_set);
  REQUIRE(t.warnings.size() == 1);
  CHECK(t.warnings[0].find("fit set") != std::string::npos);
  std::ostringstream os;
  print_table(os, t);
  CHECK(os.str().find("calibration from cal.json (fitted on: synthetic)") != std::string::npos);
  // The summary says what the medians rest on (a calibration without a profile: transferred).
  CHECK(os.str().find("  prediction bases: 1 transferred (1 in the fit set)\n") !=
        std::string::npos);
}

TEST_CASE("servesim validate: fixtures end to end, flags, JSON output, clear errors",
          "[measured][cli]") {
  const fs::path out =
      fs::temp_directory_path() / ("servesim_validate_" + std::to_string(::getpid()) + ".json");
  std::ostringstream o, e;
  int code =
      app::run_cli({"validate", "--calibration", "none", "--measured",
                    kData + "/measured/sglang_bench_serving.jsonl",
                    kData + "/measured/profile_export_genai_perf.json", "--model", "llama-3.1-8b",
                    "--gpu", "h100-sxm", "-tp", "1", "--jobs", "2", "--output", out.string()},
                   o, e);
  INFO(o.str() << e.str());
  REQUIRE(code == 0);
  CHECK(o.str().find("servesim validate: uncalibrated (datasheet + catalog defaults)") !=
        std::string::npos);
  CHECK(o.str().find("Median absolute error over 3 run(s)") != std::string::npos);
  CHECK(o.str().find("all ready at t=0, max concurrency 16") != std::string::npos);
  std::ifstream in(out);
  const json j = json::parse(in);
  CHECK(j["runs"].size() == 3);
  CHECK(j["scope"] == "all runs");
  CHECK(j["median_abs_error"].contains("mean_ttft_ms"));

  // Same output whatever --jobs is (determinism).
  std::ostringstream o1, e1;
  REQUIRE(app::run_cli({"validate", "--calibration", "none", "--measured",
                        kData + "/measured/sglang_bench_serving.jsonl",
                        kData + "/measured/profile_export_genai_perf.json", "--model",
                        "llama-3.1-8b", "--gpu", "h100-sxm", "-tp", "1", "--jobs", "1"},
                       o1, e1) == 0);
  std::string a = o.str(), b = o1.str();
  a = a.substr(0, a.find("Table written"));
  CHECK(a == b);

  // Missing GPU: exit 2, one line naming the file and the flag.
  std::ostringstream o2, e2;
  code = app::run_cli({"validate", "--measured", kData + "/measured/sglang_bench_serving.jsonl",
                       "--model", "llama-3.1-8b"},
                      o2, e2);
  CHECK(code == 2);
  CHECK(e2.str().find("sglang_bench_serving.jsonl: the deployment has no 'gpu'") !=
        std::string::npos);
  // Load flags are not validate's: the file gives the load.
  std::ostringstream o3, e3;
  CHECK(app::run_cli({"validate", "--measured", "x.json", "--request-rate", "3"}, o3, e3) == 2);
  fs::remove(out);
}

}  // namespace
}  // namespace servesim::measured

namespace servesim::measured {
namespace {

TEST_CASE("replay: a warm prefix cache serves the prompts' full blocks from cache", "[measured]") {
  MeasuredRun cold = synthetic_run();
  for (auto& q : cold.requests) q.input_tokens *= 8;  // 800..2320 tokens: prefill dominates TTFT
  MeasuredRun warm = cold;
  warm.warm_prefix_cache = true;
  const sim::SimulationConfig cfg = uncalibrated(simulation_config(cold, app::apply_config_json));
  const Prediction pc = simulate_measured_run(cold, cfg, Calibration{}, ReplayOptions{});
  const Prediction pw = simulate_measured_run(warm, cfg, Calibration{}, ReplayOptions{});
  CHECK(pw.arrivals_detail.find("prefix cache warmed") != std::string::npos);
  // Warm: only the last partial block (< 16 tokens, at least one token) is computed per prompt.
  CHECK(pw.metrics.at("mean_ttft_ms") < 0.5 * pc.metrics.at("mean_ttft_ms"));
  // The warm-up requests are not measured: the same 20 requests finish, at about the same rate.
  CHECK(pw.metrics.at("request_throughput") ==
        Approx(pc.metrics.at("request_throughput")).epsilon(0.05));

  // The sidecar key must be a bool.
  const fs::path dir = fs::temp_directory_path() / ("servesim_warm_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "w.json") << R"({"match": "*", "warm_prefix_cache": "yes"})";
  SidecarOptions o;
  o.sidecar_dirs = {dir.string()};
  CHECK_THROWS_WITH(read_measured(kData + "/measured/vllm_swapped_e2el.json", o),
                    Catch::Contains("warm_prefix_cache"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace servesim::measured
