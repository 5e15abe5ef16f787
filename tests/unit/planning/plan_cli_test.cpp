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
  return {"plan",
          "--model",
          "llama-3.1-8b",
          "--target-qps",
          "30",
          "--slo",
          "p99_ttft_ms<=400",
          "--slo",
          "p99_tpot_ms<=40",
          "--gpu",
          "h100-sxm,l40s",
          "--tensor-parallel-size",
          "1,2",
          "--num-prompts",
          "300",
          "--random-input-len",
          "256",
          "--random-output-len",
          "32",
          "--seeds",
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
  REQUIRE(answer.find("meets p99_ttft_ms<=400, p99_tpot_ms<=40 at 30 req/s with 10% headroom "
                      "(verified at 33 req/s)") != std::string::npos);
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

TEST_CASE("servesim plan rejects bad input with one line and exit code 2",
          "[planning][plan][cli]") {
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
  const CliRun r =
      run({"plan", "--target-qps", "5", "--slo", "p99_tpot_ms<=1", "--num-prompts", "100",
           "--random-input-len", "128", "--random-output-len", "16", "--seeds", "1"});
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

TEST_CASE(
    "servesim plan writes the answer's vllm serve and vllm bench serve commands, which "
    "simulate reads back",
    "[planning][plan][cli]") {
  const fs::path dir =
      fs::temp_directory_path() / ("servesim_plan_vllm_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::vector<std::string> args = {"plan",
                                         "--model",
                                         "llama-3.1-8b",
                                         "--gpu",
                                         "h100-sxm",
                                         "--tensor-parallel-size",
                                         "1,2",
                                         "--target-qps",
                                         "30",
                                         "--slo",
                                         "p99_ttft_ms<=400",
                                         "--slo",
                                         "p99_tpot_ms<=40",
                                         "--num-prompts",
                                         "300",
                                         "--random-input-len",
                                         "256",
                                         "--random-output-len",
                                         "32",
                                         "--seeds",
                                         "2",
                                         "--max-model-len",
                                         "4096",
                                         "--kv-cache-dtype",
                                         "fp8",
                                         "--output",
                                         (dir / "plan.json").string()};
  const CliRun r = run(args);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(dir / "plan.json"));
  const nlohmann::json& v = j["vllm_commands"];
  const nlohmann::json& best = j["candidates"][0];
  const std::string serve = v["serve"], bench = v["bench"];
  // One replica of the answer, with the engine limits servesim resolved (H100: vLLM 0.19's); the
  // catalog's llama-3.1-8b as the Hugging Face id vLLM downloads (the entry's first recorded id).
  REQUIRE(serve == "vllm serve meta-llama/Llama-3.1-8B --tensor-parallel-size " +
                       std::to_string(best["tensor_parallel_size"].get<int>()) +
                       " --kv-cache-dtype fp8 --max-model-len 4096 --max-num-seqs 1024 "
                       "--max-num-batched-tokens 8192 --gpu-memory-utilization 0.9");
  REQUIRE(v["replicas"] == best["replicas"]);
  REQUIRE(bench ==
          "vllm bench serve --backend vllm --model meta-llama/Llama-3.1-8B --dataset-name random "
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
  const int code =
      run_cli({"simulate", "--vllm-serve-cmd", serve, "--vllm-bench-cmd", bench, "--gpu",
               best["gpu"].get<std::string>(), "--result-filename", (dir / "check.json").string()},
              out, err);
  INFO(err.str());
  REQUIRE(code == 0);
  REQUIRE(err.str().rfind("servesim: ignored (no effect on the simulation): --backend vllm, "
                          "--ignore-eos\n",
                          0) == 0);
  const nlohmann::json check = nlohmann::json::parse(std::ifstream(dir / "check.json"));
  REQUIRE(check["request_rate"] == 30);
  REQUIRE(check["servesim"]["config"]["max_num_seqs"] == 1024);
  REQUIRE(check["servesim"]["config"]["kv_cache_dtype"] == "fp8");
  fs::remove_all(dir);
}

TEST_CASE(
    "servesim plan verifies at 25% headroom unless told, reports every P99 at the answer, "
    "and its throughputs over the arrival window",
    "[planning][plan][cli]") {
  const fs::path dir = fs::temp_directory_path() / ("servesim_plan_hr_" + std::to_string(getpid()));
  fs::create_directories(dir);
  // Lenient SLOs (every request is good), fixed lengths: 256 in, exactly 32 out (ignore_eos,
  // range ratio 0).
  const CliRun r = run({"plan",
                        "--model",
                        "llama-3.1-8b",
                        "--tensor-parallel-size",
                        "1",
                        "--target-qps",
                        "30",
                        "--slo",
                        "p99_ttft_ms<=10000",
                        "--num-prompts",
                        "300",
                        "--random-input-len",
                        "256",
                        "--random-output-len",
                        "32",
                        "--random-range-ratio",
                        "0",
                        "--seeds",
                        "2",
                        "--output",
                        (dir / "plan.json").string()});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(dir / "plan.json"));
  REQUIRE(j["servesim_plan"]["headroom"] == 0.25);
  REQUIRE(j["servesim_plan"]["verify_qps"].get<double>() == Approx(37.5).epsilon(1e-12));
  REQUIRE(j["answer"].get<std::string>().find(
              "at 30 req/s with 25% headroom (verified at 37.5 req/s)") != std::string::npos);
  REQUIRE(r.out.find("Plan: 30 req/s (+25% headroom: clusters verified at 37.5 req/s)") !=
          std::string::npos);
  const auto& best = j["candidates"][0];
  // Headroom h puts each replica at the target at most 1/(1 + h) = 80% of its saturation rate:
  // the verified count is >= the stability bound at 1.25 × target.
  const double per_replica = 30.0 / best["replicas"].get<double>();
  REQUIRE(per_replica <= 0.8 * best["saturation_qps_per_replica"].get<double>());
  // The band of the answer's basis is on the answer and in the file.
  REQUIRE(j["answer_band"]["basis"] == best["prediction_basis"]);
  REQUIRE(j["answer"].get<std::string>().find("; band ±") != std::string::npos);
  // Every P99 at the answer, the unnamed ones said to be so, just below the answer.
  const std::string lat = j["answer_latencies"].get<std::string>();
  REQUIRE(lat.rfind("At the answer, 30 req/s (mean over 2 seeds): TTFT p50/p99 ", 0) == 0);
  REQUIRE(lat.find("(no SLO on P99 TPOT, P99 E2E)") != std::string::npos);
  REQUIRE(r.out.find(j["answer"].get<std::string>() + "\n" + lat + "\n") != std::string::npos);
  // Over the arrival window N / λ: output tok/s = λ · 32 exactly, goodput = λ (all good), and
  // the cost views follow; the run's own rate, drain tail included, is lower.
  const double gpus = best["total_gpus"].get<double>();
  REQUIRE(best["output_tokens_per_s_per_gpu"].get<double>() ==
          Approx(30.0 * 32 / gpus).epsilon(1e-12));
  REQUIRE(best["goodput_rps"].get<double>() == Approx(30).epsilon(1e-12));
  REQUIRE(
      best["usd_per_million_output_tokens"].get<double>() ==
      Approx(best["cost_per_hour_usd"].get<double>() / (30.0 * 32 * 3600) * 1e6).epsilon(1e-12));
  REQUIRE(best["at_target"]["output_throughput"]["mean"].get<double>() < 30.0 * 32);
  REQUIRE(best["at_target"]["request_goodput"]["mean"].get<double>() < 30);
  // --headroom 0 is still stated.
  const CliRun none =
      run({"plan", "--model", "llama-3.1-8b", "--tensor-parallel-size", "1", "--target-qps", "30",
           "--slo", "p99_ttft_ms<=10000", "--num-prompts", "300", "--random-input-len", "256",
           "--random-output-len", "32", "--seeds", "1", "--headroom", "0"});
  REQUIRE(none.code == 0);
  REQUIRE(none.out.find("at 30 req/s with no headroom (--headroom 0)") != std::string::npos);
  fs::remove_all(dir);
}

// H100 (transferred: the shipped profile, outside its domain) against H200 (datasheet-only: no
// serving profile, measured kernel tables), one GPU each, both bound by saturation (combined
// band sqrt(0.152² + 0.044²) = 15.8%). At $2.80 the H200 is 5.4% cheaper than the H100's $2.95:
// a tie, and the better-founded H100 is the answer. At $2 it is 47.5% cheaper, more than the
// band, and stays the answer.
TEST_CASE("servesim plan prefers the better-founded of two GPUs that tie within the band",
          "[planning][plan][cli]") {
  auto plan_with_h200_price = [](const std::string& price) {
    return run({"plan",
                "--model",
                "llama-3.1-8b",
                "--gpu",
                "h100-sxm,h200",
                "--tensor-parallel-size",
                "1",
                "--target-qps",
                "30",
                "--slo",
                "p99_ttft_ms<=400",
                "--num-prompts",
                "300",
                "--random-input-len",
                "256",
                "--random-output-len",
                "32",
                "--seeds",
                "1",
                "--gpu-price",
                "h200=" + price});
  };
  auto answer_of = [](const std::string& out) {
    const auto at = out.find("Answer: ");
    REQUIRE(at != std::string::npos);
    return out.substr(at, out.find('\n', at) - at);
  };
  const CliRun tie = plan_with_h200_price("2.8");
  INFO(tie.out << tie.err);
  REQUIRE(tie.code == 0);
  REQUIRE(tie.out.find("Basis of h100-sxm TP1: transferred") != std::string::npos);
  REQUIRE(tie.out.find("Basis of h200 TP1: datasheet-only") != std::string::npos);
  const std::string a = answer_of(tie.out);
  REQUIRE(a.find(" × h100-sxm (") != std::string::npos);
  REQUIRE(a.find("; h100-sxm TP1 and h200 TP1 tie within ±") != std::string::npos);
  REQUIRE(a.find("(transferred, docs/validation.md §6") != std::string::npos);
  REQUIRE(a.find(": the better-founded is the answer, not the cheapest") != std::string::npos);
  const CliRun cheap = plan_with_h200_price("2");
  REQUIRE(cheap.code == 0);
  const std::string b = answer_of(cheap.out);
  INFO(b);
  REQUIRE(b.find(" × h200 (") != std::string::npos);
  REQUIRE(b.find("tie within") == std::string::npos);
  REQUIRE(b.find("(datasheet-only, docs/validation.md §3") != std::string::npos);
}

}  // namespace
}  // namespace servesim::app
