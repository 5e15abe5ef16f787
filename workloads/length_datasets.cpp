#include "workloads/length_datasets.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <utility>

#include <nlohmann/json.hpp>

#include "sim/base/error.h"
#include "sim/base/input_files.h"
#include "sim/base/json_file.h"
#include "sim/base/line_reader.h"
#include "sim/base/printable.h"
#include "sim/base/rng.h"

namespace servesim::workloads {
namespace {

using nlohmann::json;

int64_t utf8_code_points(const std::string& s) {
  int64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

int32_t checked_tokens(const LineReader& reader, const char* column, int64_t v, int64_t min) {
  if (v < min || v > kMaxTokens) {
    reader.fail("column '" + std::string(column) + "' has value " + std::to_string(v) +
                "; expected an integer in [" + std::to_string(min) + ", " +
                std::to_string(kMaxTokens) + "]");
  }
  return static_cast<int32_t>(v);
}

// Streams a ShareGPT JSON file (hundreds of MB upstream) without building the document: only the
// character counts of each entry's first two turns are kept.
class ShareGptSax : public json::json_sax_t {
 public:
  explicit ShareGptSax(double chars_per_token) : ratio_(chars_per_token) {}
  std::vector<LengthPair> pairs;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool string(string_t& s) override {
    if (in_conv_ && depth() == 4 && keys_[4] == "value" && turn_ < 2) {
      chars_[turn_] = utf8_code_points(s);
    }
    return true;
  }
  bool start_object(std::size_t) override {
    push('o');
    if (depth() == 2) {
      turns_ = 0;
      chars_[0] = chars_[1] = -1;
    } else if (depth() == 4 && in_conv_) {
      turn_ = turns_++;
    }
    return true;
  }
  bool key(string_t& k) override {
    keys_[depth()] = k;
    return true;
  }
  bool end_object() override {
    if (depth() == 2 && turns_ >= 2 && chars_[0] >= 0 && chars_[1] >= 0) {
      pairs.push_back({tokens_from_chars(chars_[0], ratio_), tokens_from_chars(chars_[1], ratio_)});
    }
    pop();
    return true;
  }
  bool start_array(std::size_t) override {
    push('a');
    if (depth() == 3 && keys_[2] == "conversations") in_conv_ = true;
    return true;
  }
  bool end_array() override {
    if (depth() == 3) in_conv_ = false;
    pop();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const json::exception& e) override {
    error = e.what();
    return false;
  }
  std::string error;

 private:
  int depth() const { return static_cast<int>(stack_.size()); }
  void push(char c) {
    stack_.push_back(c);
    if (keys_.size() <= stack_.size()) keys_.resize(stack_.size() + 1);
    keys_[stack_.size()].clear();
  }
  void pop() { stack_.pop_back(); }

  double ratio_;
  std::string stack_;
  std::vector<std::string> keys_ = std::vector<std::string>(8);
  bool in_conv_ = false;
  int turns_ = 0;
  int turn_ = 0;
  int64_t chars_[2] = {-1, -1};
};

// Fisher-Yates from the end, j uniform on [0, i] (the direction of CPython's random.shuffle).
void shuffle(std::vector<LengthPair>& v, RngStream& rng) {
  for (size_t i = v.size(); i > 1; --i) {
    const auto j = static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(i - 1)));
    std::swap(v[i - 1], v[j]);
  }
}

}  // namespace

std::string shipped_sharegpt_first_turn_path() {
  return (data_dir() / "data/sharegpt_first_turn/sharegpt_first_turn_llama3.csv").string();
}

std::string shipped_sharegpt_multiturn_path() {
  return (data_dir() /
          "data/realdata/sharegpt_lengths/sharegpt_8k_filtered_stats_llama2_tokenizer.csv")
      .string();
}

int32_t tokens_from_chars(int64_t chars, double chars_per_token) {
  const double t = std::round(static_cast<double>(chars) / chars_per_token);
  return static_cast<int32_t>(std::clamp<double>(t, 1.0, static_cast<double>(kMaxTokens)));
}

bool vllm_is_valid_sequence(int64_t prompt_len, int64_t output_len,
                            bool skip_min_output_len_check) {
  constexpr int64_t kMinLen = 4, kMaxPrompt = 1024, kMaxTotal = 2048;
  const bool prompt_too_short = prompt_len < kMinLen;
  const bool output_too_short = !skip_min_output_len_check && output_len < kMinLen;
  const bool prompt_too_long = prompt_len > kMaxPrompt;
  const bool combined_too_long = prompt_len + output_len > kMaxTotal;
  return !(prompt_too_short || output_too_short || prompt_too_long || combined_too_long);
}

std::vector<LengthPair> read_lengths_csv(const std::string& path, const std::string& flag) {
  LineReader reader(path, flag);
  std::string line;
  if (!reader.next(line)) reader.fail("empty file; expected a CSV header");
  const std::vector<std::string> header = split_csv_header(reader, line);
  int p = find_column(header, "num_prefill_tokens");
  int o = find_column(header, "num_decode_tokens");
  if (p < 0 || o < 0) {
    p = find_column(header, "prompt_tokens");
    o = find_column(header, "output_tokens");
  }
  if (p < 0 || o < 0) {
    reader.fail("header '" + excerpt(line) +
                "' lacks the length columns; expected num_prefill_tokens,num_decode_tokens "
                "(or prompt_tokens,output_tokens)");
  }
  std::vector<LengthPair> out;
  while (reader.next(line)) {
    if (line.empty()) continue;
    const std::vector<std::string> f = split_csv(line);
    if (f.size() != header.size()) {
      reader.fail(std::to_string(f.size()) + " fields; expected " + std::to_string(header.size()));
    }
    LengthPair pair;
    pair.prompt =
        checked_tokens(reader, header[p].c_str(), parse_int_field(reader, header[p], f[p]), 1);
    pair.output =
        checked_tokens(reader, header[o].c_str(), parse_int_field(reader, header[o], f[o]), 1);
    out.push_back(pair);
  }
  return out;
}

std::vector<LengthPair> read_sharegpt_json(const std::string& path, double chars_per_token) {
  check_input_file(path, "--dataset-path", 0);  // streamed: no size limit
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("--dataset-path: cannot open '" + path + "'");
  ShareGptSax sax(chars_per_token);
  const bool ok = json::sax_parse(in, &sax);
  if (!ok) {
    throw ConfigError(path + ": not a ShareGPT JSON file (" + sax.error +
                      "); expected [{\"conversations\": [{\"from\": ..., \"value\": ...}, ...]}]");
  }
  return std::move(sax.pairs);
}

std::vector<LengthPair> read_custom_jsonl(const std::string& path, double chars_per_token,
                                          int32_t output_len) {
  LineReader reader(path, "--dataset-path");
  std::vector<LengthPair> out;
  std::string line;
  while (reader.next(line)) {
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    json j;
    try {
      j = json::parse(line);
    } catch (const json::exception& e) {
      reader.fail(std::string("not a JSON object (") + e.what() + ")");
    }
    if (!j.is_object() || !j.contains("prompt") || !j["prompt"].is_string()) {
      reader.fail("expected an object with a \"prompt\" string (vLLM's custom dataset)");
    }
    LengthPair pair;
    pair.prompt =
        tokens_from_chars(utf8_code_points(j["prompt"].get<std::string>()), chars_per_token);
    if (output_len == -1) {
      auto it = j.find("output_tokens");
      if (it == j.end() || !it->is_number_integer() || it->get<int64_t>() < 1 ||
          it->get<int64_t>() > kMaxTokens) {
        reader.fail(
            "field 'output_tokens' is missing or not an integer >= 1 (needed with "
            "--custom-output-len -1)");
      }
      pair.output = static_cast<int32_t>(it->get<int64_t>());
    } else {
      pair.output = output_len;
    }
    out.push_back(pair);
  }
  return out;
}

std::vector<LengthPair> read_burstgpt_csv(const std::string& path) {
  LineReader reader(path, "--dataset-path");
  std::string line;
  if (!reader.next(line)) reader.fail("empty file; expected a CSV header");
  const std::vector<std::string> header = split_csv_header(reader, line);
  const int model = find_column(header, "Model");
  const int req = find_column(header, "Request tokens");
  const int resp = find_column(header, "Response tokens");
  if (model < 0 || req < 0 || resp < 0) {
    reader.fail("header '" + excerpt(line) +
                "' lacks Model, Request tokens or Response tokens (BurstGPT)");
  }
  std::vector<LengthPair> out;
  while (reader.next(line)) {
    if (line.empty()) continue;
    const std::vector<std::string> f = split_csv(line);
    if (f.size() != header.size()) {
      reader.fail(std::to_string(f.size()) + " fields; expected " + std::to_string(header.size()));
    }
    const int64_t in_tokens = parse_int_field(reader, "Request tokens", f[req]);
    const int64_t out_tokens = parse_int_field(reader, "Response tokens", f[resp]);
    if (f[model] != "GPT-4" || out_tokens <= 0) continue;  // vLLM's filter
    LengthPair pair;
    pair.prompt = checked_tokens(reader, "Request tokens", in_tokens, 1);
    pair.output = checked_tokens(reader, "Response tokens", out_tokens, 1);
    out.push_back(pair);
  }
  return out;
}

SampledLengthDataset::SampledLengthDataset(std::vector<LengthPair> pairs, const LengthSampling& s,
                                           uint64_t seed, const std::string& source) {
  RngStream rng(seed, "dataset.sample");
  if (s.mode == LengthSampling::Mode::kDrawN) {
    if (pairs.empty()) throw ConfigError(source + ": no usable rows");
    // pandas DataFrame.sample(n): without replacement when n <= rows, else with replacement.
    if (s.num_prompts <= static_cast<int64_t>(pairs.size())) {
      for (int64_t i = 0; i < s.num_prompts; ++i) {  // partial Fisher-Yates from the front
        const auto j =
            static_cast<size_t>(rng.uniform_int(i, static_cast<int64_t>(pairs.size()) - 1));
        std::swap(pairs[static_cast<size_t>(i)], pairs[j]);
        chosen_.push_back(pairs[static_cast<size_t>(i)]);
      }
    } else {
      for (int64_t i = 0; i < s.num_prompts; ++i) {
        chosen_.push_back(
            pairs[static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(pairs.size()) - 1))]);
      }
    }
    return;
  }
  if (s.shuffle) shuffle(pairs, rng);
  for (const LengthPair& p : pairs) {
    if (static_cast<int64_t>(chosen_.size()) >= s.num_prompts) break;
    if (s.mode == LengthSampling::Mode::kShareGpt) {
      LengthPair q = p;
      if (s.output_override > 0) q.output = s.output_override;
      const bool filter = !s.filtered_upstream || s.output_override > 0;
      if (filter && !vllm_is_valid_sequence(q.prompt, q.output, s.output_override > 0)) continue;
      chosen_.push_back(q);
    } else {
      chosen_.push_back(p);
    }
  }
  if (chosen_.empty()) {
    throw ConfigError(source + ": no request passes the dataset's filters" +
                      (s.mode == LengthSampling::Mode::kShareGpt
                           ? std::string(" (vLLM keeps 4 <= prompt <= 1024, output >= 4, "
                                         "prompt + output <= 2048)")
                           : std::string()));
  }
  // maybe_oversample_requests: random.choice among the requests kept so far.
  const auto kept = static_cast<int64_t>(chosen_.size());
  if (s.oversample) {
    RngStream extra(seed, "dataset.oversample");
    while (static_cast<int64_t>(chosen_.size()) < s.num_prompts) {
      chosen_.push_back(chosen_[static_cast<size_t>(extra.uniform_int(0, kept - 1))]);
    }
  }
}

RequestSpec SampledLengthDataset::next() {
  SERVESIM_CHECK(next_ < chosen_.size(), "SampledLengthDataset::next called past its size");
  RequestSpec spec;
  spec.prompt_tokens = chosen_[next_].prompt;
  spec.output_tokens = chosen_[next_].output;
  ++next_;
  return spec;
}

}  // namespace servesim::workloads
