// Leave-one-group-out cross-validation of the serving calibration: how well a profile predicts
// deployments it was NOT fitted on.
//
// A group is model × GPU × TP (× PP) × vLLM version (group_of). Host terms belong to the engine
// release, kernel terms to the GPU (issue 7). For every group g, the host terms (fit.parameters)
// are fitted (fit_serving) on the runs of other groups on g's host line (measured::host_line_of:
// release line × engine generation × async scheduling): those of g's GPU when there are at least
// two; else, if g's GPU has measured kernel terms (measured_kernel_gpus), jointly on the line's
// runs of every GPU with measured kernel terms, each run starting from its own GPU's kernel terms
// (base_by_gpu: GEMM / all-reduce fits, which use no serving run). When g's host line has no
// such runs, the same two rules pick them on the nearest other release line of g's engine path
// (V0, V1 sync or V1 async; "transferred from vLLM 0.11 sync: ..."). g is then scored with its
// GPU's kernel terms + those host terms, and with `--calibration none`. Training runs whose
// replay preempts at the starting parameters are left out of the fit (skip_preempting_runs: the
// simulated KV cache overflows, and the preemption dynamics, not the host terms, set the
// prediction); g itself is scored on all its runs. With fewer than two such runs nothing can be
// identified: g is scored with its GPU's measured kernel terms and the catalog's host terms
// ("kernel terms only") when it has them, else with the datasheet ("datasheet-only ..."): host
// terms fitted over measured kernels are not a consistent model over datasheet efficiencies.
//
// Scored metrics (targets, issue 7): median |error| over the group's runs of mean TPOT (≤ 10 %),
// mean E2E (≤ 10 %), mean TTFT (≤ 15 %), P99 TTFT (≤ 25 %). A group's score is the mean of the
// target metrics it measured; "never worse" compares those scores.
#ifndef SERVESIM_SIM_CALIBRATION_CROSS_VALIDATION_H_
#define SERVESIM_SIM_CALIBRATION_CROSS_VALIDATION_H_

#include <limits>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/calibration/profile.h"
#include "sim/calibration/serving_fit.h"
#include "sim/measured/validation.h"

namespace servesim::calibration {

// "codellama-34b × h100-sxm × TP1 × vLLM 0.11.0" (PP shown when > 1; "vLLM ?" when unrecorded).
std::string group_of(const measured::MeasuredRun& run);
// The coarser group of LogoOptions::by_model: "codellama-34b × h100-sxm × vLLM 0.11.0" (every TP
// and PP of a model together; the catalog model, so a model's FP8 and BF16 checkpoints too).
std::string model_group_of(const measured::MeasuredRun& run);
// The run's GPU (its deployment's "gpu" key).
std::string gpu_of(const measured::MeasuredRun& run);

// The transfer targets: key -> limit in % (mean_tpot_ms 10, mean_e2el_ms 10, mean_ttft_ms 15,
// p99_ttft_ms 25), in report order.
const std::vector<std::pair<std::string, double>>& transfer_targets();

// The median |error| of a transfer target in `median_abs_error_pct`, NaN when absent. The mean-E2E
// target falls back to p100_e2el_ms, the last request's E2E: a static batch measures only that
// (its latency), and when every request of the batch finishes in the same step, as a batch of
// equal requests does unless the KV cache splits it, the two are the same.
double target_error(const std::map<std::string, double>& median_abs_error_pct,
                    const std::string& key);

// Mean over the transfer-target metrics present in `median_abs_error_pct`; NaN when none is.
double transfer_score(const std::map<std::string, double>& median_abs_error_pct);

// The kernel terms of a profile: the parameters fitted on kernel or collective tables
// (compute/memory efficiency, ramp, op latency, link bandwidth), without the serving terms.
calibration::Calibration kernel_terms(const calibration::Calibration& profile);

struct LogoOptions {
  ServingFitOptions fit;  // parameters, metrics, prior, replay
  std::map<std::string, calibration::Calibration>
      base_by_gpu;  // kernel terms per GPU (may be empty)
  // GPUs whose kernels are measured (a shipped profile with kernel terms, or a kernel table of
  // their own): the only ones a joint fit across GPUs uses or serves.
  std::set<std::string> measured_kernel_gpus;
  int jobs = 0;  // threads for scoring (fit.jobs for fits)
  // A fitted term must lie at least this many standard errors above 0 (t statistic) to be kept:
  // otherwise the training runs do not identify it, and it is dropped (left at its base or
  // catalog value) and the others are fitted again, least identified first (among terms not
  // determined at all, the one listed last in fit.parameters). 0 = keep every term.
  double min_t_stat = 2.0;
  // Groups are models (model_group_of), not deployments (group_of): a left-out model's other TP
  // sizes and checkpoints are not in its training set either.
  bool by_model = false;
};

struct LogoGroup {
  std::string group;
  std::string gpu;
  std::vector<size_t> runs;                // indices into the input
  std::vector<std::string> fitted_groups;  // the groups the profile was fitted on
  std::string host_line;                   // host_line_of the group's runs
  std::string basis;  // "fitted on N other group(s) of this GPU", "... of M other GPU(s) (joint)",
                      // "transferred from vLLM <line>: fitted on ...", "kernel terms only (...)",
                      // "datasheet-only (...)"
  calibration::Calibration profile;        // what g was scored with
  measured::ValidationTable calibrated;    // g scored with `profile`
  measured::ValidationTable uncalibrated;  // g scored with --calibration none
  double calibrated_score = 0;             // transfer_score of each
  double uncalibrated_score = 0;
  double fit_rms_pct = std::numeric_limits<double>::quiet_NaN();  // the fit's rms error on its runs
  size_t fit_runs = 0;                                            // training runs the fit used
  size_t fit_skipped_runs = 0;  // training runs left out because they preempt (see below)
  std::vector<std::string> dropped_parameters;  // terms the training runs did not identify
};

struct LogoTable {
  std::vector<LogoGroup> groups;  // sorted by group name
  // Median over groups of each target metric's group median, calibrated and uncalibrated.
  std::map<std::string, double> median_calibrated, median_uncalibrated;
};

// `configs[i]` = measured::simulation_config(runs[i], ...) with calibration "none" (the profile
// under test supplies every parameter). Deterministic: same inputs ⇒ same table, whatever `jobs`.
LogoTable leave_one_group_out(const std::vector<measured::MeasuredRun>& runs,
                              const std::vector<sim::SimulationConfig>& configs,
                              const LogoOptions& options);

// A fit with the identifiability rule of LogoOptions::min_t_stat: fits `options.parameters`; while
// one is not identified, appends it to `dropped`, removes it from `options.parameters` and refits.
ServingFit fit_identified(const std::vector<measured::MeasuredRun>& runs,
                          const std::vector<sim::SimulationConfig>& configs,
                          const calibration::Calibration& base, ServingFitOptions& options,
                          double min_t_stat, std::vector<std::string>& dropped);

// The host terms of one host line on one GPU, fitted on every run of that GPU on that line (none
// left out: this is the profile to ship, docs/calibration.md "Profiles per host line").
struct LineProfile {
  std::string gpu;
  std::string host_line;                        // "0.11 async"
  calibration::Calibration profile;             // kernel terms + host terms, fit_set, domain
  std::vector<std::string> dropped_parameters;  // not identified (min_t_stat)
  std::vector<std::string> problems;            // ServingFit::problems (degenerate fit)
};

// One LineProfile per (GPU, host line) with at least two runs that do not preempt, with the fit
// options, base_by_gpu and min_t_stat of `options` (the same rules as leave_one_group_out's own
// line fits). Deterministic.
std::vector<LineProfile> line_profiles(const std::vector<measured::MeasuredRun>& runs,
                                       const std::vector<sim::SimulationConfig>& configs,
                                       const LogoOptions& options);

void print_logo(std::ostream& out, const LogoTable& table);
nlohmann::ordered_json to_json(const LogoTable& table);

}  // namespace servesim::calibration

#endif  // SERVESIM_SIM_CALIBRATION_CROSS_VALIDATION_H_
