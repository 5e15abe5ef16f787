#include "sim/calibration/serving_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "hardware/levenberg_marquardt.h"
#include "sim/base/error.h"
#include "sim/base/executor.h"
#include "sim/base/parallel.h"

namespace servesim::calibration {
namespace {

// The fit's scale, bounds and start of a term the serving fit can move (calibration_terms.h).
// REQUIRES: check_fit_parameters accepted `name`.
const FitSpec& fit_spec(const std::string& name) { return *find_term(name)->fit; }

template <typename T>
void add_unique(std::vector<T>& v, const T& x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

}  // namespace

std::string dtype_of(const measured::MeasuredRun& run) {
  const auto& c = run.deployment.config;
  if (c.contains("quantization") && c["quantization"].is_string() &&
      !c["quantization"].get<std::string>().empty()) {
    return c["quantization"].get<std::string>();
  }
  return "bf16";
}

calibration::CalibrationDomain domain_of(const std::vector<measured::MeasuredRun>& runs) {
  calibration::CalibrationDomain d;
  d.offline_only = !runs.empty();
  for (const auto& r : runs) {
    d.offline_only = d.offline_only && r.offline;
    const auto& c = r.deployment.config;
    add_unique(d.models, c.value("model", std::string("?")));
    if (c.contains("gpu") && c["gpu"].is_string()) add_unique(d.gpus, c["gpu"].get<std::string>());
    add_unique(d.tensor_parallel_sizes, c.value("tensor_parallel_size", 1));
    add_unique(d.pipeline_parallel_sizes, c.value("pipeline_parallel_size", 1));
    add_unique(d.engine_versions, r.deployment.engine_version.empty()
                                      ? std::string("unrecorded")
                                      : r.deployment.engine_version);
    add_unique(d.dtypes, dtype_of(r));
    add_unique(d.deployments,
               calibration::deployment_key(c.value("model", std::string("?")),
                                           c.value("tensor_parallel_size", 1),
                                           c.value("pipeline_parallel_size", 1), dtype_of(r)));
    if (r.max_concurrency > 0) {
      d.max_concurrency = std::max(d.max_concurrency, r.max_concurrency);
    } else if (std::isfinite(r.request_rate)) {
      d.max_request_rate = std::max(d.max_request_rate, r.request_rate);
    } else {
      d.has_unbounded_load = true;
    }
  }
  std::sort(d.models.begin(), d.models.end());
  std::sort(d.tensor_parallel_sizes.begin(), d.tensor_parallel_sizes.end());
  std::sort(d.pipeline_parallel_sizes.begin(), d.pipeline_parallel_sizes.end());
  std::sort(d.engine_versions.begin(), d.engine_versions.end());
  std::sort(d.dtypes.begin(), d.dtypes.end());
  std::sort(d.deployments.begin(), d.deployments.end());
  std::sort(d.gpus.begin(), d.gpus.end());
  return d;
}

measured::Calibration replay_calibration(const calibration::Calibration& c,
                                         const std::string& source) {
  measured::Calibration m;
  m.source = source;
  m.fitted_on = c.fit_set;
  m.profile = c;
  m.applies_to_other_gpus = true;
  m.ttft_offset_s = value_or(c.terms.client_ttft_overhead_s, 0.0);
  m.frontend = sim::FrontEndCosts::from_calibration(c);
  m.make_cost = [c, source](const models::Deployment& d) {
    models::Deployment dd = d;
    dd.calibration = c;
    if (c.kernels) dd.kernels = models::resolve_kernel_source("", dd.gpu, c.kernels, source);
    return models::make_cost_model(dd);
  };
  return m;
}

void check_fit_parameters(const std::vector<std::string>& names, const std::string& flag) {
  if (names.empty()) throw ConfigError(flag + ": no parameter to fit");
  for (size_t i = 0; i < names.size(); ++i) {
    const TermField* field = find_term(names[i]);
    if (field == nullptr || !field->fit) {
      // The fittable terms, sorted by name.
      std::vector<std::string> fittable;
      for (const TermField& f : term_fields()) {
        if (f.fit) fittable.emplace_back(f.name);
      }
      std::sort(fittable.begin(), fittable.end());
      std::string known;
      for (const std::string& name : fittable) known += (known.empty() ? "" : ", ") + name;
      throw ConfigError(flag + ": '" + names[i] + "' cannot be fitted to serving runs; expected " +
                        "some of " + known);
    }
    if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), names[i]) !=
        names.begin() + static_cast<std::ptrdiff_t>(i)) {
      throw ConfigError(flag + ": '" + names[i] + "' is listed twice");
    }
  }
}

ServingFit fit_serving(const std::vector<measured::MeasuredRun>& runs,
                       const std::vector<sim::SimulationConfig>& configs,
                       const calibration::Calibration& base, const ServingFitOptions& options) {
  SERVESIM_CHECK(runs.size() == configs.size(), "fit_serving: runs and configs differ in size");
  check_fit_parameters(options.parameters, "--fit");
  // Prepare every deployment once; the fit only changes the cost model.
  std::vector<sim::PreparedDeployment> prepared(runs.size());
  std::vector<bool> usable(runs.size(), false);
  nlohmann::json skipped = nlohmann::json::array();
  for (size_t i = 0; i < runs.size(); ++i) {
    try {
      prepared[i] = sim::prepare_deployment(configs[i]);
      usable[i] = true;
    } catch (const ConfigError& e) {
      skipped.push_back({{"run", runs[i].id}, {"reason", e.what()}});
    }
  }
  if (options.skip_preempting_runs) {
    // One replay per run at the starting parameters (the base's values, else the specs' starts).
    calibration::Calibration start = base;
    for (const std::string& name : options.parameters) {
      auto& term = term_by_name(start.terms, name);
      if (!term) term = FittedValue{fit_spec(name).start, 0};
    }
    std::vector<int64_t> preempted(runs.size(), 0);
    JobLoop loop;
    loop.n = static_cast<int64_t>(runs.size());
    loop.skip = [&](int64_t i) { return !usable[static_cast<size_t>(i)]; };
    loop.compute = [&](int64_t i) {
      const auto k = static_cast<size_t>(i);
      calibration::Calibration c = start;
      const std::string gpu = runs[k].deployment.config.value("gpu", std::string());
      if (auto it = options.base_by_gpu.find(gpu); it != options.base_by_gpu.end()) {
        c = it->second;
        for (const std::string& name : options.parameters) {
          term_by_name(c.terms, name) = term_by_name(start.terms, name);
        }
      }
      const auto pred = measured::simulate_measured_run(
          runs[k], configs[k], prepared[k], replay_calibration(c, "fit start"), options.replay);
      return to_job_bytes(nlohmann::json(pred.preemptions));
    };
    loop.accept = [&](int64_t i, std::string&& bytes) {
      preempted[static_cast<size_t>(i)] = from_job_bytes(bytes).get<int64_t>();
    };
    run_jobs(options.executor, options.jobs, loop, nullptr);
    for (size_t i = 0; i < runs.size(); ++i) {
      if (usable[i] && preempted[i] > 0) {
        usable[i] = false;
        skipped.push_back({{"run", runs[i].id},
                           {"reason", "preempts at the starting parameters (" +
                                          std::to_string(preempted[i]) + " preemptions)"}});
      }
    }
  }
  // The residual slots: (run, metric) pairs with a measured value.
  struct Slot {
    size_t run;
    std::string metric;
    double measured;
  };
  std::vector<Slot> slots;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!usable[i]) continue;
    for (const std::string& m : options.metrics) {
      auto it = runs[i].metrics.find(m);
      if (it != runs[i].metrics.end() && std::isfinite(it->second) && it->second > 0) {
        slots.push_back({i, m, it->second});
      }
    }
  }
  if (slots.empty()) {
    throw ConfigError("calibrate: none of the measured runs has any of the fitted metrics (" +
                      std::to_string(options.metrics.size()) + " asked)");
  }

  const size_t p = options.parameters.size();
  // Levenberg-Marquardt needs at least as many residuals as unknowns (the prior adds one per
  // parameter when --prior-weight is set).
  if (options.prior_weight <= 0 && slots.size() < p) {
    throw ConfigError("calibrate: " + std::to_string(p) + " parameters to fit (--fit) but the " +
                      "measured runs give only " + std::to_string(slots.size()) +
                      " measured value(s) of the fitted metrics (--metrics); fit at most " +
                      std::to_string(slots.size()) +
                      " parameter(s), add runs or metrics, or set --prior-weight");
  }
  auto with_parameters = [&](calibration::Calibration c, const Eigen::VectorXd& x) {
    for (size_t k = 0; k < p; ++k) {
      const FitSpec& spec = fit_spec(options.parameters[k]);
      term_by_name(c.terms, options.parameters[k]) =
          FittedValue{x[static_cast<Eigen::Index>(k)] * spec.scale, 0};
    }
    return c;
  };
  auto calibration_for = [&](const Eigen::VectorXd& x) { return with_parameters(base, x); };
  // The starting profile of each run: its GPU's kernel terms in a joint fit, else `base`.
  std::vector<const calibration::Calibration*> run_base(runs.size(), &base);
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string gpu = runs[i].deployment.config.value("gpu", std::string());
    if (auto it = options.base_by_gpu.find(gpu); it != options.base_by_gpu.end()) {
      run_base[i] = &it->second;
    }
  }
  std::vector<std::map<std::string, double>> last(runs.size());
  auto predict = [&](const Eigen::VectorXd& x) {
    // One replay hook per distinct starting profile (one per GPU in a joint fit).
    std::map<const calibration::Calibration*, measured::Calibration> hooks;
    for (const calibration::Calibration* b : run_base) {
      if (!hooks.count(b)) hooks.emplace(b, replay_calibration(with_parameters(*b, x), "fit"));
    }
    std::vector<std::map<std::string, double>> out(runs.size());
    // One job per run; every process of a distributed executor gets every run's metrics back,
    // so the Levenberg–Marquardt steps are computed identically everywhere (executor.h).
    JobLoop loop;
    loop.n = static_cast<int64_t>(runs.size());
    loop.skip = [&](int64_t i) { return !usable[static_cast<size_t>(i)]; };
    loop.compute = [&](int64_t i) {
      const auto k = static_cast<size_t>(i);
      return to_job_bytes(measured::simulate_measured_run(runs[k], configs[k], prepared[k],
                                                          hooks.at(run_base[k]), options.replay)
                              .metrics);
    };
    loop.accept = [&](int64_t i, std::string&& bytes) {
      out[static_cast<size_t>(i)] = from_job_bytes(bytes).get<std::map<std::string, double>>();
    };
    run_jobs(options.executor, options.jobs, loop, nullptr);
    return out;
  };
  const bool regularised = options.prior_weight > 0;
  Eigen::VectorXd prior(static_cast<Eigen::Index>(p));
  for (size_t k = 0; k < p; ++k) {
    const std::string& name = options.parameters[k];
    const FitSpec& spec = fit_spec(name);
    const double v = value_or(term_by_name(options.prior, name),
                              value_or(term_by_name(base.terms, name), spec.start));
    prior[static_cast<Eigen::Index>(k)] = v / spec.scale;
  }
  auto residuals = [&](const Eigen::VectorXd& x) {
    last = predict(x);
    const size_t n = slots.size() + (regularised ? p : 0);
    Eigen::VectorXd r(static_cast<Eigen::Index>(n));
    for (size_t s = 0; s < slots.size(); ++s) {
      auto it = last[slots[s].run].find(slots[s].metric);
      const double pred = it == last[slots[s].run].end() ? 0.0 : it->second;
      r[static_cast<Eigen::Index>(s)] = pred / slots[s].measured - 1.0;
    }
    if (regularised) {
      for (size_t k = 0; k < p; ++k) {
        const auto i = static_cast<Eigen::Index>(k);
        r[static_cast<Eigen::Index>(slots.size() + k)] = options.prior_weight * (x[i] - prior[i]);
      }
    }
    return r;
  };

  Eigen::VectorXd x0(static_cast<Eigen::Index>(p)), lo(x0.size()), hi(x0.size());
  for (size_t k = 0; k < p; ++k) {
    const FitSpec& spec = fit_spec(options.parameters[k]);
    const double start = value_or(term_by_name(base.terms, options.parameters[k]), spec.start);
    const auto i = static_cast<Eigen::Index>(k);
    x0[i] = std::clamp(start, spec.lo, spec.hi) / spec.scale;
    lo[i] = spec.lo / spec.scale;
    hi[i] = spec.hi / spec.scale;
  }
  hardware::LmOptions lm;
  lm.max_iterations = options.max_iterations;
  lm.relative_step = 0.02;
  lm.absolute_step = 0.01;  // 10 µs for time parameters
  lm.tolerance = 1e-6;
  const Eigen::VectorXd r0 = residuals(x0);
  for (size_t s = 0; s < slots.size(); ++s) {
    if (!std::isfinite(r0[static_cast<Eigen::Index>(s)])) {
      throw ConfigError("calibrate: run " + runs[slots[s].run].id + ": the simulated " +
                        slots[s].metric + " at the starting parameters is not a finite number; " +
                        "leave the run out or the metric out of --metrics");
    }
  }
  const hardware::LmResult fit = hardware::levenberg_marquardt(residuals, x0, lo, hi, lm);
  const Eigen::VectorXd rf = residuals(fit.x);  // also leaves `last` at the optimum

  ServingFit out;
  out.calibration = calibration_for(fit.x);
  for (size_t k = 0; k < p; ++k) {
    const FitSpec& spec = fit_spec(options.parameters[k]);
    term_by_name(out.calibration.terms, options.parameters[k])->std_error =
        fit.std_error[static_cast<Eigen::Index>(k)] * spec.scale;
  }
  const auto m = static_cast<Eigen::Index>(slots.size());
  out.initial_rms = std::sqrt(r0.head(m).squaredNorm() / static_cast<double>(m));
  out.final_rms = std::sqrt(rf.head(m).squaredNorm() / static_cast<double>(m));
  out.iterations = fit.iterations;
  out.residual_count = static_cast<int>(slots.size());
  for (size_t k = 0; k < p; ++k) {
    const auto i = static_cast<Eigen::Index>(k);
    const double span = hi[i] - lo[i];
    const std::string& name = options.parameters[k];
    const double scale = fit_spec(name).scale;
    const double value = fit.x[i] * scale;
    if (fit.x[i] - lo[i] <= 1e-6 * span || hi[i] - fit.x[i] <= 1e-6 * span) {
      std::ostringstream os;
      os << name << " = " << value << " ended on a bound of its range [" << lo[i] * scale << ", "
         << hi[i] * scale << "]";
      out.problems.push_back(os.str());
    } else if (!std::isfinite(fit.std_error[i])) {
      out.problems.push_back(name +
                             ": singular Jacobian (the metrics do not constrain it; its "
                             "standard error is not finite)");
    }
  }
  if (!(out.final_rms <= kMaxTrustedRms)) {
    std::ostringstream os;
    os << "rms relative error after the fit is " << 100 * out.final_rms << "% (above the "
       << 100 * kMaxTrustedRms << "% threshold)";
    out.problems.push_back(os.str());
  }
  out.calibration.fit_set.clear();
  for (size_t i = 0; i < runs.size(); ++i) {
    if (usable[i]) out.calibration.fit_set.push_back(runs[i].id);
  }
  nlohmann::json res = nlohmann::json::array();
  for (size_t s = 0; s < slots.size(); ++s) {
    res.push_back({{"run", runs[slots[s].run].id},
                   {"metric", slots[s].metric},
                   {"measured", slots[s].measured},
                   {"predicted", last[slots[s].run][slots[s].metric]},
                   {"error_pct", rf[static_cast<Eigen::Index>(s)] * 100}});
  }
  out.calibration.residuals = res;
  {
    std::vector<measured::MeasuredRun> fitted;
    for (size_t i = 0; i < runs.size(); ++i) {
      if (usable[i]) fitted.push_back(runs[i]);
    }
    out.calibration.domain = domain_of(fitted);
    std::vector<std::string>& lines = out.calibration.domain.host_lines;
    for (size_t i = 0; i < runs.size(); ++i) {
      if (usable[i]) add_unique(lines, measured::host_line_of(runs[i], configs[i]));
    }
    std::sort(lines.begin(), lines.end());
  }
  out.calibration.fit_info["serving_fit"] = {
      {"method", "Levenberg-Marquardt, simulator in the loop, relative-error residuals"},
      {"parameters", options.parameters},
      {"metrics", options.metrics},
      {"runs", out.calibration.fit_set.size()},
      {"residuals", slots.size()},
      {"iterations", fit.iterations},
      {"rms_relative_error_before", out.initial_rms},
      {"rms_relative_error_after", out.final_rms},
      {"prior_weight", options.prior_weight},
      {"skipped_runs", skipped},
      {"problems", out.problems}};
  return out;
}

}  // namespace servesim::calibration
