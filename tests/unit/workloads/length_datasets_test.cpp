// vLLM's sharegpt, custom, burstgpt, sonnet and prefix_repetition datasets.
#include "workloads/length_datasets.h"
#include "tests/test_paths.h"

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
// data/sharegpt_first_turn, next to data/realdata.
const std::string kFirstTurnLengths = (std::filesystem::path(SERVESIM_REALDATA_DIR).parent_path() /
                                       "sharegpt_first_turn" / "sharegpt_first_turn_llama3.csv")
                                          .string();

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

// Same seed, same lengths; another seed, another sample.
void check_seeded_sampling(WorkloadConfig c) {
  const auto a = drain(c), b = drain(c);
  c.seed += 7;
  const auto d = drain(c);
  REQUIRE(a.size() == d.size());
  bool all_same = true, any_diff = false;
  for (size_t i = 0; i < a.size(); ++i) {
    all_same = all_same && a[i].prompt_tokens == b[i].prompt_tokens &&
               a[i].output_tokens == b[i].output_tokens;
    any_diff = any_diff || a[i].prompt_tokens != d[i].prompt_tokens;
  }
  CHECK(all_same);
  CHECK(any_diff);
}

struct MeanLengths {
  double input = 0.0;
  double output = 0.0;
};

MeanLengths mean_lengths(const std::vector<RequestSpec>& r) {
  MeanLengths m;
  for (const RequestSpec& s : r) {
    m.input += s.prompt_tokens;
    m.output += s.output_tokens;
  }
  m.input /= static_cast<double>(r.size());
  m.output /= static_cast<double>(r.size());
  return m;
}

// What `vllm bench serve --dataset-name sharegpt --num-prompts 1000` sends per request on average:
// ~215 in / ~200 out in public runs (1000 prompts = 214,465 / 199,904 tokens, GPUStack's A100
// runs), 213 / 213 in data/realdata's llmk8s files (data/sharegpt_first_turn/README.md).
bool like_vllm_sharegpt(const MeanLengths& m) {
  return m.input >= 190.0 && m.input <= 240.0 && m.output >= 170.0 && m.output <= 230.0;
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
  CHECK_FALSE(vllm_is_valid_sequence(3, 100, false));  // prompt < 4
  CHECK(vllm_is_valid_sequence(4, 100, false));
  CHECK_FALSE(vllm_is_valid_sequence(100, 3, false));    // output < 4
  CHECK(vllm_is_valid_sequence(100, 3, true));           // skipped with --sharegpt-output-len
  CHECK(vllm_is_valid_sequence(1024, 1024, false));      // total 2048
  CHECK_FALSE(vllm_is_valid_sequence(1025, 10, false));  // prompt > 1024
  CHECK_FALSE(vllm_is_valid_sequence(1024, 1025, false));
}

TEST_CASE("sharegpt without --dataset-path sends vLLM's first-turn lengths (~215 in / ~200 out)",
          "[datasets]") {
  // The shipped set: 16 measured runs x the same 200 first-turn prompts (Llama 3 tokenizer);
  // sums from scripts/make_sharegpt_first_turn.py's source files: 682,544 / 682,688 tokens.
  const std::vector<LengthPair> all = read_lengths_csv(kFirstTurnLengths, "--dataset-path");
  REQUIRE(all.size() == 3200);
  int64_t in = 0, out = 0;
  for (const LengthPair& p : all) {
    in += p.prompt;
    out += p.output;
  }
  CHECK(in == 682544);
  CHECK(out == 682688);

  WorkloadConfig c;
  c.dataset_name = "sharegpt";  // no --dataset-path
  c.num_prompts = 1000;
  const std::vector<RequestSpec> r = drain(c);
  REQUIRE(r.size() == 1000);
  const MeanLengths m = mean_lengths(r);
  INFO("mean input " << m.input << ", mean output " << m.output);
  CHECK(like_vllm_sharegpt(m));
  CHECK(m.input == Approx(213.3).margin(15.0));  // the set's own means, within sampling noise
  CHECK(m.output == Approx(213.3).margin(15.0));
  // vLLM's filter ran on the dataset's completions before these requests were sent; the 1-token
  // answers the server gave (7 % of the rows) are sent as measured, not filtered again.
  int64_t one_token = 0;
  for (const RequestSpec& s : r) one_token += s.output_tokens == 1;
  CHECK(one_token > 0);

  // The multi-turn set is 2x too heavy for that check: it can fail.
  c.dataset_name = "sharegpt-multiturn";
  const MeanLengths multi = mean_lengths(drain(c));
  INFO("multi-turn: mean input " << multi.input << ", mean output " << multi.output);
  CHECK_FALSE(like_vllm_sharegpt(multi));
  CHECK(multi.input > 300.0);

  c.dataset_name = "sharegpt";
  c.num_prompts = 200;
  check_seeded_sampling(c);

  // --sharegpt-output-len N: every output is N and vLLM's filter applies (prompt + N <= 2048),
  // as it would to the dataset: 1,296 of the 3,200 rows have prompts of at most 48 tokens.
  c.sharegpt_output_len = 2000;
  c.no_oversample = true;
  c.num_prompts = 5000;
  const auto fixed = drain(c);
  CHECK(fixed.size() == 1296);
  for (const RequestSpec& s : fixed) {
    REQUIRE(s.output_tokens == 2000);
    REQUIRE(s.prompt_tokens <= 48);
  }
}

TEST_CASE("sharegpt-multiturn takes no --dataset-path, and dataset_file names what is read",
          "[datasets]") {
  WorkloadConfig c;
  c.dataset_name = "sharegpt-multiturn";
  c.dataset_path = "my.json";
  CHECK_THROWS_WITH(validate(c), Catch::Contains("--dataset-path: set with --dataset-name "
                                                 "sharegpt-multiturn") &&
                                     Catch::Contains("expected --dataset-name sharegpt"));
  c.dataset_path.clear();
  CHECK(dataset_file(c) == shipped_sharegpt_multiturn_path());
  c.dataset_name = "sharegpt";
  CHECK(dataset_file(c) == shipped_sharegpt_first_turn_path());
  CHECK(std::filesystem::equivalent(shipped_sharegpt_first_turn_path(), kFirstTurnLengths));
  c.dataset_path = "my.json";
  CHECK(dataset_file(c) == "my.json");
  c.dataset_name = "random";
  c.dataset_path.clear();
  CHECK(dataset_file(c).empty());
}

TEST_CASE("sharegpt-multiturn: the 30,731 Sarathi lengths, vLLM's filter keeps 11,035",
          "[datasets]") {
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
  c.dataset_name = "sharegpt-multiturn";  // the shipped multi-turn file
  c.num_prompts = 20000;                  // more than pass the filter: oversampled up to 20,000
  const std::vector<RequestSpec> r = drain(c);
  REQUIRE(r.size() == 20000);
  for (const RequestSpec& s : r)
    REQUIRE(vllm_is_valid_sequence(s.prompt_tokens, s.output_tokens, false));
  c.no_oversample = true;
  CHECK(drain(c).size() == 11035);
  c.no_oversample = false;
  c.num_prompts = 100;
  check_seeded_sampling(c);
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
  const std::string prompt(400, 'a');  // 100 tokens at 4 chars/token
  const std::string answer(80, 'b');   // 20 tokens
  TempFile f(
      "servesim_sharegpt.json",
      "[{\"id\": \"x\", \"conversations\": [{\"from\": \"human\", \"value\": \"" + prompt +
          "\"}, {\"from\": \"gpt\", \"value\": \"" + answer +
          "\"}, {\"from\": \"human\", \"value\": \"more\"}]},"
          "{\"id\": \"y\", \"conversations\": [{\"from\": \"human\", \"value\": \"alone\"}]},"
          "{\"id\": \"z\", \"conversations\": [{\"from\": \"human\", \"value\": \"h\\u00e9llo\"},"
          " {\"from\": \"gpt\", \"value\": \"" +
          std::string(40, 'c') + "\"}]}]");
  const std::vector<LengthPair> pairs = read_sharegpt_json(f.path, 4.0);
  REQUIRE(pairs.size() == 2);
  CHECK(pairs[0].prompt == 100);
  CHECK(pairs[0].output == 20);
  CHECK(pairs[1].prompt == 1);  // "héllo": 5 code points -> round(1.25) = 1
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
  TempFile f("servesim_custom.jsonl", "{\"prompt\": \"" + std::string(40, 'x') +
                                          "\", \"output_tokens\": 9}\n"
                                          "{\"prompt\": \"" +
                                          std::string(8, 'y') + "\", \"output_tokens\": 3}\n");
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
