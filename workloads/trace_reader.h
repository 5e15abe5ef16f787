// TraceReader: streams the rows of a recorded request trace (arrival time, prompt and output
// tokens, optional prefix hash ids), one row at a time, whatever the file's size.
//
// Formats (--trace-format), each read by its header's column names:
//   azure        Azure LLM inference trace 2023 (AzurePublicDataset): TIMESTAMP
//                "YYYY-MM-DD HH:MM:SS.fffffff" (no zone), ContextTokens, GeneratedTokens. CRLF.
//   mooncake     Mooncake FAST'25 JSONL: timestamp (ms), input_length, output_length, hash_ids
//                (one id per 512-token prompt block; equal ids = equal prefix).
//   burstgpt     BurstGPT CSV: Timestamp (s), Model, Request tokens, Response tokens, ...; rows
//   with
//                Response tokens 0 are failed requests and are skipped (as vLLM's BurstGPT
//                dataset).
//   vidur        Vidur processed traces: arrived_at (s), num_prefill_tokens, num_decode_tokens.
//   splitwise    splitwise-sim request traces: arrival_timestamp (s), prompt_size, token_size.
//   vllm-result  a `vllm bench serve --save-result --save-detailed` JSON: input_lens, output_lens
//                and start_times (s; per request, when the client sent it). Not streamed (one
//                JSON document; such files hold at most a few hundred thousand requests).
//   csv          servesim's own: arrival_s, prompt_tokens, output_tokens.
// Every CSV format may carry an optional session_id column (any text; empty = no session): the
// conversation a row belongs to, for --multi-turn replay (trace_sessions.h). Rows of one session
// are its turns in row (= send) order. Every CSV format may also carry an optional lora_adapter
// column (any text naming the LoRA adapter of the request; empty = the base model).
// Arrival times are converted to integer nanoseconds without binary rounding where the file
// writes decimal seconds or integer milliseconds. Rows must be in nondecreasing time order (every
// file above is): a row that goes back in time is rejected, as are missing fields, non-numbers
// and token counts < 1 (output 0 is accepted only where the format says it means "failed").
// Every error names the file and line: "FILE:LINE: column 'X' has value 'Y'; expected ...".
#ifndef SERVESIM_WORKLOADS_TRACE_READER_H_
#define SERVESIM_WORKLOADS_TRACE_READER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace servesim::workloads {

struct TraceRow {
  int64_t arrival_ns = 0;  // as recorded (absolute for azure, from the file's origin otherwise)
  int32_t prompt_tokens = 0;
  int32_t output_tokens = 0;
  std::vector<int64_t> hash_ids;  // mooncake only; one per block_tokens() prompt tokens
  std::string session;            // the session_id column ("" = none, or no such column)
  std::string lora_adapter;       // the lora_adapter column ("" = the base model, or no column)
};

class TraceReader {
 public:
  virtual ~TraceReader() = default;
  // The next row in file order; false at the end. Throws ConfigError "FILE:LINE: ..." on a bad row.
  virtual bool next(TraceRow& row) = 0;
  // Tokens per hash id (512 for mooncake), 0 when the format has none.
  virtual int32_t block_tokens() const { return 0; }
  // True when the file has a session_id column.
  virtual bool has_sessions() const { return false; }
  // True when the file has a lora_adapter column.
  virtual bool has_lora_adapters() const { return false; }
};

// The accepted --trace-format values.
const std::vector<std::string>& trace_format_names();

// Opens `path` in `format`. Throws ConfigError naming --trace or --trace-format.
std::unique_ptr<TraceReader> open_trace(const std::string& path, const std::string& format);

}  // namespace servesim::workloads

#endif  // SERVESIM_WORKLOADS_TRACE_READER_H_
