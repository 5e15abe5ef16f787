// Checkpoint precision as vLLM loads it, and the bounds on dimensions that cost memory or time
// they accept. The refusals themselves are rows of docs/reliability.md (bad_inputs_test.cpp); this
// file checks what is accepted at each limit and what the accepted runs compute.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/app/run_options.h"
#include "sim/base/error.h"
#include "sim/base/input_files.h"
#include "tests/contract/cli_outcome.h"

namespace servesim::app {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Outcome;
using testing::run;
using testing::TempDir;

// Llama-3.1-8B's config.json with the given torch_dtype.
std::string llama8b(const std::string& dtype) {
  return R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 4096,
             "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
             "num_hidden_layers": 32, "vocab_size": 128256, "max_position_embeddings": 131072,
             "torch_dtype": ")" +
         dtype + R"("})";
}

json result_of(const TempDir& d, const std::string& model, std::vector<std::string> extra) {
  const std::string file = d / ("r" + std::to_string(d.names().size()) + ".json");
  std::vector<std::string> args = {"simulate",          "--model", model,
                                   "--num-prompts",     "4",       "--save-result",
                                   "--result-filename", file};
  args.insert(args.end(), extra.begin(), extra.end());
  const Outcome o = run(args);
  INFO(o.err);
  REQUIRE(o.code == 0);
  std::ifstream in(file);
  return json::parse(in)["servesim"];
}

TEST_CASE("a float32 checkpoint is served in 16 bits unless --dtype float32, as vLLM does",
          "[cli][models][precision]") {
  // vllm/config/model.py _get_and_verify_dtype / _resolve_auto_dtype: --dtype auto downcasts a
  // float32 config to the platform's first supported dtype (bfloat16 on Ampere and later,
  // vllm/platforms/cuda.py): weights and KV at 2 bytes, the same memory plan as a bf16 checkpoint.
  TempDir d("precision");
  std::ofstream(d / "f32.json") << llama8b("float32");
  std::ofstream(d / "bf16.json") << llama8b("bfloat16");
  const json bf16 = result_of(d, d / "bf16.json", {});
  const json f32 = result_of(d, d / "f32.json", {});
  CHECK(f32["kv_cache"]["kv_tokens"] == bf16["kv_cache"]["kv_tokens"]);
  CHECK(f32["config"]["dtype"] == "auto");
  CHECK(f32["config"]["checkpoint_dtype"] == "float32");
  CHECK(f32["config"]["dtype_bytes"] == 2);
  CHECK_FALSE(bf16["config"].contains("dtype"));  // files of other runs keep their keys

  // --dtype float32: 4-byte weights (16 GB -> 32 GB of the H100's 80) and 4-byte KV per token.
  const json full = result_of(d, d / "f32.json", {"--dtype", "float32"});
  CHECK(full["config"]["dtype_bytes"] == 4);
  const double tokens16 = bf16["kv_cache"]["kv_tokens"].get<double>();
  const double tokens32 = full["kv_cache"]["kv_tokens"].get<double>();
  // Twice the bytes per token of a KV pool that lost 16 GB to the weights: well under half.
  CHECK(tokens32 < 0.5 * tokens16);
  CHECK(tokens32 > 0.2 * tokens16);
  // --dtype bfloat16 on the float32 checkpoint is the auto plan; on a catalog model too.
  CHECK(result_of(d, d / "f32.json", {"--dtype", "bfloat16"})["kv_cache"]["kv_tokens"] ==
        bf16["kv_cache"]["kv_tokens"]);
  CHECK(result_of(d, "llama-3.1-8b", {"--dtype", "float16"})["kv_cache"]["kv_tokens"] ==
        bf16["kv_cache"]["kv_tokens"]);
}

TEST_CASE("limits: each bound accepts its limit and refuses one more", "[cli][reliability]") {
  CHECK_NOTHROW(check_jobs(0));
  CHECK_NOTHROW(check_jobs(kMaxJobs));
  CHECK_THROWS_WITH(check_jobs(kMaxJobs + 1), Catch::Contains("--jobs: 1025 is invalid"));
  CHECK_THROWS_WITH(check_jobs(-1), Catch::Contains("--jobs: -1 is invalid"));
  CHECK_NOTHROW(check_seeds(kMaxSeeds, 1));
  CHECK_THROWS_WITH(check_seeds(kMaxSeeds + 1, 1), Catch::Contains("--seeds: 1001 is invalid"));
  CHECK_THROWS_WITH(check_seeds(1, 2), Catch::Contains("expected 2 to 1000 seeds"));

  SECTION("--gpus-per-node 1024 runs") {
    CHECK(run({"simulate", "--num-prompts", "4", "--gpus-per-node", "1024"}).code == 0);
  }
  SECTION("100 --metric-percentiles run and are all reported") {
    std::string list = "1";
    for (int i = 2; i <= 100; ++i) list += "," + std::to_string(i);
    const Outcome o = run({"simulate", "--num-prompts", "4", "--metric-percentiles", list});
    INFO(o.err);
    CHECK(o.code == 0);
    CHECK(o.out.find("P100 TTFT (ms):") != std::string::npos);
  }
  SECTION("settings files: 64 MiB is read, one byte more is refused before reading") {
    TempDir d("limits_size");
    std::ofstream(d / "at.json").close();
    fs::resize_file(d / "at.json", kMaxSettingsFileBytes);
    std::ofstream(d / "above.json").close();
    fs::resize_file(d / "above.json", kMaxSettingsFileBytes + 1);
    CHECK_NOTHROW(check_input_file(d / "at.json", "--model", kMaxSettingsFileBytes));
    CHECK_THROWS_WITH(check_input_file(d / "above.json", "--model", kMaxSettingsFileBytes),
                      Catch::Contains("--model: '" + (d / "above.json") + "' is 64.0 MiB") &&
                          Catch::Contains("expected a file of at most 64 MiB"));
    // A limit of 0: read line by line, any size.
    CHECK_NOTHROW(check_input_file(d / "above.json", "--trace", 0));
    // Through the command line: the file's size is refused before the file is read (a
    // 64 MiB + 1 byte run of zeros would otherwise be a parse error).
    const Outcome o = run({"simulate", "--model", d / "above.json"});
    CHECK(o.code == 2);
    CHECK(o.err.find("expected a file of at most 64 MiB") != std::string::npos);
  }
}

}  // namespace
}  // namespace servesim::app
