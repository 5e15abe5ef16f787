// The config that plan, sweep and compare echo in their output files reads back with --config as
// the run it describes: the flags vLLM resolves itself (max-num-seqs, max-num-batched-tokens,
// max-model-len, gpu-memory-utilization, async scheduling, chunked prefill, prefix caching) are
// echoed as null or 0 when unset (ConfigField::unset), and a file value equal to that leaves them
// unset. On the command line 0 stays refused for the counts.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/run_config.h"
#include "tests/contract/cli_outcome.h"

namespace servesim::app {
namespace {

namespace fs = std::filesystem;
using Catch::Contains;
using nlohmann::json;
using testing::Outcome;
using testing::run;
using testing::TempDir;

TEST_CASE("a sweep's echoed config reads back with --config as the same run", "[cli][config]") {
  TempDir dir("config_echo");
  const std::vector<std::string> flags = {"--model",
                                          "llama-3.1-8b",
                                          "--gpu",
                                          "h100-sxm",
                                          "--num-prompts",
                                          "40",
                                          "--seed",
                                          "3",
                                          "--random-input-len",
                                          "200",
                                          "--random-output-len",
                                          "20"};
  std::vector<std::string> sweep = {"sweep", "--request-rate", "5,10", "--output",
                                    (dir.path / "sweep.json").string()};
  sweep.insert(sweep.end(), flags.begin(), flags.end());
  const Outcome swept = run(sweep);
  INFO(swept.err);
  REQUIRE(swept.code == 0);
  const json echo = json::parse(testing::file_text(dir.path / "sweep.json")).at("config");
  // What the echo writes for the unset flags this test is about.
  CHECK(echo.at("max_num_seqs") == 0);
  CHECK(echo.at("max_model_len") == 0);
  CHECK(echo.at("gpu_memory_utilization").is_null());
  CHECK(echo.at("async_scheduling").is_null());
  std::ofstream(dir.path / "echo.json") << echo.dump(2);

  auto simulate = [&](std::vector<std::string> extra, const std::string& name) {
    std::vector<std::string> a = {"simulate",      "--request-rate",    "5",
                                  "--save-result", "--result-filename", (dir.path / name).string()};
    a.insert(a.end(), extra.begin(), extra.end());
    const Outcome o = run(a);
    INFO(o.err);
    REQUIRE(o.code == 0);
    return json::parse(testing::file_text(dir.path / name));
  };
  const json direct = simulate(flags, "direct.json");
  const json from_echo = simulate({"--config", (dir.path / "echo.json").string()}, "echo_run.json");
  // The same resolved engine and the same simulated requests.
  CHECK(from_echo.at("servesim").at("config") == direct.at("servesim").at("config"));
  for (const char* k : {"completed", "mean_ttft_ms", "mean_tpot_ms", "duration"}) {
    INFO(k);
    CHECK(from_echo.at(k) == direct.at(k));
  }
}

TEST_CASE(
    "an unset flag as the echo writes it leaves the flag unset, other values are still checked",
    "[cli][config]") {
  sim::SimulationConfig c;
  apply_config_file_json(c,
                         json{{"max_num_seqs", 0},
                              {"max_num_batched_tokens", 0},
                              {"max_model_len", nullptr},
                              {"gpu_memory_utilization", nullptr},
                              {"async_scheduling", nullptr},
                              {"enable_chunked_prefill", nullptr},
                              {"enable_prefix_caching", nullptr}},
                         "echo.json");
  CHECK_FALSE(c.engine.max_num_seqs.has_value());
  CHECK_FALSE(c.engine.max_num_batched_tokens.has_value());
  CHECK_FALSE(c.engine.max_model_len.has_value());
  CHECK_FALSE(c.engine.gpu_memory_utilization.has_value());
  CHECK_FALSE(c.engine.async_scheduling.has_value());
  CHECK_FALSE(c.engine.enable_chunked_prefill.has_value());
  CHECK_FALSE(c.engine.enable_prefix_caching.has_value());
  // A value overrides an earlier one, and unset resets it (later keys, later files win).
  apply_config_file_json(c, json{{"max_num_seqs", 64}, {"enable_prefix_caching", false}}, "a.json");
  CHECK(c.engine.max_num_seqs == 64);
  CHECK(c.engine.enable_prefix_caching == false);
  apply_config_file_json(c, json{{"max_num_seqs", 0}, {"enable_prefix_caching", nullptr}},
                         "b.json");
  CHECK_FALSE(c.engine.max_num_seqs.has_value());
  CHECK_FALSE(c.engine.enable_prefix_caching.has_value());

  REQUIRE_THROWS_WITH(apply_config_file_json(c, json{{"max_num_seqs", -1}}, "c.json"),
                      "c.json: key 'max_num_seqs' has value -1; expected an integer >= 1");
  REQUIRE_THROWS_WITH(apply_config_file_json(c, json{{"block_size", nullptr}}, "c.json"),
                      Catch::Contains("key 'block_size' has value null"));
  // Flags and --vary values are not files: 0 and null stay refused there.
  REQUIRE_THROWS_WITH(apply_config_json(c, json{{"max_num_seqs", 0}}, "--vary"),
                      Catch::Contains("expected an integer >= 1"));
  REQUIRE_THROWS_WITH(apply_config_json(c, json{{"async_scheduling", nullptr}}, "--vary"),
                      Catch::Contains("expected true or false"));
  // A vllm serve YAML file holds flags as typed: 0 is refused there too.
  TempDir dir("config_echo_yaml");
  std::ofstream(dir.path / "serve.yaml") << "max-num-seqs: 0\n";
  const Outcome yaml =
      run({"simulate", "--config", (dir.path / "serve.yaml").string(), "--num-prompts", "1"});
  CHECK(yaml.code == 2);
  CHECK_THAT(yaml.err, Contains("max-num-seqs") && Contains("an integer >= 1"));
  const Outcome typed = run({"simulate", "--max-num-seqs", "0", "--num-prompts", "1"});
  CHECK(typed.code == 2);
  CHECK_THAT(typed.err, Contains("--max-num-seqs") && Contains("an integer >= 1"));
}

TEST_CASE("a P/D pool's TP is unset (-tp) until given, 0 is the echo's unset and refused as a flag",
          "[cli][config]") {
  sim::SimulationConfig c;
  c.prefill_replicas = c.decode_replicas = 1;  // the echo holds the pools' keys only then
  CHECK_FALSE(c.prefill_tensor_parallel_size.has_value());
  CHECK(config_to_json(c).at("prefill_tensor_parallel_size") == 0);
  apply_config_file_json(c, json{{"prefill_tensor_parallel_size", 2}}, "a.json");
  CHECK(c.prefill_tensor_parallel_size == 2);
  CHECK(config_to_json(c).at("prefill_tensor_parallel_size") == 2);
  apply_config_file_json(
      c, json{{"prefill_tensor_parallel_size", 0}, {"decode_tensor_parallel_size", nullptr}},
      "echo.json");
  CHECK_FALSE(c.prefill_tensor_parallel_size.has_value());
  CHECK_FALSE(c.decode_tensor_parallel_size.has_value());
  REQUIRE_THROWS_WITH(apply_config_json(c, json{{"decode_tensor_parallel_size", 0}}, "--vary"),
                      Catch::Contains("expected an integer >= 1"));
  const Outcome typed = run({"simulate", "--prefill-replicas", "1", "--decode-replicas", "1",
                             "--prefill-tensor-parallel-size", "0", "--num-prompts", "1"});
  CHECK(typed.code == 2);
  CHECK_THAT(typed.err, Contains("--prefill-tensor-parallel-size") && Contains("an integer >= 1"));
}

}  // namespace
}  // namespace servesim::app
