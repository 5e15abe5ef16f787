// Validation: predicted versus measured, per run and metric, and the median absolute error per
// metric over the scored runs. The engine of `servesim validate`; `servesim calibrate` reuses the
// holdout split and the table to report its fit and its score on different runs.
//
// Metrics compared (where the run measured them): TTFT, TPOT, ITL and E2E at mean, median (P50),
// P90 and P99, in ms; the last E2E (P100: static batches); request throughput in req/s. Signed
// error = (predicted − measured) / measured · 100 %. The median absolute error of a metric is over
// the runs that measured it (np.median: mean of the two middle values for an even count).
#ifndef SERVESIM_SIM_MEASURED_VALIDATION_H_
#define SERVESIM_SIM_MEASURED_VALIDATION_H_

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/base/executor.h"
#include "sim/measured/distribution_tests.h"
#include "sim/measured/measured_run.h"
#include "sim/measured/replay.h"
#include "sim/measured/ttft_floor.h"

namespace servesim::measured {

// The keys compared, in report order: mean/median/p90/p99 of ttft, tpot, itl, e2el, then
// p100_e2el_ms (the last request's E2E: a static batch's latency), then request_throughput.
const std::vector<std::string>& compared_metric_keys();

// Accuracy targets on runs not used for fitting: median |error| ≤ 5 % for mean E2E and
// mean TPOT/ITL, ≤ 10 % for mean TTFT, ≤ 15 % for P99 TTFT. Key -> limit in %.
const std::map<std::string, double>& accuracy_targets();

// Deterministic holdout split: the ceil(fraction · n) runs with the smallest FNV-1a hash of their
// id are scored; the others are for fitting. Independent of the order runs are given in, so
// validate and calibrate agree. REQUIRES: 0 < fraction <= 1. Returns scored[i] per run.
std::vector<bool> holdout_scored(const std::vector<std::string>& run_ids, double fraction);

// True when `run_id` is in `fitted_on` (compared after making both absolute and normal; an entry
// without "#n" covers every run of that file).
bool in_fit_set(const std::string& run_id, const std::vector<std::string>& fitted_on);

struct MetricComparison {
  std::string key;  // e.g. "mean_ttft_ms"
  double measured = 0;
  double predicted = 0;
  double error_pct = 0;  // signed
};

struct RunValidation {
  std::string id;
  std::string format;
  std::string label;
  std::string deployment;  // "llama-3.3-70b on a100-40gb, TP8 PP1"
  std::string engine_version;
  std::string arrivals;  // Prediction::arrivals_detail
  std::string basis;     // calibrated / transferred / datasheet-only (Prediction::basis)
  std::string basis_reason;
  bool in_fit_set = false;
  int64_t kv_tokens = 0;
  int64_t preemptions = 0;
  std::vector<MetricComparison> rows;
  std::vector<std::string> notes;
  // What was assumed and what was declared rather than recorded (run_assumptions.h), and the
  // run's warnings: a measured TTFT below the simulated no-queue floor (ttft_floor.h).
  std::vector<std::string> assumptions;
  std::vector<std::string> declared;
  TtftFloor ttft_floor;
  std::vector<std::string> warnings;
  // Per-request distributions, measured against simulated (distribution_tests.h), for the metrics
  // the file has per-request values of; empty without them or without
  // ReplayOptions::request_samples. A replay of several seeds is pooled (Prediction::samples).
  std::vector<DistributionTest> distribution_tests;
  std::string error;  // set when the run could not be simulated (e.g. the model does not fit)
};

struct ValidationTable {
  std::string calibration;  // Calibration::describe()
  std::vector<RunValidation> runs;
  std::map<std::string, double> median_abs_error_pct;  // over runs that measured the key
  std::map<std::string, int64_t> runs_per_metric;
  std::vector<std::string> warnings;  // e.g. scored runs that were in the fit set
};

// Simulates every run (one job per run on `executor`, or on `jobs` threads here when it is null;
// results in input order whatever runs them)
// and compares; with options.request_samples also the per-request distributions. `configs[i]` is
// simulation_config(runs[i], ...). A run whose deployment fails to prepare (ConfigError) gets
// `error` set and no rows; other errors propagate.
ValidationTable validate_runs(const std::vector<MeasuredRun>& runs,
                              const std::vector<sim::SimulationConfig>& configs,
                              const Calibration& calibration, const ReplayOptions& options,
                              int jobs, JobExecutor* executor = nullptr);

// Compares one run's measured metrics with a prediction (the compared keys both have).
std::vector<MetricComparison> compare(const MeasuredRun& run, const Prediction& prediction);

// Median of |error| per key over `runs`; fills table.median_abs_error_pct and runs_per_metric.
void summarize(ValidationTable& table);

void print_table(std::ostream& out, const ValidationTable& table);
// Keys in report order (ordered_json).
nlohmann::ordered_json to_json(const ValidationTable& table);

}  // namespace servesim::measured

#endif  // SERVESIM_SIM_MEASURED_VALIDATION_H_
