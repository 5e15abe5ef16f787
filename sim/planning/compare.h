// Compare: an A/B study of two configurations on the same request sets, with a paired test.
//
// Contract:
//  - Both sides run with the same workload seeds seed_k = A's seed + k, k = 0..seeds−1, so pair k
//    sees the identical request set (arrival times and lengths) on A and on B (the seed's A/B
//    methodology: common random numbers remove the workload noise from the difference). B's own
//    seed is ignored. The 2·seeds runs go through the executor (executor.h); the result is
//    identical for any `jobs`.
//  - Per seed it records P50 and P99 of TTFT, TPOT, ITL and E2E (ms; vLLM's metrics) and the
//    request and output throughputs, then runs paired_t_test (compare_stats.h) on B − A per
//    metric, with the sign test beside it.
//  - verdict(): "B is faster at P99 TTFT by 12.3 ms (95% CI 8.1–16.5 ms), p=0.001" when p < α
//    (α = 1 − confidence), "B is slower ..." likewise, "no significant difference at ..." with the
//    signed difference and CI otherwise; for throughputs "higher"/"lower".
//  - A side whose deployment cannot be built throws ConfigError naming the side. Runs that were
//    saturated (knee.h rule) are counted per side: their percentiles grow with --num-prompts.
//  - `cancel`: no new run starts; only seeds where both sides finished are analysed, and
//    `interrupted` is set (fewer than 2 complete pairs: no test, verdicts say so).
#ifndef SERVESIM_SIM_PLANNING_COMPARE_H_
#define SERVESIM_SIM_PLANNING_COMPARE_H_

#include <atomic>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/base/executor.h"
#include "sim/calibration/prediction_basis.h"
#include "sim/cluster/simulation.h"
#include "sim/planning/compare_stats.h"
#include "sim/planning/progress.h"

namespace servesim::planning {

struct CompareSide {
  std::string label;  // "a.json", "max-num-seqs=128", ...
  sim::SimulationConfig config;
};

struct CompareOptions {
  int seeds = 10;                   // --seeds: pairs of runs (>= 2)
  int jobs = 0;                     // 0 = all cores
  JobExecutor* executor = nullptr;  // where runs go (null: `jobs` threads here)
  double confidence = 0.95;         // of the interval; α = 1 − confidence for the verdict
};

struct CompareMetric {
  std::string key;   // "p99_ttft_ms" (result-file name)
  std::string name;  // "P99 TTFT"
  std::string unit;  // "ms", "req/s", "tok/s"
  bool lower_is_better = true;
  std::vector<double> a, b;  // per complete seed
  PairedTest test;           // valid when a.size() >= 2
};

struct CompareResult {
  std::vector<uint64_t> seeds;  // complete pairs, ascending
  std::vector<CompareMetric> metrics;
  int a_saturated = 0, b_saturated = 0;  // runs judged saturated, per side
  // What each side's prediction rests on (calibrated / transferred / datasheet-only): a
  // difference between a calibrated and a transferred side is partly the profiles' difference.
  calibration::PredictionBasis a_basis, b_basis;
  // The catalog entry each side's --model named (sim::catalog_model_json).
  nlohmann::json a_catalog_model, b_catalog_model;
  bool interrupted = false;
};

// Throws ConfigError for seeds < 2 or a side whose deployment cannot be built.
CompareResult run_compare(const CompareSide& a, const CompareSide& b, const CompareOptions& options,
                          ProgressBar* progress, const std::atomic<bool>* cancel);

std::string verdict(const CompareMetric& m, double confidence);

// {servesim_compare, a: {label, config, catalog_model, prediction_basis, prediction_basis_reason},
// b: {...}, seeds, confidence, a_saturated_runs, b_saturated_runs, interrupted, metrics: [{key,
// name, unit, a: [...], b: [...], a_mean, b_mean, mean_diff, sd_diff, t, df, p_value, ci_low,
// ci_high, sign_positive, sign_negative, sign_p, verdict}]}. Deterministic.
nlohmann::ordered_json compare_to_json(const CompareResult& result, const CompareSide& a,
                                       const CompareSide& b, const CompareOptions& options,
                                       const nlohmann::json& a_echo, const nlohmann::json& b_echo);

void print_compare_table(std::ostream& out, const CompareResult& result, const CompareSide& a,
                         const CompareSide& b, const CompareOptions& options);

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_COMPARE_H_
