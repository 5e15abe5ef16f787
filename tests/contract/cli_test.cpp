// The command line as a user meets it: exit codes, one-line errors, no partial files, and
// byte-identical result files for the same config and seed.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/app/cli.h"
#include "tests/contract/cli_outcome.h"

namespace servesim::app {
namespace {

namespace fs = std::filesystem;

using testing::Outcome;
using testing::run;
fs::path temp_dir() {
  fs::path d = fs::temp_directory_path() / ("servesim_cli_test_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}
std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::vector<std::string> kSmall = {
    "simulate",       "--model", "llama-3.1-8b",        "--gpu", "h100-sxm", "--num-prompts", "200",
    "--request-rate", "10",      "--random-output-len", "64"};

TEST_CASE("simulate prints vLLM's table and the engine summary", "[cli]") {
  Outcome o = run(kSmall);
  REQUIRE(o.code == 0);
  REQUIRE(o.out.find("============ Serving Benchmark Result ============") != std::string::npos);
  REQUIRE(o.out.find("Successful requests:") != std::string::npos);
  REQUIRE(o.out.find("P99 TTFT (ms):") != std::string::npos);
  REQUIRE(o.out.find("KV cache blocks (tokens):") != std::string::npos);
}

TEST_CASE("gpt-oss on an Ampere GPU: the basis says its attention kernel is not timed as run",
          "[cli]") {
  // vLLM runs gpt-oss's sink attention with TRITON_ATTN below compute capability 9.0 (no sinks in
  // FlashAttention 2); servesim times FlashAttention and says so on the A100, not on the H100.
  auto basis = [](const std::string& gpu) {
    Outcome o = run({"simulate", "--model", "gpt-oss-20b", "--gpu", gpu, "--num-prompts", "20",
                     "--random-output-len", "16"});
    REQUIRE(o.code == 0);
    return o.out;
  };
  CHECK(basis("a100-80gb")
            .find("attention: vLLM runs gpt-oss's sink attention with its "
                  "TRITON_ATTN backend on this GPU") != std::string::npos);
  CHECK(basis("h100-sxm").find("TRITON_ATTN") == std::string::npos);
  // Another model on the A100: nothing said.
  Outcome llama = run({"simulate", "--model", "llama-3.1-8b", "--gpu", "a100-80gb", "--num-prompts",
                       "20", "--random-output-len", "16"});
  REQUIRE(llama.code == 0);
  CHECK(llama.out.find("TRITON_ATTN") == std::string::npos);
}

TEST_CASE("an MLA model at a vLLM version without the MLA cache is refused by name", "[cli]") {
  // vLLM added the MLA cache in 0.7.1; 0.6 cached DeepSeek's attention as multi-head K/V.
  Outcome o = run({"simulate", "--model", "deepseek-r1", "--gpu", "h200", "-tp", "8",
                   "--vllm-version", "0.6", "--num-prompts", "5"});
  CHECK(o.code == 2);
  CHECK(o.err.find("--vllm-version 0.6 with deepseek-r1: vLLM before 0.7.1 has no MLA cache") !=
        std::string::npos);
  // 0.7 holds each cache entry aligned to 256 B: 78,080 B per token on every rank against 0.8's
  // 70,272, in KV memory smaller by 0.7's absorbed MLA weights, 61 layers × 74,448,896 B =
  // 4,541,382,656 B per rank (models/memory_planner.h), and by 0.7's fused-MoE cache 1 apart from
  // cache 3: 8,192 tokens × 8 picks × N = 512 × 2 B = 67,108,864 B (the same batch limits, so the
  // other terms are equal): the token counts are in that relation to within one block of each.
  auto kv_tokens = [](const std::string& version) {
    Outcome r = run({"simulate", "--model", "deepseek-r1", "--gpu", "h200", "-tp", "8",
                     "--vllm-version", version, "--max-model-len", "8192", "--max-num-seqs", "256",
                     "--max-num-batched-tokens", "8192", "--num-prompts", "5"});
    REQUIRE(r.code == 0);
    const std::string key = "KV cache blocks (tokens):";
    const size_t at = r.out.find(key);
    REQUIRE(at != std::string::npos);
    const size_t open = r.out.find('(', at + key.size());
    return std::stod(r.out.substr(open + 1));
  };
  const double t07 = kv_tokens("0.7"), t08 = kv_tokens("0.8");
  CHECK(t07 < t08);
  CHECK(std::abs(t07 * 78080 + 4541382656.0 + 67108864.0 - t08 * 70272) <= 16.0 * 78080);
}

TEST_CASE("same config and seed give a byte-identical result file", "[cli][determinism]") {
  const fs::path dir = temp_dir();
  auto args = kSmall;
  args.insert(args.end(), {"--save-detailed", "--result-dir", dir.string(), "--result-filename"});
  auto a = args, b = args;
  a.push_back("a.json");
  b.push_back("b.json");
  REQUIRE(run(a).code == 0);
  REQUIRE(run(b).code == 0);
  const std::string ja = slurp(dir / "a.json"), jb = slurp(dir / "b.json");
  REQUIRE(!ja.empty());
  REQUIRE(ja == jb);
  // A different seed changes the result.
  auto c = args;
  c.insert(c.end(), {"c.json", "--seed", "1"});
  REQUIRE(run(c).code == 0);
  REQUIRE(slurp(dir / "c.json") != ja);
  fs::remove_all(dir);
}

TEST_CASE("a JSON config file sets the same fields, and flags override it", "[cli]") {
  const fs::path dir = temp_dir();
  std::ofstream(dir / "run.json") << R"({"model": "llama-3.1-8b", "gpu": "h100-sxm",
      "num_prompts": 200, "request_rate": 10, "random_output_len": 64, "seed": 0})";
  auto from_file = std::vector<std::string>{
      "simulate",     "--config",   (dir / "run.json").string(), "--save-result",
      "--result-dir", dir.string(), "--result-filename",         "file.json"};
  auto from_flags = kSmall;
  from_flags.insert(from_flags.end(), {"--save-result", "--result-dir", dir.string(),
                                       "--result-filename", "flags.json"});
  REQUIRE(run(from_file).code == 0);
  REQUIRE(run(from_flags).code == 0);
  REQUIRE(slurp(dir / "file.json") == slurp(dir / "flags.json"));
  fs::remove_all(dir);
}

TEST_CASE("simulate takes a Hugging Face id for --model as vllm serve does", "[cli][names]") {
  const fs::path dir = temp_dir();
  auto by_id = kSmall, by_name = kSmall;
  by_id[2] = "meta-llama/Llama-3.1-8B-Instruct";
  by_id.insert(by_id.end(),
               {"--save-result", "--result-dir", dir.string(), "--result-filename", "id.json"});
  by_name.insert(by_name.end(),
                 {"--save-result", "--result-dir", dir.string(), "--result-filename", "name.json"});
  Outcome o = run(by_id);
  INFO(o.err);
  REQUIRE(o.code == 0);
  REQUIRE(run(by_name).code == 0);
  nlohmann::json a = nlohmann::json::parse(slurp(dir / "id.json"));
  nlohmann::json b = nlohmann::json::parse(slurp(dir / "name.json"));
  // The model as given (vLLM's model_id) and the catalog entry it resolved to.
  CHECK(a["model_id"] == "meta-llama/Llama-3.1-8B-Instruct");
  CHECK(a["servesim"]["config"]["model"] == "meta-llama/Llama-3.1-8B-Instruct");
  CHECK(a["servesim"]["config"]["catalog_model"] == "llama-3.1-8b");
  CHECK(b["servesim"]["config"]["catalog_model"] == "llama-3.1-8b");
  // Otherwise the same run: same prediction basis, same numbers.
  for (nlohmann::json* j : {&a, &b}) {
    j->erase("model_id");
    j->erase("tokenizer_id");
    (*j)["servesim"]["config"].erase("model");
  }
  CHECK(a == b);
  fs::remove_all(dir);
}

TEST_CASE("bad input: one clear line, exit code 2, no output file", "[cli][errors]") {
  const fs::path dir = temp_dir();
  auto expect_error = [&](std::vector<std::string> args, const std::string& needle) {
    args.insert(args.end(),
                {"--save-result", "--result-dir", dir.string(), "--result-filename", "never.json"});
    Outcome o = run(args);
    INFO(o.err);
    REQUIRE(o.code == 2);
    REQUIRE(o.err.find(needle) != std::string::npos);
    REQUIRE(std::count(o.err.begin(), o.err.end(), '\n') == 1);
    REQUIRE_FALSE(fs::exists(dir / "never.json"));
  };
  SECTION("unknown model names the nearest catalog entries") {
    expect_error({"simulate", "--model", "meta-llama/Llama-3.2-1B-Instruct"},
                 "not in the catalog (models are not downloaded); pass the path of its "
                 "config.json. Nearest catalog entries: llama-3.1-8b (meta-llama/Llama-3.1-8B)");
  }
  SECTION("unknown GPU") { expect_error({"simulate", "--gpu", "h1000"}, "h100-sxm"); }
  SECTION("a model that does not fit names the shortfall and the smallest TP") {
    expect_error({"simulate", "--model", "llama-3.1-70b", "--gpu", "h100-sxm"},
                 "smallest tensor-parallel-size that fits is 2");
  }
  SECTION("nonsensical flag values name the flag") {
    expect_error({"simulate", "--max-num-seqs", "0"}, "--max-num-seqs");
    expect_error({"simulate", "--gpu-memory-utilization", "1.5"}, "--gpu-memory-utilization");
    expect_error({"simulate", "--request-rate", "fast"}, "--request-rate");
    expect_error({"simulate", "--random-range-ratio", "1.5"}, "--random-range-ratio");
    expect_error({"simulate", "--scheduling-policy", "lifo"}, "--scheduling-policy");
    expect_error({"simulate", "--goodput", "ttfx:5"}, "--goodput");
  }
  SECTION("malformed or unknown config file content names the file and key") {
    std::ofstream(dir / "bad.json") << "{\"max_num_seqs\": 12,";
    expect_error({"simulate", "--config", (dir / "bad.json").string()}, "bad.json");
    std::ofstream(dir / "typo.json") << R"({"max_num_seq": 12})";
    expect_error({"simulate", "--config", (dir / "typo.json").string()}, "max_num_seq");
  }
  SECTION("unknown flags") { expect_error({"simulate", "--max-num-sequences", "4"}, "error"); }
  fs::remove_all(dir);
}

TEST_CASE("list shows both catalogs", "[cli]") {
  Outcome o = run({"list"});
  REQUIRE(o.code == 0);
  REQUIRE(o.out.find("mixtral-8x7b") != std::string::npos);
  REQUIRE(o.out.find("mi300x") != std::string::npos);
  // Per GPU, what its predictions can rest on: the kernel table and the shipped profiles.
  CHECK(o.out.find("  h200          kernels: measured (hardware/kernels/h200.json)\n"
                   "                profiles: hardware/calibration/vllm-0.11-async/h200.json "
                   "(0.11 async)\n") != std::string::npos);
  CHECK(o.out.find("  b200          kernels: roofline\n"
                   "                profiles: none (datasheet-only)\n") != std::string::npos);
  CHECK(o.out.find("  h100-pcie     kernels: transferred from h100-sxm") != std::string::npos);
  // A profile outside its line's vllm-<line> folder is not applied by default.
  CHECK(o.out.find("hardware/calibration/vllm-v0/a100-40gb.json (0.8 V0; opt-in: --calibration)") !=
        std::string::npos);
  // Per model, its attention kind: Llama-4 Scout's 36 RoPE layers attend within 8,192-token
  // chunks (48 layers, every 4th NoPE); Gemma-3 27B slides 52 of its 62 layers over 1,024 tokens.
  CHECK(o.out.find("GQA 40q/8kv x128, 36 chunked-local (8192); 16 experts top-1 + shared\n") !=
        std::string::npos);
  CHECK(o.out.find("x128, 52 sliding (1024); dense\n") != std::string::npos);
}

TEST_CASE("list models and list gpus show one catalog each", "[cli]") {
  const Outcome all = run({"list"});
  const Outcome models = run({"list", "models"});
  const Outcome gpus = run({"list", "gpus"});
  REQUIRE(models.code == 0);
  REQUIRE(gpus.code == 0);
  CHECK(models.out.rfind("Models (models/catalog)", 0) == 0);
  CHECK(models.out.find("GPUs (hardware/catalog)") == std::string::npos);
  CHECK(gpus.out.rfind("GPUs (hardware/catalog)", 0) == 0);
  CHECK(gpus.out.find("mixtral-8x7b") == std::string::npos);
  CHECK(models.out + gpus.out == all.out);  // the two halves of `list`, in its order
  const Outcome other = run({"list", "kernels"});
  CHECK(other.code == 2);
  CHECK(other.err.find("kernels") != std::string::npos);
}

}  // namespace
}  // namespace servesim::app
