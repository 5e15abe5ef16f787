// Datasets and trace replay through the command line: a result file replayed as a trace gives
// the same latencies; bad trace rows exit 2 naming file and line with nothing written; matrix.
#include <catch2/catch.hpp>
#include "tests/test_paths.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/app/cli.h"
#include "tests/contract/cli_outcome.h"

namespace servesim::app {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using testing::Outcome;
using testing::run;
fs::path temp_dir() {
  fs::path d = fs::temp_directory_path() / ("servesim_trace_cli_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}
json read(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

TEST_CASE("a --save-detailed result replayed as a vllm-result trace gives the same latencies",
          "[cli][trace]") {
  // In details: a Poisson run of 150 requests is saved with its start_times; replaying that file
  // (--dataset-name trace --trace-format vllm-result) sends the same lengths at the same times
  // shifted so that the first request is at 0. The engine is idle before the first arrival, so a
  // shift changes no latency. Expectations: identical input/output lengths, start times shifted
  // by the first one (to 1 ns), and identical TTFT and E2E arrays.
  const fs::path dir = temp_dir();
  const std::vector<std::string> common = {"--model",   "llama-3.1-8b",    "--gpu",
                                           "h100-sxm",  "--save-detailed", "--result-dir",
                                           dir.string()};
  std::vector<std::string> a = {"simulate", "--num-prompts",       "150",   "--request-rate",
                                "12",       "--random-input-len",  "700",   "--random-range-ratio",
                                "0.5",      "--random-output-len", "90",    "--seed",
                                "4",        "--result-filename",   "a.json"};
  a.insert(a.end(), common.begin(), common.end());
  REQUIRE(run(a).code == 0);
  std::vector<std::string> b = {"simulate",
                                "--dataset-name",
                                "trace",
                                "--trace-format",
                                "vllm-result",
                                "--trace",
                                (dir / "a.json").string(),
                                "--result-filename",
                                "b.json"};
  b.insert(b.end(), common.begin(), common.end());
  const Outcome ob = run(b);
  INFO(ob.err);
  REQUIRE(ob.code == 0);
  const json ja = read(dir / "a.json"), jb = read(dir / "b.json");
  CHECK(ja["input_lens"] == jb["input_lens"]);
  CHECK(ja["output_lens"] == jb["output_lens"]);
  const double t0 = ja["start_times"][0].get<double>();
  for (size_t i = 0; i < ja["start_times"].size(); ++i) {
    CHECK(jb["start_times"][i].get<double>() ==
          Approx(ja["start_times"][i].get<double>() - t0).margin(2e-9));
  }
  CHECK(ja["ttfts"] == jb["ttfts"]);
  CHECK(ja["latencies"] == jb["latencies"]);
  fs::remove_all(dir);
}

TEST_CASE("a bad trace row exits 2 naming file and line, and writes nothing", "[cli][trace]") {
  const fs::path dir = temp_dir();
  const fs::path trace = dir / "t.csv";
  std::ofstream(trace) << "arrival_s,prompt_tokens,output_tokens\n0,100,10\n0.5,100,x\n";
  const Outcome o = run({"simulate", "--dataset-name", "trace", "--trace-format", "csv", "--trace",
                         trace.string(), "--save-result", "--result-dir", dir.string(),
                         "--result-filename", "r.json"});
  CHECK(o.code == 2);
  CHECK(o.err.find(trace.string() + ":3: column 'output_tokens' has value 'x'") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(dir / "r.json"));
  fs::remove_all(dir);
}

TEST_CASE("trace replay is deterministic: same command, byte-identical file", "[cli][trace]") {
  const fs::path dir = temp_dir();
  const std::string trace =
      std::string(SERVESIM_REALDATA_DIR) + "/mooncake_traces/conversation_trace.jsonl";
  auto go = [&](const std::string& name) {
    return run({"simulate",
                "--dataset-name",
                "trace",
                "--trace-format",
                "mooncake",
                "--trace",
                trace,
                "--trace-duration",
                "60",
                "--request-rate",
                "2",
                "--num-replicas",
                "2",
                "--router",
                "prefix-aware",
                "--save-result",
                "--result-dir",
                dir.string(),
                "--result-filename",
                name});
  };
  REQUIRE(go("x.json").code == 0);
  REQUIRE(go("y.json").code == 0);
  std::ifstream x(dir / "x.json"), y(dir / "y.json");
  std::stringstream sx, sy;
  sx << x.rdbuf();
  sy << y.rdbuf();
  CHECK(sx.str() == sy.str());
  const json j = json::parse(sx.str());
  CHECK(j["servesim"]["prefix_cache"]["hit_tokens"].get<int64_t>() > 0);
  CHECK(j["servesim"]["config"]["trace_format"] == "mooncake");
  fs::remove_all(dir);
}

TEST_CASE("simulate prints and records the mean lengths it sent, and sharegpt is vLLM's first turn",
          "[cli][datasets]") {
  // `--dataset-name sharegpt --num-prompts 1000` without a path: vLLM's ShareGPT first turns,
  // ~215 in / ~200 out per request in public `vllm bench serve` runs (213 / 213 in the shipped
  // set). The table's line and the result file's servesim.sent agree, and with every request
  // completed they equal vLLM's total_input_tokens / completed and total_output_tokens / completed.
  const fs::path dir = temp_dir();
  const Outcome o =
      run({"simulate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--dataset-name", "sharegpt",
           "--num-prompts", "1000", "--request-rate", "20", "--save-result", "--result-dir",
           dir.string(), "--result-filename", "s.json"});
  INFO(o.err);
  REQUIRE(o.code == 0);
  const json j = read(dir / "s.json");
  const json& sent = j["servesim"]["sent"];
  REQUIRE(sent["requests"] == 1000);
  REQUIRE(j["completed"] == 1000);
  const double in = sent["mean_input_tokens"].get<double>();
  const double out = sent["mean_output_tokens"].get<double>();
  CHECK(in >= 190.0);
  CHECK(in <= 240.0);
  CHECK(out >= 170.0);
  CHECK(out <= 230.0);
  CHECK(in == Approx(j["total_input_tokens"].get<double>() / 1000.0));
  CHECK(out == Approx(j["total_output_tokens"].get<double>() / 1000.0));
  char line[64];
  std::snprintf(line, sizeof line, "%.1f / %.1f", in, out);
  CHECK(o.out.find("Mean input / output tokens sent:") != std::string::npos);
  CHECK(o.out.find(line) != std::string::npos);
  CHECK(j["servesim"]["config"]["dataset_file"] ==
        "data/sharegpt_first_turn/sharegpt_first_turn_llama3.csv");

  // The multi-turn set stays reachable by its own name, and its lengths show in the file.
  REQUIRE(run({"simulate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--dataset-name",
               "sharegpt-multiturn", "--num-prompts", "1000", "--request-rate", "20",
               "--save-result", "--result-dir", dir.string(), "--result-filename", "m.json"})
              .code == 0);
  const json m = read(dir / "m.json");
  CHECK(m["servesim"]["sent"]["mean_input_tokens"].get<double>() > 300.0);
  CHECK(m["servesim"]["config"]["dataset_file"] ==
        "data/realdata/sharegpt_lengths/sharegpt_8k_filtered_stats_llama2_tokenizer.csv");
  fs::remove_all(dir);
}

TEST_CASE("simulate on the chat endpoint sends every prompt plus the chat template's tokens",
          "[cli][datasets][chat]") {
  // Random 100/16 with range ratio 0: every prompt is 100 tokens as the client counts it; on
  // /v1/chat/completions Qwen3's template adds 8 (models/chat_template_tokens.h), so the server
  // prefills exactly 108 per request. The completions endpoint, given or not, is the same run.
  const fs::path dir = temp_dir();
  auto go = [&](const std::vector<std::string>& extra, const char* name) {
    std::vector<std::string> a = {"simulate",
                                  "--model",
                                  "qwen3-14b",
                                  "--gpu",
                                  "h100-sxm",
                                  "--num-prompts",
                                  "200",
                                  "--request-rate",
                                  "10",
                                  "--random-input-len",
                                  "100",
                                  "--random-output-len",
                                  "16",
                                  "--save-result",
                                  "--result-dir",
                                  dir.string(),
                                  "--result-filename",
                                  name};
    a.insert(a.end(), extra.begin(), extra.end());
    return run(a);
  };
  const Outcome c = go({"--endpoint", "/v1/chat/completions"}, "chat.json");
  INFO(c.err);
  REQUIRE(c.code == 0);
  const json j = read(dir / "chat.json");
  CHECK(j["servesim"]["sent"]["mean_input_tokens"].get<double>() == 108.0);
  CHECK(j["servesim"]["sent"]["chat_template_tokens"] == 8);
  CHECK(j["servesim"]["config"]["endpoint"] == "/v1/chat/completions");
  CHECK(c.out.find("Chat template tokens per prompt:") != std::string::npos);
  CHECK(c.out.find("108.0 / 16.0") != std::string::npos);

  REQUIRE(go({}, "plain.json").code == 0);
  REQUIRE(go({"--endpoint", "/v1/completions"}, "completions.json").code == 0);
  const json p = read(dir / "plain.json");
  CHECK(p["servesim"]["sent"]["mean_input_tokens"].get<double>() == 100.0);
  CHECK_FALSE(p["servesim"]["sent"].contains("chat_template_tokens"));
  CHECK_FALSE(p["servesim"]["config"].contains("endpoint"));
  CHECK(p == read(dir / "completions.json"));
  // Longer prompts cost prefill time: the chat run's mean TTFT is not below the plain one's.
  CHECK(j["mean_ttft_ms"].get<double>() >= p["mean_ttft_ms"].get<double>());
  fs::remove_all(dir);
}

TEST_CASE("matrix prints one row per standard workload", "[cli][matrix]") {
  const Outcome o =
      run({"matrix", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--num-prompts", "40"});
  INFO(o.err);
  REQUIRE(o.code == 0);
  for (const char* row : {"short chat", "long prefill", "long decode", "saturating mix",
                          "warm shared prefix", "production replay"}) {
    CHECK(o.out.find(row) != std::string::npos);
  }
  // One basis for every row: the H100 profile outside its domain (another model, the 0.19 line).
  CHECK(o.out.find("Prediction basis: transferred — hardware/calibration/h100-sxm.json fitted on "
                   "this GPU, but outside its domain: model llama-3.1-8b") != std::string::npos);
  // And how far to trust it: the transferred band and the independent runs' medians.
  CHECK(o.out.find("  expected error (median |error|): ±12% TTFT, ±4.4% TPOT, ±15% E2E "
                   "(transferred, docs/validation.md §6, median over the 16 serving groups); on "
                   "independent public runs: 40% TTFT, 29% TPOT, 33% duration") !=
        std::string::npos);
}

TEST_CASE("matrix: each row's prediction basis, in the table and the JSON", "[cli][matrix]") {
  // The vLLM 0.11 async H200 profile was fitted on closed-loop runs only: every matrix row (open
  // loop or a burst) lies outside it, each for its own load.
  namespace fs = std::filesystem;
  const fs::path out =
      fs::temp_directory_path() / ("servesim_matrix_basis_" + std::to_string(::getpid()) + ".json");
  const Outcome o =
      run({"matrix", "--model", "llama-3.1-70b-fp8", "--quantization", "fp8", "--gpu", "h200",
           "-tp", "2", "--vllm-version", "0.11", "--async-scheduling", "--max-model-len", "16384",
           "--num-prompts", "40", "--output", out.string()});
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(o.out.find("Prediction basis of saturating mix: transferred — "
                   "hardware/calibration/vllm-0.11-async/h200.json fitted on this GPU, but "
                   "outside its domain: all requests at once (fitted on closed-loop runs only)") !=
        std::string::npos);
  std::ifstream in(out);
  const json j = json::parse(in);
  CHECK(j["deployment"]["calibration"] == "hardware/calibration/vllm-0.11-async/h200.json");
  CHECK(j["deployment"]["kernel_source"] == "measured (hardware/kernels/h200.json)");
  REQUIRE(j["rows"].size() == 6);
  for (const json& row : j["rows"]) {
    CHECK(row["prediction_basis"] == "transferred");
    CHECK(row["prediction_basis_reason"].get<std::string>().find("closed-loop runs only") !=
          std::string::npos);
  }
  fs::remove(out);
}

}  // namespace
}  // namespace servesim::app
