// Sweep: QPS–latency (or concurrency–latency) curves, one per what-if configuration, with the knee
// and the saturation point of each (knee.h gives the two rules).
//
// Contract:
//  - run_sweep() runs every (curve, value) point as an independent simulation through
//    the executor (executor.h: threads, MPI ranks or a shard): curve-major, values ascending. Each
//    point is a pure function of its config (the curve's config with request_rate or
//    max_concurrency set to the value; the workload seed is the same at every point: common random
//    numbers make the curve smooth), so the result is identical for any `jobs`.
//  - Early stop (open-loop rate axis, stop_at_saturation): once a point of a curve is saturated, no
//    point above it is started, and any point above the lowest saturated one that a parallel
//    worker already ran is dropped. The kept points are exactly "every value up to and including
//    the first saturated one", whatever `jobs` is; the rest are listed in `skipped_values`.
//  - Saturated points keep their throughputs, KV and preemption figures (the achieved throughput
//    is the capacity estimate) but their latency summaries (mean/median/std/percentiles) are null:
//    they depend only on how many requests were sent, not on the deployment.
//  - A curve whose deployment cannot be built (model does not fit, TP does not divide the heads,
//    ...) gets `error` set and no points; the other curves still run. If every curve fails, the
//    first curve's ConfigError is thrown. Errors that come from the load (e.g. --warmup-requests
//    >= --num-prompts) are the same for every point and are thrown.
//  - `cancel` (Ctrl-C): no new point starts; finished points are kept and `interrupted` is set.
//  - Closed-loop sweeps (max_concurrency axis, rate inf unless the config sets one) never
//    saturate in the open-loop sense: the client bounds the queue. Their curve-level figure is
//    `plateau_value`: the smallest concurrency whose request throughput reaches 95% of the highest
//    one in the sweep (beyond it, more concurrency buys latency, not throughput).
#ifndef SERVESIM_SIM_PLANNING_SWEEP_H_
#define SERVESIM_SIM_PLANNING_SWEEP_H_

#include <atomic>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/base/executor.h"
#include "sim/calibration/prediction_basis.h"
#include "sim/cluster/simulation.h"
#include "sim/planning/knee.h"
#include "sim/planning/progress.h"

namespace servesim::planning {

enum class SweepAxis { kRequestRate, kMaxConcurrency };

// "request_rate" or "max_concurrency": the result-file key of the swept value.
const char* axis_key(SweepAxis axis);

struct SweepCurveSpec {
  std::string label;                               // "" for a single curve
  nlohmann::json vary = nlohmann::json::object();  // the knob settings of this curve
  sim::SimulationConfig config;                    // with the vary settings applied
};

struct SweepOptions {
  SweepAxis axis = SweepAxis::kRequestRate;
  std::vector<double> values;               // ascending (vary.h parse_axis_values)
  int jobs = 0;                             // 0 = all cores
  JobExecutor* executor = nullptr;          // where points run (null: `jobs` threads here)
  std::string knee_metric = "p99_ttft_ms";  // any column of point_columns()
  KneeOptions knee;
  SaturationOptions saturation;
  bool stop_at_saturation = true;
  double plateau_fraction = 0.95;  // closed loop: share of the peak throughput
};

// The metric columns of every point, in their stable order (JSON keys and CSV columns):
// completed, failed, duration, request_throughput, [request_goodput], output_throughput,
// total_token_throughput, {mean,median,std,p<P>}_{ttft,tpot,itl,e2el}_ms, kv_peak_blocks,
// kv_capacity_blocks, kv_peak_fraction, preemptions, prefix_cache_hit_rate, busy_fraction,
// mean_batch_size, num_gpus, output_tokens_per_s_per_gpu, output_tokens_per_usd,
// usd_per_million_output_tokens, offered_rate, throughput_ratio, latency_growth.
// Cost views: tokens/s per GPU = output_throughput / (TP·PP·replicas); tokens per USD =
// output_throughput · 3600 / (price per GPU-hour · GPUs) (null when the catalog has no price).
// With workload classes (class_names from the --workload file), then per class CLASS/completed,
// CLASS/failed, CLASS/request_throughput, CLASS/output_throughput and CLASS/<latency column>.
std::vector<std::string> point_columns(const metrics::MetricsOptions& metrics,
                                       const std::vector<std::string>& class_names = {});

// The position of `column` in `columns`, nullopt when it is not there.
std::optional<size_t> column_index(const std::vector<std::string>& columns,
                                   const std::string& column);

// True for the latency summary columns (a class's too) that are null at saturated points.
bool is_latency_column(const std::string& column);

struct SweepPoint {
  double value = 0;  // the swept value
  bool saturated = false;
  SaturationCheck saturation;
  std::vector<std::optional<double>> metrics;  // aligned with SweepResult::columns
  // Calibrated, transferred or datasheet-only at this load (a rate above a profile's fitted range
  // is transferred): sim::prediction_basis of the point's config.
  calibration::PredictionBasis basis;
};

struct SweepCurve {
  std::string label;
  nlohmann::json vary = nlohmann::json::object();
  std::string error;                   // non-empty: not run (e.g. the model does not fit)
  nlohmann::ordered_json deployment;   // resolved deployment echo (GPUs, price, KV, knobs)
  std::vector<SweepPoint> points;      // values ascending; only points that ran
  std::vector<double> skipped_values;  // not run: above saturation or interrupted
  KneeResult knee;
  std::optional<double> knee_value;
  std::optional<double> saturation_value;     // first saturated value (rate axis)
  std::optional<double> max_sustained_value;  // highest value below saturation that ran
  std::optional<double> plateau_value;        // closed loop: see the contract
  double peak_request_throughput = 0;
};

struct SweepResult {
  SweepAxis axis = SweepAxis::kRequestRate;
  std::vector<std::string> columns;
  std::vector<SweepCurve> curves;
  bool interrupted = false;
};

// Throws ConfigError when knee_metric is not a column, values is empty, or every curve fails.
// `progress` may be null; it is advanced once per point (run or skipped).
SweepResult run_sweep(const std::vector<SweepCurveSpec>& curves, const SweepOptions& options,
                      ProgressBar* progress, const std::atomic<bool>* cancel);

// Curve-level analysis (knee, saturation value, plateau) of points already run; used by
// run_sweep and by tests on synthetic curves.
void analyse_curve(SweepCurve& curve, const std::vector<std::string>& columns,
                   const SweepOptions& options);

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_SWEEP_H_
