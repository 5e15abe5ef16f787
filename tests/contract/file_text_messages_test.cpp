// Files as users' tools save them, through the command line: a UTF-8 byte-order mark and CR or
// CRLF line ends replay as the plain file does (pandas and Python read them so); messages that
// quote a file never copy control bytes to the terminal; and a result file's num_prompts is what
// the run sent.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/contract/cli_outcome.h"

namespace servesim::app {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::run;
using testing::TempDir;

// simulate on a csv trace holding `bytes`; the result file parsed (exit 0 required).
json replay(const fs::path& dir, const std::string& name, const std::string& bytes) {
  std::ofstream(dir / name, std::ios::binary) << bytes;
  const auto o = run({"simulate", "--dataset-name", "trace", "--trace", (dir / name).string(),
                      "--trace-format", "csv", "--save-detailed", "--result-filename",
                      (dir / (name + ".json")).string()});
  INFO(o.err);
  REQUIRE(o.code == 0);
  std::ifstream in(dir / (name + ".json"));
  return json::parse(in);
}

TEST_CASE("a trace with a UTF-8 BOM, CRLF or CR-only line ends replays as the plain file does",
          "[cli][trace][encoding]") {
  TempDir dir("file_text_bom");
  const std::vector<std::string> rows = {"arrival_s,prompt_tokens,output_tokens", "0.0,100,10",
                                         "0.5,200,20", "1.25,300,30"};
  auto joined = [&](const std::string& end) {
    std::string s;
    for (const std::string& r : rows) s += r + end;
    return s;
  };
  const json plain = replay(dir.path, "lf.csv", joined("\n"));
  REQUIRE(plain["completed"] == 3);
  for (const auto& [name, bytes] : std::vector<std::pair<std::string, std::string>>{
           {"crlf.csv", joined("\r\n")},
           {"cr.csv", joined("\r")},
           {"bom.csv", "\xEF\xBB\xBF" + joined("\n")},
           {"bom_crlf.csv", "\xEF\xBB\xBF" + joined("\r\n")}}) {
    INFO(name);
    const json r = replay(dir.path, name, bytes);
    // The same requests at the same times: every latency array identical, not only the count.
    for (const char* key : {"input_lens", "output_lens", "start_times", "ttfts", "itls"}) {
      CHECK(r[key] == plain[key]);
    }
  }
}

TEST_CASE("an error quoting a file's bytes escapes control bytes and stays one line",
          "[cli][trace][encoding]") {
  TempDir dir("file_text_escape");
  // A cell holding ESC [2J (clear screen), a bell and a C1 CSI byte.
  std::ofstream(dir.path / "t.csv", std::ios::binary)
      << "arrival_s,prompt_tokens,output_tokens\n0,\x1b[2J\a\xC2\x9B"
         "5,3\n";
  const auto o = run({"simulate", "--dataset-name", "trace", "--trace",
                      (dir.path / "t.csv").string(), "--trace-format", "csv"});
  CHECK(o.code == 2);
  CHECK(o.err.find("'\\x1b[2J\\x07\\xc2\\x9b5'") != std::string::npos);
  for (char c : o.err) {
    const auto b = static_cast<unsigned char>(c);
    CHECK((b >= 0x20 || c == '\n'));
    CHECK(b != 0x7f);
  }
  CHECK(std::count(o.err.begin(), o.err.end(), '\n') == 1);
  // A long binary "line" is cut: the message stays short whatever the file holds.
  std::ofstream(dir.path / "big.csv", std::ios::binary) << std::string(100000, '\x01') << "\n";
  const auto big = run({"simulate", "--dataset-name", "trace", "--trace",
                        (dir.path / "big.csv").string(), "--trace-format", "csv"});
  CHECK(big.code == 2);
  CHECK(big.err.find("... (100000 bytes)") != std::string::npos);
  CHECK(big.err.size() < 1000);
}

TEST_CASE(
    "num_prompts in the result file is the requests sent, the flag's value kept beside it "
    "when they differ",
    "[cli][result]") {
  TempDir dir("file_text_num_prompts");
  auto result = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"simulate",
                                     "--num-prompts",
                                     "40",
                                     "--request-rate",
                                     "20",
                                     "--random-input-len",
                                     "64",
                                     "--random-output-len",
                                     "8",
                                     "--save-result",
                                     "--overwrite",
                                     "--result-filename",
                                     (dir.path / "r.json").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto o = run(args);
    INFO(o.err);
    REQUIRE(o.code == 0);
    std::ifstream in(dir.path / "r.json");
    return json::parse(in);
  };
  // vLLM's case: the dataset gives --num-prompts requests; the key is that, and nothing is added.
  const json plain = result({});
  CHECK(plain["num_prompts"] == 40);
  CHECK(plain["completed"].get<int64_t>() + plain["failed"].get<int64_t>() == 40);
  CHECK_FALSE(plain["servesim"].contains("requested_num_prompts"));
  // A trace of 3 rows sends 3 (the file said 1000 before, the default --num-prompts).
  std::ofstream(dir.path / "t.csv") << "arrival_s,prompt_tokens,output_tokens\n0,10,2\n0.1,12,3\n"
                                       "0.2,9,2\n";
  const json trace = result({"--dataset-name", "trace", "--trace", (dir.path / "t.csv").string(),
                             "--trace-format", "csv"});
  CHECK(trace["num_prompts"] == 3);
  CHECK(trace["servesim"]["requested_num_prompts"] == 40);
  // Multi-turn: --num-prompts counts conversations, the result counts requests (10 x 3 turns).
  const json turns = result({"--multi-turn", "--num-turns", "3", "--num-prompts", "10"});
  CHECK(turns["num_prompts"] == 30);
  CHECK(turns["completed"] == 30);
  CHECK(turns["servesim"]["requested_num_prompts"] == 10);
  // Warm-ups are sent but not measured: num_prompts = completed + failed = 40 - 5.
  const json warm = result({"--warmup-requests", "5"});
  CHECK(warm["num_prompts"] == 35);
  CHECK(warm["completed"].get<int64_t>() + warm["failed"].get<int64_t>() == 35);
}

}  // namespace
}  // namespace servesim::app
