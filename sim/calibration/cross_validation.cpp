#include "sim/calibration/cross_validation.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <iomanip>
#include <limits>
#include <set>
#include <sstream>

#include "sim/base/error.h"
#include "sim/replica/vllm_version.h"

namespace servesim::calibration {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string pct(double v) {
  if (std::isnan(v)) return "–";
  std::ostringstream os;
  os << std::fixed << std::setprecision(1) << v << "%";
  return os.str();
}

}  // namespace

// A fit of two host terms needs at least two runs (two load points) to identify them.
constexpr size_t kMinFitRuns = 2;

std::string version_of(const measured::MeasuredRun& run) {
  return run.deployment.engine_version.empty() ? std::string("?") : run.deployment.engine_version;
}

namespace {

// "0.11 async" -> "async"; "0.8 V0" -> "V0".
std::string engine_path_of(const std::string& line) {
  const size_t sp = line.find(' ');
  return sp == std::string::npos ? line : line.substr(sp + 1);
}

// "0.11 async" -> 0.11 as minor number 11 (major·1000 + minor), for the distance between lines.
double line_number(const std::string& line) {
  const size_t dot = line.find('.');
  if (dot == std::string::npos) return 0;
  return 1000.0 * std::atof(line.substr(0, dot).c_str()) + std::atof(line.c_str() + dot + 1);
}

// The other host line on `line`'s engine path nearest to it in release (|Δ minor|, ties by
// name) among the runs `eligible` accepts; "" when there is none.
std::string nearest_line(const std::vector<measured::MeasuredRun>& runs,
                         const std::vector<sim::SimulationConfig>& configs, const std::string& line,
                         const std::function<bool(size_t)>& eligible) {
  std::string best;
  double best_distance = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!eligible(i)) continue;
    const std::string other = measured::host_line_of(runs[i], configs[i]);
    if (other == line || other == "?" || engine_path_of(other) != engine_path_of(line)) continue;
    const double d = std::abs(line_number(other) - line_number(line));
    if (d < best_distance || (d == best_distance && other < best)) {
      best_distance = d;
      best = other;
    }
  }
  return best;
}

}  // namespace

std::string gpu_of(const measured::MeasuredRun& run) {
  return run.deployment.config.value("gpu", std::string("?"));
}

std::string group_of(const measured::MeasuredRun& run) {
  const auto& c = run.deployment.config;
  std::string g = c.value("model", std::string("?")) + " × " + gpu_of(run) + " × TP" +
                  std::to_string(c.value("tensor_parallel_size", 1));
  const int pp = c.value("pipeline_parallel_size", 1);
  if (pp > 1) g += "×PP" + std::to_string(pp);
  g += " × vLLM " + version_of(run);
  return g;
}

std::string model_group_of(const measured::MeasuredRun& run) {
  return run.deployment.config.value("model", std::string("?")) + " × " + gpu_of(run) + " × vLLM " +
         version_of(run);
}

const std::vector<std::pair<std::string, double>>& transfer_targets() {
  static const std::vector<std::pair<std::string, double>> t = {
      {"mean_tpot_ms", 10}, {"mean_e2el_ms", 10}, {"mean_ttft_ms", 15}, {"p99_ttft_ms", 25}};
  return t;
}

double target_error(const std::map<std::string, double>& m, const std::string& key) {
  auto it = m.find(key);
  if (it == m.end() && key == "mean_e2el_ms") it = m.find("p100_e2el_ms");
  return it == m.end() ? std::numeric_limits<double>::quiet_NaN() : it->second;
}

double transfer_score(const std::map<std::string, double>& m) {
  double sum = 0;
  int n = 0;
  for (const auto& [key, limit] : transfer_targets()) {
    const double e = target_error(m, key);
    if (std::isnan(e)) continue;
    sum += e;
    ++n;
  }
  return n ? sum / n : std::numeric_limits<double>::quiet_NaN();
}

calibration::Calibration kernel_terms(const calibration::Calibration& profile) {
  calibration::Calibration k;
  k.gpu = profile.gpu;
  k.description =
      "kernel terms of " + (profile.description.empty() ? profile.gpu : profile.description);
  using T = CalibrationTerms;
  for (auto member : {&T::compute_efficiency, &T::compute_ramp_tokens, &T::memory_efficiency,
                      &T::op_latency_s, &T::link_bandwidth_bytes_per_s}) {
    k.terms.*member = profile.terms.*member;
  }
  // Only the kernel-table sources of the fit set (serving runs are not part of these terms).
  for (const std::string& f : profile.fit_set) {
    const bool vidur = f.find("vidur_profiling") != std::string::npos;
    const bool layers =
        f.find("llmservingsim/") != std::string::npos && f.find("layers") != std::string::npos;
    if (vidur || layers) {
      k.fit_set.push_back(f);
    }
  }
  return k;
}

ServingFit fit_identified(const std::vector<measured::MeasuredRun>& runs,
                          const std::vector<sim::SimulationConfig>& configs,
                          const calibration::Calibration& base, ServingFitOptions& options,
                          double min_t_stat, std::vector<std::string>& dropped) {
  // While a term is not identified by the runs (below min_t_stat standard errors from 0, or a
  // singular Jacobian), drop the least identified one (it keeps its base / catalog value) and
  // fit the rest again.
  for (;;) {
    ServingFit fit = fit_serving(runs, configs, base, options);
    double worst = 0;
    size_t worst_k = 0;
    for (size_t k = 0; k < options.parameters.size(); ++k) {
      const FittedValue& v = *term_by_name(fit.calibration.terms, options.parameters[k]);
      if (!(v.value > 0)) continue;  // at its lower bound 0: adds nothing
      const double ratio = std::isfinite(v.std_error) ? v.std_error / v.value
                                                      : std::numeric_limits<double>::infinity();
      // Among terms that are not determined at all (infinite standard error: e.g. two terms only
      // whose sum the runs see), the one listed last in `parameters` goes first: the list is
      // the order of priority.
      if (ratio > worst || (std::isinf(ratio) && std::isinf(worst))) {
        worst = ratio;
        worst_k = k;
      }
    }
    if (min_t_stat <= 0 || options.parameters.size() <= 1 || worst * min_t_stat <= 1) return fit;
    dropped.push_back(options.parameters[worst_k]);
    options.parameters.erase(options.parameters.begin() + static_cast<std::ptrdiff_t>(worst_k));
  }
}

std::vector<LineProfile> line_profiles(const std::vector<measured::MeasuredRun>& runs,
                                       const std::vector<sim::SimulationConfig>& configs,
                                       const LogoOptions& options) {
  SERVESIM_CHECK(runs.size() == configs.size(), "one config per run");
  std::map<std::pair<std::string, std::string>, std::vector<size_t>> by_line;
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string line = measured::host_line_of(runs[i], configs[i]);
    if (line != "?") by_line[{gpu_of(runs[i]), line}].push_back(i);
  }
  std::vector<LineProfile> out;
  for (const auto& [key, members] : by_line) {
    if (members.size() < kMinFitRuns) continue;
    std::vector<measured::MeasuredRun> train;
    std::vector<sim::SimulationConfig> train_cfg;
    for (size_t i : members) {
      train.push_back(runs[i]);
      train_cfg.push_back(configs[i]);
    }
    calibration::Calibration base;
    if (auto it = options.base_by_gpu.find(key.first); it != options.base_by_gpu.end()) {
      base = it->second;
    }
    base.gpu = key.first;
    ServingFitOptions fit_options = options.fit;
    fit_options.skip_preempting_runs = true;
    LineProfile lp;
    lp.gpu = key.first;
    lp.host_line = key.second;
    ServingFit fit;
    try {
      fit = fit_identified(train, train_cfg, base, fit_options, options.min_t_stat,
                           lp.dropped_parameters);
    } catch (const ConfigError&) {
      continue;  // every run preempts: nothing to fit on
    }
    if (fit.calibration.fit_set.size() < kMinFitRuns) continue;
    lp.profile = fit.calibration;
    lp.problems = fit.problems;
    lp.profile.description =
        "Host terms of the vLLM " + key.second + " host line on " + key.first + " (" +
        std::to_string(fit.calibration.fit_set.size()) +
        " runs; fitted: " + join(fit_options.parameters) +
        (lp.dropped_parameters.empty()
             ? std::string()
             : "; not identified, left at the catalog value: " + join(lp.dropped_parameters)) +
        ") over the GPU's measured kernel terms. Made by: servesim validate --leave-one-group-out "
        "--write-line-profiles (docs/calibration.md, 'Profiles per host line').";
    out.push_back(std::move(lp));
  }
  return out;
}

LogoTable leave_one_group_out(const std::vector<measured::MeasuredRun>& runs,
                              const std::vector<sim::SimulationConfig>& configs,
                              const LogoOptions& options) {
  SERVESIM_CHECK(runs.size() == configs.size(), "one config per run");
  auto group_key = [&](size_t i) {
    return options.by_model ? model_group_of(runs[i]) : group_of(runs[i]);
  };
  std::map<std::string, std::vector<size_t>> by_group;
  for (size_t i = 0; i < runs.size(); ++i) by_group[group_key(i)].push_back(i);

  LogoTable table;
  for (const auto& [group, members] : by_group) {
    LogoGroup g;
    g.group = group;
    g.gpu = gpu_of(runs[members.front()]);
    g.runs = members;
    // Training set, most specific first. Host terms belong to the engine release (the host line:
    // release line × engine generation × async scheduling), but the runs show that they do not
    // transfer across GPUs as well as within one (the host CPU differs, and so does what the
    // kernel terms leave unexplained: docs/validation.md §6), so:
    //   1. the other groups of g's GPU on g's host line, when they hold >= kMinFitRuns runs;
    //   2. else, when g's GPU has measured kernel terms, the other groups on g's host line of
    //      every GPU with measured kernel terms: a joint fit, each run from its own GPU's kernel
    //      terms (base_by_gpu), the host terms shared;
    //   3. else the nearest other release line on the same engine path (V0, V1 sync, V1 async:
    //      engine_path_of), chosen by 1 and 2 as if it were g's line — a transfer across
    //      releases, labelled so. The engine path changes the host loop (V0's scheduler, async
    //      overlap) far more than a release does within a path (§6: V0 host terms on a V1
    //      group were 2-3x worse than none);
    //   4. else, when g's GPU has measured kernel terms, those with the catalog's host terms
    //      ("kernel terms only");
    //   5. else the datasheet. Host terms fitted against measured kernels, applied over a GPU's
    //      unmeasured datasheet efficiencies, are not a consistent model (the datasheet's error is
    //      of either sign and as large as the host terms), nor the other way round.
    const std::string line =
        measured::host_line_of(runs[members.front()], configs[members.front()]);
    g.host_line = line;
    // A named copy: clang < 16 cannot capture a structured binding in a lambda.
    const auto& left_out = group;
    const bool measured_gpu = options.measured_kernel_gpus.count(g.gpu) > 0;
    // Rules 1 and 2 on host line `on`: the runs of other groups on it.
    bool joint = false;
    auto pick_on = [&](const std::string& on) {
      auto select = [&](bool same_gpu_only) {
        std::vector<size_t> picked;
        for (size_t i = 0; i < runs.size(); ++i) {
          if (group_key(i) == left_out || on == "?" ||
              measured::host_line_of(runs[i], configs[i]) != on) {
            continue;
          }
          const std::string gpu = gpu_of(runs[i]);
          if (same_gpu_only ? gpu != g.gpu : !options.measured_kernel_gpus.count(gpu)) continue;
          picked.push_back(i);
        }
        return picked;
      };
      std::vector<size_t> picked = select(true);
      joint = false;
      if (picked.size() < kMinFitRuns && measured_gpu) {
        picked = select(false);
        joint = true;
      }
      return picked;
    };
    std::vector<size_t> picked = pick_on(line);
    std::string other_line;  // rule 3: the release line the host terms were transferred from
    if (picked.size() < kMinFitRuns && line != "?") {
      other_line = nearest_line(runs, configs, line, [&](size_t i) {
        const std::string gpu = gpu_of(runs[i]);
        return group_key(i) != left_out &&
               (gpu == g.gpu || (measured_gpu && options.measured_kernel_gpus.count(gpu)));
      });
      if (!other_line.empty()) picked = pick_on(other_line);
    }
    std::vector<measured::MeasuredRun> train;
    std::vector<sim::SimulationConfig> train_cfg;
    std::set<std::string> fitted, gpus;
    for (size_t i : picked) {
      train.push_back(runs[i]);
      train_cfg.push_back(configs[i]);
      fitted.insert(group_key(i));
      gpus.insert(gpu_of(runs[i]));
    }
    g.fitted_groups.assign(fitted.begin(), fitted.end());
    calibration::Calibration base;
    if (auto it = options.base_by_gpu.find(g.gpu); it != options.base_by_gpu.end())
      base = it->second;
    base.gpu = g.gpu;
    // Runs the simulator sends into preemption at the starting parameters are left out of the
    // fit (ServingFitOptions::skip_preempting_runs); at least kMinFitRuns must remain.
    ServingFitOptions fit_options = options.fit;
    fit_options.base_by_gpu = options.base_by_gpu;
    fit_options.skip_preempting_runs = true;
    ServingFit fit;
    bool fitted_ok = false;
    if (train.size() >= kMinFitRuns) {
      try {
        fit = fit_identified(train, train_cfg, base, fit_options, options.min_t_stat,
                             g.dropped_parameters);
        fitted_ok = fit.calibration.fit_set.size() >= kMinFitRuns;
      } catch (const ConfigError&) {
        fitted_ok = false;  // every training run preempts: nothing left to fit on
      }
    }
    if (fitted_ok) {
      // g's profile: its own GPU's kernel terms + the host terms fitted on the training runs.
      g.profile = base;
      for (const std::string& name : fit_options.parameters) {
        term_by_name(g.profile.terms, name) = term_by_name(fit.calibration.terms, name);
      }
      g.profile.fit_set = fit.calibration.fit_set;
      g.profile.domain = fit.calibration.domain;
      g.profile.fit_info = fit.calibration.fit_info;
      g.fit_rms_pct = 100 * fit.final_rms;
      g.fit_runs = fit.calibration.fit_set.size();
      g.fit_skipped_runs = train.size() - g.fit_runs;
      g.basis = "fitted on " + std::to_string(fitted.size()) + " other group(s)" +
                (joint ? " of " + std::to_string(gpus.size()) + " other GPU(s) (joint)"
                       : std::string(" of this GPU"));
      if (!other_line.empty()) {
        g.basis = "transferred from vLLM " + other_line + ": " + g.basis +
                  " (no other group on vLLM " + line + ")";
      }
    } else if (measured_gpu && !base.terms.empty()) {
      g.profile = base;  // rule 4: the measured kernel terms, the catalog's host terms
      g.basis = "kernel terms only (no other group on vLLM " + line + ")";
      g.fitted_groups.clear();
    } else {
      g.profile = calibration::Calibration{};
      g.basis = options.measured_kernel_gpus.count(g.gpu)
                    ? "datasheet-only (no other group on vLLM " + line + ")"
                    : "datasheet-only (no other group of this GPU on vLLM " + line +
                          "; no measured kernel terms)";
      g.fitted_groups.clear();
    }

    std::vector<measured::MeasuredRun> mine;
    std::vector<sim::SimulationConfig> mine_cfg;
    for (size_t i : members) {
      mine.push_back(runs[i]);
      mine_cfg.push_back(configs[i]);
    }
    const measured::Calibration with =
        g.profile.empty() ? measured::Calibration{} : replay_calibration(g.profile, "LOGO profile");
    g.calibrated = measured::validate_runs(mine, mine_cfg, with, options.fit.replay, options.jobs);
    g.uncalibrated = measured::validate_runs(mine, mine_cfg, measured::Calibration{},
                                             options.fit.replay, options.jobs);
    g.calibrated_score = transfer_score(g.calibrated.median_abs_error_pct);
    g.uncalibrated_score = transfer_score(g.uncalibrated.median_abs_error_pct);
    table.groups.push_back(std::move(g));
  }
  for (const auto& [key, limit] : transfer_targets()) {
    std::vector<double> a, b;
    for (const LogoGroup& g : table.groups) {
      const double ea = target_error(g.calibrated.median_abs_error_pct, key);
      const double eb = target_error(g.uncalibrated.median_abs_error_pct, key);
      if (!std::isnan(ea)) a.push_back(ea);
      if (!std::isnan(eb)) b.push_back(eb);
    }
    if (!a.empty()) table.median_calibrated[key] = median(a);
    if (!b.empty()) table.median_uncalibrated[key] = median(b);
  }
  return table;
}

void print_logo(std::ostream& out, const LogoTable& table) {
  out << "Leave-one-group-out: each group scored with host terms fitted on the OTHER groups of its "
         "vLLM release line (else the nearest line of its engine path; its own GPU's kernel terms) "
         "and with --calibration none; "
         "median |error| over the group's runs\n";
  out << "(targets: mean TPOT <=10%, mean E2E <=10%, mean TTFT <=15%, P99 TTFT <=25%; "
         "each cell: calibrated / none; static batches' E2E is their latency, the last E2E)\n\n";
  out << std::left << std::setw(58) << "group" << std::setw(5) << "runs";
  for (const auto& [key, limit] : transfer_targets()) out << std::setw(18) << key;
  out << "basis\n";
  for (const LogoGroup& g : table.groups) {
    out << std::setw(58) << g.group << std::setw(5) << g.runs.size();
    for (const auto& [key, limit] : transfer_targets()) {
      const double va = target_error(g.calibrated.median_abs_error_pct, key);
      const double vb = target_error(g.uncalibrated.median_abs_error_pct, key);
      std::string cell = pct(va) + " / " + pct(vb);
      if (!std::isnan(va) && va > limit) cell += "*";
      out << std::setw(18) << cell;
    }
    out << g.basis << "\n";
  }
  out << std::setw(63) << "median over groups";
  for (const auto& [key, limit] : transfer_targets()) {
    auto a = table.median_calibrated.find(key);
    auto b = table.median_uncalibrated.find(key);
    out << std::setw(18)
        << (pct(a == table.median_calibrated.end() ? std::nan("") : a->second) + " / " +
            pct(b == table.median_uncalibrated.end() ? std::nan("") : b->second));
  }
  out << "\n(* = calibrated misses the target)\n";
}

nlohmann::ordered_json to_json(const LogoTable& table) {
  nlohmann::ordered_json j;
  nlohmann::ordered_json targets = nlohmann::ordered_json::object();
  for (const auto& [key, limit] : transfer_targets()) targets[key] = limit;
  j["targets_pct"] = targets;
  j["groups"] = nlohmann::ordered_json::array();
  for (const LogoGroup& g : table.groups) {
    nlohmann::ordered_json e;
    e["group"] = g.group;
    e["gpu"] = g.gpu;
    e["runs"] = g.runs.size();
    e["basis"] = g.basis;
    e["host_line"] = g.host_line;
    e["fitted_groups"] = g.fitted_groups;
    // Keys sorted by name (nlohmann::json's order), as the table has always been written.
    nlohmann::json params = nlohmann::json::object();
    nlohmann::json errors = nlohmann::json::object();
    for (const TermField& f : term_fields()) {
      if (const auto& v = g.profile.terms.*f.member) {
        params[std::string(f.name)] = v->value;
        errors[std::string(f.name)] = v->std_error;
      }
    }
    e["profile_parameters"] = params;
    e["profile_std_errors"] = errors;
    if (!std::isnan(g.fit_rms_pct)) {
      e["dropped_unidentified_parameters"] = g.dropped_parameters;
      e["fit_rms_pct"] = g.fit_rms_pct;
      e["fit_runs"] = g.fit_runs;
      e["fit_skipped_preempting_runs"] = g.fit_skipped_runs;
    }
    e["calibrated_score_pct"] = g.calibrated_score;
    e["uncalibrated_score_pct"] = g.uncalibrated_score;
    e["calibrated"] = measured::to_json(g.calibrated);
    e["uncalibrated"] = measured::to_json(g.uncalibrated);
    j["groups"].push_back(e);
  }
  j["median_over_groups_calibrated_pct"] = table.median_calibrated;
  j["median_over_groups_uncalibrated_pct"] = table.median_uncalibrated;
  return j;
}

}  // namespace servesim::calibration
