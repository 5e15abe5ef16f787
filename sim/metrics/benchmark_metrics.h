// BenchmarkMetrics: the numbers `vllm bench serve` reports, computed from RequestRecords exactly as
// vLLM's calculate_metrics() does (REFERENCE.md §2.1):
//   TTFT = first token − send time; TPOT = (E2E − TTFT)/(output − 1) for output > 1;
//   ITL = every gap between consecutive tokens of a request, pooled over requests;
//   E2EL = last token − send time. mean = np.mean, median = np.median, std = np.std (population),
//   percentiles = np.percentile (linear interpolation). Summaries in ms.
// Requests marked warmup are excluded from everything; failed ones count only in `failed`.
#ifndef SERVESIM_SIM_METRICS_BENCHMARK_METRICS_H_
#define SERVESIM_SIM_METRICS_BENCHMARK_METRICS_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/metrics/request_record.h"

namespace servesim::metrics {

// Options mirroring vllm bench serve's flags.
struct MetricsOptions {
  // --percentile-metrics: subset of {ttft, tpot, itl, e2el}, in vLLM's default order.
  std::vector<std::string> percentile_metrics = {"ttft", "tpot", "itl"};
  // --metric-percentiles: e.g. {99} (vLLM default "99").
  std::vector<double> metric_percentiles = {99};
  // --goodput: SLO in ms per metric key ("ttft", "tpot", "e2el"); empty = no goodput.
  std::map<std::string, double> goodput_slo_ms;
  // Added to every TTFT (and so E2E): client-side overhead from calibration, seconds.
  double ttft_offset_s = 0;
  // Workload classes (RequestRecord::class_id indexes them). When not empty, compute_metrics also
  // computes every class's metrics (BenchmarkMetrics::classes). Not a flag: set from the workload.
  std::vector<std::string> class_names;
  // Internal: when >= 0, only records of this class count (-1 = all).
  int32_t only_class = -1;
  // What compute_metrics may leave out because the caller never reads it. Not flags: set by
  // callers that read only some values (plan: only its SLOs and report keys). Every default
  // computes everything; a value left out is absent or 0, and the values computed are the same
  // either way (each is computed on its own). Never clear one for a result that is written out.
  bool compute_itl = true;                      // false: no "itl" summary
  bool compute_max_output_tokens_per_s = true;  // false: max_output_tokens_per_s stays 0
  bool compute_max_concurrent_requests = true;  // false: max_concurrent_requests stays 0
};

// Parses vLLM's "--goodput ttft:500 tpot:50" items. Throws ConfigError on a bad key or value.
std::map<std::string, double> parse_goodput(const std::vector<std::string>& items);

struct MetricSummary {
  double mean_ms = 0, median_ms = 0, std_ms = 0;
  std::vector<std::pair<double, double>> percentiles_ms;  // (p, value)
};

struct ClassMetrics;

struct BenchmarkMetrics {
  int64_t completed = 0;
  int64_t failed = 0;
  int64_t total_input_tokens = 0;
  int64_t total_output_tokens = 0;
  double duration_s = 0;  // first measured send → last measured completion
  double request_throughput = 0;
  std::optional<double> request_goodput;  // set when goodput SLOs were given
  double output_throughput = 0;
  double total_token_throughput = 0;
  double max_output_tokens_per_s = 0;  // peak of per-second output token counts
  int64_t max_concurrent_requests = 0;
  // Keyed "ttft", "tpot", "itl", "e2el" (all four computed unless MetricsOptions::compute_itl
  // leaves ITL out; the writer filters), plus
  // vLLM's newer "client_queue_time" and "e2el_including_client_queue" (from
  // RequestRecord::client_queue_time), computed only when listed in percentile_metrics; as vLLM
  // does, the writer emits those two only when --max-concurrency is set.
  std::map<std::string, MetricSummary> summaries;
  // Per workload class, in MetricsOptions::class_names order (empty without classes): the same
  // metrics over that class's requests alone, except that the throughputs (request, goodput,
  // output, total token) divide by the pooled duration, so the classes' throughputs add up to the
  // pooled ones, as their completed, failed and token counts do.
  std::vector<ClassMetrics> classes;
};

struct ClassMetrics {
  std::string name;
  BenchmarkMetrics metrics;
};

// `step_logs[r]` is replica r's StepLog; records refer to it through `replica` and segments.
// Throws ConfigError for a percentile outside [0, 100], an unknown --percentile-metrics name or an
// unknown goodput key; InternalError (SERVESIM_CHECK) when a completed record's segments disagree
// with its output_tokens / first_token / last_token or point outside its replica's StepLog.
BenchmarkMetrics compute_metrics(const std::vector<RequestRecord>& records,
                                 const std::vector<StepLog>& step_logs,
                                 const MetricsOptions& options);

// Per-request token times for one record (length output_tokens), for detailed output and tests.
// Raw step_end values: MetricsOptions::ttft_offset_s is not added.
std::vector<SimTime> token_times(const RequestRecord& record, const StepLog& log);

// np.percentile(values, p) with linear interpolation. REQUIRES: values sorted ascending, non-empty.
double percentile_linear(const std::vector<double>& sorted_values, double p);

}  // namespace servesim::metrics

#endif  // SERVESIM_SIM_METRICS_BENCHMARK_METRICS_H_
