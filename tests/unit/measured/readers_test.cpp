// Readers of measured runs: real files from data/realdata (exact values from known rows,
// checked against the realdata README's sanity figures) and hand-written fixtures for the formats
// realdata lacks (SGLang, genai-perf). Each reader's error on a malformed file.
//
// Tolerances: values the file states are compared exactly. Statistics servesim recomputes from
// per-request arrays are compared to 1e-9 relative (the same double arithmetic as numpy's linear
// percentile on the same numbers; only summation order differs). README figures are rounded
// (TTFT/ITL to 0.1 ms, req/s to 0.01), so they get half a unit of their last digit.
#include <catch2/catch.hpp>
#include "tests/test_paths.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "sim/base/error.h"
#include "sim/measured/measured_run.h"
#include "sim/measured/readers.h"

namespace servesim::measured {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kReal = SERVESIM_REALDATA_DIR;
const std::string kData = SERVESIM_TEST_DATA_DIR;
const std::string kLlmk8s = kReal + "/llmk8s_llama33_70b_a100x8";
const std::string kLss = kReal + "/llmservingsim/bench_examples";
const std::string kGuide = kReal + "/inferencesim_eval_vllm0110";

SidecarOptions realdata_sidecars() {
  SidecarOptions o;
  o.sidecar_dirs = {kData + "/realdata_sidecars"};
  return o;
}

std::string llmk8s_file(const std::string& run, const std::string& tp_pp, const std::string& qps) {
  return kLlmk8s + "/" + run + "/serving_meta-llama-Llama-3.3-70B-Instruct_" + tp_pp +
         "_sharegpt_qps_" + qps + ".json";
}

fs::path temp_dir() {
  fs::path d = fs::temp_directory_path() / ("servesim_measured_test_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

fs::path write_file(const std::string& name, const std::string& text) {
  const fs::path p = temp_dir() / name;
  std::ofstream(p) << text;
  return p;
}

// Runs `f` and returns the ConfigError message ("" when nothing was thrown).
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("vllm-bench: llm-k8s 01 TP8 QPS 1 from realdata, with its .commands and sidecar",
          "[measured][realdata]") {
  const std::string path = llmk8s_file("01_tp8_pp1", "tp8_pp1", "01");
  const std::vector<MeasuredRun> runs = read_measured(path, realdata_sidecars());
  REQUIRE(runs.size() == 1);
  const MeasuredRun& r = runs[0];
  CHECK(r.format == "vllm-bench");
  CHECK(r.request_rate == 1.0);
  CHECK(r.burstiness == 1.0);
  CHECK(r.max_concurrency == 0);
  CHECK(r.num_prompts == 200);
  CHECK_FALSE(r.has_start_times);  // benchmark_serving.py of v0.8.3 stores no send times
  REQUIRE(r.requests.size() == 200);
  CHECK(r.requests[0].input_tokens == 13);
  CHECK(r.requests[0].output_tokens == 120);
  CHECK(r.requests[0].ttft_s == 0.031551);
  int64_t input = 0;
  for (const auto& q : r.requests) input += q.input_tokens;
  CHECK(input == 42659);  // README: 42,659 input tokens

  // Deployment: model from model_id, GPU from the .commands gpu_type, TP from the sidecar.
  CHECK(r.deployment.config["model"] == "llama-3.3-70b");
  CHECK(r.deployment.model_id == "meta-llama/Llama-3.3-70B-Instruct");
  CHECK(r.deployment.config["gpu"] == "a100-40gb");
  CHECK(r.deployment.hardware == "Standard_ND96asr_v4 x 1");
  CHECK(r.deployment.config["tensor_parallel_size"] == 8);
  CHECK(r.deployment.config["pipeline_parallel_size"] == 1);
  CHECK(r.deployment.engine_version == "0.8.3");
  CHECK(r.deployment.source.at("tensor_parallel_size").find("llmk8s_01_tp8_pp1.json") !=
        std::string::npos);

  // The file's own summaries, exactly; README sanity: 56.4 / 24.3 / 0.97.
  CHECK(r.metrics.at("median_ttft_ms") == 56.37217849994158);
  CHECK(r.metrics.at("median_itl_ms") == 24.309653000045728);
  CHECK(r.metrics.at("mean_tpot_ms") == 24.564414268982127);
  CHECK(r.metrics.at("p99_ttft_ms") == 143.80068917976584);
  CHECK(r.metrics.at("request_throughput") == 0.9745666315653629);
  // Computed from the arrays (np.percentile, linear): TTFT p90 = 109.3464 ms; E2E = ttft + Σ itls:
  // mean 5269.564345 ms, median 3887.8905 ms, p99 19175.42811 ms (numpy on the same arrays).
  CHECK(r.metrics.at("p90_ttft_ms") == Approx(109.3464).epsilon(1e-9));
  CHECK(r.metrics.at("mean_e2el_ms") == Approx(5269.564345).epsilon(1e-9));
  CHECK(r.metrics.at("median_e2el_ms") == Approx(3887.8905).epsilon(1e-9));
  CHECK(r.metrics.at("p99_e2el_ms") == Approx(19175.42811).epsilon(1e-9));
  CHECK(r.metrics.at("p90_itl_ms") == Approx(25.359).epsilon(1e-9));
}

TEST_CASE("vllm-bench: every llm-k8s run matches the README's sanity table",
          "[measured][realdata]") {
  struct Row {
    const char* run;
    const char* tp_pp;
    const char* qps;
    double ttft_p50, itl_p50, req_s;
  };
  // realdata/README.md, llmk8s "Sanity figures": TTFT p50 ms / ITL p50 ms / achieved req/s.
  const Row rows[] = {
      {"01_tp8_pp1", "tp8_pp1", "01", 56.4, 24.3, 0.97},
      {"01_tp8_pp1", "tp8_pp1", "04", 49.5, 27.2, 3.18},
      {"01_tp8_pp1", "tp8_pp1", "16", 58.1, 30.4, 6.33},
      {"01_tp8_pp1", "tp8_pp1", "inf", 349.8, 35.1, 8.40},
      {"02_tp4_pp2_no_IB", "tp4_pp2", "01", 97.3, 42.6, 0.93},
      {"02_tp4_pp2_no_IB", "tp4_pp2", "04", 103.2, 56.1, 2.54},
      {"02_tp4_pp2_no_IB", "tp4_pp2", "16", 122.4, 65.0, 3.74},
      {"02_tp4_pp2_no_IB", "tp4_pp2", "inf", 1026.9, 67.0, 4.26},
      {"03_tp4_pp2_IB", "tp4_pp2", "01", 97.5, 42.4, 0.93},
      {"03_tp4_pp2_IB", "tp4_pp2", "04", 104.9, 56.5, 2.53},
      {"03_tp4_pp2_IB", "tp4_pp2", "16", 111.8, 63.8, 3.79},
      {"03_tp4_pp2_IB", "tp4_pp2", "inf", 893.1, 66.0, 4.38},
      {"04_tp4_pp2_IB", "tp4_pp2", "01", 97.1, 42.6, 0.92},
      {"04_tp4_pp2_IB", "tp4_pp2", "04", 103.1, 56.1, 2.54},
      {"04_tp4_pp2_IB", "tp4_pp2", "16", 115.8, 63.2, 3.79},
      {"04_tp4_pp2_IB", "tp4_pp2", "inf", 1002.3, 65.5, 4.37},
  };
  for (const Row& row : rows) {
    INFO(row.run << " qps " << row.qps);
    const auto runs = read_measured(llmk8s_file(row.run, row.tp_pp, row.qps), realdata_sidecars());
    REQUIRE(runs.size() == 1);
    const MeasuredRun& r = runs[0];
    CHECK(r.metrics.at("median_ttft_ms") == Approx(row.ttft_p50).margin(0.05));
    CHECK(r.metrics.at("median_itl_ms") == Approx(row.itl_p50).margin(0.05));
    CHECK(r.metrics.at("request_throughput") == Approx(row.req_s).margin(0.005));
    CHECK(r.deployment.config["pipeline_parallel_size"] ==
          (std::string(row.tp_pp) == "tp8_pp1" ? 1 : 2));
    if (std::string(row.qps) == "inf") {
      CHECK(std::isinf(r.request_rate));
    }
  }
}

TEST_CASE("llmservingsim: RTX 4090 Llama-3.1-8B vLLM 0.19 run from realdata",
          "[measured][realdata]") {
  const std::string folder = kLss + "/RTX4090/Llama-3.1-8B";
  const auto runs = read_measured(folder + "/vllm/requests.jsonl", SidecarOptions{});
  REQUIRE(runs.size() == 1);
  const MeasuredRun& r = runs[0];
  CHECK(r.format == "llmservingsim");
  REQUIRE(r.requests.size() == 300);
  CHECK(r.has_start_times);
  // bench-0 / bench-1: input 2358 / 1034, output 531 / 769; arrival_time 1787267980.0827403 and
  // .3478317 -> 0.2650914 s apart.
  CHECK(r.requests[0].input_tokens == 2358);
  CHECK(r.requests[0].output_tokens == 531);
  CHECK(r.requests[0].start_s == 0.0);
  CHECK(r.requests[1].start_s == Approx(0.2650914).margin(1e-6));
  // TTFT of bench-0 = first_token_ts − queued_ts = 27537.350135653 − 27536.660701067.
  CHECK(r.requests[0].ttft_s == Approx(0.689434586).margin(1e-9));
  // Deployment read from meta.json (no sidecar given).
  const json& c = r.deployment.config;
  CHECK(c["model"] == "llama-3.1-8b");
  CHECK(c["gpu"] == "rtx-4090");
  CHECK(c["tensor_parallel_size"] == 1);
  CHECK(c["max_num_seqs"] == 256);
  CHECK(c["max_num_batched_tokens"] == 2048);
  CHECK(c["max_model_len"] == 32768);
  CHECK(c["num_gpu_blocks_override"] == 2588);
  CHECK(r.deployment.engine_version == "0.19.0");
  CHECK(c["async_scheduling"] == true);  // resolved_config.scheduler_config (0.19 default)
  // Measured summary: the vLLM column of validation/summary.txt (README: 65,457 / 32.4 / 86,578).
  CHECK(r.metrics.at("mean_ttft_ms") == 65456.6);
  CHECK(r.metrics.at("p90_ttft_ms") == 121121.7);
  CHECK(r.metrics.at("mean_tpot_ms") == 32.4);
  CHECK(r.metrics.at("mean_e2el_ms") == 86578.3);
  // The *_ts reproduce it: mean TTFT from the timestamps is 65456.574 ms (Python on the file).
  double sum = 0;
  for (const auto& q : r.requests) sum += q.ttft_s;
  CHECK(sum / 300 * 1e3 == Approx(65456.57426).margin(1e-4));

  // The same run from its folder or its vllm/ folder.
  CHECK(read_runs(folder)[0].requests.size() == 300);
  CHECK(read_runs(folder + "/vllm")[0].metrics.at("mean_ttft_ms") == 65456.6);
}

TEST_CASE("llmservingsim: RTX PRO 6000 runs take the GPU from config.json",
          "[measured][realdata]") {
  const auto qwen = read_runs(kLss + "/RTXPRO6000/Qwen3-32B");
  REQUIRE(qwen.size() == 1);
  CHECK(qwen[0].deployment.config["gpu"] == "rtx-pro-6000");
  CHECK(qwen[0].deployment.config["model"] == "qwen3-32b");
  CHECK(qwen[0].deployment.config["tensor_parallel_size"] == 2);
  CHECK_FALSE(qwen[0].deployment.config.contains("num_gpu_blocks_override"));
  CHECK_FALSE(qwen[0].deployment.config.contains("max_model_len"));  // null in engine_kwargs
  // README sanity: 36,905 ms / 80.3 ms / 90,408 ms.
  CHECK(qwen[0].metrics.at("mean_ttft_ms") == Approx(36905).margin(0.5));
  CHECK(qwen[0].metrics.at("mean_tpot_ms") == 80.3);
  CHECK(qwen[0].metrics.at("mean_e2el_ms") == Approx(90408).margin(0.5));
  const auto llama = read_runs(kLss + "/RTXPRO6000/Llama-3.1-8B");
  CHECK(llama[0].metrics.at("mean_ttft_ms") == Approx(7097).margin(0.5));
  CHECK(llama[0].metrics.at("mean_tpot_ms") == 32.5);
  CHECK(llama[0].deployment.config["max_num_seqs"] == 128);
}

TEST_CASE("guidellm: inference-sim CodeLlama-34B sweep (mbt 4096) from realdata",
          "[measured][realdata]") {
  const std::string path = kGuide + "/jan20-prefill-llama7b-tp1-1/guidellm_per_request_DERIVED.csv";
  const auto runs = read_measured(path, realdata_sidecars());
  REQUIRE(runs.size() == 5);
  CHECK(runs[0].id == path + "#0");
  CHECK(runs[0].label == "synchronous");
  CHECK(runs[0].max_concurrency == 1);
  CHECK_FALSE(runs[0].has_start_times);  // replayed as a closed loop
  CHECK(runs[0].requests.size() == 40);
  CHECK(runs[1].label == "throughput");
  CHECK(runs[1].requests.size() == 39);  // 1 errored row left out
  CHECK(runs[4].requests.size() == 38);  // 2 errored rows left out
  CHECK(runs[3].request_rate == 2.8967660047865498);
  CHECK(runs[3].arrival_process == "constant");
  CHECK(runs[3].has_start_times);
  // README: synchronous TTFT p50 ≈ 228 ms (228.467226 from the CSV), constant 2.90 req/s TTFT
  // median 251.17 ms from the CSV (guidellm's aggregate says 251.07: its own estimator).
  CHECK(runs[0].metrics.at("median_ttft_ms") == Approx(228.467226).margin(1e-5));
  CHECK(runs[3].metrics.at("median_ttft_ms") == Approx(251.174808).margin(1e-5));
  // The first synchronous row: prompt 2998, output 56, TPOT (guidellm's itl_ms) 26.019 ms.
  CHECK(runs[0].requests[0].input_tokens == 2998);
  CHECK(runs[0].requests[0].tpot_s == Approx(0.0260191874070601).margin(1e-15));
  CHECK(runs[0].shared_prefix_tokens == 1024);
  const json& c = runs[0].deployment.config;
  CHECK(c["model"] == "codellama-34b");
  CHECK(c["gpu"] == "h100-sxm");  // from the sidecar: the log does not name the GPU
  CHECK(c["max_num_batched_tokens"] == 4096);
  CHECK(c["max_num_seqs"] == 256);
  CHECK(c["max_model_len"] == 4096);
  CHECK(c["num_gpu_blocks_override"] == 2537);  // vllm.log: 40,592 KV tokens / 16
  CHECK(runs[0].deployment.engine_version == "0.11.0");
}

TEST_CASE("guidellm: the mbt-64 folder (README: sync TTFT p50 ≈ 931 ms, burst ≈ 18.6 s)",
          "[measured][realdata]") {
  const auto runs =
      read_runs(kGuide + "/jan20-codellama-prefill-1/guidellm_per_request_DERIVED.csv");
  REQUIRE(runs.size() == 5);
  CHECK(runs[0].metrics.at("median_ttft_ms") == Approx(931).margin(1));
  CHECK(runs[1].metrics.at("median_ttft_ms") == Approx(18600).margin(100));
  CHECK(runs[0].deployment.config["max_num_batched_tokens"] == 64);
  CHECK(runs[0].deployment.config["num_gpu_blocks_override"] == 2790);  // 44,640 / 16
}

TEST_CASE("sglang-bench: JSONL fixture, one run per line, bare Infinity", "[measured]") {
  const std::string path = kData + "/measured/sglang_bench_serving.jsonl";
  SidecarOptions o;
  o.overrides = {{"model", "llama-3.1-8b"}, {"gpu", "h100-sxm"}, {"tensor_parallel_size", 1}};
  const auto runs = read_measured(path, o);
  REQUIRE(runs.size() == 2);
  const MeasuredRun& a = runs[0];
  CHECK(a.id == path + "#1");
  CHECK(std::isinf(a.request_rate));
  CHECK(a.requests.size() == 3);
  CHECK(a.deployment.source.at("gpu") == "command line");
  CHECK(a.metrics.at("mean_ttft_ms") == 200.0);
  CHECK(a.metrics.at("mean_e2el_ms") == 270.0);  // from mean_e2e_latency_ms
  CHECK(a.metrics.at("p95_itl_ms") == 30.0);
  // Not in the file, from the arrays: TTFT [100, 200, 300] ms -> p90 = 200 + 0.8·100 = 280;
  // E2E = ttft + Σ itls = [160, 260, 390] ms -> p90 = 260 + 0.8·130 = 364.
  CHECK(a.metrics.at("p90_ttft_ms") == Approx(280).epsilon(1e-12));
  CHECK(a.metrics.at("p90_e2el_ms") == Approx(364).epsilon(1e-12));
  const MeasuredRun& b = runs[1];
  CHECK(b.request_rate == 4.0);
  CHECK(b.max_concurrency == 8);
  CHECK(b.requests.empty());
  CHECK(b.mean_input_tokens == 512.0);   // 51200 / 100
  CHECK(b.mean_output_tokens == 128.0);  // 12800 / 100
  CHECK(b.num_prompts == 100);
  CHECK(b.metrics.at("p99_e2el_ms") == 2500.9);
}

TEST_CASE("genai-perf: profile_export_genai_perf.json fixture", "[measured]") {
  const std::string path = kData + "/measured/profile_export_genai_perf.json";
  CHECK(detect_format(path) == "genai-perf");
  SidecarOptions o;
  o.overrides = {{"gpu", "h100-sxm"}, {"tensor_parallel_size", 1}};
  const auto runs = read_measured(path, o);
  REQUIRE(runs.size() == 1);
  const MeasuredRun& r = runs[0];
  CHECK(r.deployment.config["model"] == "llama-3.1-8b");  // Meta-Llama-3.1-8B-Instruct
  CHECK(r.max_concurrency == 16);
  CHECK(r.num_prompts == 200);
  CHECK(r.mean_input_tokens == 550.2);
  CHECK(r.mean_output_tokens == 128.0);
  CHECK(r.metrics.at("mean_ttft_ms") == 45.2);
  CHECK(r.metrics.at("median_ttft_ms") == 41.0);
  CHECK(r.metrics.at("p90_ttft_ms") == 70.3);
  CHECK(r.metrics.at("p99_ttft_ms") == 95.1);
  CHECK(r.metrics.at("mean_tpot_ms") == 11.9);  // genai-perf's inter_token_latency
  CHECK_FALSE(r.metrics.count("mean_itl_ms"));
  CHECK(r.metrics.at("p90_e2el_ms") == 1800.5);
  CHECK(r.metrics.at("request_throughput") == 9.8);
  CHECK(r.metrics.at("output_throughput") == 1254.4);
}

TEST_CASE("vllm-bench: the mean/median E2E swap of vLLM commit 8668d7c is undone", "[measured]") {
  const auto runs = read_runs(kData + "/measured/vllm_swapped_e2el.json");
  REQUIRE(runs.size() == 1);
  // E2E = ttft + Σ itls = [200, 300, 900] ms: mean 466.67, median 300; the file says the reverse.
  CHECK(runs[0].metrics.at("mean_e2el_ms") == Approx(466.6666666666667).epsilon(1e-12));
  CHECK(runs[0].metrics.at("median_e2el_ms") == 300.0);
  bool noted = false;
  for (const auto& n : runs[0].notes) noted |= n.find("8668d7c") != std::string::npos;
  CHECK(noted);
  CHECK(std::isinf(runs[0].request_rate));                // "inf" as a string
  CHECK_FALSE(runs[0].metrics.count("request_goodput"));  // "request_goodput:": null
}

TEST_CASE(
    "deployment: precedence file < sidecar beside the file < --sidecars < flags, missing "
    "facts fail with the file and the key",
    "[measured]") {
  const fs::path src = kData + "/measured/vllm_swapped_e2el.json";
  const fs::path copy = temp_dir() / "run_a.json";
  fs::copy_file(src, copy, fs::copy_options::overwrite_existing);
  fs::remove(copy.string() + ".servesim.json");

  // Model from the file; no GPU anywhere -> a clear error.
  const std::string msg = error_of([&] { read_measured(copy.string(), SidecarOptions{}); });
  CHECK(msg.find(copy.string()) != std::string::npos);
  CHECK(msg.find("'gpu'") != std::string::npos);
  CHECK(msg.find("--gpu") != std::string::npos);

  std::ofstream(copy.string() + ".servesim.json")
      << R"({"gpu": "a100-80gb", "tensor_parallel_size": 2, "engine_version": "0.6.0"})";
  auto runs = read_measured(copy.string(), SidecarOptions{});
  CHECK(runs[0].deployment.config["gpu"] == "a100-80gb");
  CHECK(runs[0].deployment.config["model"] == "llama-3.1-8b");
  CHECK(runs[0].deployment.engine_version == "0.6.0");

  const fs::path dir = temp_dir() / "sidecars";
  fs::create_directories(dir);
  std::ofstream(dir / "a.json") << R"({"match": "*/run_a.json", "gpu": "h100-sxm"})";
  std::ofstream(dir / "b.json") << R"({"match": "*/other.json", "gpu": "b200"})";
  SidecarOptions o;
  o.sidecar_dirs = {dir.string()};
  runs = read_measured(copy.string(), o);
  CHECK(runs[0].deployment.config["gpu"] == "h100-sxm");
  CHECK(runs[0].deployment.config["tensor_parallel_size"] == 2);
  o.overrides = {{"tensor_parallel_size", 4}};
  runs = read_measured(copy.string(), o);
  CHECK(runs[0].deployment.config["tensor_parallel_size"] == 4);
  CHECK(runs[0].deployment.source.at("tensor_parallel_size") == "command line");

  std::ofstream(dir / "c.json") << R"({"gpu": "h100-sxm"})";  // no "match"
  CHECK(error_of([&] { read_measured(copy.string(), o); }).find("'match'") != std::string::npos);
  fs::remove(dir / "c.json");
  fs::remove(copy.string() + ".servesim.json");
}

TEST_CASE("readers: each format's malformed file fails naming the file and what is wrong",
          "[measured]") {
  // vLLM: truncated JSON; itls of the wrong length.
  fs::path p = write_file("bad_vllm.json", R"({"ttfts": [0.1, 0.2], "input_lens": [1)");
  CHECK(error_of([&] { read_vllm_bench_json(p.string()); }).find("malformed JSON") !=
        std::string::npos);
  p = write_file(
      "bad_vllm2.json",
      R"({"completed": 2, "input_lens": [1, 2], "output_lens": [2, 2], "ttfts": [0.1, 0.1], "itls": [[0.1]]})");
  std::string m = error_of([&] { read_vllm_bench_json(p.string()); });
  CHECK(m.find(p.string()) != std::string::npos);
  CHECK(m.find("itls") != std::string::npos);
  p = write_file("bad_vllm3.json", R"({"completed": 1, "input_lens": [1], "output_lens": [2, 3]})");
  CHECK(error_of([&] { read_vllm_bench_json(p.string()); }).find("output_lens") !=
        std::string::npos);

  // SGLang: the second line is not a result.
  p = write_file("bad.jsonl", "{\"completed\": 1, \"mean_ttft_ms\": 1.0}\n[1, 2]\n");
  m = error_of([&] { read_sglang_jsonl(p.string()); });
  CHECK(m.find("bad.jsonl:2") != std::string::npos);

  // genai-perf: no input_sequence_length.
  p = write_file(
      "x_genai_perf.json",
      R"({"time_to_first_token": {"unit": "ms", "avg": 1}, "output_sequence_length": {"avg": 3}})");
  CHECK(error_of([&] { read_genai_perf_json(p.string()); }).find("input_sequence_length") !=
        std::string::npos);
  p = write_file("y_genai_perf.json",
                 R"({"time_to_first_token": {"unit": "fortnights", "avg": 1}})");
  CHECK(error_of([&] { read_genai_perf_json(p.string()); }).find("fortnights") !=
        std::string::npos);

  // LLMServingSim: a line without queued_ts.
  const fs::path ex = temp_dir() / "lss" / "vllm";
  fs::create_directories(ex);
  std::ofstream(ex / "requests.jsonl")
      << R"({"input_toks": 5, "output_toks": 2, "arrival_time": 1.0, "first_token_ts": 2.0, "last_token_ts": 3.0})"
      << "\n";
  m = error_of([&] { read_llmservingsim((ex / "requests.jsonl").string()); });
  CHECK(m.find("requests.jsonl:1") != std::string::npos);
  CHECK(m.find("queued_ts") != std::string::npos);

  // guidellm: missing column; a non-numeric cell.
  p = write_file("bad_guidellm.csv", "bench_idx,strategy\r\n0,synchronous\r\n");
  CHECK(error_of([&] { read_guidellm_csv(p.string()); }).find("missing column") !=
        std::string::npos);
  p = write_file("bad_guidellm2.csv",
                 "bench_idx,strategy,target_rate,status,request_start_time,request_end_time,"
                 "prompt_tokens,output_tokens,ttft_ms,itl_ms,tpot_ms,request_latency_s\r\n"
                 "0,synchronous,,successful,1.0,2.0,abc,3,1,1,1,1\r\n");
  m = error_of([&] { read_guidellm_csv(p.string()); });
  CHECK(m.find("bad_guidellm2.csv:2") != std::string::npos);
  CHECK(m.find("'abc'") != std::string::npos);

  // Unknown formats and missing files.
  p = write_file("what.json", R"({"hello": 1})");
  CHECK(error_of([&] { detect_format(p.string()); }).find("unknown result format") !=
        std::string::npos);
  CHECK(error_of([&] { detect_format("/nonexistent/x.json"); }).find("no such file") !=
        std::string::npos);
}

TEST_CASE("parse_python_json: bare Infinity/NaN outside strings only", "[measured]") {
  const json j =
      parse_python_json(R"({"a": Infinity, "b": -Infinity, "c": NaN, "d": "NaN Infinity"})", "t");
  CHECK(j["a"] == "inf");
  CHECK(j["b"] == "-inf");
  CHECK(j["c"].is_null());
  CHECK(j["d"] == "NaN Infinity");
}

// Model ids: models::catalog_name_for_id, the mapping --model uses (tests/unit/models/
// model_name_test.cpp).
TEST_CASE("catalog GPUs from the hardware strings files give", "[measured]") {
  CHECK(catalog_gpu_for("NVIDIA GeForce RTX 4090") == "rtx-4090");
  CHECK(catalog_gpu_for("Standard_ND96asr_v4 x 2") == "a100-40gb");
  CHECK(catalog_gpu_for("mystery accelerator") == "");
}

// Integer settings read as numbers (CSV cells, client flags, JSON numbers) used to be cast from
// double unchecked: 1e300 is undefined behaviour (UBSan: float-cast-overflow), and a huge
// concurrency drew 10 x CONC requests until memory ran out.
TEST_CASE("measured integer settings: beyond range, fractional or negative", "[measured][fuzz]") {
  const fs::path dir = fs::temp_directory_path() / ("servesim_ints_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string header =
      "model,gpu,precision,framework,tp,isl_osl_label,source_run_date,concurrency,"
      "mean_tpot_us,mean_ttft_us\n";
  struct Case {
    const char* row;
    const char* expected;
  };
  for (const Case& c :
       {Case{"llama-3.1-70b-instruct,h100,fp8,vllm,2,1k8k,2025-10-23,1e300,1,2\n",
             "concurrency: 1e+300 is invalid; expected an integer in [1, 214748364]"},
        Case{"llama-3.1-70b-instruct,h100,fp8,vllm,2,1k8k,2025-10-23,2.5,1,2\n",
             "concurrency: 2.5 is invalid"},
        Case{"llama-3.1-70b-instruct,h100,fp8,vllm,-1e30,1k8k,2025-10-23,4,1,2\n",
             "tp: -1e+30 is invalid; expected an integer in [1, 2147483647]"},
        Case{"llama-3.1-70b-instruct,h100,fp8,vllm,2,1k8k,2025-10-23,200000000,1,2\n",
             "concurrency: 2000000000 requests would need about"}}) {
    CAPTURE(c.row);
    const fs::path f = dir / "ix.csv";
    std::ofstream(f) << header << c.row;
    const std::string m = error_of([&] { read_inferencex_csv(f.string()); });
    CHECK(m.find("ix.csv:2: ") != std::string::npos);
    CHECK(m.find(c.expected) != std::string::npos);
  }
  // A vllm bench serve result whose max_concurrency is not an integer.
  const fs::path v = dir / "run.json";
  std::ofstream(v) << R"({"completed": 1, "mean_ttft_ms": 1, "max_concurrency": 1e300})";
  CHECK(error_of([&] { read_vllm_bench_json(v.string()); })
            .find("field 'max_concurrency': 1e+300 is invalid; expected an integer in [0, "
                  "2147483647]") != std::string::npos);
  // The llm-k8s .commands sidecar's client flags: --seed and --max-concurrency.
  std::ofstream(v) << R"({"completed": 1, "mean_ttft_ms": 1})";
  std::ofstream(dir / "run.commands")
      << R"({"client_command": "vllm bench serve --seed -3 --max-concurrency 8", "gpu_type": "A100"})";
  CHECK(error_of([&] { read_vllm_bench_json(v.string()); }).find("--seed: -3 is invalid") !=
        std::string::npos);
  std::ofstream(dir / "run.commands")
      << R"({"client_command": "vllm bench serve --max-concurrency 1e19", "gpu_type": "A100"})";
  CHECK(error_of([&] {
          read_vllm_bench_json(v.string());
        }).find("--max-concurrency: 1e+19 is invalid") != std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace servesim::measured

namespace servesim::measured {
namespace {

TEST_CASE("inferencex: the summary CSV gives 85 closed-loop runs with the recipe's client",
          "[measured][realdata]") {
  // README: 85 rows; H100 TP8 8k1k at concurrency 4: mean TPOT 10.2 ms, mean TTFT 301 ms (rounded
  // to 0.1 ms / 1 ms, so half a unit of tolerance); 10×CONC prompts at max concurrency CONC.
  const std::string file = kReal + "/inferencex_subset/inferencex_vllm_h100_h200_DERIVED.csv";
  REQUIRE(detect_format(file) == "inferencex");
  const std::vector<MeasuredRun> runs = read_measured(file, realdata_sidecars());
  REQUIRE(runs.size() == 85);
  const MeasuredRun* h100_tp8 = nullptr;
  for (const MeasuredRun& r : runs) {
    INFO(r.id << " " << r.label);
    REQUIRE(r.format == "inferencex");
    REQUIRE(std::isinf(r.request_rate));
    REQUIRE(!r.has_start_times);
    REQUIRE(r.num_prompts == 10 * r.max_concurrency);
    REQUIRE(r.requests.size() == static_cast<size_t>(r.num_prompts));
    // FP8 Llama; gpt-oss ("fp4") is its MXFP4 checkpoint.
    REQUIRE(r.deployment.config["quantization"] ==
            (r.label.rfind("gpt-oss", 0) == 0 ? "mxfp4" : "fp8"));
    REQUIRE(r.deployment.config["max_num_batched_tokens"] == 8192);
    REQUIRE(r.deployment.config["enable_prefix_caching"] == false);
    REQUIRE(r.metrics.count("mean_tpot_ms") == 1);
    REQUIRE(r.metrics.count("mean_ttft_ms") == 1);
    REQUIRE(r.metrics.count("p99_ttft_ms") == 0);  // summary only
    // The older client's range rule: every length in [int(0.8·L), L].
    const int in_l = r.label.find(" 8k") != std::string::npos ? 8192 : 1024;
    for (const MeasuredRequest& q : r.requests) {
      REQUIRE(q.input_tokens >= static_cast<int>(0.8 * in_l));
      REQUIRE(q.input_tokens <= in_l);
    }
    if (r.label == "llama-3.1-70b-instruct fp8 h100 TP8 8k1k conc 4") h100_tp8 = &r;
  }
  REQUIRE(h100_tp8 != nullptr);
  CHECK(h100_tp8->deployment.config["model"] == "llama-3.1-70b-fp8");
  CHECK(h100_tp8->deployment.config["gpu"] == "h100-sxm");
  CHECK(h100_tp8->deployment.config["tensor_parallel_size"] == 8);
  CHECK(h100_tp8->max_concurrency == 4);
  CHECK(h100_tp8->metrics.at("mean_tpot_ms") == Approx(10.2).margin(0.05));
  CHECK(h100_tp8->metrics.at("mean_ttft_ms") == Approx(301).margin(0.5));
  // gpt-oss rows name the catalog model; the same read twice draws the same lengths.
  CHECK(runs.back().deployment.config["model"] == "gpt-oss-120b");
  const std::vector<MeasuredRun> again = read_measured(file, realdata_sidecars());
  CHECK(again[7].requests[13].input_tokens == runs[7].requests[13].input_tokens);
  CHECK(again[7].requests[13].output_tokens == runs[7].requests[13].output_tokens);
}

TEST_CASE("inferencex: a malformed row names the file, line and field", "[measured]") {
  const fs::path dir = fs::temp_directory_path() / ("servesim_ix_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path f = dir / "ix.csv";
  std::ofstream(f) << "model,gpu,precision,framework,tp,isl_osl_label,source_run_date,concurrency,"
                      "mean_tpot_us,mean_ttft_us\n"
                      "llama-3.1-70b-instruct,h100,fp8,vllm,2,2k8k,2025-10-23,4,1,2\n";
  try {
    read_runs(f.string());
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("ix.csv:2") != std::string::npos);
    CHECK(std::string(e.what()).find("isl_osl_label") != std::string::npos);
  }
  // A column named twice (the last "tp" at position 10): a row of 10 cells lacks it (found by
  // fuzz_measured: a read past the row's end).
  std::ofstream(f) << "model,gpu,precision,framework,tp,isl_osl_label,source_run_date,concurrency,"
                      "mean_tpot_us,mean_ttft_us,tp\n"
                      "llama-3.1-70b-instruct,h100,fp8,vllm,2,1k8k,2025-10-23,4,1,2\n";
  CHECK_THROWS_WITH(read_runs(f.string()), Catch::Contains("ix.csv:2: 10 cells; expected 11"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace servesim::measured
