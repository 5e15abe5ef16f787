// Datasets of recorded (prompt, output) length pairs, as `vllm bench serve` samples them:
// --dataset-name sharegpt, custom and burstgpt (vllm/benchmarks/datasets.py, classes
// ShareGPTDataset, CustomDataset, BurstGPTDataset, read at commit 0056b87).
//
// servesim has no tokenizer, so text becomes tokens either exactly (a pre-tokenised lengths file)
// or by a characters-per-token ratio (--sharegpt-chars-per-token, default 4.0: the rule of thumb
// OpenAI documents for English text with GPT tokenizers, "one token ~ 4 characters"; it is an
// estimate, not a measurement, and code or non-English text tokenises differently). A text of C
// characters counts max(1, round(C / ratio)) tokens.
//
// vLLM semantics kept, per dataset:
//   sharegpt  entries with >= 2 conversation turns; prompt = turn 0, completion = turn 1;
//             shuffled with the seed (unless --disable-shuffle); walked in order keeping pairs that
//             pass is_valid_sequence (prompt >= 4, output >= 4 unless --sharegpt-output-len is
//             given, prompt <= 1024, prompt + output <= 2048) until --num-prompts are kept; then
//             oversampled (uniform choice among the kept pairs) up to --num-prompts unless
//             --no-oversample. --sharegpt-output-len replaces every output length.
//   custom    JSONL with a "prompt" string per line; shuffled; the first --num-prompts lines;
//             output = --custom-output-len (or, with -1, each line's "output_tokens"); oversampled.
//   burstgpt  CSV; rows with Model == "GPT-4" and Response tokens > 0; --num-prompts rows drawn
//             without replacement (with replacement when the file has fewer); prompt = "Request
//             tokens", output = "Response tokens".
// Departures: shuffles and draws use servesim's RngStream (same distribution as Python's random /
// pandas sample, not the same sequence); vLLM counts tokens with the model's tokenizer.
//
// Shipped length sets (no --dataset-path), each a lengths CSV with a README beside it:
//   sharegpt            data/sharegpt_first_turn: the first-turn requests that measured vllm bench
//                       serve --dataset-name sharegpt runs sent (Llama 3 tokenizer, mean 213 /
//                       213). vLLM's filter already ran on them (on the dataset's completion
//                       lengths), so it is not applied again to these generated lengths
//                       (filtered_upstream).
//   sharegpt-multiturn  data/realdata/sharegpt_lengths: Sarathi-Serve's multi-turn ShareGPT
//                       (Llama 2 tokenizer), with vLLM's filter applied as to any ShareGPT file.
#ifndef SERVESIM_WORKLOADS_LENGTH_DATASETS_H_
#define SERVESIM_WORKLOADS_LENGTH_DATASETS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "workloads/dataset.h"

namespace servesim::workloads {

struct LengthPair {
  int32_t prompt = 0;
  int32_t output = 0;
};

// Tokens for a text of `chars` characters at `chars_per_token`: max(1, round(chars / ratio)).
int32_t tokens_from_chars(int64_t chars, double chars_per_token);

// A pre-tokenised lengths CSV: a header naming num_prefill_tokens and num_decode_tokens (the
// shipped data/realdata/sharegpt_lengths file; prompt_tokens/output_tokens are accepted too).
// Every row is kept, in file order. Bad rows throw ConfigError "FILE:LINE: ...".
std::vector<LengthPair> read_lengths_csv(const std::string& path, const std::string& flag);

// A ShareGPT JSON file: [{"conversations": [{"from": ..., "value": TEXT}, ...]}, ...]. Entries with
// fewer than 2 turns are dropped (vLLM load_data); token counts from characters (UTF-8 code
// points).
std::vector<LengthPair> read_sharegpt_json(const std::string& path, double chars_per_token);

// A custom JSONL file: one object per line with a "prompt" string; "output_tokens" (integer >= 1)
// is read only when `output_len` is -1, else every output is `output_len`.
std::vector<LengthPair> read_custom_jsonl(const std::string& path, double chars_per_token,
                                          int32_t output_len);

// A BurstGPT CSV (columns Timestamp, Model, Request tokens, Response tokens, ...): the GPT-4 rows
// with Response tokens > 0 (BurstGPTDataset.load_data).
std::vector<LengthPair> read_burstgpt_csv(const std::string& path);

// How a SampledLengthDataset picks its requests from the pairs.
struct LengthSampling {
  enum class Mode { kShareGpt, kFirstN, kDrawN };
  Mode mode = Mode::kFirstN;
  int64_t num_prompts = 1000;
  bool shuffle = true;          // not --disable-shuffle (kShareGpt, kFirstN)
  bool oversample = true;       // not --no-oversample (kShareGpt, kFirstN)
  int32_t output_override = 0;  // kShareGpt: --sharegpt-output-len (0 = the recorded length)
  // kShareGpt: the pairs are requests that vLLM's filter already kept, with generated (not
  // dataset) output lengths: is_valid_sequence runs only when output_override replaces them.
  bool filtered_upstream = false;
};

// The shipped ShareGPT length sets (above), as absolute paths under data_dir().
std::string shipped_sharegpt_first_turn_path();
std::string shipped_sharegpt_multiturn_path();

// The chosen pairs, in send order. Memory: the chosen pairs (8 bytes each).
class SampledLengthDataset final : public Dataset {
 public:
  // Throws ConfigError naming `source` when no pair survives the filters.
  SampledLengthDataset(std::vector<LengthPair> pairs, const LengthSampling& sampling, uint64_t seed,
                       const std::string& source);

  int64_t size() const override { return static_cast<int64_t>(chosen_.size()); }
  RequestSpec next() override;
  const std::vector<LengthPair>& chosen() const { return chosen_; }

 private:
  std::vector<LengthPair> chosen_;
  size_t next_ = 0;
};

// vLLM's is_valid_sequence (vllm/benchmarks/dataset_utils.py) with its defaults min_len 4,
// max_prompt_len 1024, max_total_len 2048.
bool vllm_is_valid_sequence(int64_t prompt_len, int64_t output_len, bool skip_min_output_len_check);

}  // namespace servesim::workloads

#endif  // SERVESIM_WORKLOADS_LENGTH_DATASETS_H_
