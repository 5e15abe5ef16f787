// Serving fit: cost-model parameters fitted to measured serving runs by running the simulator
// inside a Levenberg–Marquardt fit (hardware/levenberg_marquardt.h).
//
// Residuals: for every run and every metric in `metrics` the run measured, the relative error
// predicted/measured − 1 (so runs and metrics of different magnitudes weigh alike). Each residual
// evaluation replays every run (in parallel; results independent of the thread count) with the
// candidate parameters applied on top of `base` (a profile-fitted or earlier calibration).
// Parameters are fitted in scaled units (seconds in ms) with finite-difference steps large
// enough (≥ 10 µs) to see through the simulator's nanosecond rounding.
#ifndef SERVESIM_SIM_CALIBRATION_SERVING_FIT_H_
#define SERVESIM_SIM_CALIBRATION_SERVING_FIT_H_

#include <map>
#include <string>
#include <vector>

#include "sim/base/executor.h"
#include "sim/calibration/profile.h"
#include "sim/measured/measured_run.h"
#include "sim/measured/replay.h"

namespace servesim::calibration {

struct ServingFitOptions {
  // Names of the terms to fit (calibration_terms.h; those with a FitSpec).
  std::vector<std::string> parameters = {"step_overhead_s", "client_ttft_overhead_s"};
  // Metric keys (vLLM result names) whose relative errors are the residuals.
  // (p100_e2el_ms: static batches measure only their latency, the last request's E2E.)
  std::vector<std::string> metrics = {"mean_tpot_ms", "mean_itl_ms", "mean_ttft_ms", "mean_e2el_ms",
                                      "p100_e2el_ms"};
  measured::ReplayOptions replay;
  int jobs = 0;                     // threads (0 = all cores)
  JobExecutor* executor = nullptr;  // where the replays run (null: `jobs` threads here)
  int max_iterations = 30;
  // Regularisation toward the datasheet: one extra residual per parameter,
  // prior_weight · (θ − θ_prior) / prior_scale, where θ_prior is the GPU catalog's default (or the
  // base profile's value) and prior_scale the parameter's unit (1 ms for times). 0 = off. It keeps
  // a term that the runs cannot identify at its datasheet value instead of letting it wander.
  double prior_weight = 0;
  CalibrationTerms prior;  // θ_prior per term (absent: the starting value)
  // A joint fit over several GPUs: kernel terms per GPU (the run deployment's "gpu" key). A run on
  // a GPU listed here is simulated from that profile, with the fitted parameters (shared by every
  // run: host terms of one engine release) on top, instead of from `base`. Empty = `base` for all.
  std::map<std::string, calibration::Calibration> base_by_gpu;
  // Leave out of the fit every run whose replay at the starting parameters preempts (the
  // simulated KV cache overflows): there the prediction is set by the preemption dynamics, not by
  // the per-step and per-request terms being fitted, and a run the simulator gets several times
  // wrong in that regime would set the host terms of all the others (docs/validation.md §6).
  bool skip_preempting_runs = false;
};

struct ServingFit {
  calibration::Calibration calibration;  // base + fitted parameters, fit_set = run ids, residuals
  double initial_rms = 0;                // rms relative error before the fit
  double final_rms = 0;                  // and after
  int iterations = 0;
  int residual_count = 0;
  // Why the fit should not be trusted (empty when it can be): a parameter that ended on a bound
  // of its range, rms error above kMaxTrustedRms, a singular Jacobian (a parameter the metrics
  // cannot see: its standard error is not finite). calibrate writes such a fit only with --force.
  std::vector<std::string> problems;
};

// The rms relative error above which a serving fit is called degenerate: 25%. The shipped
// profiles end at 1-9% (docs/validation.md); uncalibrated predictions are 5-30% off, so a fit
// that leaves more than 25% has not explained the runs.
inline constexpr double kMaxTrustedRms = 0.25;

// ConfigError naming `flag` (--fit, --logo-fit) unless `names` is a non-empty list of distinct
// parameters the serving fit knows.
void check_fit_parameters(const std::vector<std::string>& names, const std::string& flag);

// `configs[i]` = measured::simulation_config(runs[i], ...). Runs whose deployment does not
// prepare are skipped with a note in fit_info. Throws ConfigError when no residual remains, or
// for an unknown parameter or metric name.
ServingFit fit_serving(const std::vector<measured::MeasuredRun>& runs,
                       const std::vector<sim::SimulationConfig>& configs,
                       const calibration::Calibration& base, const ServingFitOptions& options);

// The deployments and loads of `runs` (calibration::CalibrationDomain): model, TP, PP, vLLM
// version, weight format, highest open-loop rate and closed-loop concurrency.
calibration::CalibrationDomain domain_of(const std::vector<measured::MeasuredRun>& runs);

// The weight format of a run's deployment: its --quantization ("fp8", "mxfp4"), else "bf16".
std::string dtype_of(const measured::MeasuredRun& run);

// A measured::Calibration (the replay hook) that simulates with `c` applied to the deployment.
measured::Calibration replay_calibration(const calibration::Calibration& c,
                                         const std::string& source);

}  // namespace servesim::calibration

#endif  // SERVESIM_SIM_CALIBRATION_SERVING_FIT_H_
