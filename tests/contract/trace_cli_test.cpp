// Datasets and trace replay through the command line: a result file replayed as a trace gives
// the same latencies; bad trace rows exit 2 naming file and line with nothing written; matrix.
#include "tests/test_paths.h"
#include <catch2/catch.hpp>

#include <unistd.h>

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
  const std::vector<std::string> common = {"--model", "llama-3.1-8b", "--gpu", "h100-sxm",
                                           "--save-detailed", "--result-dir", dir.string()};
  std::vector<std::string> a = {"simulate", "--num-prompts", "150", "--request-rate", "12",
                                "--random-input-len", "700", "--random-range-ratio", "0.5",
                                "--random-output-len", "90", "--seed", "4",
                                "--result-filename", "a.json"};
  a.insert(a.end(), common.begin(), common.end());
  REQUIRE(run(a).code == 0);
  std::vector<std::string> b = {"simulate", "--dataset-name", "trace", "--trace-format",
                                "vllm-result", "--trace", (dir / "a.json").string(),
                                "--result-filename", "b.json"};
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
  CHECK(o.err.find(trace.string() + ":3: column 'output_tokens' has value 'x'") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "r.json"));
  fs::remove_all(dir);
}

TEST_CASE("trace replay is deterministic: same command, byte-identical file", "[cli][trace]") {
  const fs::path dir = temp_dir();
  const std::string trace =
      std::string(SERVESIM_REALDATA_DIR) + "/mooncake_traces/conversation_trace.jsonl";
  auto go = [&](const std::string& name) {
    return run({"simulate", "--dataset-name", "trace", "--trace-format", "mooncake", "--trace",
                trace, "--trace-duration", "60", "--request-rate", "2", "--num-replicas", "2",
                "--router", "prefix-aware", "--save-result", "--result-dir", dir.string(),
                "--result-filename", name});
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

TEST_CASE("matrix prints one row per standard workload", "[cli][matrix]") {
  const Outcome o = run({"matrix", "--model", "llama-3.1-8b", "--gpu", "h100-sxm",
                         "--num-prompts", "40"});
  INFO(o.err);
  REQUIRE(o.code == 0);
  for (const char* row : {"short chat", "long prefill", "long decode", "saturating mix",
                          "warm shared prefix", "production replay"}) {
    CHECK(o.out.find(row) != std::string::npos);
  }
}

}  // namespace
}  // namespace servesim::app
