// --config FILE.yaml: vLLM's YAML config format (sim/app/yaml_config.h) gives the same run as the
// JSON file with the same settings, flags typed on the command line win over it, and the YAML
// forms vLLM reads (dashes or underscores, true as a bare flag, no-X, lists, `inf`) mean what they
// mean there. Bad files are docs/reliability.md's rows (bad_inputs_test.cpp).
#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/run_config.h"
#include "sim/app/yaml_config.h"
#include "tests/contract/cli_outcome.h"

namespace servesim::app {
namespace {

using testing::file_text;
using testing::run;
using testing::TempDir;

void write(const std::filesystem::path& p, const std::string& text) { std::ofstream(p) << text; }

// The result file of `simulate` with `extra` flags, with its volatile fields left as they are
// (SOURCE_DATE_EPOCH is not needed: both runs are compared within one process and second).
nlohmann::json simulate(const TempDir& dir, const std::string& name,
                        std::vector<std::string> extra) {
  std::vector<std::string> args = {"simulate",        "--save-result",     "--result-dir",
                                   dir.path.string(), "--result-filename", name};
  args.insert(args.end(), extra.begin(), extra.end());
  const testing::Outcome o = run(args);
  INFO(o.err);
  REQUIRE(o.code == 0);
  return nlohmann::json::parse(file_text(dir.path / name));
}

TEST_CASE("a YAML config gives the run of the JSON config with the same settings", "[cli][yaml]") {
  TempDir dir("yaml_same");
  // vLLM's spelling (dashes), an underscore key, a no- flag, a list and a bare true flag.
  write(dir.path / "run.yaml",
        "model: llama-3.1-8b\n"
        "gpu: h100-sxm\n"
        "max-num-seqs: 64\n"
        "max_num_batched_tokens: 4096\n"
        "no-enable-prefix-caching: true\n"
        "enforce-eager: true\n"
        "request-rate: 8\n"
        "num-prompts: 150\n"
        "percentile-metrics: [ttft, tpot, e2el]\n"
        "metric-percentiles: \"50,99\"\n");
  write(dir.path / "run.json",
        R"({"model": "llama-3.1-8b", "gpu": "h100-sxm", "max_num_seqs": 64,
            "max_num_batched_tokens": 4096, "enable_prefix_caching": false, "enforce_eager": true,
            "request_rate": 8, "num_prompts": 150, "percentile_metrics": ["ttft", "tpot", "e2el"],
            "metric_percentiles": ["50", "99"]})");
  nlohmann::json y = simulate(dir, "y.json", {"--config", (dir.path / "run.yaml").string()});
  nlohmann::json j = simulate(dir, "j.json", {"--config", (dir.path / "run.json").string()});
  CHECK(y["servesim"]["config"] == j["servesim"]["config"]);
  CHECK(y["servesim"]["config"]["max_num_seqs"] == 64);
  CHECK(y["servesim"]["config"]["enable_prefix_caching"] == false);
  CHECK(y["servesim"]["config"]["enforce_eager"] == true);
  CHECK(y["p50_ttft_ms"] == j["p50_ttft_ms"]);  // metric_percentiles 50,99 took effect
  for (const char* k : {"completed", "duration", "mean_ttft_ms", "p99_ttft_ms", "p99_e2el_ms"}) {
    INFO(k);
    CHECK(y[k] == j[k]);
  }
}

TEST_CASE("flags on the command line win over the YAML config, as in vLLM", "[cli][yaml]") {
  TempDir dir("yaml_cli_wins");
  write(dir.path / "run.yml", "max-num-seqs: 64\nnum-prompts: 100\nrequest-rate: inf\n");
  const nlohmann::json r = simulate(
      dir, "r.json", {"--config", (dir.path / "run.yml").string(), "--max-num-seqs", "32"});
  CHECK(r["servesim"]["config"]["max_num_seqs"] == 32);
  CHECK(r["num_prompts"] == 100);
  CHECK(r["request_rate"] == "inf");  // `inf` is vLLM's text for no limit
}

TEST_CASE("YAML values become the settings vLLM's --config would pass", "[yaml]") {
  TempDir dir("yaml_values");
  const auto read = [&](const std::string& text) {
    write(dir.path / "c.yaml", text);
    return read_yaml_config((dir.path / "c.yaml").string());
  };
  // A false on a setting that is off by default is that default (vLLM drops the key).
  CHECK(read("enforce-eager: false\n") == nlohmann::json{{"enforce_eager", false}});
  // no-X: false is dropped by vLLM too, so X keeps its default (on).
  CHECK(read("no-enable-prefix-caching: false\n") ==
        nlohmann::json{{"enable_prefix_caching", true}});
  // A quoted number is the flag's text all the same (vLLM passes str(value)).
  CHECK(read("seed: \"7\"\n") == nlohmann::json{{"seed", 7}});
  // A nested mapping is passed as JSON text (vLLM: json.dumps), e.g. --speculative-config.
  const nlohmann::json spec =
      read("speculative-config: {method: ngram, num_speculative_tokens: 3}\n");
  REQUIRE(spec["speculative_config"].is_string());
  CHECK(nlohmann::json::parse(spec["speculative_config"].get<std::string>()) ==
        nlohmann::json{{"method", "ngram"}, {"num_speculative_tokens", 3}});
  CHECK(is_yaml_config_path("a/b.yaml"));
  CHECK(is_yaml_config_path("b.yml"));
  CHECK_FALSE(is_yaml_config_path("b.json"));
  CHECK_FALSE(is_yaml_config_path("yaml"));
}

}  // namespace
}  // namespace servesim::app
