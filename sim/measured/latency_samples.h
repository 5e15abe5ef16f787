// LatencySamples: the per-request latency values of one run, in ms, as vLLM's calculate_metrics
// defines them (sim/metrics/benchmark_metrics.h): TTFT and E2E per completed request, TPOT per
// completed request with more than one output token, ITL = every gap between streamed chunks,
// pooled. The measured side comes from a result file's per-request data, the simulated side from
// a replay's request records; validate compares the two distributions (distribution_tests.h).
#ifndef SERVESIM_SIM_MEASURED_LATENCY_SAMPLES_H_
#define SERVESIM_SIM_MEASURED_LATENCY_SAMPLES_H_

#include <string>
#include <vector>

#include "sim/measured/measured_run.h"
#include "sim/metrics/request_record.h"

namespace servesim::measured {

struct LatencySamples {
  std::vector<double> ttft_ms, tpot_ms, itl_ms, e2el_ms;  // in request (or gap) order

  // The values of a latency metric name ("ttft", "tpot", "itl", "e2el"; latency_metric_names()).
  const std::vector<double>& of(const std::string& metric) const;
  // Adds `other`'s values after these (pooling the replays of several seeds).
  void append(const LatencySamples& other);
};

// A measured request's E2E in seconds: the file's latency, else TTFT + Σ ITL when the ITLs are
// known (or there is one output token); NaN when neither.
double request_e2e_s(const MeasuredRequest& r);

// The per-request values of a measured run's completed requests (failed ones left out); empty
// vectors when the file has no per-request data for a metric. TPOT is the file's per-request
// TPOT when it gives one, else (E2E − TTFT)/(output − 1).
LatencySamples measured_samples(const MeasuredRun& run);

// The same values of a simulated run's measured (non-warm-up), completed, non-failed records,
// with `ttft_offset_s` added to TTFT and E2E exactly as compute_metrics adds
// MetricsOptions::ttft_offset_s (the caller passes the offset its run_simulation applied).
LatencySamples replay_samples(const std::vector<metrics::RequestRecord>& records,
                              const std::vector<metrics::StepLog>& step_logs, double ttft_offset_s);

}  // namespace servesim::measured

#endif  // SERVESIM_SIM_MEASURED_LATENCY_SAMPLES_H_
