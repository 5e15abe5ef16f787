// Argonne LLM-Inference-Bench static batches (read_argonne_csv) and how they are replayed: an
// offline run (vLLM's LLM class) carries no client or API-server costs, and its measured latency
// is the batch's last E2E (p100_e2el_ms).
//
// Tolerances: values the file states are compared exactly; the realdata README's sanity figures
// are rounded to 1 ms (half a unit of tolerance). Simulated quantities that must be equal by
// construction (same simulation, an offset that must not apply) are compared to 1e-9 relative.
#include <catch2/catch.hpp>
#include "tests/test_paths.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "sim/app/run_config.h"
#include "sim/base/error.h"
#include "sim/cluster/simulation.h"
#include "sim/measured/measured_run.h"
#include "sim/measured/readers.h"
#include "sim/measured/replay.h"
#include "sim/measured/validation.h"

namespace servesim::measured {
namespace {

namespace fs = std::filesystem;

const std::string kFile =
    std::string(SERVESIM_REALDATA_DIR) + "/argonne_llm_inference_bench/All_results.csv";

SidecarOptions realdata_sidecars() {
  SidecarOptions o;
  o.sidecar_dirs = {std::string(SERVESIM_TEST_DATA_DIR) + "/realdata_sidecars"};
  return o;
}

const MeasuredRun* find_run(const std::vector<MeasuredRun>& runs, const std::string& hardware,
                            int64_t tp, const std::string& model_id, const std::string& label) {
  for (const MeasuredRun& r : runs) {
    if (r.deployment.hardware == hardware && r.deployment.model_id == model_id &&
        r.label == label && r.deployment.config.at("tensor_parallel_size") == tp) {
      return &r;
    }
  }
  return nullptr;
}

TEST_CASE("argonne: vLLM static batches on the A100 and H100 with catalog models",
          "[measured][realdata]") {
  REQUIRE(detect_format(kFile) == "argonne");
  const std::vector<MeasuredRun> runs = read_measured(kFile, realdata_sidecars());
  // 4,771 rows; the vLLM rows on "Nvidia A100 GPU" / "Nvidia H100 GPU" of the eight catalog
  // models (awk over the file: 533). Other frameworks, GPUs and models are passed over.
  REQUIRE(runs.size() == 533);
  for (const MeasuredRun& r : runs) {
    INFO(r.id << " " << r.label);
    REQUIRE(r.format == "argonne");
    REQUIRE(r.offline);
    REQUIRE(std::isinf(r.request_rate));
    REQUIRE(r.max_concurrency == 0);
    REQUIRE(r.requests.size() == static_cast<size_t>(r.num_prompts));
    // Every request: the row's length in and out (ignore_eos, max_tokens = output_len).
    for (const MeasuredRequest& q : r.requests) REQUIRE(q.input_tokens == q.output_tokens);
    REQUIRE(r.metrics.size() == 2);
    // completed / duration with duration = the latency
    REQUIRE(r.metrics.at("request_throughput") * r.metrics.at("p100_e2el_ms") / 1e3 ==
            Approx(static_cast<double>(r.num_prompts)).epsilon(1e-12));
    REQUIRE(r.deployment.config.at("vllm_version") == "0.6");
    // The scripts' engine arguments (the sidecar): V0 prefill-first, no prefix caching.
    REQUIRE(r.deployment.config.at("enable_chunked_prefill") == false);
    REQUIRE(r.deployment.config.at("enable_prefix_caching") == false);
    REQUIRE(r.deployment.config.at("gpu_memory_utilization") == 0.9);
  }
  // The realdata README's sanity figures: H100, Llama-3-8B, 128/128, 1 GPU, batch 1 -> 0.994 s;
  // A100 at batch 64 -> 3.289 s.
  const MeasuredRun* h100 = find_run(runs, "Nvidia H100 GPU", 1, "meta-llama/Meta-Llama-3-8B",
                                     "static batch 1 x 128/128");
  REQUIRE(h100 != nullptr);
  CHECK(h100->metrics.at("p100_e2el_ms") == 993.9330658666686);  // the file's value, in ms
  CHECK(h100->metrics.at("p100_e2el_ms") == Approx(994).margin(0.5));
  CHECK(h100->deployment.config.at("model") == "llama-3.1-8b");
  CHECK(h100->deployment.config.at("max_model_len") == 8192);  // Llama 3's context
  CHECK(h100->deployment.config.at("gpu") == "h100-sxm");
  CHECK(h100->num_prompts == 1);
  CHECK(h100->requests[0].input_tokens == 128);
  const MeasuredRun* a100 = find_run(runs, "Nvidia A100 GPU", 1, "meta-llama/Meta-Llama-3-8B",
                                     "static batch 64 x 128/128");
  REQUIRE(a100 != nullptr);
  CHECK(a100->metrics.at("p100_e2el_ms") == Approx(3289).margin(0.5));
  CHECK(a100->deployment.config.at("gpu") == "a100-40gb");
  CHECK(a100->num_prompts == 64);
  // Qwen2 as Qwen2.5 (same shape), the catalog's context.
  const MeasuredRun* qwen =
      find_run(runs, "Nvidia H100 GPU", 4, "Qwen/Qwen2-72B", "static batch 16 x 512/512");
  REQUIRE(qwen != nullptr);
  CHECK(qwen->deployment.config.at("model") == "qwen2.5-72b");
  CHECK_FALSE(qwen->deployment.config.contains("max_model_len"));
}

TEST_CASE("argonne: rows it does not simulate are passed over, malformed ones name line and field",
          "[measured]") {
  const fs::path dir = fs::temp_directory_path() / ("servesim_argonne_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path f = dir / "All_results.csv";
  const std::string header =
      "Hardware,Num of Hardware,Framework,Model,Input Output Length,Batch Size,Latency,Throughput\n";
  std::ofstream(f) << header
                   << "Nvidia H100 GPU,1,TensorRT-LLM,meta-llama/Llama-2-7b-hf,128,1,0.5,512\n"
                   << "AMD MI300X GPU,1,vLLM,meta-llama/Llama-2-7b-hf,128,1,0.5,512\n"
                   << "Nvidia H100 GPU,1,vLLM,Deci/DeciLM-7B,128,1,0.5,512\n"
                   << "\n"
                   << "Nvidia H100 GPU,2,vLLM,meta-llama/Llama-2-7b-hf,256,16,2.0,4096\n";
  const std::vector<MeasuredRun> runs = read_runs(f.string());
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].id == f.string() + "#5");  // its line index
  CHECK(runs[0].num_prompts == 16);
  CHECK(runs[0].requests[3].output_tokens == 256);
  CHECK(runs[0].metrics.at("p100_e2el_ms") == 2000.0);
  CHECK(runs[0].metrics.at("request_throughput") == 8.0);
  CHECK(runs[0].deployment.config.at("model") == "llama-2-7b");

  struct Case {
    const char* row;
    const char* expected;
  };
  for (const Case& c :
       {Case{"Nvidia H100 GPU,1,vLLM,meta-llama/Llama-2-7b-hf,128,2.5,0.5,1\n",
             "All_results.csv:2: Batch Size: 2.5 is invalid; expected an integer in [1, "},
        Case{"Nvidia H100 GPU,1,vLLM,meta-llama/Llama-2-7b-hf,128,1,fast,1\n",
             "All_results.csv:2: Latency: 'fast' is not a finite number"},
        Case{"Nvidia H100 GPU,1,vLLM,meta-llama/Llama-2-7b-hf,128,1,0,1\n",
             "All_results.csv:2: Input Output Length 128, Latency 0; expected positive values"},
        Case{"Nvidia H100 GPU,1,vLLM\n", "All_results.csv:2: 3 cells; expected 8"}}) {
    CAPTURE(c.row);
    std::ofstream(f) << header << c.row;
    try {
      read_runs(f.string());
      FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
      CHECK_THAT(e.what(), Catch::Contains(c.expected));
    }
  }
  // A header naming a column twice: the cells are indexed by position, so a row must reach the
  // last named position (9 here), not the 8 distinct names (found by fuzz_measured: a read past
  // the row's end).
  std::ofstream(f) << "Hardware,Hardware,Num of Hardware,Framework,Model,Input Output Length,"
                      "Batch Size,Latency,Throughput\n"
                   << "Nvidia H100 GPU,Nvidia H100 GPU,1,vLLM,meta-llama/Llama-2-7b-hf,128,1,0.5\n";
  CHECK_THROWS_WITH(read_argonne_csv(f.string()),
                    Catch::Contains("All_results.csv:2: 8 cells; expected 9"));
  std::ofstream(f) << "Hardware,Num of Hardware,Framework,Model,Batch Size,Latency\n";
  CHECK_THROWS_WITH(read_argonne_csv(f.string()),
                    Catch::Contains("missing column 'Input Output Length'"));
  fs::remove_all(dir);
}

// A static batch of `batch` requests of `length` tokens in and out on one H100.
MeasuredRun static_batch(int64_t batch, int32_t length, bool offline) {
  MeasuredRun r;
  r.id = r.path = "static";
  r.format = "test";
  r.deployment.set("model", "llama-3.1-8b", "test");
  r.deployment.set("gpu", "h100-sxm", "test");
  r.deployment.set("tensor_parallel_size", 1, "test");
  r.offline = offline;
  r.request_rate = std::numeric_limits<double>::infinity();
  r.num_prompts = batch;
  for (int64_t i = 0; i < batch; ++i) {
    MeasuredRequest q;
    q.input_tokens = q.output_tokens = length;
    r.requests.push_back(q);
  }
  r.metrics["p100_e2el_ms"] = 1000;  // asks the replay for the 100th percentile
  return r;
}

TEST_CASE("offline replay: no client overhead and no front end, p100 E2E is the last E2E",
          "[measured]") {
  const MeasuredRun online = static_batch(4, 128, false);
  const MeasuredRun offline = static_batch(4, 128, true);
  // A profile with a client TTFT overhead of 30 ms as the deployment's calibration: an online
  // replay adds it to every TTFT and E2E, an offline one must not.
  const fs::path profile =
      fs::temp_directory_path() / ("servesim_offline_" + std::to_string(getpid()) + ".json");
  std::ofstream(profile) << R"({"servesim_calibration": 1, "gpu": "h100-sxm",
      "parameters": {"client_ttft_overhead_s": {"value": 0.03}}})";
  sim::SimulationConfig cfg = simulation_config(online, app::apply_config_json);
  cfg.calibration = profile.string();
  const double client_s = sim::prepare_deployment(cfg).client_ttft_overhead_s;
  REQUIRE(client_s == 0.03);
  const Prediction on = simulate_measured_run(online, cfg, Calibration{}, ReplayOptions{});
  const Prediction off = simulate_measured_run(offline, cfg, Calibration{}, ReplayOptions{});
  CHECK(on.metrics.at("mean_ttft_ms") - off.metrics.at("mean_ttft_ms") ==
        Approx(client_s * 1e3).epsilon(1e-9));
  CHECK(on.metrics.at("p100_e2el_ms") - off.metrics.at("p100_e2el_ms") ==
        Approx(client_s * 1e3).epsilon(1e-9));
  CHECK(on.metrics.at("mean_tpot_ms") == Approx(off.metrics.at("mean_tpot_ms")).epsilon(1e-9));

  // A calibration's client offset and API-server queue change the online replay, not the
  // offline one.
  Calibration with_host;
  with_host.source = "test";
  with_host.ttft_offset_s = 0.05;
  with_host.frontend = sim::FrontEndCosts{0.01, 1e-5, 0};
  const Prediction on2 = simulate_measured_run(online, cfg, with_host, ReplayOptions{});
  const Prediction off2 = simulate_measured_run(offline, cfg, with_host, ReplayOptions{});
  CHECK(on2.metrics.at("mean_ttft_ms") > on.metrics.at("mean_ttft_ms") + 50);
  CHECK(off2.metrics == off.metrics);

  // p100 is the largest E2E: a batch of one has a single E2E; four equal requests admitted
  // together finish in the same step, so the last E2E equals their mean.
  const MeasuredRun one = static_batch(1, 256, true);
  const Prediction p1 = simulate_measured_run(one, simulation_config(one, app::apply_config_json),
                                              Calibration{}, ReplayOptions{});
  CHECK(p1.metrics.at("p100_e2el_ms") == Approx(p1.metrics.at("mean_e2el_ms")).epsilon(1e-12));
  CHECK(off.metrics.at("p100_e2el_ms") == Approx(off.metrics.at("mean_e2el_ms")).epsilon(1e-12));
  CHECK(off.metrics.at("p100_e2el_ms") >= off.metrics.at("p99_e2el_ms"));
  // validate compares the key: measured 1,000 ms.
  const std::vector<MetricComparison> rows = compare(offline, off);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].key == "p100_e2el_ms");
  CHECK(rows[0].measured == 1000);
  fs::remove(profile);
}

}  // namespace
}  // namespace servesim::measured
