#include "sim/planning/sweep_report.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "sim/planning/csv_cell.h"

namespace servesim::planning {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// Columns whose values are counts: written as integers.
bool is_count_column(const std::string& c) {
  static const std::set<std::string> kCounts = {
      "completed", "failed", "kv_peak_blocks", "kv_capacity_blocks", "preemptions", "num_gpus"};
  return kCounts.count(c) > 0;
}

// Shortest round-trip text of a double, as JSON writes it; integers without ".0".
std::string number_text(double v, bool integer) {
  if (integer && std::fabs(v) < 1e15 && v == std::floor(v)) {
    return std::to_string(static_cast<long long>(v));
  }
  return json(v).dump();
}

ordered_json axis_value_json(SweepAxis axis, double v) {
  if (axis == SweepAxis::kMaxConcurrency) return ordered_json(static_cast<int64_t>(v));
  return ordered_json(v);
}

std::string fixed(std::optional<double> v, int prec) {
  if (!v) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", prec, *v);
  return buf;
}

std::string value_text(SweepAxis axis, double v) {
  if (axis == SweepAxis::kMaxConcurrency) return std::to_string(static_cast<long long>(v));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

ordered_json sweep_to_json(const SweepResult& result, const SweepOptions& options,
                           const json& config_echo, const json& vary_echo) {
  ordered_json out;
  out["servesim_sweep"] = "0.1";
  out["axis"] = axis_key(result.axis);
  ordered_json values = ordered_json::array();
  for (double v : options.values) values.push_back(axis_value_json(result.axis, v));
  out["values"] = values;
  out["knee_metric"] = options.knee_metric;
  out["knee_tolerance"] = options.knee.tolerance;
  out["knee_plateau_points"] = options.knee.plateau_points;
  out["saturation_rule"] = {{"min_throughput_ratio", options.saturation.min_throughput_ratio},
                            {"min_latency_growth", options.saturation.min_latency_growth},
                            {"stop_at_saturation", options.stop_at_saturation}};
  out["config"] = config_echo;
  out["vary"] = vary_echo;
  out["columns"] = result.columns;
  out["interrupted"] = result.interrupted;
  ordered_json curves = ordered_json::array();
  for (const SweepCurve& c : result.curves) {
    ordered_json jc;
    jc["label"] = c.label;
    jc["vary"] = c.vary;
    jc["error"] = c.error.empty() ? json(nullptr) : json(c.error);
    jc["deployment"] = c.deployment.is_null() ? ordered_json(nullptr) : c.deployment;
    auto opt = [&](const std::optional<double>& v) {
      return v ? ordered_json(axis_value_json(result.axis, *v)) : ordered_json(nullptr);
    };
    jc["knee"] = {
        {"value", opt(c.knee_value)},
        {"left_plateau", c.knee.left_plateau},
        {"plateau", std::isfinite(c.knee.plateau) ? json(c.knee.plateau) : json(nullptr)},
        {"threshold", std::isfinite(c.knee.threshold) ? json(c.knee.threshold) : json(nullptr)}};
    jc["saturation_value"] = opt(c.saturation_value);
    jc["max_sustained_value"] = opt(c.max_sustained_value);
    jc["plateau_value"] = opt(c.plateau_value);
    jc["peak_request_throughput"] = c.peak_request_throughput;
    ordered_json skipped = ordered_json::array();
    for (double v : c.skipped_values) skipped.push_back(axis_value_json(result.axis, v));
    jc["skipped_values"] = skipped;
    ordered_json points = ordered_json::array();
    for (size_t i = 0; i < c.points.size(); ++i) {
      const SweepPoint& p = c.points[i];
      ordered_json jp;
      jp[axis_key(result.axis)] = axis_value_json(result.axis, p.value);
      jp["saturated"] = p.saturated;
      jp["knee"] = c.knee.index && *c.knee.index == i;
      jp["prediction_basis"] = p.basis.label;
      jp["prediction_basis_reason"] = p.basis.reason;
      for (size_t k = 0; k < result.columns.size(); ++k) {
        const std::optional<double>& v = p.metrics[k];
        if (!v) {
          jp[result.columns[k]] = nullptr;
        } else if (is_count_column(result.columns[k])) {
          jp[result.columns[k]] = static_cast<int64_t>(std::llround(*v));
        } else {
          jp[result.columns[k]] = *v;
        }
      }
      points.push_back(jp);
    }
    jc["points"] = points;
    curves.push_back(jc);
  }
  out["curves"] = curves;
  return out;
}

std::string sweep_to_csv(const SweepResult& result) {
  std::set<std::string> vary_keys;
  for (const SweepCurve& c : result.curves) {
    for (const auto& [k, v] : c.vary.items()) vary_keys.insert(k);
  }
  std::ostringstream os;
  os << "curve";
  for (const std::string& k : vary_keys) os << "," << k;
  os << "," << axis_key(result.axis) << ",saturated,knee,prediction_basis";
  for (const std::string& c : result.columns) os << "," << c;
  os << "\n";
  for (const SweepCurve& c : result.curves) {
    for (size_t i = 0; i < c.points.size(); ++i) {
      const SweepPoint& p = c.points[i];
      os << csv_cell(c.label);
      for (const std::string& k : vary_keys) {
        os << ",";
        if (c.vary.contains(k)) {
          const json& v = c.vary[k];
          os << csv_cell(v.is_string() ? v.get<std::string>() : v.dump());
        }
      }
      os << "," << number_text(p.value, true) << "," << (p.saturated ? "true" : "false") << ","
         << (c.knee.index && *c.knee.index == i ? "true" : "false") << ","
         << csv_cell(p.basis.label);
      for (size_t k = 0; k < result.columns.size(); ++k) {
        os << ",";
        if (p.metrics[k]) os << number_text(*p.metrics[k], is_count_column(result.columns[k]));
      }
      os << "\n";
    }
  }
  return os.str();
}

void print_sweep_table(std::ostream& out, const SweepResult& result, const SweepOptions& options) {
  // P50 is the median; the high percentile is the largest one listed (99 by default).
  std::string high = "99";
  {
    double best = -1;
    for (const std::string& c : result.columns) {
      if (c.rfind("p", 0) == 0 && c.size() > 8 && c.compare(c.size() - 8, 8, "_ttft_ms") == 0) {
        const double pct = std::stod(c.substr(1, c.size() - 9));
        if (pct > best) {
          best = pct;
          high = c.substr(1, c.size() - 9);
        }
      }
    }
  }
  auto idx = [&](const std::string& c) { return column_index(result.columns, c); };
  const auto i_thr = idx("request_throughput");
  const auto i_ttft50 = idx("median_ttft_ms");
  const auto i_ttft_hi = idx("p" + high + "_ttft_ms");
  const auto i_tpot50 = idx("median_tpot_ms");
  const auto i_tpot_hi = idx("p" + high + "_tpot_ms");
  const auto i_itl_hi = idx("p" + high + "_itl_ms");
  const auto i_e2e_hi = idx("p" + high + "_e2el_ms");
  const auto i_kv = idx("kv_peak_fraction");
  const auto i_pre = idx("preemptions");
  auto get = [](const SweepPoint& p, std::optional<size_t> i) -> std::optional<double> {
    return i ? p.metrics[*i] : std::nullopt;
  };
  const bool rate = result.axis == SweepAxis::kRequestRate;
  const std::string P = "P" + high;
  char line[256];
  for (const SweepCurve& c : result.curves) {
    out << "== " << (c.label.empty() ? std::string("sweep") : c.label);
    if (!c.deployment.is_null()) {
      out << " (" << c.deployment["model"].get<std::string>() << " on "
          << c.deployment["gpus_per_replica"].get<int>() << "x "
          << c.deployment["gpu"].get<std::string>() << ", max-num-seqs "
          << c.deployment["max_num_seqs"].get<int>() << ", "
          << c.deployment["num_gpu_blocks"].get<int64_t>() << " KV blocks)";
    }
    out << " ==\n";
    if (!c.error.empty()) {
      out << "  not run: " << c.error << "\n\n";
      continue;
    }
    std::snprintf(line, sizeof line, "%8s %9s %9s %9s %9s %9s %9s %9s %8s %8s\n",
                  rate ? "rate" : "conc", "achieved", "P50 TTFT", (P + " TTFT").c_str(), "P50 TPOT",
                  (P + " TPOT").c_str(), (P + " ITL").c_str(), (P + " E2E").c_str(), "KV peak",
                  "preempt");
    out << line;
    std::snprintf(line, sizeof line, "%8s %9s %9s %9s %9s %9s %9s %9s %8s %8s\n",
                  rate ? "req/s" : "requests", "req/s", "ms", "ms", "ms", "ms", "ms", "ms", "%",
                  "");
    out << line;
    for (size_t i = 0; i < c.points.size(); ++i) {
      const SweepPoint& p = c.points[i];
      const std::optional<double> kv = get(p, i_kv);
      if (p.saturated) {
        const std::optional<double> pre = get(p, i_pre);
        std::snprintf(line, sizeof line,
                      "%8s %9s  saturated: achieved %.1f%% of the %.4g req/s offered, queueing "
                      "delay x%.1f over the run; KV peak %s%%, %s preemptions\n",
                      value_text(result.axis, p.value).c_str(), fixed(get(p, i_thr), 2).c_str(),
                      100.0 * p.saturation.throughput_ratio, p.value, p.saturation.latency_growth,
                      fixed(kv ? std::optional<double>(100 * *kv) : std::nullopt, 1).c_str(),
                      fixed(pre, 0).c_str());
        out << line;
        continue;
      }
      std::snprintf(line, sizeof line, "%8s %9s %9s %9s %9s %9s %9s %9s %8s %8s%s\n",
                    value_text(result.axis, p.value).c_str(), fixed(get(p, i_thr), 2).c_str(),
                    fixed(get(p, i_ttft50), 1).c_str(), fixed(get(p, i_ttft_hi), 1).c_str(),
                    fixed(get(p, i_tpot50), 2).c_str(), fixed(get(p, i_tpot_hi), 2).c_str(),
                    fixed(get(p, i_itl_hi), 2).c_str(), fixed(get(p, i_e2e_hi), 1).c_str(),
                    fixed(kv ? std::optional<double>(100 * *kv) : std::nullopt, 1).c_str(),
                    fixed(get(p, i_pre), 0).c_str(),
                    c.knee.index && *c.knee.index == i ? "  <- knee" : "");
      out << line;
    }
    // Summary line.
    const std::string unit = rate ? " req/s" : " concurrent";
    std::ostringstream s;
    s << (c.label.empty() ? std::string("sweep") : c.label) << ": ";
    if (c.knee_value) {
      s << "knee " << value_text(result.axis, *c.knee_value) << unit;
      if (c.knee.left_plateau) {
        s << " (" << options.knee_metric << " stays <= " << fixed(c.knee.threshold, 1) << " = "
          << fixed(1 + options.knee.tolerance, 2) << " x plateau " << fixed(c.knee.plateau, 1)
          << ")";
      } else {
        s << " (the last value: " << options.knee_metric
          << " never left its plateau, the knee is beyond the range)";
      }
    } else {
      if (!c.points.empty() && c.points.front().saturated) {
        s << "no knee (saturated at the lowest value)";
      } else {
        s << "no knee (" << options.knee_metric << " rises above its plateau at the lowest values)";
      }
    }
    if (rate) {
      if (c.saturation_value) {
        s << "; saturated at " << value_text(result.axis, *c.saturation_value) << unit;
        if (!c.skipped_values.empty())
          s << " (" << c.skipped_values.size() << " higher values skipped)";
      } else {
        s << "; not saturated up to "
          << value_text(result.axis,
                        c.points.empty() ? options.values.back() : c.points.back().value)
          << unit;
      }
    } else if (c.plateau_value) {
      s << "; throughput reaches " << fixed(100 * options.plateau_fraction, 0)
        << "% of its peak at concurrency " << value_text(result.axis, *c.plateau_value);
    }
    s << "; peak " << fixed(c.peak_request_throughput, 2) << " req/s";
    out << s.str() << "\n";
    // The basis, one line per run of consecutive points that share it (it changes with the load
    // where a profile's fitted range ends).
    for (size_t i = 0; i < c.points.size();) {
      size_t j = i;
      while (j + 1 < c.points.size() && c.points[j + 1].basis.label == c.points[i].basis.label &&
             c.points[j + 1].basis.reason == c.points[i].basis.reason) {
        ++j;
      }
      out << "prediction basis";
      if (i > 0 || j + 1 < c.points.size()) {
        out << " at " << value_text(result.axis, c.points[i].value);
        if (j > i) out << "-" << value_text(result.axis, c.points[j].value);
        out << unit;
      }
      out << ": " << c.points[i].basis.label << " — " << c.points[i].basis.reason << "\n";
      i = j + 1;
    }
    out << "\n";
  }
  if (result.interrupted) {
    out << "interrupted: only the points that finished are shown and written\n";
  }
}
}  // namespace servesim::planning
