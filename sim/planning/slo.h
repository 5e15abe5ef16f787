// SLOs in vLLM's sweep notation (REFERENCE.md §2.1, `vllm bench sweep serve_sla --sla-params
// '{"p99_ttft_ms": "<=500"}'`), written as one expression per --slo: `p99_ttft_ms<=500`.
//
// Contract:
//  - parse_slo() accepts KEY OP NUMBER with OP one of <=, <, >=, > (spaces around OP allowed).
//    KEY is a metric of the result file (vllm bench serve --save-result names):
//      {mean,median,std,p<P>}_{ttft,tpot,itl,e2el}_ms   (P a number in [0, 100]: p99, p99.9, p50)
//      request_throughput, request_goodput, output_throughput, total_token_throughput,
//      max_output_tokens_per_s, max_concurrent_requests, completed, failed, duration,
//      total_input_tokens, total_output_tokens
//    ("request_goodput:", the old spelling with a colon, is accepted as request_goodput).
//    Anything else throws ConfigError: "--slo: '<text>' ..." naming what is wrong and what is
//    expected. The number must be finite.
//  - metric_value() reads KEY from BenchmarkMetrics; nullopt when the run has no such value (no
//    completed request, TPOT of one-token outputs, goodput not asked for, a percentile that was
//    not computed — call require_slo_metrics() first).
//  - require_slo_metrics() adds to MetricsOptions every percentile the SLOs name (and all four
//    latency metrics), so metric_value() finds them.
//  - A key may name a workload class: CLASS/KEY (e.g. "rag/p99_ttft_ms<=3000") reads KEY from
//    that class's metrics (BenchmarkMetrics::classes); metric_value() is nullopt when the run has
//    no such class (check_slo_classes() catches that up front). class_slos() turns a workload
//    file's per-class SLOs into such keys; errors name the file and classes[i].slo[j].
//  - goodput_from_slos(): vLLM's per-request goodput SLOs ("ttft", "tpot", "e2el" in ms) implied
//    by the upper-bound SLOs on those metrics: the smallest threshold given for each metric.
#ifndef SERVESIM_SIM_PLANNING_SLO_H_
#define SERVESIM_SIM_PLANNING_SLO_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/metrics/benchmark_metrics.h"
#include "workloads/workload_classes.h"

namespace servesim::planning {

// The latency metrics of a result file, in vLLM's order (ttft, tpot, itl, e2el).
inline constexpr const char* kLatencyMetrics[] = {"ttft", "tpot", "itl", "e2el"};

enum class SloOp { kLe, kLt, kGe, kGt };

struct Slo {
  std::string key;  // result-file name, e.g. "p99_ttft_ms"
  SloOp op = SloOp::kLe;
  double threshold = 0;

  // True when `value` satisfies the SLO.
  bool holds(double value) const;
  // Relative distance past the threshold (> 0 = violated): value/threshold − 1 for upper bounds,
  // 1 − value/threshold for lower bounds (absolute difference when threshold is 0).
  double violation(double value) const;
  bool is_upper_bound() const { return op == SloOp::kLe || op == SloOp::kLt; }
  // Canonical text: "p99_ttft_ms<=500".
  std::string text() const;
};

Slo parse_slo(const std::string& text);
std::vector<Slo> parse_slos(const std::vector<std::string>& texts);

// True when `key` is a metric name parse_slo() accepts.
bool is_slo_metric(const std::string& key);

std::optional<double> metric_value(const metrics::BenchmarkMetrics& m, const std::string& key);

void require_slo_metrics(metrics::MetricsOptions& options, const std::vector<Slo>& slos);

// For a caller that reads nothing of a run's metrics but `slos` (by metric_value()) and keys that
// never name ITL, max_output_tokens_per_s or max_concurrent_requests (plan): clears
// MetricsOptions::compute_itl / compute_max_output_tokens_per_s / compute_max_concurrent_requests
// for each of those no SLO names (a class's SLO counts), so compute_metrics() skips it. The values
// the SLOs read are the same either way.
void leave_out_unread_metrics(metrics::MetricsOptions& options, const std::vector<Slo>& slos);

std::map<std::string, double> goodput_from_slos(const std::vector<Slo>& slos);

// Every class's SLOs of a workload file, as CLASS/KEY SLOs, in file order.
std::vector<Slo> class_slos(const workloads::WorkloadClasses& classes);

// Throws ConfigError when an SLO names a class that is not in `names`.
void check_slo_classes(const std::vector<Slo>& slos, const std::vector<std::string>& names);

// "p99_ttft_ms<=500, p99_tpot_ms<=50".
std::string slos_text(const std::vector<Slo>& slos);

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_SLO_H_
