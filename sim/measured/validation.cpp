#include "sim/measured/validation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <map>
#include <sstream>

#include "sim/base/error.h"
#include "sim/base/executor.h"
#include "sim/base/parallel.h"
#include "sim/measured/run_assumptions.h"

namespace servesim::measured {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// "path#n" -> (absolute normal path, "#n" or "").
std::pair<std::string, std::string> split_id(const std::string& id) {
  const auto hash = id.rfind('#');
  std::string path = id, suffix;
  if (hash != std::string::npos) {
    path = id.substr(0, hash);
    suffix = id.substr(hash);
  }
  path = fs::weakly_canonical(fs::absolute(path)).string();
  // Files of the shared real-data set are compared from "realdata/" on, so that a calibration
  // fitted in one checkout recognises the same runs in another.
  if (const auto at = path.rfind("/realdata/"); at != std::string::npos) path = path.substr(at + 1);
  return {path, suffix};
}

std::string deployment_text(const MeasuredRun& run) {
  const json& c = run.deployment.config;
  std::ostringstream os;
  os << c.value("model", std::string("?")) << " on " << c.value("gpu", std::string("?")) << ", TP"
     << c.value("tensor_parallel_size", 1) << " PP" << c.value("pipeline_parallel_size", 1);
  return os.str();
}

std::string fmt(double v, int prec) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(prec) << v;
  return os.str();
}

std::string signed_pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", v);
  return buf;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The per-request tests of a run, one line per metric; nothing when there are none.
void print_distribution_tests(std::ostream& out, const std::vector<DistributionTest>& tests) {
  if (tests.empty()) return;
  out << "  per request, measured vs simulated values (KS two-sample; TOST of the means, margin "
         "+-10% of the measured mean; alpha 0.05):\n";
  for (const DistributionTest& t : tests) {
    char line[200];
    std::snprintf(line, sizeof line,
                  "  %-5s %6lld / %-7lld KS D %.3f p %.2g %-6s  TOST p %.3f / %.3f %s\n",
                  t.metric.c_str(), static_cast<long long>(t.measured_n),
                  static_cast<long long>(t.simulated_n), t.ks.d, t.ks.p_value,
                  t.ks_differ ? "differ" : "same", t.tost.p_lower, t.tost.p_upper,
                  t.tost.equivalent ? "equivalent" : "not equivalent");
    out << line;
  }
}

nlohmann::ordered_json tests_json(const std::vector<DistributionTest>& tests) {
  using oj = nlohmann::ordered_json;
  auto num = [](double v) { return std::isfinite(v) ? oj(v) : oj(nullptr); };
  oj out = oj::object();
  for (const DistributionTest& t : tests) {
    const TostResult& o = t.tost;
    out[t.metric] = {{"measured_n", t.measured_n},
                     {"simulated_n", t.simulated_n},
                     {"ks", {{"d", t.ks.d}, {"p_value", t.ks.p_value}, {"differ", t.ks_differ}}},
                     {"tost",
                      {{"measured_mean_ms", o.mean_measured},
                       {"simulated_mean_ms", o.mean_simulated},
                       {"margin_ms", o.margin},
                       {"welch_df", num(o.df)},
                       {"t_lower", num(o.t_lower)},
                       {"t_upper", num(o.t_upper)},
                       {"p_lower", o.p_lower},
                       {"p_upper", o.p_upper},
                       {"equivalent", o.equivalent}}}};
  }
  return out;
}

}  // namespace

const std::vector<std::string>& compared_metric_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const std::string& m : latency_metric_names()) {
      for (const std::string& s : compared_stats()) k.push_back(metric_key(s, m));
    }
    // The last request's E2E: what a static batch's latency measures (read_argonne_csv).
    k.push_back("p100_e2el_ms");
    k.push_back("request_throughput");
    return k;
  }();
  return keys;
}

const std::map<std::string, double>& accuracy_targets() {
  static const std::map<std::string, double> targets = {{"mean_e2el_ms", 5.0},
                                                        {"mean_tpot_ms", 5.0},
                                                        {"mean_itl_ms", 5.0},
                                                        {"mean_ttft_ms", 10.0},
                                                        {"p99_ttft_ms", 15.0}};
  return targets;
}

std::vector<bool> holdout_scored(const std::vector<std::string>& run_ids, double fraction) {
  if (!(fraction > 0.0 && fraction <= 1.0)) {
    throw ConfigError("--holdout: " + std::to_string(fraction) +
                      " is invalid; expected a fraction in (0, 1]");
  }
  const size_t n = run_ids.size();
  const size_t k = static_cast<size_t>(std::ceil(fraction * double(n) - 1e-9));
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::vector<std::pair<uint64_t, std::string>> keys(n);
  for (size_t i = 0; i < n; ++i) {
    const auto [path, suffix] = split_id(run_ids[i]);
    keys[i] = {fnv1a(fs::path(path).filename().string() + suffix), path + suffix};
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });
  std::vector<bool> scored(n, false);
  for (size_t i = 0; i < std::min(k, n); ++i) scored[order[i]] = true;
  return scored;
}

bool in_fit_set(const std::string& run_id, const std::vector<std::string>& fitted_on) {
  const auto [path, suffix] = split_id(run_id);
  for (const std::string& f : fitted_on) {
    const auto [fpath, fsuffix] = split_id(f);
    if (fpath == path && (fsuffix.empty() || fsuffix == suffix)) return true;
  }
  return false;
}

std::vector<MetricComparison> compare(const MeasuredRun& run, const Prediction& prediction) {
  std::vector<MetricComparison> rows;
  for (const std::string& key : compared_metric_keys()) {
    auto m = run.metrics.find(key);
    auto p = prediction.metrics.find(key);
    if (m == run.metrics.end() || p == prediction.metrics.end() || !std::isfinite(m->second) ||
        m->second == 0.0) {
      continue;
    }
    rows.push_back({key, m->second, p->second, (p->second - m->second) / m->second * 100.0});
  }
  return rows;
}

void summarize(ValidationTable& table) {
  std::map<std::string, std::vector<double>> errors;
  for (const RunValidation& r : table.runs) {
    for (const MetricComparison& c : r.rows) errors[c.key].push_back(std::fabs(c.error_pct));
  }
  table.median_abs_error_pct.clear();
  table.runs_per_metric.clear();
  for (const auto& [key, v] : errors) {
    table.median_abs_error_pct[key] = median_of(v);
    table.runs_per_metric[key] = static_cast<int64_t>(v.size());
  }
}

ValidationTable validate_runs(const std::vector<MeasuredRun>& runs,
                              const std::vector<sim::SimulationConfig>& configs,
                              const Calibration& calibration, const ReplayOptions& options,
                              int jobs, JobExecutor* executor) {
  SERVESIM_CHECK(runs.size() == configs.size(), "one config per run");
  ValidationTable table;
  table.calibration = calibration.describe();
  table.runs.resize(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    const MeasuredRun& run = runs[i];
    RunValidation& v = table.runs[i];
    v.id = run.id;
    v.format = run.format;
    v.label = run.label;
    v.deployment = deployment_text(run);
    v.engine_version = run.deployment.engine_version;
    v.notes = run.notes;
    v.assumptions = run_assumptions(run, configs[i]);
    v.declared = declared_not_recorded(run);
    v.in_fit_set = in_fit_set(run.id, calibration.fitted_on);
  }
  // One job per run; its prediction travels as bytes (executor.h), doubles exact.
  JobLoop loop;
  loop.n = static_cast<int64_t>(runs.size());
  loop.compute = [&](int64_t i) {
    nlohmann::json out;
    try {
      const MeasuredRun& run = runs[static_cast<size_t>(i)];
      const sim::SimulationConfig& config = configs[static_cast<size_t>(i)];
      const sim::PreparedDeployment prepared = sim::prepare_deployment(config);
      const Prediction p = simulate_measured_run(run, config, prepared, calibration, options);
      nlohmann::json rows = nlohmann::json::array();
      for (const MetricComparison& c : compare(run, p)) {
        rows.push_back({c.key, c.measured, c.predicted, c.error_pct});
      }
      const TtftFloor f = ttft_floor(run, config, prepared, calibration);
      nlohmann::json tests = nlohmann::json::array();
      if (options.request_samples) {
        for (const DistributionTest& t : distribution_tests(measured_samples(run), p.samples)) {
          const TostResult& o = t.tost;
          tests.push_back({t.metric, t.measured_n, t.simulated_n, t.ks.d, t.ks.p_value,
                           o.mean_measured, o.mean_simulated, o.margin, o.df, o.t_lower, o.t_upper,
                           o.p_lower, o.p_upper});
        }
      }
      out = {
          {"tests", tests},
          {"arrivals", p.arrivals_detail},
          {"basis", p.basis.label},
          {"basis_reason", p.basis.reason},
          {"kv_tokens", p.kv_tokens},
          {"preemptions", p.preemptions},
          {"rows", rows},
          {"floor", {f.kind, f.mean_ms, f.median_ms, f.mean_prompt_tokens, f.median_prompt_tokens}},
          {"warnings", ttft_floor_warnings(run, f)}};
    } catch (const ConfigError& e) {
      out = {{"error", e.what()}};
    }
    return to_job_bytes(out);
  };
  loop.accept = [&](int64_t i, std::string&& bytes) {
    const nlohmann::json j = from_job_bytes(bytes);
    RunValidation& v = table.runs[static_cast<size_t>(i)];
    if (j.contains("error")) {
      v.error = j.at("error").get<std::string>();
      return;
    }
    v.arrivals = j.at("arrivals").get<std::string>();
    v.basis = j.at("basis").get<std::string>();
    v.basis_reason = j.at("basis_reason").get<std::string>();
    v.kv_tokens = j.at("kv_tokens").get<int64_t>();
    v.preemptions = j.at("preemptions").get<int64_t>();
    for (const nlohmann::json& r : j.at("rows")) {
      v.rows.push_back({r.at(0).get<std::string>(), r.at(1).get<double>(), r.at(2).get<double>(),
                        r.at(3).get<double>()});
    }
    // A floor not determined is NaN (CBOR keeps it); null is read as not determined too.
    auto ms = [](const nlohmann::json& x) { return x.is_number() ? x.get<double>() : kUnknown; };
    const nlohmann::json& f = j.at("floor");
    v.ttft_floor = {f.at(0).get<std::string>(), ms(f.at(1)), ms(f.at(2)), f.at(3).get<int32_t>(),
                    f.at(4).get<int32_t>()};
    v.warnings = j.at("warnings").get<std::vector<std::string>>();
    for (const nlohmann::json& t : j.at("tests")) {
      DistributionTest d;
      d.metric = t.at(0).get<std::string>();
      d.measured_n = t.at(1).get<int64_t>();
      d.simulated_n = t.at(2).get<int64_t>();
      d.ks = {t.at(3).get<double>(), t.at(4).get<double>()};
      d.ks_differ = d.ks.p_value < kTestAlpha;
      TostResult& o = d.tost;
      o.mean_measured = t.at(5).get<double>();
      o.mean_simulated = t.at(6).get<double>();
      o.margin = t.at(7).get<double>();
      o.df = ms(t.at(8));
      o.t_lower = t.at(9).get<double>();
      o.t_upper = t.at(10).get<double>();
      o.p_lower = t.at(11).get<double>();
      o.p_upper = t.at(12).get<double>();
      o.equivalent = std::max(o.p_lower, o.p_upper) < kTestAlpha;
      v.distribution_tests.push_back(d);
    }
  };
  run_jobs(executor, jobs, loop, nullptr);
  for (const RunValidation& v : table.runs) {
    if (v.in_fit_set) {
      table.warnings.push_back("scored run " + v.id +
                               " was in the calibration's fit set: its error is a fit residual, "
                               "not a prediction error");
    }
  }
  summarize(table);
  return table;
}

void print_table(std::ostream& out, const ValidationTable& table) {
  out << "servesim validate: " << table.calibration << "\n";
  for (size_t i = 0; i < table.runs.size(); ++i) {
    const RunValidation& r = table.runs[i];
    out << "\n[" << i + 1 << "/" << table.runs.size() << "] " << r.id;
    if (!r.label.empty()) out << " (" << r.label << ")";
    out << "\n  " << r.format << ": " << r.deployment;
    if (!r.engine_version.empty()) out << ", measured on vLLM " << r.engine_version;
    out << "\n";
    for (const std::string& n : r.notes) out << "  note: " << n << "\n";
    if (r.in_fit_set) out << "  WARNING: this run was in the calibration's fit set\n";
    if (!r.error.empty()) {
      out << "  not simulated: " << r.error << "\n";
      continue;
    }
    out << "  replay: " << r.arrivals << "; KV cache " << r.kv_tokens << " tokens; "
        << r.preemptions << " preemptions\n";
    if (!r.basis.empty()) out << "  prediction: " << r.basis << " (" << r.basis_reason << ")\n";
    char line[160];
    std::snprintf(line, sizeof line, "  %-20s %14s %14s %9s\n", "metric", "measured", "predicted",
                  "error");
    out << line;
    for (const MetricComparison& c : r.rows) {
      const int prec = c.key == "request_throughput" ? 3 : 1;
      std::snprintf(line, sizeof line, "  %-20s %14s %14s %9s\n", c.key.c_str(),
                    fmt(c.measured, prec).c_str(), fmt(c.predicted, prec).c_str(),
                    signed_pct(c.error_pct).c_str());
      out << line;
    }
    print_distribution_tests(out, r.distribution_tests);
  }
  out << "\nMedian absolute error over " << table.runs.size() << " run(s), " << table.calibration
      << ":\n";
  char line[160];
  std::snprintf(line, sizeof line, "  %-20s %5s %12s %8s\n", "metric", "runs", "median|err|",
                "target");
  out << line;
  for (const std::string& key : compared_metric_keys()) {
    auto it = table.median_abs_error_pct.find(key);
    if (it == table.median_abs_error_pct.end()) continue;
    std::string target;
    if (auto t = accuracy_targets().find(key); t != accuracy_targets().end()) {
      target = "<=" + fmt(t->second, 0) + "% " + (it->second <= t->second ? "met" : "MISSED");
    }
    std::snprintf(line, sizeof line, "  %-20s %5lld %11s%% %s\n", key.c_str(),
                  static_cast<long long>(table.runs_per_metric.at(key)), fmt(it->second, 1).c_str(),
                  target.c_str());
    out << line;
  }
  // What the medians rest on: a median over calibrated runs and one over transferred or
  // datasheet-only runs answer different questions (docs/validation.md §6).
  std::map<std::string, int> bases;
  int in_fit_set = 0;
  for (const RunValidation& r : table.runs) {
    if (!r.error.empty() || r.basis.empty()) continue;
    ++bases[r.basis];
    in_fit_set += r.in_fit_set;
  }
  if (!bases.empty()) {
    out << "  prediction bases:";
    const char* sep = " ";
    for (const char* b : {"calibrated", "transferred", "datasheet-only"}) {
      if (bases.count(b) == 0) continue;
      out << sep << bases.at(b) << " " << b;
      sep = ", ";
    }
    if (in_fit_set > 0) out << " (" << in_fit_set << " in the fit set)";
    out << "\n";
  }
  for (const std::string& w : table.warnings) out << "WARNING: " << w << "\n";
}

nlohmann::ordered_json to_json(const ValidationTable& table) {
  using oj = nlohmann::ordered_json;
  oj runs = oj::array();
  for (const RunValidation& r : table.runs) {
    oj rows = oj::array();
    for (const MetricComparison& c : r.rows) {
      rows.push_back({{"metric", c.key},
                      {"measured", c.measured},
                      {"predicted", c.predicted},
                      {"error_pct", c.error_pct}});
    }
    oj jr = {{"id", r.id},
             {"format", r.format},
             {"label", r.label},
             {"deployment", r.deployment},
             {"engine_version", r.engine_version},
             {"replay", r.arrivals},
             {"prediction_basis", r.basis},
             {"prediction_basis_reason", r.basis_reason},
             {"in_fit_set", r.in_fit_set},
             {"kv_tokens", r.kv_tokens},
             {"preemptions", r.preemptions},
             {"notes", r.notes},
             {"assumptions", r.assumptions},
             {"declared_not_recorded", r.declared},
             {"metrics", rows}};
    if (r.error.empty()) {
      auto ms = [](double v) { return std::isfinite(v) ? oj(v) : oj(nullptr); };
      const TtftFloor& f = r.ttft_floor;
      jr["ttft_floor"] = {
          {"kind", f.kind}, {"mean_ms", ms(f.mean_ms)}, {"median_ms", ms(f.median_ms)}};
      if (f.kind == "lone request") {
        jr["ttft_floor"]["mean_prompt_tokens"] = f.mean_prompt_tokens;
        jr["ttft_floor"]["median_prompt_tokens"] = f.median_prompt_tokens;
      }
      jr["warnings"] = r.warnings;
      if (!r.distribution_tests.empty())
        jr["distribution_tests"] = tests_json(r.distribution_tests);
    }
    if (!r.error.empty()) jr["error"] = r.error;
    runs.push_back(jr);
  }
  oj medians = oj::object();
  for (const auto& [key, v] : table.median_abs_error_pct) {
    oj m = {{"median_abs_error_pct", v}, {"runs", table.runs_per_metric.at(key)}};
    if (auto t = accuracy_targets().find(key); t != accuracy_targets().end()) {
      m["target_pct"] = t->second;
      m["met"] = v <= t->second;
    }
    medians[key] = m;
  }
  return oj{{"calibration", table.calibration},
            {"runs", runs},
            {"median_abs_error", medians},
            {"warnings", table.warnings}};
}

}  // namespace servesim::measured
