// `servesim plan` through the command line (sim/app/cmd_plan.cpp).
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

struct CliRun {
  int code;
  std::string out, err;
};

CliRun run(std::vector<std::string> args) {
  std::ostringstream out, err;
  const int code = run_cli(args, out, err);
  return {code, out.str(), err.str()};
}

// A small plan: Llama-3.1-8B, short requests, two TP sizes and one that does not fit.
std::vector<std::string> small_plan() {
  return {"plan",          "--model",       "llama-3.1-8b", "--target-qps",
          "30",            "--slo",         "p99_ttft_ms<=400", "--slo",
          "p99_tpot_ms<=40", "--gpu",       "h100-sxm,l40s", "--tensor-parallel-size",
          "1,2",           "--num-prompts", "300",          "--random-input-len",
          "256",           "--random-output-len", "32",     "--seeds",
          "2"};
}

TEST_CASE("servesim plan prints a ranked table ending with one answer line and writes JSON and CSV",
          "[planning][plan][cli]") {
  const fs::path dir = fs::temp_directory_path() / ("servesim_plan_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::vector<std::string> args = small_plan();
  args.insert(args.end(), {"--gpu-price", "l40s=0.5", "--output", (dir / "plan.json").string(),
                           "--headroom", "0.1"});
  const CliRun r = run(args);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  // The answer is the last line of the table (before the "written to" line).
  std::istringstream lines(r.out);
  std::string line, answer;
  while (std::getline(lines, line)) {
    if (line.rfind("Answer: ", 0) == 0) answer = line;
  }
  REQUIRE(answer.find("meets p99_ttft_ms<=400, p99_tpot_ms<=40 at 30 req/s (+10% headroom)") !=
          std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(dir / "plan.json"));
  REQUIRE(j["answer"] == answer);
  REQUIRE(j["candidates"].size() == 4);
  REQUIRE(j["servesim_plan"]["verify_qps"].get<double>() == Approx(33));
  const auto& best = j["candidates"][0];
  REQUIRE(best["status"] == "ok");
  REQUIRE(best["total_gpus"].get<int>() ==
          best["replicas"].get<int>() * best["tensor_parallel_size"].get<int>());
  for (const auto& c : j["candidates"]) {
    if (c["gpu"] == "l40s") REQUIRE(c["price_per_gpu_hour_usd"] == 0.5);
  }
  std::ifstream csv(dir / "plan.csv");
  std::string header;
  std::getline(csv, header);
  REQUIRE(header.rfind("rank,label,gpu,tensor_parallel_size", 0) == 0);
  int rows = 0;
  while (std::getline(csv, line)) ++rows;
  REQUIRE(rows == 4);
  fs::remove_all(dir);
}

TEST_CASE("servesim plan rejects bad input with one line and exit code 2", "[planning][plan][cli]") {
  auto with = [](std::vector<std::string> extra) {
    std::vector<std::string> a = small_plan();
    a.insert(a.end(), extra.begin(), extra.end());
    return run(a);
  };
  auto expect = [](const CliRun& r, const std::string& text) {
    INFO(r.err);
    REQUIRE(r.code == 2);
    REQUIRE(r.err.find(text) != std::string::npos);
  };
  expect(with({"--slo", "p99_ttft<=5"}), "--slo: 'p99_ttft<=5' names an unknown metric");
  expect(with({"--gpu-price", "a100-80gb=1"}), "--gpu-price: 'a100-80gb' is not a candidate GPU");
  expect(with({"--gpu-price", "h100-sxm"}), "--gpu-price: 'h100-sxm' is invalid");
  expect(with({"--tensor-parallel-size", "0"}), "--tensor-parallel-size: '0' is invalid");
  expect(with({"--vary", "gpu=h200"}), "plan takes candidate GPUs from --gpu");
  expect(with({"--request-rate", "5"}), "request-rate");
  expect(run({"plan", "--slo", "p99_ttft_ms<=5"}), "--target-qps");
}

TEST_CASE("servesim plan exits 3 when no candidate meets the SLOs", "[planning][plan][cli]") {
  const CliRun r = run({"plan", "--target-qps", "5", "--slo", "p99_tpot_ms<=1", "--num-prompts",
                        "100", "--random-input-len", "128", "--random-output-len", "16",
                        "--seeds", "1"});
  INFO(r.out << r.err);
  REQUIRE(r.code == 3);
  REQUIRE(r.out.find("Answer: no candidate meets p99_tpot_ms<=1 at 5 req/s") != std::string::npos);
  REQUIRE(r.out.find("cannot meet the SLOs at any load") != std::string::npos);
}

// The case: without -tp only TP 1 was tried, and Llama-3.1-70B does not fit there.
TEST_CASE("servesim plan without -tp tries every TP that divides the heads and answers for a 70B",
          "[planning][plan][cli]") {
  const CliRun r = run({"plan", "--model", "llama-3.1-70b", "--target-qps", "20", "--slo",
                        "p99_ttft_ms<=1000", "--num-prompts", "300", "--seeds", "1",
                        "--random-input-len", "512", "--random-output-len", "64"});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  REQUIRE(r.out.find("TP sizes tried: 1, 2, 4, 8 (those of 1, 2, 4, 8 that divide the model's 64 "
                     "attention heads") != std::string::npos);
  REQUIRE(r.out.find("h100-sxm TP1: skipped") != std::string::npos);  // 131 GiB of weights
  REQUIRE(r.out.find("Answer: 4 × h100-sxm (1 replica × TP4)") != std::string::npos);
  // An explicit list is kept as given, and a model's heads bound the default list.
  const CliRun tp8 = run({"plan", "--model", "llama-3.1-70b", "-tp", "8", "--target-qps", "20",
                          "--slo", "p99_ttft_ms<=1000", "--num-prompts", "300", "--seeds", "1",
                          "--random-input-len", "512", "--random-output-len", "64"});
  REQUIRE(tp8.code == 0);
  REQUIRE(tp8.out.find("TP sizes tried") == std::string::npos);
  REQUIRE(tp8.out.find("h100-sxm TP4") == std::string::npos);
}

TEST_CASE("servesim plan writes the answer's vllm serve and vllm bench serve commands, which "
          "simulate reads back", "[planning][plan][cli]") {
  const fs::path dir = fs::temp_directory_path() / ("servesim_plan_vllm_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::vector<std::string> args = {
      "plan", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--tensor-parallel-size", "1,2",
      "--target-qps", "30", "--slo", "p99_ttft_ms<=400", "--slo", "p99_tpot_ms<=40",
      "--num-prompts", "300", "--random-input-len", "256", "--random-output-len", "32",
      "--seeds", "2", "--max-model-len", "4096", "--kv-cache-dtype", "fp8", "--output",
      (dir / "plan.json").string()};
  const CliRun r = run(args);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(dir / "plan.json"));
  const nlohmann::json& v = j["vllm_commands"];
  const nlohmann::json& best = j["candidates"][0];
  const std::string serve = v["serve"], bench = v["bench"];
  // One replica of the answer, with the engine limits servesim resolved (H100: vLLM 0.19's).
  REQUIRE(serve == "vllm serve llama-3.1-8b --tensor-parallel-size " +
                       std::to_string(best["tensor_parallel_size"].get<int>()) +
                       " --kv-cache-dtype fp8 --max-model-len 4096 --max-num-seqs 1024 "
                       "--max-num-batched-tokens 8192 --gpu-memory-utilization 0.9");
  REQUIRE(v["replicas"] == best["replicas"]);
  REQUIRE(bench == "vllm bench serve --backend vllm --model llama-3.1-8b --dataset-name random "
                   "--random-input-len 256 --random-output-len 32 --ignore-eos --num-prompts " +
                       std::to_string(best["cluster_prompts"].get<int64_t>()) +
                       " --request-rate 30 --seed 0 --percentile-metrics ttft,tpot,itl,e2el "
                       "--metric-percentiles 50,99 --goodput tpot:40 ttft:400 --save-result");
  REQUIRE(r.out.find("vLLM commands for the answer. One replica") != std::string::npos);
  REQUIRE(r.out.find("\n  " + serve + "\n") != std::string::npos);
  REQUIRE(r.out.find("\n  " + bench + "\n") != std::string::npos);
  // The two lines pasted back into simulate run the answer's replica at the whole target rate;
  // only the flags that change nothing simulated are set aside.
  std::ostringstream out, err;
  const int code = run_cli({"simulate", "--vllm-serve-cmd", serve, "--vllm-bench-cmd", bench,
                            "--gpu", best["gpu"].get<std::string>(), "--result-filename",
                            (dir / "check.json").string()},
                           out, err);
  INFO(err.str());
  REQUIRE(code == 0);
  REQUIRE(err.str().rfind("servesim: ignored (no effect on the simulation): --backend vllm, "
                          "--ignore-eos\n", 0) == 0);
  const nlohmann::json check = nlohmann::json::parse(std::ifstream(dir / "check.json"));
  REQUIRE(check["request_rate"] == 30);
  REQUIRE(check["servesim"]["config"]["max_num_seqs"] == 1024);
  REQUIRE(check["servesim"]["config"]["kv_cache_dtype"] == "fp8");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace servesim::app
