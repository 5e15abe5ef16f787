// What validate assumed for a run, and the TTFT floor warning: the floor is one request alone on
// the idle engine (the simulator's own one-request run gives the same number), a client overhead
// adds to it exactly, and a measured TTFT strictly below it warns while one just above does not.
#include <catch2/catch.hpp>
#include "tests/test_paths.h"

#include <cmath>
#include <filesystem>
#include <fstream>

#include "sim/app/run_config.h"
#include "sim/cluster/simulation.h"
#include "sim/measured/measured_run.h"
#include "sim/measured/readers.h"
#include "sim/measured/replay.h"
#include "sim/measured/run_assumptions.h"
#include "sim/measured/ttft_floor.h"

namespace servesim::measured {
namespace {

namespace fs = std::filesystem;

// 21 requests, prompts 100 x 15 and 1000 x 6: median prompt 100, mean (1500 + 6000) / 21 = 357.1
// -> 357, far apart so that the two floors differ.
MeasuredRun skewed_run() {
  MeasuredRun r;
  r.id = r.path = "skewed";
  r.format = "test";
  r.deployment.set("model", "llama-3.1-8b", "test");
  r.deployment.set("gpu", "h100-sxm", "test");
  r.deployment.set("tensor_parallel_size", 1, "test");
  for (int i = 0; i < 21; ++i) {
    MeasuredRequest q;
    q.start_s = 0.5 * i;
    q.input_tokens = i < 15 ? 100 : 1000;
    q.output_tokens = 16;
    r.requests.push_back(q);
  }
  r.has_start_times = true;
  r.num_prompts = 21;
  r.request_rate = 2;
  return r;
}

sim::SimulationConfig uncalibrated_config(const MeasuredRun& r) {
  sim::SimulationConfig c = simulation_config(r, app::apply_config_json);
  c.calibration = "none";
  return c;
}

// The simulator's TTFT of one `prompt`-token request, sent alone (random dataset, no range).
double lone_ttft_ms(const sim::SimulationConfig& base, int32_t prompt) {
  sim::SimulationConfig c = base;
  c.workload.num_prompts = 1;
  c.workload.request_rate = std::numeric_limits<double>::infinity();
  c.workload.random_input_len = prompt;
  c.workload.random_output_len = 2;
  c.workload.random_range_ratio = 0;
  c.max_concurrency = 0;
  const sim::PreparedDeployment prepared = sim::prepare_deployment(c);
  return sim::run_simulation(c, prepared).metrics.summaries.at("ttft").mean_ms;
}

// The skewed run with its send times dropped: Poisson arrivals the file does not record.
MeasuredRun poisson_run() {
  MeasuredRun r = skewed_run();
  r.has_start_times = false;
  return r;
}

TEST_CASE("TTFT floor without recorded arrivals: one request of the mean and median prompt",
          "[measured]") {
  const MeasuredRun r = poisson_run();
  const sim::SimulationConfig cfg = uncalibrated_config(r);
  const sim::PreparedDeployment prepared = sim::prepare_deployment(cfg);
  const TtftFloor f = ttft_floor(r, cfg, prepared, Calibration{});
  CHECK(f.kind == "lone request");
  CHECK(f.mean_prompt_tokens == 357);
  CHECK(f.median_prompt_tokens == 100);
  // The same number as the simulator's own one-request run: only the route differs.
  CHECK(f.mean_ms == Approx(lone_ttft_ms(cfg, 357)).epsilon(1e-9));
  CHECK(f.median_ms == Approx(lone_ttft_ms(cfg, 100)).epsilon(1e-9));
  // Prefill grows with the prompt.
  CHECK(f.median_ms < f.mean_ms);
  CHECK(f.median_ms > 0);

  // A client overhead of 50 ms adds exactly 50 ms (one TTFT, nothing queued behind it).
  Calibration offset;
  offset.source = "test";
  offset.ttft_offset_s = 0.05;
  const TtftFloor g = ttft_floor(r, cfg, prepared, offset);
  CHECK(g.mean_ms == Approx(f.mean_ms + 50).epsilon(1e-9));
  CHECK(g.median_ms == Approx(f.median_ms + 50).epsilon(1e-9));

  // Summary only (no per-request lengths): the mean prompt, no median floor.
  MeasuredRun summary = r;
  summary.requests.clear();
  summary.mean_input_tokens = 357.2;
  summary.mean_output_tokens = 16;
  const TtftFloor s = ttft_floor(summary, cfg, prepared, Calibration{});
  CHECK(s.mean_prompt_tokens == 357);
  CHECK(s.mean_ms == Approx(f.mean_ms).epsilon(1e-9));
  CHECK(s.median_prompt_tokens == 0);
  CHECK(std::isnan(s.median_ms));
}

TEST_CASE("TTFT floor with recorded arrivals: the run's prefills, nothing decoding", "[measured]") {
  // Sends 0.5 s apart, prefills of tens of ms: every request finds the engine idle, so the floor
  // is the mean of the lone floors, 15 of 100 tokens and 6 of 1,000 (exact: the same steps).
  const MeasuredRun r = skewed_run();
  const sim::SimulationConfig cfg = uncalibrated_config(r);
  const sim::PreparedDeployment prepared = sim::prepare_deployment(cfg);
  const TtftFloor f = ttft_floor(r, cfg, prepared, Calibration{});
  CHECK(f.kind == "prefill-only replay");
  const double t100 = lone_ttft_ms(cfg, 100), t1000 = lone_ttft_ms(cfg, 1000);
  REQUIRE(t1000 < 500);  // the premise: each prefill ends before the next send
  CHECK(f.mean_ms == Approx((15 * t100 + 6 * t1000) / 21).epsilon(1e-6));
  CHECK(f.median_ms == Approx(t100).epsilon(1e-6));

  // All 21 sent at t = 0: each waits for the prefills ahead of it, so the mean floor is above
  // the mean of the lone floors (the first request's is the lone one).
  MeasuredRun burst = r;
  burst.has_start_times = false;
  burst.request_rate = std::numeric_limits<double>::infinity();
  const TtftFloor b = ttft_floor(burst, cfg, prepared, Calibration{});
  CHECK(b.kind == "prefill-only replay");
  CHECK(b.mean_ms > f.mean_ms);
  // ... and at most all 9,900 prompt tokens prefilled one request at a time before the last.
  CHECK(b.mean_ms < 15 * t100 + 6 * t1000);
}

TEST_CASE("TTFT floor warning: below the floor warns, just above does not", "[measured]") {
  for (const MeasuredRun& base : {poisson_run(), skewed_run()}) {
    MeasuredRun r = base;
    const sim::SimulationConfig cfg = uncalibrated_config(r);
    const sim::PreparedDeployment prepared = sim::prepare_deployment(cfg);
    const TtftFloor f = ttft_floor(r, cfg, prepared, Calibration{});
    INFO(f.kind);
    REQUIRE(std::isfinite(f.mean_ms));
    REQUIRE(std::isfinite(f.median_ms));
    // 0.01 ms either side: far above double rounding of a value of tens of ms (1e-14 ms).
    r.metrics["mean_ttft_ms"] = f.mean_ms + 0.01;
    r.metrics["median_ttft_ms"] = f.median_ms + 0.01;
    CHECK(ttft_floor_warnings(r, f).empty());

    r.metrics["mean_ttft_ms"] = f.mean_ms - 0.01;
    std::vector<std::string> w = ttft_floor_warnings(r, f);
    REQUIRE(w.size() == 1);
    CHECK(w[0].find("measured mean TTFT") == 0);
    CHECK(w[0].find("warm prefix cache") != std::string::npos);
    if (f.kind == "lone request") CHECK(w[0].find("357-token prompt") != std::string::npos);

    r.metrics["mean_ttft_ms"] = f.mean_ms + 0.01;
    r.metrics["median_ttft_ms"] = f.median_ms - 0.01;
    w = ttft_floor_warnings(r, f);
    REQUIRE(w.size() == 1);
    CHECK(w[0].find("measured median TTFT") == 0);

    // A declared warm prefix cache lowers the floor: the prompts' full blocks are cached.
    MeasuredRun warm = base;
    warm.warm_prefix_cache = true;
    CHECK(ttft_floor(warm, cfg, prepared, Calibration{}).mean_ms < f.mean_ms);
  }
}

TEST_CASE("run assumptions: an unrecorded vLLM version and endpoint are reported", "[measured]") {
  const fs::path dir = fs::temp_directory_path() / "servesim_assumptions_test";
  fs::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
    const fs::path p = dir / name;
    std::ofstream(p) << text;
    return p.string();
  };
  const std::string body =
      "\"model_id\": \"meta-llama/Llama-3.1-8B-Instruct\", \"request_rate\": 1, \"completed\": 10, "
      "\"total_input_tokens\": 1000, \"total_output_tokens\": 500, \"mean_ttft_ms\": 20";
  SidecarOptions opts;
  opts.overrides = {{"gpu", "h100-sxm"}, {"tensor_parallel_size", 1}};

  // Bare: no version, no endpoint, a date.
  MeasuredRun bare =
      read_measured(write("bare.json", "{\"date\": \"20250414-141505\", " + body + "}"), opts)
          .at(0);
  std::vector<std::string> a = run_assumptions(bare, uncalibrated_config(bare));
  REQUIRE(a.size() == 2);
  CHECK(a[0].find("simulated as vLLM 0.19") != std::string::npos);
  CHECK(a[0].find("dated 20250414-141505") != std::string::npos);
  CHECK(a[1].find("assumed /v1/completions") != std::string::npos);
  const std::vector<std::string> d = declared_not_recorded(bare);
  REQUIRE(d.size() == 2);  // the model is recorded (model_id)
  CHECK(d[0] == "gpu h100-sxm (from command line)");
  CHECK(d[1] == "tensor_parallel_size 1 (from command line)");

  // Chat endpoint recorded; version declared on the command line: nothing assumed about it.
  SidecarOptions versioned = opts;
  versioned.overrides["engine_version"] = "0.11.0";
  MeasuredRun chat =
      read_measured(write("chat.json", "{\"backend\": \"openai-chat\", " + body + "}"), versioned)
          .at(0);
  CHECK(chat.endpoint == "chat");
  a = run_assumptions(chat, uncalibrated_config(chat));
  REQUIRE(a.size() == 1);
  CHECK(a[0].find("/v1/chat/completions") != std::string::npos);

  // Completions recorded (newer clients' endpoint_type) and a --metadata vllm_version: none.
  MeasuredRun stated = read_measured(write("stated.json",
                                           "{\"endpoint_type\": \"openai\", \"vllm_version\": "
                                           "\"0.11.0\", " +
                                               body + "}"),
                                     opts)
                           .at(0);
  CHECK(stated.deployment.engine_version == "0.11.0");
  CHECK(run_assumptions(stated, uncalibrated_config(stated)).empty());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace servesim::measured
