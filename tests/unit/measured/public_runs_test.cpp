// The public A100 runs table (data/realdata/public_vllm_runs, read_public_runs_csv): every row is
// a run or refused by name, the serve command's flags and the server log's KV size reach the
// deployment, the client's load and lengths reach the replay.
//
// Tolerances: values the table states are compared exactly (they are copied); the ShareGPT
// lengths are the shipped set scaled to the row's totals, each rounded to an integer, so a total
// differs from the row's by at most half a token per request.
#include <catch2/catch.hpp>
#include "tests/test_paths.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "models/chat_template_tokens.h"
#include "sim/app/run_config.h"
#include "sim/base/error.h"
#include "sim/measured/measured_run.h"
#include "sim/measured/readers.h"
#include "sim/measured/replay.h"

namespace servesim::measured {
namespace {

namespace fs = std::filesystem;

const std::string kFile =
    std::string(SERVESIM_REALDATA_DIR) + "/public_vllm_runs/public_vllm_runs_a100.csv";

std::map<std::string, MeasuredRun> by_row(std::vector<MeasuredRun> runs) {
  std::map<std::string, MeasuredRun> m;
  for (MeasuredRun& r : runs) m[r.id.substr(r.id.rfind('#') + 1)] = std::move(r);
  return m;
}

std::pair<int64_t, int64_t> totals(const MeasuredRun& r) {
  int64_t in = 0, out = 0;
  for (const MeasuredRequest& q : r.requests) {
    in += q.input_tokens;
    out += q.output_tokens;
  }
  return {in, out};
}

TEST_CASE("public runs: 76 rows, 11 refused by name, the rest resolved", "[measured][realdata]") {
  REQUIRE(detect_format(kFile) == "public-vllm-runs");
  std::vector<MeasuredRun> runs = read_measured(kFile, {});
  REQUIRE(runs.size() == 76);
  const std::vector<MeasuredRun> refused = take_refused(runs);
  CHECK(runs.size() == 65);
  REQUIRE(refused.size() == 11);
  const auto all = by_row(read_measured(kFile, {}));
  // GLM-4.6 is not in the catalog; AWQ checkpoints are not catalog entries; Qwen3-8B neither
  // (and its serve command is not shown); two dennislee22 runs did not complete every request.
  for (const char* row : {"18", "19", "20", "21", "22"}) {
    CHECK(all.at(row).refused.find("model 'zai-org/GLM-4.6-FP8' is not in servesim's catalog") !=
          std::string::npos);
  }
  for (const char* row : {"86", "125", "159"}) {
    CHECK(all.at(row).refused.find("checkpoint 'AWQ INT4") != std::string::npos);
  }
  CHECK(all.at("172").refused.find("model 'Qwen/Qwen3-8B'") != std::string::npos);
  CHECK(all.at("172").refused.find("the serve command is not shown") != std::string::npos);
  CHECK(all.at("144").refused.find("only 1633 of 2000 requests completed") != std::string::npos);
  CHECK(all.at("151").refused.find("only 924 of 1000 requests completed") != std::string::npos);
  for (const MeasuredRun& r : runs) {
    INFO(r.id << " " << r.label);
    CHECK(r.deployment.config["gpu"] == "a100-80gb");
    CHECK(r.requests.size() == static_cast<size_t>(r.num_prompts));
    CHECK(r.metrics.count("mean_ttft_ms") == 1);
    CHECK(r.metrics.count("mean_tpot_ms") == 1);
    CHECK(r.metrics.count("request_throughput") == 1);
  }
}

TEST_CASE("public runs: dennislee22's server log and client reach the run",
          "[measured][realdata]") {
  const auto all = by_row(read_measured(kFile, {}));
  const MeasuredRun& r = all.at("140");  // TP2, --gpu-memory-utilization 0.25, 200 prompts
  REQUIRE(r.refused.empty());
  const auto& c = r.deployment.config;
  CHECK(c["model"] == "qwen2.5-7b");  // Qwen2-7B-Instruct's shape
  CHECK(c["tensor_parallel_size"] == 2);
  CHECK(c["max_num_batched_tokens"] == 2048);
  CHECK(c["max_model_len"] == 16384);
  CHECK(c["gpu_memory_utilization"] == 0.25);
  CHECK(c["num_gpu_blocks_override"] == 450192 / 16);  // "450,192 tokens", block size 16
  CHECK(c["vllm_version"] == "0.10");
  CHECK(r.deployment.engine_version == "0.10.1.1");
  CHECK(std::isinf(r.request_rate));
  CHECK(r.max_concurrency == 0);
  // Random 1024/1024 without --ignore-eos: the row's totals, split evenly.
  CHECK(totals(r) == std::pair<int64_t, int64_t>{204007, 201481});
  CHECK(r.metrics.at("mean_ttft_ms") == 3490.37);
  CHECK(r.metrics.at("p99_tpot_ms") == 62.41);
  CHECK(r.metrics.at("request_throughput") == Approx(200 / 54.44).epsilon(1e-12));
}

TEST_CASE("public runs: GPUStack's serve flags and ShareGPT bursts", "[measured][realdata]") {
  const auto all = by_row(read_measured(kFile, {}));
  const MeasuredRun& oss = all.at("31");  // gpt-oss-120b --max-model-len 32768 --async-scheduling
  CHECK(oss.deployment.config["model"] == "gpt-oss-120b");
  CHECK(oss.deployment.config["quantization"] == "mxfp4");
  CHECK(oss.deployment.config["async_scheduling"] == true);
  CHECK(oss.deployment.config["max_model_len"] == 32768);
  CHECK(oss.deployment.config["vllm_version"] == "0.11");
  CHECK(oss.deployment.config.count("max_num_batched_tokens") == 0);  // the version's default
  const MeasuredRun& moe = all.at("97");  // Qwen3-235B-A22B FP8 -tp 8 --enable-expert-parallel
  CHECK(moe.deployment.config["model"] == "qwen3-235b-a22b");
  CHECK(moe.deployment.config["quantization"] == "fp8");
  CHECK(moe.deployment.config["enable_expert_parallel"] == true);
  CHECK(moe.deployment.config["tensor_parallel_size"] == 8);
  CHECK(all.at("33").deployment.config["max_num_batched_tokens"] == 4096);
  // ShareGPT, 1000 prompts at once: first-turn lengths scaled to the row's totals (214,465 in,
  // 199,904 out): each length rounded, so within n/2 tokens; vllm bench serve's first-turn means
  // are 190-240 in and 170-230 out per request. The server also prefills GLM-4.5's chat template
  // around each prompt: 5 tokens more per request than the client counted.
  const MeasuredRun& glm = all.at("16");
  REQUIRE(glm.requests.size() == 1000);
  CHECK(std::isinf(glm.request_rate));
  const auto [in, out] = totals(glm);
  CHECK(std::abs(in - (214465 + 5 * 1000)) <= 500);
  CHECK(std::abs(out - 199904) <= 500);
  CHECK(in / 1000.0 >= 190);
  CHECK(in / 1000.0 <= 240);
  CHECK(out / 1000.0 >= 170);
  CHECK(out / 1000.0 <= 230);
  // "ShareGPT batch size 4": 100 prompts (the successful count; num_prompts blank), 4 at a time.
  const MeasuredRun& closed = all.at("39");
  CHECK(closed.max_concurrency == 4);
  CHECK(closed.num_prompts == 100);
  // Reading twice gives the same requests.
  const auto again = by_row(read_measured(kFile, {}));
  CHECK(again.at("16").requests[417].input_tokens == glm.requests[417].input_tokens);
}

TEST_CASE("public runs: the chat endpoint adds the chat template's prompt tokens",
          "[measured][realdata]") {
  // Qwen3's ChatML around one user message is 8 tokens, GLM-4.5's 5, gpt-oss's harmony system
  // message and headers 65 (models/chat_template_tokens.h).
  CHECK(models::chat_template_tokens("Qwen/Qwen3-14B-FP8")->tokens == 8);
  CHECK(models::chat_template_tokens("Qwen/Qwen3-235B-A22B-Instruct-2507")->tokens == 8);
  CHECK(models::chat_template_tokens("zai-org/GLM-4.5-Air")->tokens == 5);
  CHECK(models::chat_template_tokens("openai/gpt-oss-120b")->tokens == 65);
  CHECK_FALSE(models::chat_template_tokens("Qwen/Qwen2-7B-Instruct").has_value());
  const auto all = by_row(read_measured(kFile, {}));
  // Random 128/4 on Qwen3-14B (row 90, chat endpoint): every prompt the row's even split + 8.
  const MeasuredRun& qwen = all.at("90");
  REQUIRE(!qwen.requests.empty());
  const auto [in, out] = totals(qwen);
  const double client_mean = 128.0;  // input_len 128, range ratio 0: the client's count
  CHECK(static_cast<double>(in) / static_cast<double>(qwen.requests.size()) ==
        Approx(client_mean + 8).margin(1.0));
  (void)out;
  // gpt-oss-120b, ShareGPT on the chat endpoint (row 30): every prompt gains harmony's 65
  // tokens, and the 62 before the message are the same in every request: a shared prefix.
  const MeasuredRun& oss = all.at("30");
  CHECK(oss.shared_prefix_tokens == 62);
  const auto [oin, oout] = totals(oss);
  REQUIRE(oss.requests.size() == 1000);
  // The row's 215,312 client tokens (each scaled length rounded: at most 0.5 per request off) plus
  // 65 per request.
  CHECK(static_cast<double>(oin) == Approx(215312.0 + 65 * 1000).margin(500));
  CHECK(static_cast<double>(oin) != Approx(215312.0).margin(500));
  (void)oout;
  // dennislee22's runs use the completions endpoint (--backend vllm): nothing added.
  const auto [din, dout] = totals(all.at("145"));
  CHECK(din == 102140);  // the row's total_input_tokens
  (void)dout;
}

TEST_CASE("public runs: the replay uses the logged KV size and the burst", "[measured][realdata]") {
  const auto all = by_row(read_measured(kFile, {}));
  const MeasuredRun& r = all.at("145");  // TP1, 93,872 KV tokens, 100 prompts at once
  ReplayOptions o;
  o.seeds = 1;
  const Prediction p =
      simulate_measured_run(r, simulation_config(r, app::apply_config_json), Calibration{}, o);
  CHECK(p.kv_tokens == 93872);
  CHECK(p.arrivals == "burst");
}

TEST_CASE(
    "public runs: a row with an unknown serve flag is refused by name, a short row is an "
    "error naming the line",
    "[measured]") {
  const fs::path dir = fs::temp_directory_path() / ("servesim_pub_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path f = dir / "runs.csv";
  std::ifstream in(kFile);
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);  // row 16: vllm serve zai-org/GLM-4.5-Air -tp 4
  const std::string flagged = [&] {
    std::string s = row;
    const std::string cmd = "vllm serve zai-org/GLM-4.5-Air -tp 4";
    s.replace(s.find(cmd), cmd.size(), cmd + " --speculative-config x");
    return s;
  }();
  std::ofstream(f) << header << "\n" << flagged << "\n";
  const std::vector<MeasuredRun> runs = read_runs(f.string());
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].refused == "serve flag '--speculative-config' is not modelled by this reader");
  std::ofstream(f) << header << "\n16,gpustack_perflab\n";
  try {
    read_runs(f.string());
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) == f.string() + ":2: 2 cells; expected 56");
  }
  fs::remove_all(dir);
}

TEST_CASE("public runs: a sidecar's endpoint must agree with the row's endpoint column",
          "[measured]") {
  // A sidecar may state the endpoint; the row's endpoint column records it (row 16: GPUStack's
  // openai-chat client, /v1/chat/completions; row 145: dennislee22's --backend vllm,
  // /v1/completions). Agreeing changes nothing; contradicting is refused naming the sidecar, the
  // run and what the row records; a value other than the two endpoints is refused as a value.
  const fs::path dir = fs::temp_directory_path() / ("servesim_pub_ep_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ifstream in(kFile);
  std::string header, line, chat_row, completions_row;
  std::getline(in, header);
  while (std::getline(in, line)) {
    if (line.rfind("16,", 0) == 0) chat_row = line;
    if (line.rfind("145,", 0) == 0) completions_row = line;
  }
  REQUIRE(!chat_row.empty());
  REQUIRE(!completions_row.empty());
  const fs::path chat = dir / "chat.csv", completions = dir / "completions.csv";
  std::ofstream(chat) << header << "\n" << chat_row << "\n";
  std::ofstream(completions) << header << "\n" << completions_row << "\n";
  auto with_sidecar = [](const fs::path& csv, const std::string& body) {
    std::ofstream(csv.string() + ".servesim.json") << body;
    return read_measured(csv.string(), {});
  };
  auto refusal = [&](const fs::path& csv, const std::string& body) -> std::string {
    try {
      with_sidecar(csv, body);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "(accepted)";
  };
  const std::vector<MeasuredRun> plain = read_measured(chat.string(), {});
  REQUIRE(plain.size() == 1);
  REQUIRE(plain[0].endpoint == "chat");
  const std::vector<MeasuredRun> agreeing =
      with_sidecar(chat, R"({"endpoint": "/v1/chat/completions"})");
  REQUIRE(agreeing.size() == 1);
  CHECK(agreeing[0].endpoint == "chat");
  CHECK(agreeing[0].deployment.config == plain[0].deployment.config);  // declares, sets nothing
  CHECK(with_sidecar(completions, R"({"endpoint": "/v1/completions"})").size() == 1);

  const std::string chat_sidecar = chat.string() + ".servesim.json";
  CHECK(refusal(chat, R"({"endpoint": "/v1/completions"})") ==
        chat_sidecar + ": 'endpoint' is \"/v1/completions\" but " + chat.string() +
            "#16 records /v1/chat/completions (its endpoint column); expected "
            "\"/v1/chat/completions\" or no 'endpoint' key");
  const std::string completions_sidecar = completions.string() + ".servesim.json";
  CHECK(refusal(completions, R"({"endpoint": "/v1/chat/completions"})") ==
        completions_sidecar + ": 'endpoint' is \"/v1/chat/completions\" but " +
            completions.string() +
            "#145 records /v1/completions (its endpoint column); expected "
            "\"/v1/completions\" or no 'endpoint' key");
  CHECK(refusal(chat, R"({"endpoint": "/v1/responses"})") ==
        chat_sidecar +
            ": key 'endpoint' has value \"/v1/responses\"; expected \"/v1/completions\" or "
            "\"/v1/chat/completions\"");
  CHECK(refusal(chat, R"({"endpoint": 1})") ==
        chat_sidecar +
            ": key 'endpoint' has value 1; expected \"/v1/completions\" or "
            "\"/v1/chat/completions\"");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace servesim::measured
