// Regression tests for the inputs that are not bad input (docs/reliability.md's table,
// tests/contract/bad_inputs_test.cpp, holds those): runs that once aborted or allocated without
// bound, outputs that must appear together or not at all, an overloaded run's warning, the
// calibration's refusals, and the command-line details (repeated flags, unknown flags' order,
// negative measured times). Each TEST_CASE is named after its input class.
#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/cli.h"
#include "sim/base/error.h"
#include "sim/base/output_file.h"
#include "tests/contract/cli_outcome.h"

namespace servesim::app {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using testing::Outcome;
using testing::run;

using testing::TempDir;

json read_json(const std::string& p) {
  std::ifstream in(p);
  return json::parse(in);
}

// A vllm bench serve result with per-request arrays: n identical requests.
std::string vllm_result(int n, double ttft_s, double itl_s) {
  json j = {{"backend", "vllm"},
            {"model_id", "meta-llama/Llama-3.1-8B-Instruct"},
            {"request_rate", 1.0},
            {"completed", n},
            {"input_lens", std::vector<int>(static_cast<size_t>(n), 200)},
            {"output_lens", std::vector<int>(static_cast<size_t>(n), 50)},
            {"ttfts", std::vector<double>(static_cast<size_t>(n), ttft_s)},
            {"itls", std::vector<std::vector<double>>(static_cast<size_t>(n),
                                                      std::vector<double>(49, itl_s))},
            {"mean_ttft_ms", ttft_s * 1000}};
  return j.dump();
}

TEST_CASE("replicas without a TTFT or TPOT sample: no abort, a result file", "[cli][hardening]") {
  // Each command once ended with an uncaught nlohmann::type_error (exit 134): one replica had
  // no TTFT or no TPOT sample, and its null summary was read as a number.
  TempDir d("item1");
  const std::vector<std::vector<std::string>> runs = {
      {"--num-replicas", "2", "--random-output-len", "1"},  // no TPOT anywhere
      {"--num-replicas", "2", "--num-prompts", "1"},        // replica 1 idle
      {"--num-replicas", "4", "--num-prompts", "100", "--warmup-requests", "97"},  // 3 measured
  };
  for (size_t i = 0; i < runs.size(); ++i) {
    std::vector<std::string> args = {"simulate"};
    args.insert(args.end(), runs[i].begin(), runs[i].end());
    const std::string file = d / ("r" + std::to_string(i) + ".json");
    args.insert(args.end(), {"--save-result", "--result-filename", file});
    const Outcome o = run(args);
    INFO(o.err);
    CHECK(o.code == 0);
    REQUIRE(fs::exists(file));
    const json r = read_json(file);
    CHECK(r.at("completed").get<int64_t>() >= 1);
    CHECK(r.at("mean_ttft_ms").is_number());
  }
  // Every prompt (1,024 + 128 tokens) longer than --max-model-len 1000: no request succeeds,
  // which is exit 1 with a reason and no file, not an abort.
  const std::string none = d / "none.json";
  const Outcome o = run({"simulate", "--num-replicas", "2", "--max-model-len", "1000",
                         "--save-result", "--result-filename", none});
  CHECK(o.code == 1);
  CHECK(o.err.find("no request completed successfully") != std::string::npos);
  CHECK_FALSE(fs::exists(none));
}

TEST_CASE("request rate 1e-6 over 1,000 prompts: bounded memory", "[cli][hardening]") {
  // The run spans about 1e9 simulated seconds. vLLM's peak output throughput counts tokens in
  // one-second buckets; a dense vector of them took 7.8 GB. The buckets are now sparse when
  // there are fewer steps than seconds: the whole run fits in a few MiB.
  rusage before{};
  ::getrusage(RUSAGE_SELF, &before);
  TempDir d("item4");
  const std::string file = d / "slow.json";
  const Outcome o = run({"simulate", "--request-rate", "0.000001", "--num-prompts", "1000",
                         "--save-result", "--result-filename", file});
  rusage after{};
  ::getrusage(RUSAGE_SELF, &after);
  INFO(o.err);
  CHECK(o.code == 0);
  const json r = read_json(file);
  CHECK(r.at("completed") == 1000);
  CHECK(r.at("duration").get<double>() > 1e8);  // s: a thousand requests about 1e6 s apart
  // Each request alone on the engine: 128 output tokens within a second or two.
  CHECK(r.at("max_output_tokens_per_s").get<double>() <= 128);
  // ru_maxrss is in KiB and only grows: the run added less than 512 MiB to this process.
  CHECK(after.ru_maxrss - before.ru_maxrss < 512 * 1024);
}

TEST_CASE("multi-file output: written together or not at all, no temporary left",
          "[cli][hardening][output]") {
  TempDir d("item6");
  SECTION("both files appear, through a temporary and a rename") {
    write_files_atomically({{d / "a.json", "{}\n"}, {d / "a.csv", "x\n1\n"}});
    CHECK(d.names() == std::vector<std::string>{"a.csv", "a.json"});
  }
  SECTION("the second rename fails: the first file is removed again, temporaries too") {
    // The CSV's path became a non-empty directory after the checks (check_output_path refuses
    // it up front, docs/reliability.md): rename() onto it fails.
    fs::create_directory(d.path / "b.csv");
    std::ofstream(d.path / "b.csv" / "keep") << "x";
    CHECK_THROWS_AS(write_files_atomically({{d / "b.json", "{}\n"}, {d / "b.csv", "x\n"}}),
                    ConfigError);
    CHECK(d.names() == std::vector<std::string>{"b.csv"});
    CHECK(fs::is_directory(d.path / "b.csv"));
  }
  SECTION("a write fails (its folder is missing): nothing is renamed") {
    CHECK_THROWS_AS(write_files_atomically({{d / "c.json", "{}\n"}, {d / "nope/c.csv", "x\n"}}),
                    ConfigError);
    CHECK(d.names().empty());
  }
  SECTION("sweep and plan refuse a CSV path that cannot be written before any work") {
    fs::create_directory(d.path / "p.csv");
    const Outcome o =
        run({"plan", "--target-qps", "10", "--slo", "p99_ttft_ms<=500", "--output", d / "p.json"});
    CHECK(o.code == 2);
    CHECK(o.err.find("(its CSV)") != std::string::npos);
    CHECK(d.names() == std::vector<std::string>{"p.csv"});
  }
}

TEST_CASE("overloaded run: simulate warns and records it in the result file",
          "[cli][hardening][saturation]") {
  // The README's what-if: 64 sequences cannot serve 20 req/s of 1024/256 on one H100 (about 17
  // req/s are achieved, TTFT grows through the run); the default max-num-seqs serves it.
  TempDir d("item7");
  const std::string over = d / "over.json";
  const Outcome o = run({"simulate", "--max-num-seqs", "64", "--request-rate", "20",
                         "--random-output-len", "256", "--save-result", "--result-filename", over});
  CHECK(o.code == 0);
  CHECK(o.err.find("servesim: warning: overloaded: offered 20 req/s") != std::string::npos);
  const json r = read_json(over);
  REQUIRE(r.at("servesim").contains("saturation"));
  CHECK(r["servesim"]["saturation"]["saturated"] == true);
  CHECK(r["servesim"]["saturation"]["achieved_rps"].get<double>() < 18);
  const std::string fine = d / "fine.json";
  const Outcome f = run({"simulate", "--request-rate", "20", "--random-output-len", "256",
                         "--save-result", "--result-filename", fine});
  CHECK(f.code == 0);
  CHECK(f.err.find("overloaded") == std::string::npos);
  CHECK_FALSE(read_json(fine).at("servesim").contains("saturation"));
}

TEST_CASE("calibrate: a degenerate serving fit is refused unless --force",
          "[cli][hardening][calibration]") {
  // 20 requests of 200/50 tokens measured at TTFT 500 s and ITL 5 s: no step or client overhead
  // within their ranges explains that. Both end on a bound and the rms error stays ~99 %.
  TempDir d("item8fit");
  std::ofstream(d.path / "absurd.json") << vllm_result(20, 500.0, 5.0);
  const std::string out = d / "cal.json";
  // --tensor-parallel-size is a calibrate flag, as it is validate's.
  const std::vector<std::string> args = {"calibrate",  "--gpu",           "h100-sxm", "-tp", "1",
                                         "--measured", d / "absurd.json", "--out",    out};
  const Outcome o = run(args);
  CHECK(o.code == 1);
  CHECK(o.err.find("servesim: degenerate fit: ") != std::string::npos);
  CHECK(o.err.find("ended on a bound") != std::string::npos);
  CHECK(o.err.find("above the 25% threshold") != std::string::npos);
  CHECK(o.err.find("not written (--force writes it anyway)") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
  std::vector<std::string> forced = args;
  forced.push_back("--force");
  const Outcome f = run(forced);
  CHECK(f.code == 0);
  CHECK(fs::exists(out));
}

TEST_CASE("calibrate on a summary-only result without token totals: refused",
          "[cli][hardening][calibration]") {
  // What `vllm bench serve --save-result` writes without --save-detailed and without totals:
  // nothing to replay. It was replayed with 1-token requests and a profile written silently.
  TempDir d("item8summary");
  std::ofstream(d.path / "s.json")
      << R"({"backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B-Instruct",
            "request_rate": 1.0, "completed": 5, "mean_ttft_ms": 55, "mean_tpot_ms": 9})";
  const Outcome o = run({"calibrate", "--gpu", "h100-sxm", "-tp", "1", "--measured", d / "s.json",
                         "--out", d / "cal.json"});
  CHECK(o.code == 2);
  CHECK(o.err.find("s.json: no per-request data and no usable mean input length") !=
        std::string::npos);
  CHECK(d.names() == std::vector<std::string>{"s.json"});
}

TEST_CASE("measured runs: a runs/*.json glob that picks up sidecar files",
          "[cli][hardening][measured]") {
  // a.json.servesim.json is a.json's sidecar (it says the GPU and TP the run file does not);
  // `validate --measured runs/*.json` lists it too. It is read through a.json, not as a run.
  TempDir d("item8glob");
  std::ofstream(d.path / "a.json") << vllm_result(4, 0.05, 0.01);
  std::ofstream(d.path / "a.json.servesim.json")
      << R"({"gpu": "h100-sxm", "tensor_parallel_size": 1})";
  const Outcome o = run({"validate", "--measured", d / "a.json", d / "a.json.servesim.json"});
  INFO(o.err);
  CHECK(o.code == 0);
  CHECK(o.out.find("over 1 run(s)") != std::string::npos);
}

TEST_CASE("repeated flags: the last one wins, as with vLLM's argparse", "[cli][hardening]") {
  const Outcome o = run({"simulate", "--num-prompts", "5", "--num-prompts", "7"});
  CHECK(o.code == 0);
  CHECK(o.out.find("Successful requests:                     7") != std::string::npos);
}

TEST_CASE("unknown flags are named in the order given", "[cli][hardening]") {
  // CLI11 2.1 joined them from the back: "2 --bar 1 --foo".
  const Outcome o = run({"simulate", "--foo", "1", "--bar", "2"});
  CHECK(o.code == 2);
  CHECK(o.err == "servesim: error: The following arguments were not expected: --foo 1 --bar 2\n");
  const Outcome one = run({"simulate", "--foo"});
  CHECK(one.code == 2);
  CHECK(one.err == "servesim: error: The following argument was not expected: --foo\n");
}

TEST_CASE("negative measured TTFT: refused naming the file and the request",
          "[cli][hardening][measured]") {
  TempDir d("item9ttft");
  json j = json::parse(vllm_result(2, 0.05, 0.01));
  j["ttfts"][0] = -0.05;
  std::ofstream(d.path / "neg.json") << j.dump();
  const Outcome o =
      run({"validate", "--gpu", "h100-sxm", "-tp", "1", "--measured", d / "neg.json"});
  CHECK(o.code == 2);
  CHECK(o.err.find("neg.json: ttfts[0] is -0.050000; expected a time >= 0") != std::string::npos);
}

}  // namespace
}  // namespace servesim::app
