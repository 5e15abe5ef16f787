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

}  // namespace
}  // namespace servesim::app
