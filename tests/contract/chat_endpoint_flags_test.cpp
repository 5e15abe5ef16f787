// The endpoint flags of vllm bench serve on servesim's command lines: --backend openai-chat needs
// the chat endpoint wherever the run gets it (the command line or a --config file), and validate
// and calibrate, which read each run's endpoint from its file, accept --endpoint where it agrees
// with the files and refuse it by name where it contradicts them (sim/app/measured_endpoint.h).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/contract/cli_outcome.h"

namespace servesim::app {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Outcome;
using testing::run;
using testing::TempDir;

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

TEST_CASE("the openai-chat backend takes the chat endpoint from a --config file",
          "[cli][vllm][chat]") {
  TempDir dir("chat_backend_config");
  write(dir.path / "chat.json", R"({"endpoint": "/v1/chat/completions"})");
  write(dir.path / "completions.json", R"({"endpoint": "/v1/completions"})");
  auto go = [&](const std::vector<std::string>& extra, const std::string& name) {
    std::vector<std::string> a = {"simulate",
                                  "--model",
                                  "qwen3-14b",
                                  "--gpu",
                                  "h100-sxm",
                                  "--num-prompts",
                                  "40",
                                  "--request-rate",
                                  "10",
                                  "--random-input-len",
                                  "100",
                                  "--random-output-len",
                                  "8",
                                  "--save-result",
                                  "--result-filename",
                                  (dir.path / name).string()};
    a.insert(a.end(), extra.begin(), extra.end());
    return run(a);
  };
  // The chat endpoint in the file: the same run as with --endpoint typed (Qwen3's template adds
  // 8 prompt tokens to each of the 100-token prompts either way).
  const Outcome from_file =
      go({"--backend", "openai-chat", "--config", (dir.path / "chat.json").string()}, "f.json");
  INFO(from_file.err);
  REQUIRE(from_file.code == 0);
  const Outcome typed =
      go({"--backend", "openai-chat", "--endpoint", "/v1/chat/completions"}, "t.json");
  REQUIRE(typed.code == 0);
  auto result = [&](const std::string& name) {
    json j = json::parse(testing::file_text(dir.path / name));
    j["servesim"]["config"].erase("config");  // the --config path, recorded when given
    j.erase("date");
    return j;
  };
  const json f = result("f.json"), t = result("t.json");
  CHECK(f["servesim"]["sent"]["mean_input_tokens"].get<double>() == 108.0);
  CHECK(f["servesim"]["sent"] == t["servesim"]["sent"]);
  CHECK(f["mean_ttft_ms"] == t["mean_ttft_ms"]);
  CHECK(f["duration"] == t["duration"]);

  // The completions endpoint, from the file or from a flag that overrides the file's chat one:
  // refused as vllm bench serve refuses it, naming the endpoint in effect.
  const std::string refusal =
      "servesim: error: --backend openai-chat: posts to /v1/chat/completions only (vllm bench "
      "serve refuses --endpoint /v1/completions with it)";
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--backend", "openai-chat", "--config",
                                 (dir.path / "completions.json").string()},
        std::vector<std::string>{"--backend", "openai-chat", "--config",
                                 (dir.path / "chat.json").string(), "--endpoint",
                                 "/v1/completions"},
        std::vector<std::string>{"--backend", "openai-chat"}}) {
    const Outcome o = go(extra, "r.json");
    INFO(o.err);
    CHECK(o.code == 2);
    CHECK(o.err.find(refusal) != std::string::npos);
    CHECK_FALSE(fs::exists(dir.path / "r.json"));
  }
}

TEST_CASE(
    "validate and calibrate accept --endpoint where the files agree and refuse it where "
    "they contradict",
    "[cli][vllm][chat][validate]") {
  TempDir dir("measured_endpoint");
  // Three vllm bench serve results of one small run: the chat client recorded ("backend"
  // openai-chat), the completions endpoint recorded (newer clients' "endpoint_type"), and neither.
  const std::string body =
      "\"model_id\": \"Qwen/Qwen3-14B\", \"request_rate\": 2, \"completed\": 20, "
      "\"total_input_tokens\": 4000, \"total_output_tokens\": 640, \"mean_ttft_ms\": 40, "
      "\"mean_tpot_ms\": 12, \"duration\": 10.5";
  const std::string chat = (dir.path / "chat.json").string();
  const std::string completions = (dir.path / "completions.json").string();
  const std::string bare = (dir.path / "bare.json").string();
  write(chat, "{\"backend\": \"openai-chat\", " + body + "}");
  write(completions, "{\"endpoint_type\": \"openai\", " + body + "}");
  write(bare, "{" + body + "}");
  write(dir.path / "cfg_chat.json", R"({"endpoint": "/v1/chat/completions"})");
  write(dir.path / "cfg_completions.json", R"({"endpoint": "/v1/completions"})");
  auto validate = [&](const std::string& measured, const std::vector<std::string>& extra) {
    std::vector<std::string> a = {
        "validate", "--gpu",   "h100-sxm", "-tp",        "1",     "--engine-version",
        "0.11.0",   "--seeds", "1",        "--measured", measured};
    a.insert(a.end(), extra.begin(), extra.end());
    return run(a);
  };

  // Agreeing: the flags a pasted client line brings, or a --config file's "endpoint", change
  // nothing: the same table as without them.
  const Outcome plain = validate(chat, {});
  INFO(plain.err);
  REQUIRE(plain.code == 0);
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--backend", "openai-chat", "--endpoint", "/v1/chat/completions"},
        std::vector<std::string>{"--config", (dir.path / "cfg_chat.json").string()},
        std::vector<std::string>{"--backend", "openai-chat", "--config",
                                 (dir.path / "cfg_chat.json").string()}}) {
    const Outcome o = validate(chat, extra);
    INFO(o.err);
    CHECK(o.code == 0);
    CHECK(o.out == plain.out);
  }
  // validate reads --endpoint (it is checked against the files): not listed among the ignored
  // vLLM flags, but noted as agreeing; --backend stays a client flag that changes nothing.
  const Outcome typed =
      validate(chat, {"--backend", "openai-chat", "--endpoint", "/v1/chat/completions"});
  CHECK(
      typed.err.find("servesim: ignored (no effect on the simulation): --backend openai-chat\n") !=
      std::string::npos);
  CHECK(
      typed.err.find("ignored (no effect on the simulation): --backend openai-chat, --endpoint") ==
      std::string::npos);
  CHECK(typed.err.find("servesim: --endpoint /v1/chat/completions agrees with the runs read (1 "
                       "record it); each run is simulated with the endpoint its file records\n") !=
        std::string::npos);
  const Outcome from_config = validate(chat, {"--config", (dir.path / "cfg_chat.json").string()});
  CHECK(from_config.err.find("servesim: --config " + (dir.path / "cfg_chat.json").string() +
                             " (endpoint) /v1/chat/completions agrees with the runs read") !=
        std::string::npos);
  CHECK(plain.err.find("agrees with") == std::string::npos);  // nothing declared, nothing noted
  const Outcome c = validate(completions, {"--endpoint", "/v1/completions"});
  CHECK(c.code == 0);
  CHECK(c.out == validate(completions, {}).out);
  CHECK(c.err.find("ignored") == std::string::npos);
  // A file that records no endpoint is simulated as /v1/completions: that declaration agrees.
  const Outcome b = validate(bare, {"--endpoint", "/v1/completions"});
  CHECK(b.code == 0);
  CHECK(b.err.find("servesim: --endpoint /v1/completions agrees with the runs read (1 record "
                   "none (simulated as /v1/completions)); each run is simulated with the endpoint "
                   "its file records\n") != std::string::npos);

  // Contradicting: refused by name, with the run and what its file records.
  struct Case {
    std::string measured;
    std::vector<std::string> extra;
    std::string message;
  };
  const std::vector<Case> cases = {
      {completions,
       {"--endpoint", "/v1/chat/completions"},
       "--endpoint /v1/chat/completions: " + completions +
           " records /v1/completions (validate and calibrate read each run's endpoint from its "
           "file); expected /v1/completions or no endpoint"},
      {chat,
       {"--endpoint", "/v1/completions"},
       "--endpoint /v1/completions: " + chat + " records /v1/chat/completions"},
      {chat,
       {"--config", (dir.path / "cfg_completions.json").string()},
       "--config " + (dir.path / "cfg_completions.json").string() +
           " (endpoint) /v1/completions: " + chat + " records /v1/chat/completions"},
      {bare,
       {"--endpoint", "/v1/chat/completions"},
       "--endpoint /v1/chat/completions: " + bare +
           " does not record its endpoint and is simulated as /v1/completions"},
      // vllm bench serve's rule holds here too: openai-chat posts to the chat endpoint only.
      {chat, {"--backend", "openai-chat"}, "--backend openai-chat: posts to /v1/chat/completions"},
  };
  for (const Case& k : cases) {
    const Outcome o = validate(k.measured, k.extra);
    INFO(o.err);
    CHECK(o.code == 2);
    CHECK(o.err.find("servesim: error: " + k.message) != std::string::npos);
    CHECK(o.out.empty());
  }

  // calibrate reads the runs the same way: refused before any fit when the flag contradicts them.
  const Outcome cal =
      run({"calibrate", "--gpu", "h100-sxm", "-tp", "1", "--measured", completions, "--endpoint",
           "/v1/chat/completions", "--out", (dir.path / "cal.json").string()});
  INFO(cal.err);
  CHECK(cal.code == 2);
  CHECK(cal.err.find("servesim: error: --endpoint /v1/chat/completions: " + completions +
                     " records /v1/completions") != std::string::npos);
  CHECK(cal.err.find("ignored") == std::string::npos);
  CHECK_FALSE(fs::exists(dir.path / "cal.json"));
}

}  // namespace
}  // namespace servesim::app
