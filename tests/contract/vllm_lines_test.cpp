// vLLM's command lines in servesim (sim/app/vllm_flags.h, shell_words.h, pasted_commands.h): flags
// accepted and listed as ignored, flags refused by name, and pasted `vllm serve` / `vllm bench
// serve` lines.
#include <catch2/catch.hpp>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "sim/app/shell_words.h"
#include "sim/base/error.h"
#include "tests/contract/cli_outcome.h"

namespace servesim::app {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Outcome;
using testing::run;
using testing::slurp;

fs::path temp_dir() { return testing::temp_dir("servesim_vllm_lines_"); }

// stdout without its last line, "Result written to PATH".
std::string table(const Outcome& o) {
  const size_t last = o.out.rfind("Result written to ");
  return last == std::string::npos ? o.out : o.out.substr(0, last);
}

// Runs `args` writing the result to dir/name; returns the outcome (the file is dir/name).
Outcome run_to(std::vector<std::string> args, const fs::path& dir, const std::string& name) {
  args.insert(args.end(), {"--save-result", "--result-filename", (dir / name).string()});
  return run(args);
}

TEST_CASE("split_shell_words reads a pasted line as bash would", "[cli][vllm]") {
  const std::string line =
      "vllm bench serve \\\n  --model 'a b' --x \"c\\\"d $'no'\" $'e\\nf' \"\" --y=z  # note\n"
      "  --last";
  CHECK(split_shell_words(line, "--f") ==
        std::vector<std::string>{"vllm", "bench", "serve", "--model", "a b", "--x", "c\"d $'no'",
                                 "e\nf", "", "--y=z", "--last"});
  // What a shell would expand, or that is more than one command, is refused by name.
  auto refused = [](const std::string& text, const std::string& why) {
    try {
      split_shell_words(text, "--vllm-bench-cmd");
      FAIL("no error for: " << text);
    } catch (const ConfigError& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find("--vllm-bench-cmd: the pasted command line has " + why) !=
            std::string::npos);
    }
  };
  CHECK(split_shell_words("a \"5$\" 'x$y' $", "--f") ==
        std::vector<std::string>{"a", "5$", "x$y", "$"});
  refused("vllm bench serve --model $MODEL", "the shell expansion $MODEL");
  refused("vllm bench serve --model \"$(cat m)\"", "the command substitution $(…)");
  refused("vllm bench serve --model `cat m`", "the command substitution `…`");
  refused("vllm bench serve --num-prompts $1", "the shell expansion $1");
  refused("vllm bench serve --model \"${MODEL}\"", "the shell expansion ${MODEL}");
  refused("vllm bench serve --dataset-path <your data path>/x.json", "'<'");
  refused("vllm serve m | tee log", "'|'");
  refused("vllm serve m; vllm bench serve", "';'");
  refused("vllm serve 'm", "an unterminated ' quote");
  refused("vllm serve \"m", "an unterminated \" quote");
  refused("vllm serve m*", "an unquoted '*'");
}

TEST_CASE("vLLM flags that change nothing simulated are accepted, named once, and recorded",
          "[cli][vllm]") {
  const fs::path dir = temp_dir();
  const std::vector<std::string> base = {"simulate", "--num-prompts",       "100", "--request-rate",
                                         "8",        "--random-output-len", "32"};
  std::vector<std::string> with = base;
  // --endpoint is simulate's own run field; /v1/completions, its default, changes nothing.
  with.insert(with.end(), {"--backend", "vllm", "--endpoint", "/v1/completions", "--port", "8000",
                           "--trust-remote-code", "--served-model-name", "m1", "m2", "--ignore-eos",
                           "--tokenizer", "meta-llama/Llama-3.1-8B"});
  const Outcome a = run_to(base, dir, "plain.json");
  const Outcome b = run_to(with, dir, "ignored.json");
  REQUIRE(a.code == 0);
  REQUIRE(b.code == 0);
  CHECK(a.err.find("ignored") == std::string::npos);
  CHECK(b.err.rfind("servesim: ignored (no effect on the simulation): --backend vllm, --port "
                    "8000, --trust-remote-code, --served-model-name m1 m2, --ignore-eos, "
                    "--tokenizer meta-llama/Llama-3.1-8B\n",
                    0) == 0);
  CHECK(table(a) == table(b));
  // The same result file, plus servesim.ignored_flags (absent when none is given).
  json ja = json::parse(slurp(dir / "plain.json"));
  json jb = json::parse(slurp(dir / "ignored.json"));
  CHECK_FALSE(ja["servesim"].contains("ignored_flags"));
  const json ignored = jb["servesim"]["ignored_flags"];
  REQUIRE(ignored.size() == 6);
  CHECK(ignored[0] == json{{"flag", "--backend"}, {"values", {"vllm"}}});
  CHECK(ignored[2] == json{{"flag", "--trust-remote-code"}, {"values", json::array()}});
  CHECK(ignored[3] == json{{"flag", "--served-model-name"}, {"values", {"m1", "m2"}}});
  jb["servesim"].erase("ignored_flags");
  CHECK(ja == jb);
  // --dtype is servesim's own (modelled) flag: the 16-bit values give the same run.
  for (const char* dtype : {"auto", "float16", "half"}) {
    std::vector<std::string> args = base;
    args.insert(args.end(), {"--dtype", dtype});
    CHECK(run(args).code == 0);
  }
  fs::remove_all(dir);
}

TEST_CASE("vLLM flags that change serving but are not modelled are refused by name",
          "[cli][vllm][errors]") {
  const fs::path dir = temp_dir();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--speculative-model", "ngram"},
       "--speculative-model: vLLM V0's speculative flag is not modelled"},
      {{"--kv-transfer-config", "{}"}, "--kv-transfer-config: KV transfer"},
      {{"--fully-sharded-loras"}, "--fully-sharded-loras: fully sharded LoRA layers are not"},
      {{"--cpu-offload-gb", "10"},
       "--cpu-offload-gb: weight offload to CPU memory is not modelled"},
      {{"--kv-offloading-size", "8", "--kv-offloading-backend", "lmcache"},
       "--kv-offloading-backend: lmcache is not modelled yet"},
      {{"--dtype", "int8"}, "--dtype: 'int8' is not supported"},
      // The default model, Llama 3.1 8B: its chat template's tokens are not counted.
      {{"--endpoint", "/v1/chat/completions"},
       "--endpoint: /v1/chat/completions with --model llama-3.1-8b: the prompt tokens of its chat "
       "template are not known"},
      {{"--endpoint", "/v1/embeddings"}, "--endpoint: \"/v1/embeddings\" is not modelled"},
      {{"--backend", "openai-chat"},
       "--backend openai-chat: posts to /v1/chat/completions only (vllm bench serve refuses "
       "--endpoint /v1/completions with it)"},
      {{"--backend", "tgi"}, "--backend tgi: only vLLM's completions and chat completions APIs"},
      {{"--ramp-up-strategy", "linear"}, "--ramp-up-strategy: ramp-up request rates"},
      {{"--load-format", "bitsandbytes"}, "--load-format bitsandbytes:"},
  };
  for (const auto& [extra, message] : cases) {
    std::vector<std::string> args = {
        "simulate",      "--num-prompts",     "50",
        "--save-result", "--result-filename", (dir / "r.json").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const Outcome o = run(args);
    INFO(o.err);
    CHECK(o.code == 2);
    CHECK(o.err.rfind("servesim: error: " + message, 0) == 0);
    CHECK(o.out.empty());
    CHECK_FALSE(fs::exists(dir / "r.json"));
  }
  // Every run command refuses them (plan here), before any work.
  const Outcome p =
      run({"plan", "--target-qps", "5", "--slo", "p99_ttft_ms<=500", "--fully-sharded-loras"});
  CHECK(p.code == 2);
  CHECK(p.err.find("--fully-sharded-loras: fully sharded LoRA") != std::string::npos);
  // serve refuses the deployment modes simulate models but serve does not, before it listens.
  for (const std::vector<std::string>& mode :
       {std::vector<std::string>{"--speculative-config", "{}"},
        std::vector<std::string>{"--kv-offloading-size", "8"},
        std::vector<std::string>{"--enable-lora"}, std::vector<std::string>{"--max-loras", "4"}}) {
    std::vector<std::string> args = {"serve", "--port", "0"};
    args.insert(args.end(), mode.begin(), mode.end());
    const Outcome o = run(args);
    INFO(o.err);
    CHECK(o.code == 2);
    CHECK(o.err.rfind("servesim: error: " + mode.front() + ": ", 0) == 0);
    CHECK(o.err.find("not modelled by servesim serve") != std::string::npos);
  }
  fs::remove_all(dir);
}

TEST_CASE("a pasted vllm serve and vllm bench serve line run as the same flags typed",
          "[cli][vllm]") {
  const fs::path dir = temp_dir();
  const Outcome typed = run_to(
      {"simulate", "--model", "llama-3.1-8b", "-tp", "2", "--max-num-seqs", "64", "--dataset-name",
       "random", "--random-input-len", "1024", "--num-prompts", "300", "--request-rate", "10"},
      dir, "typed.json");
  const Outcome pasted = run_to(
      {"simulate", "--vllm-serve-cmd",
       "vllm serve llama-3.1-8b --tensor-parallel-size 2 --max-num-seqs 64", "--vllm-bench-cmd",
       "vllm bench serve --model llama-3.1-8b --dataset-name random --random-input-len 1024 "
       "--num-prompts 300 --request-rate 10"},
      dir, "pasted.json");
  REQUIRE(typed.code == 0);
  REQUIRE(pasted.code == 0);
  CHECK(pasted.err.find("ignored") == std::string::npos);
  CHECK(slurp(dir / "typed.json") == slurp(dir / "pasted.json"));

  // After `--`, and with a flag typed on servesim's line: the typed one wins wherever it is.
  const Outcome dashed = run_to({"simulate", "--num-prompts", "300", "--", "vllm", "bench", "serve",
                                 "--model", "llama-3.1-8b", "--num-prompts", "999",
                                 "--request-rate", "10", "--random-input-len", "1024"},
                                dir, "dashed.json");
  REQUIRE(dashed.code == 0);
  const json j = json::parse(slurp(dir / "dashed.json"));
  CHECK(j["num_prompts"] == 300);
  CHECK(j["completed"] == 300);
  fs::remove_all(dir);
}

// A real command line, copied as printed from vLLM's documentation: docs/benchmarking/cli.md,
// "Prefix Repetition Dataset" (vllm-project/vllm at commit
// 9ba5e24cf917f98c4d60f9ede0b837f71dfa12b0).
const char kVllmDocsPrefixRepetition[] = R"(vllm bench serve \
  --backend openai \
  --model meta-llama/Llama-2-7b-chat-hf \
  --dataset-name prefix_repetition \
  --num-prompts 100 \
  --prefix-repetition-prefix-len 512 \
  --prefix-repetition-suffix-len 128 \
  --prefix-repetition-num-prefixes 5 \
  --prefix-repetition-output-len 128)";

// The same page, "InstructCoder Benchmark with Speculative Decoding": the server's line.
const char kVllmDocsSpeculative[] = R"(vllm serve meta-llama/Meta-Llama-3-8B-Instruct \
    --speculative-config $'{"method": "ngram",
    "num_speculative_tokens": 5, "prompt_lookup_max": 5,
    "prompt_lookup_min": 2}')";

TEST_CASE("a vllm bench serve line from vLLM's documentation runs as pasted", "[cli][vllm]") {
  const fs::path dir = temp_dir();
  // servesim's --model typed after the line wins over the line's Hugging Face id.
  const Outcome pasted =
      run_to({"simulate", "--vllm-bench-cmd", kVllmDocsPrefixRepetition, "--model", "llama-2-7b"},
             dir, "pasted.json");
  const Outcome typed = run_to(
      {"simulate", "--model", "llama-2-7b", "--dataset-name", "prefix_repetition", "--num-prompts",
       "100", "--prefix-repetition-prefix-len", "512", "--prefix-repetition-suffix-len", "128",
       "--prefix-repetition-num-prefixes", "5", "--prefix-repetition-output-len", "128"},
      dir, "typed.json");
  INFO(pasted.err);
  REQUIRE(pasted.code == 0);
  REQUIRE(typed.code == 0);
  CHECK(pasted.err.rfind("servesim: ignored (no effect on the simulation): --backend openai\n",
                         0) == 0);
  CHECK(table(pasted) == table(typed));
  json jp = json::parse(slurp(dir / "pasted.json"));
  const json jt = json::parse(slurp(dir / "typed.json"));
  CHECK(jp["servesim"]["ignored_flags"] ==
        json::array({{{"flag", "--backend"}, {"values", {"openai"}}}}));
  jp["servesim"].erase("ignored_flags");
  CHECK(jp == jt);

  // The line's own model, a Hugging Face id, is read as --model reads it: the catalog's
  // llama-2-7b (models/model_name.h), so the line alone gives the same table.
  const Outcome hf = run({"simulate", "--vllm-bench-cmd", kVllmDocsPrefixRepetition});
  INFO(hf.err);
  CHECK(hf.code == 0);
  CHECK(table(hf) == table(typed));

  // The server line of the speculative-decoding example: read, but vLLM's JSON has no
  // acceptance, which servesim needs (and does not assume); typed with one, it runs.
  const Outcome spec =
      run({"simulate", "--num-prompts", "20", "--vllm-serve-cmd", kVllmDocsSpeculative});
  CHECK(spec.code == 2);
  CHECK(spec.err.find("--speculative-config: give exactly one of acceptance_rates") !=
        std::string::npos);
  const Outcome spec_ok =
      run({"simulate", "--num-prompts", "20", "--vllm-serve-cmd", kVllmDocsSpeculative, "--model",
           "llama-3.1-8b", "--speculative-config",
           R"({"method": "ngram", "num_speculative_tokens": 5, "prompt_lookup_max": 5,
               "prompt_lookup_min": 2, "acceptance_length": 2.0})"});
  INFO(spec_ok.err);
  CHECK(spec_ok.code == 0);
  fs::remove_all(dir);
}

TEST_CASE("a pasted line with what servesim cannot read is refused by name",
          "[cli][vllm][errors]") {
  auto expect = [](const std::vector<std::string>& args, const std::string& message) {
    const Outcome o = run(args);
    INFO(o.err);
    CHECK(o.code == 2);
    CHECK(o.err.find(message) != std::string::npos);
  };
  expect({"simulate", "--vllm-bench-cmd", "vllm bench serve --model llama-3.1-8b --hf-split x"},
         "--vllm-bench-cmd (vllm bench serve): --hf-split is not a flag servesim models or "
         "ignores");
  expect({"simulate", "--vllm-serve-cmd", "vllm serve llama-3.1-8b --request-rate 3"},
         "--request-rate is a flag of vllm bench serve, not of vllm serve");
  expect({"simulate", "--vllm-bench-cmd", "vllm bench serve --model m --dtype half"},
         "--dtype is a flag of vllm serve, not of vllm bench serve");
  expect({"simulate", "--vllm-serve-cmd", "vllm serve llama-3.1-8b --gpu h200"},
         "--gpu is servesim's flag, not vllm serve's");
  expect({"simulate", "--vllm-bench-cmd", "vllm bench serve --num-prompts 10"}, "names no --model");
  expect({"simulate", "--vllm-serve-cmd", "CUDA_VISIBLE_DEVICES=0,1 vllm serve llama-3.1-8b"},
         "the environment variable CUDA_VISIBLE_DEVICES is not read");
  expect({"simulate", "--vllm-bench-cmd", "vllm serve llama-3.1-8b"},
         "expected a line starting with `vllm bench serve`");
  expect({"simulate", "--vllm-serve-cmd", "vllm serve llama-3.1-8b --max-num-seqs"},
         "--max-num-seqs expects a value");
  expect({"plan", "--target-qps", "5", "--slo", "p99_ttft_ms<=500", "--vllm-serve-cmd",
          "vllm serve llama-3.1-8b"},
         "a pasted vLLM command line is read by simulate only");
  // A value the line gives is checked as the typed flag's is.
  expect({"simulate", "--vllm-serve-cmd", "vllm serve llama-3.1-8b --max-num-seqs many"},
         "--max-num-seqs: 'many' is invalid");
}

TEST_CASE("vllm serve's --seed and old-style lines are read as vLLM reads them", "[cli][vllm]") {
  // `vllm serve --seed` seeds sampling (ignored); vllm bench serve's --seed is the dataset's.
  const Outcome o = run({"simulate", "--vllm-serve-cmd",
                         "python3 -m vllm.entrypoints.openai.api_server --model llama-3.1-8b "
                         "--seed 7 --enable-chunked-prefill True --disable-log-requests",
                         "--vllm-bench-cmd",
                         "python benchmarks/benchmark_serving.py --backend vllm --model x "
                         "--dataset_name random --num-prompts 50 --request-rate 5"});
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(o.err.rfind("servesim: ignored (no effect on the simulation): --seed (of vllm serve) 7, "
                    "--disable-log-requests, --backend vllm\n",
                    0) == 0);
  CHECK(o.out.find("Successful requests:                     50") != std::string::npos);
}

}  // namespace
}  // namespace servesim::app
