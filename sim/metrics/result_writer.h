// Result files in the `vllm bench serve --save-result` schema (REFERENCE.md §2.1), plus a
// "servesim" object with what vLLM's file lacks, and the one-screen summary table.
//
// The JSON is deterministic: keys in a fixed order, numbers printed the same way every time, no
// wall-clock values (the "date" field is fixed by the caller). Writing goes to a temporary file
// renamed into place, so a failed run never leaves a half-written result.
#ifndef SERVESIM_SIM_METRICS_RESULT_WRITER_H_
#define SERVESIM_SIM_METRICS_RESULT_WRITER_H_

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/metrics/benchmark_metrics.h"

namespace servesim::metrics {

struct ResultContext {
  std::string date;  // "YYYYmmdd-HHMMSS"; callers pass a fixed value for reproducibility
  std::string backend = "vllm";
  std::string model_id;
  std::string tokenizer_id;
  int64_t num_prompts = 0;
  nlohmann::json request_rate;  // number or the string "inf"
  double burstiness = 1.0;
  nlohmann::json max_concurrency;  // int or null
  bool save_detailed = false;      // add per-request arrays (seconds)
  nlohmann::json servesim;         // the "servesim" object (config echo, KV, preemptions, ...)
};

// Builds the result object. Keys and units exactly as vLLM writes them: summaries in ms, arrays
// in seconds, "request_goodput" null unless goodput was asked for, p{P}_{metric}_ms with P
// printed as an integer when integral (p99) else as is (p99.9).
nlohmann::ordered_json build_result_json(const BenchmarkMetrics& m, const MetricsOptions& options,
                                         const ResultContext& ctx,
                                         const std::vector<RequestRecord>& records,
                                         const std::vector<StepLog>& step_logs);

// The summary of one set of metrics with vLLM's key names (completed, failed, token totals,
// throughputs, then mean/median/std/p{P} in ms of the selected ttft, tpot, itl, e2el): what the
// result file holds for each workload class (servesim.classes).
nlohmann::ordered_json metrics_summary_json(const BenchmarkMetrics& m,
                                            const MetricsOptions& options);

// Writes the result file that build_result_json() describes, byte for byte the same as
// write_json_atomically(path, build_result_json(...)), without building the per-request arrays
// of --save-detailed in memory: they are streamed to the file (constant memory per request).
// `replace` false: ConfigError, and nothing written, when `path` exists by the time the file is
// renamed into place (write_atomically).
void write_result_atomically(const std::string& path, const BenchmarkMetrics& m,
                             const MetricsOptions& options, const ResultContext& ctx,
                             const std::vector<RequestRecord>& records,
                             const std::vector<StepLog>& step_logs, bool replace = true);

// The text written for `j`: indented by 2, invalid UTF-8 replaced, a final newline.
std::string json_file_text(const nlohmann::ordered_json& j);
// Writes `j` to `path` atomically (temp file + rename; sim/base/output_file.h). Throws
// ConfigError when it cannot. Commands check the path first with check_output_path.
void write_json_atomically(const std::string& path, const nlohmann::ordered_json& j);
// The same for any text (CSV files beside the JSON ones).
void write_text_atomically(const std::string& path, const std::string& text);
// The same for text written by `fill` to a stream (to the temporary file; removed if `fill`
// throws). `replace` false: the file is renamed into place only if `path` does not exist then
// (rename_no_replace), else ConfigError and the temporary file is removed.
void write_atomically(const std::string& path, const std::function<void(std::ostream&)>& fill,
                      bool replace = true);

// Process-wide switch for the two writers above (default on). The ranks > 0 of an MPI job turn it
// off: rank 0 alone writes a study's files (sim/app/study.h).
void set_file_writes_enabled(bool enabled);

// The one-screen table, laid out like vLLM's "Serving Benchmark Result" block.
void print_summary_table(std::ostream& os, const BenchmarkMetrics& m,
                         const MetricsOptions& options);
// Same, plus the lines vLLM prints from its arguments: "Maximum request concurrency" (when
// ctx.max_concurrency is set), "Request rate configured (RPS)" (when ctx.request_rate is finite),
// and the client-queue sections (when selected and max_concurrency is set). (Added by sim/metrics.)
void print_summary_table(std::ostream& os, const BenchmarkMetrics& m, const MetricsOptions& options,
                         const ResultContext& ctx);

// The "P" of p{P}_{metric}_ms as vLLM spells it: str(int(p)) when integral, else Python's
// str(float) (shortest round-trip repr): 99 → "99", 99.9 → "99.9", 0.0001 → "0.0001".
std::string percentile_word(double p);

}  // namespace servesim::metrics

#endif  // SERVESIM_SIM_METRICS_RESULT_WRITER_H_
