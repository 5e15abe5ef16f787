#include "sim/planning/compare.h"

#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>

#include "sim/base/error.h"
#include "sim/base/executor.h"
#include "sim/base/parallel.h"
#include "sim/calibration/prediction_basis.h"
#include "sim/planning/knee.h"

namespace servesim::planning {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

struct MetricDef {
  const char* key;
  const char* name;
  const char* unit;
  bool lower_is_better;
};

const MetricDef kMetrics[] = {
    {"p50_ttft_ms", "P50 TTFT", "ms", true},
    {"p99_ttft_ms", "P99 TTFT", "ms", true},
    {"p50_tpot_ms", "P50 TPOT", "ms", true},
    {"p99_tpot_ms", "P99 TPOT", "ms", true},
    {"p50_itl_ms", "P50 ITL", "ms", true},
    {"p99_itl_ms", "P99 ITL", "ms", true},
    {"p50_e2el_ms", "P50 E2E", "ms", true},
    {"p99_e2el_ms", "P99 E2E", "ms", true},
    {"request_throughput", "request throughput", "req/s", false},
    {"output_throughput", "output throughput", "tok/s", false},
};
constexpr size_t kNumMetrics = sizeof(kMetrics) / sizeof(kMetrics[0]);

struct RunValues {
  double v[kNumMetrics] = {};
  bool saturated = false;
};

double percentile_of(const metrics::BenchmarkMetrics& m, const std::string& metric, double p) {
  const auto it = m.summaries.find(metric);
  if (it == m.summaries.end()) return std::nan("");
  for (const auto& [pct, ms] : it->second.percentiles_ms) {
    if (pct == p) return ms;
  }
  return std::nan("");
}

RunValues extract(const sim::SimulationResult& r) {
  RunValues out;
  const char* names[] = {"ttft", "tpot", "itl", "e2el"};
  for (int k = 0; k < 4; ++k) {
    out.v[2 * k] = percentile_of(r.metrics, names[k], 50);
    out.v[2 * k + 1] = percentile_of(r.metrics, names[k], 99);
  }
  out.v[8] = r.metrics.request_throughput;
  out.v[9] = r.metrics.output_throughput;
  out.saturated = check_saturation(r.records, SaturationOptions{}).saturated;
  return out;
}

std::string num(double v, int prec) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", prec, v);
  return buf;
}

std::string signed_num(double v, int prec) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%+.*f", prec, v);
  return buf;
}

std::string p_text(double p) {
  if (p < 1e-4) return "p<0.0001";
  char buf[32];
  std::snprintf(buf, sizeof buf, "p=%.2g", p);
  return buf;
}

// The p column of the table: "0.0012", "<0.0001".
std::string p_cell(double p) {
  if (p < 1e-4) return "<0.0001";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", p);
  return buf;
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / double(v.size());
}

int precision_for(const std::string& unit) { return unit == "req/s" ? 3 : (unit == "ms" ? 2 : 1); }

}  // namespace

CompareResult run_compare(const CompareSide& a, const CompareSide& b, const CompareOptions& options,
                          ProgressBar* progress, const std::atomic<bool>* cancel) {
  if (options.seeds < 2) {
    throw ConfigError("--seeds: " + std::to_string(options.seeds) +
                      " is invalid; expected >= 2 (a paired test needs at least two pairs)");
  }
  const CompareSide* sides[2] = {&a, &b};
  std::unique_ptr<sim::PreparedDeployment> prepared[2];
  std::string side_names[2] = {"A", "B"};
  for (int s = 0; s < 2; ++s) {
    try {
      prepared[s] =
          std::make_unique<sim::PreparedDeployment>(sim::prepare_deployment(sides[s]->config));
    } catch (const ConfigError& e) {
      throw ConfigError(side_names[s] + " (" + sides[s]->label + "): " + e.what());
    }
  }
  const uint64_t base_seed = a.config.workload.seed;
  const int n = options.seeds;
  std::vector<std::optional<RunValues>> runs(size_t(2 * n));
  JobLoop loop;
  loop.n = 2 * n;
  loop.compute = [&](int64_t j) {
    const int s = int(j % 2);
    const int k = int(j / 2);
    sim::SimulationConfig config = sides[s]->config;
    config.workload.seed = base_seed + uint64_t(k);
    config.metrics.metric_percentiles = {50, 99};
    config.track_ideal_busy = false;  // a comparison never reads it
    const RunValues v = extract(sim::run_simulation(config, *prepared[s]));
    return to_job_bytes(nlohmann::json{{"v", std::vector<double>(v.v, v.v + kNumMetrics)},
                                       {"saturated", v.saturated}});
  };
  loop.accept = [&](int64_t j, std::string&& bytes) {
    const nlohmann::json jv = from_job_bytes(bytes);
    RunValues v;
    const auto values = jv.at("v").get<std::vector<double>>();
    SERVESIM_CHECK(values.size() == kNumMetrics, "compare: one value per metric");
    std::copy(values.begin(), values.end(), v.v);
    v.saturated = jv.at("saturated").get<bool>();
    runs[size_t(j)] = v;
  };
  if (progress != nullptr) loop.tick = [progress] { progress->advance(); };
  run_jobs(options.executor, options.jobs, loop, cancel);

  CompareResult r;
  r.a_basis = prepared[0]->basis;
  r.b_basis = prepared[1]->basis;
  r.a_catalog_model = sim::catalog_model_json(*prepared[0]);
  r.b_catalog_model = sim::catalog_model_json(*prepared[1]);
  for (size_t i = 0; i < kNumMetrics; ++i) {
    CompareMetric m;
    m.key = kMetrics[i].key;
    m.name = kMetrics[i].name;
    m.unit = kMetrics[i].unit;
    m.lower_is_better = kMetrics[i].lower_is_better;
    r.metrics.push_back(m);
  }
  for (int k = 0; k < n; ++k) {
    const auto& ra = runs[size_t(2 * k)];
    const auto& rb = runs[size_t(2 * k + 1)];
    if (!ra || !rb) {
      r.interrupted = true;
      continue;
    }
    r.seeds.push_back(base_seed + uint64_t(k));
    r.a_saturated += ra->saturated;
    r.b_saturated += rb->saturated;
    for (size_t i = 0; i < kNumMetrics; ++i) {
      r.metrics[i].a.push_back(ra->v[i]);
      r.metrics[i].b.push_back(rb->v[i]);
    }
  }
  if (r.seeds.size() >= 2) {
    for (CompareMetric& m : r.metrics) m.test = paired_t_test(m.a, m.b, options.confidence);
  }
  return r;
}

std::string verdict(const CompareMetric& m, double confidence) {
  if (m.a.size() < 2) return m.name + ": fewer than 2 complete pairs, no test";
  const PairedTest& t = m.test;
  const int prec = precision_for(m.unit);
  const std::string ci_pct = num(100 * confidence, 0) + "% CI ";
  if (t.sd_diff == 0 && t.mean_diff == 0) {
    return "A and B are identical at " + m.name + " on every seed";
  }
  const double alpha = 1 - confidence;
  if (t.p_value < alpha) {
    const bool b_higher = t.mean_diff > 0;
    std::string word;
    if (m.lower_is_better) {
      word = b_higher ? "slower" : "faster";
    } else {
      word = b_higher ? "higher" : "lower";
    }
    const double mag = std::fabs(t.mean_diff);
    const double lo = b_higher ? t.ci_low : -t.ci_high;
    const double hi = b_higher ? t.ci_high : -t.ci_low;
    const std::string at = m.lower_is_better ? " at " : " in ";
    return "B is " + word + at + m.name + " by " + num(mag, prec) + " " + m.unit + " (" + ci_pct +
           num(lo, prec) + "–" + num(hi, prec) + " " + m.unit + "), " + p_text(t.p_value);
  }
  return "no significant difference in " + m.name + ": B−A = " + signed_num(t.mean_diff, prec) +
         " " + m.unit + " (" + ci_pct + num(t.ci_low, prec) + " to " + num(t.ci_high, prec) + " " +
         m.unit + "), " + p_text(t.p_value);
}

ordered_json compare_to_json(const CompareResult& result, const CompareSide& a,
                             const CompareSide& b, const CompareOptions& options,
                             const json& a_echo, const json& b_echo) {
  ordered_json out;
  out["servesim_compare"] = "0.1";
  out["a"] = {{"label", a.label},
              {"config", a_echo},
              {"catalog_model", result.a_catalog_model},
              {"prediction_basis", result.a_basis.label},
              {"prediction_basis_reason", result.a_basis.reason}};
  out["b"] = {{"label", b.label},
              {"config", b_echo},
              {"catalog_model", result.b_catalog_model},
              {"prediction_basis", result.b_basis.label},
              {"prediction_basis_reason", result.b_basis.reason}};
  out["seeds"] = result.seeds;
  out["confidence"] = options.confidence;
  out["a_saturated_runs"] = result.a_saturated;
  out["b_saturated_runs"] = result.b_saturated;
  out["interrupted"] = result.interrupted;
  ordered_json ms = ordered_json::array();
  auto finite = [](double v) { return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr); };
  for (const CompareMetric& m : result.metrics) {
    ordered_json j;
    j["key"] = m.key;
    j["name"] = m.name;
    j["unit"] = m.unit;
    j["a"] = m.a;
    j["b"] = m.b;
    j["a_mean"] = mean_of(m.a);
    j["b_mean"] = mean_of(m.b);
    const bool tested = m.a.size() >= 2;
    j["mean_diff"] = tested ? finite(m.test.mean_diff) : ordered_json(nullptr);
    j["sd_diff"] = tested ? finite(m.test.sd_diff) : ordered_json(nullptr);
    j["t"] = tested ? finite(m.test.t) : ordered_json(nullptr);
    j["df"] = tested ? ordered_json(m.test.df) : ordered_json(nullptr);
    j["p_value"] = tested ? finite(m.test.p_value) : ordered_json(nullptr);
    j["ci_low"] = tested ? finite(m.test.ci_low) : ordered_json(nullptr);
    j["ci_high"] = tested ? finite(m.test.ci_high) : ordered_json(nullptr);
    j["sign_positive"] = m.test.positive;
    j["sign_negative"] = m.test.negative;
    j["sign_p"] = tested ? finite(m.test.sign_p) : ordered_json(nullptr);
    j["verdict"] = verdict(m, options.confidence);
    ms.push_back(j);
  }
  out["metrics"] = ms;
  return out;
}

void print_compare_table(std::ostream& out, const CompareResult& result, const CompareSide& a,
                         const CompareSide& b, const CompareOptions& options) {
  out << "A: " << a.label << "\nB: " << b.label << "\n";
  const calibration::PredictionBasis& ab = result.a_basis;
  const calibration::PredictionBasis& bb = result.b_basis;
  if (ab.label == bb.label && ab.reason == bb.reason) {
    out << "Prediction basis (both): " << ab.label << " — " << ab.reason << "\n";
  } else {
    out << "Prediction basis of A: " << ab.label << " — " << ab.reason << "\n"
        << "Prediction basis of B: " << bb.label << " — " << bb.reason << "\n";
  }
  out << result.seeds.size() << " paired seeds";
  if (!result.seeds.empty()) {
    out << " (" << result.seeds.front() << ".." << result.seeds.back() << ")";
  }
  out << ", the same request set on both sides per seed\n\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-25s %11s %11s %11s %25s %9s %7s\n", "metric", "A mean",
                "B mean", "B-A", (num(100 * options.confidence, 0) + "% CI of B-A").c_str(), "p",
                "B>A:B<A");
  out << line;
  for (const CompareMetric& m : result.metrics) {
    const int prec = precision_for(m.unit);
    const bool tested = m.a.size() >= 2;
    const std::string ci = tested ? "[" + signed_num(m.test.ci_low, prec) + ", " +
                                        signed_num(m.test.ci_high, prec) + "]"
                                  : "-";
    std::snprintf(
        line, sizeof line, "%-25s %11s %11s %11s %25s %9s %7s\n", (m.name + " " + m.unit).c_str(),
        num(mean_of(m.a), prec).c_str(), num(mean_of(m.b), prec).c_str(),
        tested ? signed_num(m.test.mean_diff, prec).c_str() : "-", ci.c_str(),
        tested ? p_cell(m.test.p_value).c_str() : "-",
        (std::to_string(m.test.positive) + ":" + std::to_string(m.test.negative)).c_str());
    out << line;
  }
  out << "\n";
  for (const CompareMetric& m : result.metrics)
    out << "  " << verdict(m, options.confidence) << "\n";
  if (result.a_saturated > 0 || result.b_saturated > 0) {
    out << "\nwarning: saturated runs (the queue grows without bound): A " << result.a_saturated
        << ", B " << result.b_saturated << " of " << result.seeds.size()
        << "; their latency percentiles grow with --num-prompts\n";
  }
  if (result.interrupted) out << "interrupted: only seeds where both sides finished are used\n";
}

}  // namespace servesim::planning
