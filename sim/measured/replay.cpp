#include "sim/measured/replay.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "models/roofline_cost_model.h"
#include "sim/base/error.h"
#include "sim/base/json_file.h"
#include "sim/base/resource_limits.h"
#include "sim/calibration/prediction_basis.h"
#include "sim/calibration/profile.h"
#include "sim/cluster/benchmark_client.h"
#include "sim/engine/simulator.h"
#include "sim/metrics/benchmark_metrics.h"
#include "sim/replica/replica.h"
#include "sim/replica/vllm_version.h"
#include "workloads/trace_workload.h"
#include "workloads/workload.h"

namespace servesim::measured {
namespace {

using nlohmann::json;

struct OneRun {
  metrics::BenchmarkMetrics metrics;
  int64_t preemptions = 0;
  double simulated_s = 0;
  LatencySamples samples;  // with `keep_samples` only
};

// One replay: run_simulation with the replayed requests as the workload (a measured run is one
// vLLM server: num_replicas stays 1; pipeline-parallel runs get their virtual engines there).
OneRun run_once(std::vector<workloads::RequestSpec> specs, const MeasuredRun& run,
                const sim::SimulationConfig& config, const sim::PreparedDeployment& prepared,
                const models::CostModel& cost, const sim::FrontEndCosts* frontend,
                int64_t warmup_requests = 0, bool keep_samples = false) {
  workloads::TraceWorkload workload(std::move(specs), run.id);
  sim::SimulationConfig cfg = config;
  cfg.warmup_requests = warmup_requests;
  const sim::SimulationResult r = sim::run_simulation(cfg, prepared, workload, &cost, frontend);
  OneRun out;
  out.metrics = r.metrics;
  for (const auto& s : r.replica_stats) out.preemptions += s.preemptions;
  out.simulated_s = r.simulated_s;
  if (keep_samples) {
    // The TTFT offset run_simulation's compute_metrics applied: the config's, plus the prepared
    // deployment's client overhead unless offline (sim/cluster/simulation.cpp).
    const double offset_s =
        cfg.metrics.ttft_offset_s + (cfg.offline ? 0.0 : prepared.client_ttft_overhead_s);
    out.samples = replay_samples(r.records, r.step_logs, offset_s);
  }
  return out;
}

std::string percentile_name(double p) {
  std::ostringstream os;
  if (p == std::floor(p)) {
    os << static_cast<int64_t>(p);
  } else {
    os << p;
  }
  std::string name = "p";  // (not "p" + os.str(): GCC 12 warns a false -Wrestrict on that)
  name += os.str();
  return name;
}

std::map<std::string, double> metric_map(const metrics::BenchmarkMetrics& m) {
  std::map<std::string, double> out;
  for (const std::string& name : latency_metric_names()) {
    auto it = m.summaries.find(name);
    if (it == m.summaries.end()) continue;
    const metrics::MetricSummary& s = it->second;
    out[metric_key("mean", name)] = s.mean_ms;
    out[metric_key("median", name)] = s.median_ms;
    out[metric_key("std", name)] = s.std_ms;
    for (const auto& [p, v] : s.percentiles_ms) out[metric_key(percentile_name(p), name)] = v;
  }
  out["request_throughput"] = m.request_throughput;
  out["output_throughput"] = m.output_throughput;
  return out;
}

std::string rate_text(double rate) {
  std::ostringstream os;
  os.precision(4);
  os << rate;
  return os.str();
}

}  // namespace

std::string Calibration::describe() const {
  if (!calibrated()) return "uncalibrated (datasheet + catalog defaults)";
  std::string s = "calibration from " + (source.empty() ? std::string("(in memory)") : source);
  s += " (fitted on: ";
  if (fitted_on.empty()) s += "not stated";
  for (size_t i = 0; i < fitted_on.size(); ++i) s += (i ? ", " : "") + fitted_on[i];
  return s + ")";
}

Calibration load_calibration_file(const std::string& path) {
  const calibration::Calibration h = calibration::load_calibration(path);
  Calibration c;
  c.source = path;
  c.fitted_on = h.fit_set;
  c.profile = h;
  c.ttft_offset_s = calibration::value_or(h.terms.client_ttft_overhead_s, 0.0);
  c.frontend = sim::FrontEndCosts::from_calibration(h);
  c.make_cost = [h,
                 path](const models::Deployment& deployment) -> std::unique_ptr<models::CostModel> {
    if (!h.gpu.empty() && h.gpu != deployment.gpu.name) return models::make_cost_model(deployment);
    calibration::check_profile_gpu(h, deployment.gpu, path);
    models::Deployment d = deployment;
    d.calibration = h;  // make_cost_model applies it (models/calibrated_model.h)
    // Its kernel tables, if any, replace the deployment's (as --calibration does in simulate).
    if (h.kernels) d.kernels = models::resolve_kernel_source("", d.gpu, h.kernels, path);
    return models::make_cost_model(d);
  };
  if (!h.gpu.empty()) c.source += " for " + h.gpu;
  return c;
}

sim::SimulationConfig simulation_config(const MeasuredRun& run, const ConfigApplier& apply) {
  sim::SimulationConfig c;
  // Each key under the name of the file (or "command line") it came from, so errors point there.
  for (const auto& [key, value] : run.deployment.config.items()) {
    auto src = run.deployment.source.find(key);
    const std::string where = src == run.deployment.source.end() ? run.path : src->second;
    apply(c, json{{key, value}}, where);
  }
  if (!run.deployment.config.contains("vllm_version") && !run.deployment.engine_version.empty()) {
    auto src = run.deployment.source.find("engine_version");
    const std::string where = src == run.deployment.source.end() ? run.path : src->second;
    c.engine.vllm_version =
        sim::vllm_version(run.deployment.engine_version, where + ": engine_version").version;
  }
  c.workload.num_prompts = std::max<int64_t>(1, run.num_prompts);
  c.workload.request_rate = run.request_rate;
  c.workload.burstiness = run.burstiness;
  c.workload.arrival_process = run.arrival_process;
  c.workload.seed = run.seed;
  c.max_concurrency = run.max_concurrency;
  c.metrics.percentile_metrics = {"ttft", "tpot", "itl", "e2el"};
  c.metrics.metric_percentiles = {50, 90, 95, 99};
  // A static batch's latency is its last request's E2E (read_argonne_csv): the 100th percentile.
  if (run.metrics.count("p100_e2el_ms")) c.metrics.metric_percentiles.push_back(100);
  return c;
}

std::vector<workloads::RequestSpec> replay_requests(const MeasuredRun& run, uint64_t seed,
                                                    bool rescale_arrivals) {
  std::vector<workloads::RequestSpec> specs;
  if (!run.requests.empty()) {
    for (const MeasuredRequest& r : run.requests) {
      if (r.failed || r.output_tokens < 1 || r.input_tokens < 1) continue;
      workloads::RequestSpec s;
      s.prompt_tokens = r.input_tokens;
      s.output_tokens = r.output_tokens;
      if (run.has_start_times) s.arrival = SimTime::from_seconds_ceil(std::max(0.0, r.start_s));
      specs.push_back(s);
    }
  } else {
    // Summary only: replay num_prompts requests of the mean lengths, which the file must give
    // (a replay with made-up 1-token requests predicted TPOT 0, -100%).
    auto length = [&](double mean, const char* what) {
      if (!(mean >= 1 && mean <= 2147483647.0)) {
        throw ConfigError(run.id + ": no per-request data and no usable mean " + what +
                          " length (got " + std::to_string(mean) +
                          "); expected per-request arrays (vllm bench serve --save-detailed) or "
                          "total token counts with 'completed'");
      }
      return static_cast<int32_t>(std::round(mean));
    };
    const int32_t in = length(run.mean_input_tokens, "input");
    const int32_t out = length(run.mean_output_tokens, "output");
    check_fits_in_memory(run.id + ": num_prompts/completed", run.num_prompts, "requests", 1024);
    for (int64_t i = 0; i < std::max<int64_t>(1, run.num_prompts); ++i) {
      workloads::RequestSpec s;
      s.prompt_tokens = in;
      s.output_tokens = out;
      specs.push_back(s);
    }
  }
  if (specs.empty()) throw ConfigError(run.id + ": no completed requests to replay");
  if (run.warm_prefix_cache) {
    // Each prompt is its own prefix group, so a replay of it finds its full blocks cached.
    for (size_t i = 0; i < specs.size(); ++i) {
      specs[i].prefix_group = static_cast<int64_t>(i);
      specs[i].prefix_tokens = specs[i].prompt_tokens;
    }
  } else if (run.shared_prefix_tokens > 0) {
    for (auto& s : specs) {
      s.prefix_group = 0;
      s.prefix_tokens = std::min(run.shared_prefix_tokens, s.prompt_tokens);
    }
  }
  const bool timed = run.has_start_times && !run.requests.empty();
  if (!timed && std::isfinite(run.request_rate)) {
    const std::vector<double> t =
        workloads::arrival_times_s(static_cast<int64_t>(specs.size()), run.request_rate,
                                   run.burstiness, run.arrival_process, seed, rescale_arrivals);
    for (size_t i = 0; i < specs.size(); ++i) specs[i].arrival = SimTime::from_seconds_ceil(t[i]);
  }
  for (size_t i = 0; i < specs.size(); ++i) specs[i].id = static_cast<int64_t>(i);
  return specs;
}

std::string host_line_of(const MeasuredRun& run, const sim::SimulationConfig& config) {
  // The release line the run is simulated with (the sidecar's or reader's vllm_version, else
  // the recorded engine version), then what changes the host path within a line (sim::host_line).
  sim::EngineRequest engine = config.engine;
  if (sim::vllm_minor_version(engine.vllm_version).empty()) {
    engine.vllm_version = run.deployment.engine_version;
  }
  const std::string line = sim::vllm_minor_version(engine.vllm_version);
  if (line.empty()) return "?";
  if (run.deployment.engine_version.find("V0") != std::string::npos) return line + " V0";
  return sim::host_line(engine);
}

Prediction simulate_measured_run(const MeasuredRun& run, const sim::SimulationConfig& config,
                                 const sim::PreparedDeployment& prepared,
                                 const Calibration& calibration, const ReplayOptions& options) {
  sim::SimulationConfig cfg = config;
  // With its own cost model the calibration brings its own client overhead; without, the
  // prepared deployment's (the profile shipped for the GPU, if any) applies.
  // run_simulation adds the prepared deployment's client overhead (the profile shipped for the
  // GPU, if any); a calibration with its own cost model brings its own.
  cfg.offline = run.offline;  // then neither client overhead nor front end applies
  if (!run.offline) cfg.metrics.ttft_offset_s += calibration.ttft_offset_s;
  std::unique_ptr<models::CostModel> own_cost;
  if (calibration.make_cost) own_cost = calibration.make_cost(prepared.deployment);
  const models::CostModel& cost = own_cost ? *own_cost : *prepared.cost;
  const sim::FrontEndCosts* frontend = calibration.frontend ? &*calibration.frontend : nullptr;
  const bool rescale = sim::resolved_workload(cfg).arrival_rescale != "off";

  Prediction p;
  p.kv_tokens = prepared.memory.kv_tokens;
  {
    // The deployment as simulated; the load, version and host line as the run states them.
    calibration::PredictionQuery q = sim::prediction_query(config, prepared);
    q.engine_version = run.deployment.engine_version.empty() ? std::string("unrecorded")
                                                             : run.deployment.engine_version;
    q.request_rate = run.request_rate;
    q.max_concurrency = run.max_concurrency;
    q.offline = run.offline;
    q.host_line = host_line_of(run, cfg);
    if (calibration.profile) {
      const bool applies = calibration.applies_to_other_gpus || calibration.profile->gpu.empty() ||
                           calibration.profile->gpu == q.gpu;
      p.basis = calibration::classify_prediction(applies ? &*calibration.profile : nullptr,
                                                 calibration.source, q);
    } else if (calibration.calibrated() && !calibration.shipped_per_gpu) {
      p.basis = {"transferred", "a calibration without a recorded profile"};
    } else {
      p.basis = sim::prediction_basis(prepared, q);
    }
  }
  const bool timed = run.has_start_times && !run.requests.empty();
  std::vector<uint64_t> seeds = {run.seed};
  if (timed) {
    p.arrivals = "trace";
    p.arrivals_detail = "the file's send times";
  } else if (std::isinf(run.request_rate)) {
    p.arrivals = cfg.max_concurrency > 0 ? "closed" : "burst";
    p.arrivals_detail = cfg.max_concurrency > 0 ? "all ready at t=0, max concurrency " +
                                                      std::to_string(cfg.max_concurrency)
                                                : "all sent at t=0 (rate inf)";
  } else if (run.arrival_process == "constant") {
    p.arrivals = "constant";
    p.arrivals_detail = "evenly spaced at " + rate_text(run.request_rate) + " req/s";
  } else {
    p.arrivals = "poisson";
    const int n = std::max(1, options.seeds);
    seeds.clear();
    for (int i = 0; i < n; ++i) seeds.push_back(run.seed + static_cast<uint64_t>(i));
    p.arrivals_detail =
        (run.burstiness == 1.0 ? "poisson" : "gamma(" + rate_text(run.burstiness) + ")") +
        std::string(" at ") + rate_text(run.request_rate) + " req/s, seeds " +
        std::to_string(seeds.front()) +
        (n > 1 ? "-" + std::to_string(seeds.back()) + " averaged" : "");
  }
  if (run.requests.empty()) p.arrivals_detail += "; mean lengths";
  if (cfg.max_concurrency > 0 && p.arrivals != "closed") {
    p.arrivals_detail += "; max concurrency " + std::to_string(cfg.max_concurrency);
  }

  if (run.warm_prefix_cache) p.arrivals_detail += "; prefix cache warmed with the same prompts";
  if (run.offline) p.arrivals_detail += "; offline (no client or API-server costs)";
  for (uint64_t seed : seeds) {
    std::vector<workloads::RequestSpec> specs = replay_requests(run, seed, rescale);
    int64_t warmup = 0;
    if (run.warm_prefix_cache) {
      // The server had served these prompts before: replay them once (1 output token each, all
      // at t = 0, excluded from the metrics), then the run itself once that has drained.
      std::vector<workloads::RequestSpec> warm = specs;
      for (auto& w : warm) {
        w.arrival = SimTime::zero();
        w.output_tokens = 1;
      }
      sim::SimulationConfig warm_cfg = cfg;
      warm_cfg.max_concurrency = 0;
      const double drained_s = run_once(warm, run, warm_cfg, prepared, cost, frontend).simulated_s;
      const SimTime shift = SimTime::from_seconds_ceil(drained_s + 1.0);
      warmup = static_cast<int64_t>(warm.size());
      for (auto& sp : specs) sp.arrival += shift;
      warm.insert(warm.end(), specs.begin(), specs.end());
      specs = std::move(warm);
    }
    const OneRun r = run_once(std::move(specs), run, cfg, prepared, cost, frontend, warmup,
                              options.request_samples);
    p.samples.append(r.samples);
    for (const auto& [key, value] : metric_map(r.metrics))
      p.metrics[key] += value / double(seeds.size());
    p.preemptions += r.preemptions;
    p.simulated_s += r.simulated_s / double(seeds.size());
  }
  return p;
}

Prediction simulate_measured_run(const MeasuredRun& run, const sim::SimulationConfig& config,
                                 const Calibration& calibration, const ReplayOptions& options) {
  const sim::PreparedDeployment prepared = sim::prepare_deployment(config);
  return simulate_measured_run(run, config, prepared, calibration, options);
}

}  // namespace servesim::measured
