// Replaying a measured run in the simulator "as it was run": same deployment and engine flags,
// same request lengths, and the same arrivals when the file has them.
//
// How arrivals are chosen (Prediction::arrivals says which one a run got):
//   * trace     — the file has every request's send time: they are replayed exactly
//                 (workloads::TraceWorkload), with the file's max concurrency.
//   * closed    — no send times, infinite rate and a max concurrency (guidellm synchronous,
//                 genai-perf --concurrency N): all requests ready at t = 0, N outstanding at a
//                 time.
//   * burst     — no send times, infinite rate, no cap: everything at t = 0 (vLLM --request-rate
//   inf).
//   * poisson   — no send times, finite rate (llm-k8s): the recorded (input, output) pairs in send
//                 order with gamma(burstiness) arrivals at the file's rate, from seeds
//                 seed0, seed0+1, ... (ReplayOptions::seeds); the metrics are the average over
//                 seeds.
//   * constant  — as poisson with evenly spaced arrivals (one run: deterministic).
// Requests with no per-request lengths use the file's mean lengths, rounded (noted).
// Warm prefix cache (MeasuredRun::warm_prefix_cache): every prompt is its own prefix group; the
// prompts are first replayed once (one output token each, all at t = 0, marked warmup so they are
// excluded from the metrics) and the run's arrivals start 1 s after that warm-up drained, so the
// run finds its prompts' full KV blocks cached, as on a server that already served them.
//
// Calibration hook (for `servesim calibrate`, written separately): a Calibration carries the
// cost-model parameters to use instead of the datasheet + catalog defaults. simulate_measured_run
// is the function a fit calls in its loop; it is pure (same inputs ⇒ same Prediction) and
// thread-safe for distinct calls.
#ifndef SERVESIM_SIM_MEASURED_REPLAY_H_
#define SERVESIM_SIM_MEASURED_REPLAY_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/cost_model.h"
#include "models/deployment.h"
#include "sim/calibration/prediction_basis.h"
#include "sim/calibration/profile.h"
#include "sim/cluster/simulation.h"
#include "sim/measured/latency_samples.h"
#include "sim/measured/measured_run.h"
#include "workloads/request_spec.h"

namespace servesim::measured {

// Cost-model parameters to simulate with. A default-constructed Calibration is "uncalibrated":
// the datasheet + catalog defaults of models::make_cost_model.
struct Calibration {
  std::string source;                  // the calibration file; "" = uncalibrated
  std::vector<std::string> fitted_on;  // run ids (or paths) the calibration was fitted on
  // Builds the step cost model for a deployment (prepared by prepare_deployment); empty = the
  // PreparedDeployment's own cost model. A fit sets this to, e.g.,
  //   [opts](const models::Deployment& d) { return std::make_unique<RooflineCostModel>(d, opts); }
  std::function<std::unique_ptr<models::CostModel>(const models::Deployment&)> make_cost;
  double ttft_offset_s = 0;  // client-side overhead added to every TTFT (MetricsOptions)
  // API-server queue costs (sim/cluster/front_end.h) to use instead of the prepared deployment's;
  // unset = the prepared deployment's (the profile shipped for the GPU, if any).
  std::optional<sim::FrontEndCosts> frontend;
  // The profile behind make_cost, when it is one (for the prediction's calibrated / transferred
  // label), and whether it applies to deployments on other GPUs than profile->gpu (a fit's trial
  // profile does; a profile file leaves other GPUs at their defaults).
  std::optional<calibration::Calibration> profile;
  bool applies_to_other_gpus = false;
  // `source` only names the profiles shipped for the runs' GPUs (validate without --calibration):
  // each run's prepared deployment carries its own GPU's profile, or none, and is labelled by it.
  bool shipped_per_gpu = false;

  bool calibrated() const { return !source.empty() || static_cast<bool>(make_cost); }
  // "uncalibrated (datasheet + catalog defaults)" or "calibration from FILE (fitted on: a, b)".
  std::string describe() const;
};

// Reads a calibration profile (sim/calibration/profile.h: {"gpu", "parameters": {name: {value,
// std_error}}, "fit_set": [...]}) into a Calibration: fitted_on = fit_set, ttft_offset_s =
// client_ttft_overhead_s, and a cost model built by models::make_cost_model with the profile as
// the deployment's calibration, for deployments on the profile's GPU (any GPU when it names
// none; other GPUs keep their defaults). Throws ConfigError naming the file and field.
Calibration load_calibration_file(const std::string& path);

// Applies a JSON object of servesim config keys onto a SimulationConfig; throws ConfigError
// naming `where` on unknown keys or wrong types. The app passes app::apply_config_json.
using ConfigApplier =
    std::function<void(sim::SimulationConfig&, const nlohmann::json&, const std::string& where)>;

// The SimulationConfig of a run: its deployment keys applied (each under the name of the file it
// came from), num_prompts, request_rate, burstiness, max_concurrency and seed from the run, and
// metrics: ttft, tpot, itl, e2el at percentiles 50, 90, 95, 99. The vLLM version is the run's
// engine_version (file or sidecar) unless a "vllm_version" key says otherwise; its row sets the
// engine defaults and the benchmark client's rules (arrival rescale). Throws ConfigError naming
// the file when the engine version is not one servesim models.
sim::SimulationConfig simulation_config(const MeasuredRun& run, const ConfigApplier& apply);

// The engine whose host path the run exercised: "0.11 sync", "0.19 async", "0.8 V0" (the vLLM
// release line it is simulated with, from `config` — set from the run's version by the readers
// and sidecars —, then V0 engine, else async scheduling on or off); "?" when no version is known.
// Host terms belong to it (sim/calibration/cross_validation.h, calibration::CalibrationDomain).
std::string host_line_of(const MeasuredRun& run, const sim::SimulationConfig& config);

struct ReplayOptions {
  int seeds = 3;  // poisson arrivals: seeds averaged (>= 1)
  // Keep the replay's per-request latencies (Prediction::samples): validate's distribution tests
  // need them; a fit's inner loop does not.
  bool request_samples = false;
};

struct Prediction {
  std::map<std::string, double> metrics;  // same keys as MeasuredRun::metrics
  std::string arrivals;                   // "trace", "closed", "burst", "poisson", "constant"
  std::string arrivals_detail;            // e.g. "poisson at 4 req/s, seeds 0-2 averaged"
  int64_t kv_tokens = 0;                  // KV capacity of the replica
  int64_t preemptions = 0;                // summed over seeds
  double simulated_s = 0;                 // simulated time (mean over seeds)
  calibration::PredictionBasis basis;     // calibrated / transferred / datasheet-only, and why
  // With ReplayOptions::request_samples: every seed's per-request values, pooled in seed order
  // (each seed's replay is an independent draw of the arrivals); empty otherwise.
  LatencySamples samples;
};

// The requests of one replay: the run's lengths (or mean lengths) in send order with arrivals per
// the rules above for `seed` (ignored unless poisson). Shared prefix: prefix_group 0 of
// run.shared_prefix_tokens tokens when set (capped at each prompt).
// `rescale_arrivals` false: the older client's arrivals (first at t = 0, unrescaled gaps).
std::vector<workloads::RequestSpec> replay_requests(const MeasuredRun& run, uint64_t seed,
                                                    bool rescale_arrivals = true);

// Simulates `run` with `config` (from simulation_config) on `prepared` (from
// prepare_deployment(config)), using `calibration`'s cost model when it has one.
Prediction simulate_measured_run(const MeasuredRun& run, const sim::SimulationConfig& config,
                                 const sim::PreparedDeployment& prepared,
                                 const Calibration& calibration, const ReplayOptions& options);

// Convenience: prepares the deployment, then simulates.
Prediction simulate_measured_run(const MeasuredRun& run, const sim::SimulationConfig& config,
                                 const Calibration& calibration, const ReplayOptions& options);

}  // namespace servesim::measured

#endif  // SERVESIM_SIM_MEASURED_REPLAY_H_
