// vLLM's sharegpt, custom, burstgpt, sonnet and prefix_repetition datasets.
#include "tests/test_paths.h"
#include "workloads/length_datasets.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "sim/base/error.h"
#include "workloads/workload.h"

namespace servesim::workloads {
namespace {

const std::string kShareGptLengths =
    std::string(SERVESIM_REALDATA_DIR) +
    "/sharegpt_lengths/sharegpt_8k_filtered_stats_llama2_tokenizer.csv";

struct TempFile {
  explicit TempFile(const std::string& name, const std::string& text)
      : path((std::filesystem::temp_directory_path() / name).string()) {
    std::ofstream(path, std::ios::binary) << text;
  }
  ~TempFile() { std::remove(path.c_str()); }
  std::string path;
};

std::vector<RequestSpec> drain(const WorkloadConfig& c) {
  auto w = make_workload(c);
  std::vector<RequestSpec> out;
  while (auto r = w->next()) out.push_back(*r);
  return out;
}

TEST_CASE("tokens_from_chars: round(chars / ratio), at least 1", "[datasets]") {
  CHECK(tokens_from_chars(400, 4.0) == 100);
  CHECK(tokens_from_chars(402, 4.0) == 101);  // 100.5 rounds half away from zero
  CHECK(tokens_from_chars(401, 4.0) == 100);
  CHECK(tokens_from_chars(1, 4.0) == 1);
  CHECK(tokens_from_chars(0, 4.0) == 1);
  CHECK(tokens_from_chars(300, 3.0) == 100);
}

TEST_CASE("vLLM's is_valid_sequence at its boundaries", "[datasets]") {
  CHECK_FALSE(vllm_is_valid_sequence(3, 100, false));   // prompt < 4
  CHECK(vllm_is_valid_sequence(4, 100, false));
  CHECK_FALSE(vllm_is_valid_sequence(100, 3, false));   // output < 4
  CHECK(vllm_is_valid_sequence(100, 3, true));          // skipped with --sharegpt-output-len
  CHECK(vllm_is_valid_sequence(1024, 1024, false));     // total 2048
  CHECK_FALSE(vllm_is_valid_sequence(1025, 10, false)); // prompt > 1024
  CHECK_FALSE(vllm_is_valid_sequence(1024, 1025, false));
}

TEST_CASE("the shipped ShareGPT lengths: 30,731 rows, vLLM's filter keeps 11,035", "[datasets]") {
  const std::vector<LengthPair> all = read_lengths_csv(kShareGptLengths, "--dataset-path");
  REQUIRE(all.size() == 30731);
  CHECK(all.front().prompt == 74);
  CHECK(all.front().output == 918);
  CHECK(all.back().prompt == 2285);
  CHECK(all.back().output == 363);
  int64_t pass = 0;
  for (const LengthPair& p : all) pass += vllm_is_valid_sequence(p.prompt, p.output, false);
  CHECK(pass == 11035);

  WorkloadConfig c;
  c.dataset_name = "sharegpt";  // no --dataset-path: the shipped file
  c.num_prompts = 20000;        // more than pass the filter: oversampled up to 20,000
  const std::vector<RequestSpec> r = drain(c);
  REQUIRE(r.size() == 20000);
  for (const RequestSpec& s : r) REQUIRE(vllm_is_valid_sequence(s.prompt_tokens, s.output_tokens, false));
  c.no_oversample = true;
  CHECK(drain(c).size() == 11035);
  // Same seed, same sequence; another seed, another order.
  c.no_oversample = false;
  c.num_prompts = 100;
  const auto a = drain(c), b = drain(c);
  c.seed = 1;
  const auto d = drain(c);
  bool all_same = true, any_diff = false;
  for (size_t i = 0; i < a.size(); ++i) {
    all_same = all_same && a[i].prompt_tokens == b[i].prompt_tokens && a[i].output_tokens == b[i].output_tokens;
    any_diff = any_diff || a[i].prompt_tokens != d[i].prompt_tokens;
  }
  CHECK(all_same);
  CHECK(any_diff);
  // --disable-shuffle: the first 100 rows that pass, in file order.
  c.disable_shuffle = true;
  const auto ordered = drain(c);
  size_t k = 0;
  for (const LengthPair& p : all) {
    if (k == ordered.size()) break;
    if (!vllm_is_valid_sequence(p.prompt, p.output, false)) continue;
    REQUIRE(ordered[k].prompt_tokens == p.prompt);
    ++k;
  }
  // --sharegpt-output-len replaces every output length.
  c.sharegpt_output_len = 7;
  for (const RequestSpec& s : drain(c)) REQUIRE(s.output_tokens == 7);
}

TEST_CASE("sharegpt JSON: first two turns, characters per token, entries with < 2 turns dropped",
          "[datasets]") {
  const std::string prompt(400, 'a');      // 100 tokens at 4 chars/token
  const std::string answer(80, 'b');       // 20 tokens
  TempFile f("servesim_sharegpt.json",
             "[{\"id\": \"x\", \"conversations\": [{\"from\": \"human\", \"value\": \"" + prompt +
                 "\"}, {\"from\": \"gpt\", \"value\": \"" + answer +
                 "\"}, {\"from\": \"human\", \"value\": \"more\"}]},"
                 "{\"id\": \"y\", \"conversations\": [{\"from\": \"human\", \"value\": \"alone\"}]},"
                 "{\"id\": \"z\", \"conversations\": [{\"from\": \"human\", \"value\": \"h\\u00e9llo\"},"
                 " {\"from\": \"gpt\", \"value\": \"" + std::string(40, 'c') + "\"}]}]");
  const std::vector<LengthPair> pairs = read_sharegpt_json(f.path, 4.0);
  REQUIRE(pairs.size() == 2);
  CHECK(pairs[0].prompt == 100);
  CHECK(pairs[0].output == 20);
  CHECK(pairs[1].prompt == 1);   // "héllo": 5 code points -> round(1.25) = 1
  CHECK(pairs[1].output == 10);
  CHECK(read_sharegpt_json(f.path, 2.0)[0].prompt == 200);
  WorkloadConfig c;
  c.dataset_name = "sharegpt";
  c.dataset_path = f.path;
  c.num_prompts = 5;
  const auto r = drain(c);
  REQUIRE(r.size() == 5);  // the one valid entry (prompt 1 < 4 is filtered), oversampled
  for (const RequestSpec& s : r) CHECK(s.prompt_tokens == 100);
  TempFile bad("servesim_sharegpt_bad.json", "[{\"conversations\": [");
  c.dataset_path = bad.path;
  CHECK_THROWS_WITH(drain(c), Catch::Contains(bad.path));
}

TEST_CASE("custom JSONL: prompt characters, --custom-output-len, bad lines named", "[datasets]") {
  TempFile f("servesim_custom.jsonl",
             "{\"prompt\": \"" + std::string(40, 'x') + "\", \"output_tokens\": 9}\n"
             "{\"prompt\": \"" + std::string(8, 'y') + "\", \"output_tokens\": 3}\n");
  WorkloadConfig c;
  c.dataset_name = "custom";
  c.dataset_path = f.path;
  c.num_prompts = 2;
  c.disable_shuffle = true;
  auto r = drain(c);
  REQUIRE(r.size() == 2);
  CHECK(r[0].prompt_tokens == 10);
  CHECK(r[0].output_tokens == 256);
  CHECK(r[1].prompt_tokens == 2);
  c.custom_output_len = -1;
  r = drain(c);
  CHECK(r[0].output_tokens == 9);
  CHECK(r[1].output_tokens == 3);
  TempFile bad("servesim_custom_bad.jsonl", "{\"prompt\": \"ok\"}\n{\"text\": \"no prompt\"}\n");
  c.dataset_path = bad.path;
  c.custom_output_len = 256;
  CHECK_THROWS_WITH(drain(c), Catch::Contains(bad.path + ":2:"));
  c.dataset_path = "";
  CHECK_THROWS_WITH(drain(c), Catch::Contains("--dataset-path"));
}

TEST_CASE("burstgpt: GPT-4 rows with a response, drawn without replacement", "[datasets]") {
  TempFile f("servesim_burstgpt.csv",
             "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
             "5,ChatGPT,472,18,490,Conversation log\n"
             "45,GPT-4,1087,229,1316,Conversation log\n"
             "118,GPT-4,417,0,417,Conversation log\n"
             "130,GPT-4,300,40,340,API log\n");
  WorkloadConfig c;
  c.dataset_name = "burstgpt";
  c.dataset_path = f.path;
  c.num_prompts = 2;
  auto r = drain(c);
  REQUIRE(r.size() == 2);
  std::map<int, int> seen;
  for (const RequestSpec& s : r) seen[s.prompt_tokens] = s.output_tokens;
  CHECK(seen == std::map<int, int>{{1087, 229}, {300, 40}});  // both rows, once each
  c.num_prompts = 7;  // more than the 2 usable rows: with replacement
  r = drain(c);
  REQUIRE(r.size() == 7);
  for (const RequestSpec& s : r) CHECK((s.prompt_tokens == 1087 || s.prompt_tokens == 300));
}

TEST_CASE("sonnet and prefix_repetition: fixed lengths, shared prefixes", "[datasets]") {
  WorkloadConfig c;
  c.dataset_name = "sonnet";
  c.num_prompts = 10;
  for (const RequestSpec& s : drain(c)) {
    CHECK(s.prompt_tokens == 550);
    CHECK(s.output_tokens == 150);
    CHECK(s.prefix_group == 0);
    CHECK(s.prefix_tokens == 200);
  }
  c.sonnet_prefix_len = 600;
  CHECK_THROWS_WITH(drain(c), Catch::Contains("--sonnet-prefix-len"));

  WorkloadConfig p;
  p.dataset_name = "prefix_repetition";
  p.num_prompts = 25;  // 10 prefixes x floor(25 / 10) = 20 requests, as vLLM
  const auto r = drain(p);
  REQUIRE(r.size() == 20);
  std::map<int64_t, int> per_group;
  for (const RequestSpec& s : r) {
    CHECK(s.prompt_tokens == 512);
    CHECK(s.prefix_tokens == 256);
    CHECK(s.output_tokens == 128);
    ++per_group[s.prefix_group];
  }
  CHECK(per_group.size() == 10);
  for (const auto& [g, n] : per_group) CHECK(n == 2);
  p.num_prompts = 9;
  CHECK_THROWS_WITH(drain(p), Catch::Contains("--prefix-repetition-num-prefixes"));
}

}  // namespace
}  // namespace servesim::workloads
