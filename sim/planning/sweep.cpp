#include "sim/planning/sweep.h"

#include "workloads/workload_classes.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "sim/base/error.h"
#include "sim/base/executor.h"
#include "sim/base/json_file.h"
#include "sim/base/parallel.h"
#include "sim/cluster/pd_simulation.h"
#include "sim/metrics/result_writer.h"
#include "sim/planning/csv_cell.h"
#include "sim/planning/slo.h"

namespace servesim::planning {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// a + b + c without GCC 12's false -Wrestrict on chained std::string operator+.
std::string join3(const std::string& a, const std::string& b, const std::string& c) {
  std::string out;
  out.reserve(a.size() + b.size() + c.size());
  out.append(a).append(b).append(c);
  return out;
}

std::optional<double> finite_or_null(double v) {
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

SweepPoint make_point(double value, const sim::SimulationConfig& config,
                      const sim::PreparedDeployment& prepared, const sim::SimulationResult& result,
                      const std::vector<std::string>& columns, const SweepOptions& options) {
  SweepPoint p;
  p.value = value;
  p.saturation = check_saturation(result.records, options.saturation);
  p.saturated = p.saturation.saturated;

  const metrics::BenchmarkMetrics& m = result.metrics;
  std::map<std::string, std::optional<double>> v;
  v["completed"] = double(m.completed);
  v["failed"] = double(m.failed);
  v["duration"] = m.duration_s;
  v["request_throughput"] = m.request_throughput;
  v["request_goodput"] =
      m.request_goodput ? std::optional<double>(*m.request_goodput) : std::nullopt;
  v["output_throughput"] = m.output_throughput;
  v["total_token_throughput"] = m.total_token_throughput;
  for (const char* name : kLatencyMetrics) {
    const auto it = m.summaries.find(name);
    if (it == m.summaries.end() || m.completed == 0) continue;
    const metrics::MetricSummary& s = it->second;
    const std::string n = name;
    v["mean_" + n + "_ms"] = s.mean_ms;
    v["median_" + n + "_ms"] = s.median_ms;
    v["std_" + n + "_ms"] = s.std_ms;
    for (const auto& [pct, ms] : s.percentiles_ms) {
      v["p" + metrics::percentile_word(pct) + "_" + n + "_ms"] = ms;
    }
  }
  // Workload classes: the same counts, throughputs and latency summaries per class, as
  // CLASS/<column> (slo.h's class-qualified keys).
  for (const metrics::ClassMetrics& k : m.classes) {
    const metrics::BenchmarkMetrics& cm = k.metrics;
    const std::string c = k.name + "/";
    v[c + "completed"] = double(cm.completed);
    v[c + "failed"] = double(cm.failed);
    v[c + "request_throughput"] = cm.request_throughput;
    v[c + "output_throughput"] = cm.output_throughput;
    for (const char* name : kLatencyMetrics) {
      const auto it = cm.summaries.find(name);
      if (it == cm.summaries.end() || cm.completed == 0) continue;
      const metrics::MetricSummary& s = it->second;
      const std::string n = name;
      v[c + "mean_" + n + "_ms"] = s.mean_ms;
      v[c + "median_" + n + "_ms"] = s.median_ms;
      v[c + "std_" + n + "_ms"] = s.std_ms;
      for (const auto& [pct, ms] : s.percentiles_ms) {
        v[c + "p" + metrics::percentile_word(pct) + "_" + n + "_ms"] = ms;
      }
    }
  }
  const json summary = sim::servesim_summary(config, prepared, result);
  const double capacity = double(prepared.memory.num_blocks);
  const double peak = summary["kv_cache"]["peak_used_blocks"].get<double>();
  v["kv_peak_blocks"] = peak;
  v["kv_capacity_blocks"] = capacity;
  v["kv_peak_fraction"] = capacity > 0 ? std::optional<double>(peak / capacity) : std::nullopt;
  v["preemptions"] = summary["preemptions"].get<double>();
  v["prefix_cache_hit_rate"] = summary["prefix_cache_hit_rate"].get<double>();
  v["busy_fraction"] = summary["busy_fraction"].get<double>();
  v["mean_batch_size"] = summary["mean_batch_size"].get<double>();
  const double replicas = double(std::max<size_t>(1, result.replica_stats.size()));
  const double gpus = double(prepared.deployment.tensor_parallel_size) *
                      double(prepared.deployment.pipeline_parallel_size) * replicas;
  v["num_gpus"] = gpus;
  v["output_tokens_per_s_per_gpu"] = m.output_throughput / gpus;
  const double price = prepared.deployment.gpu.price_per_hour_usd;
  if (price > 0) {
    const double tokens_per_usd = m.output_throughput * 3600.0 / (price * gpus);
    v["output_tokens_per_usd"] = tokens_per_usd;
    v["usd_per_million_output_tokens"] =
        tokens_per_usd > 0 ? std::optional<double>(1e6 / tokens_per_usd) : std::nullopt;
  }
  if (p.saturation.applicable) {
    v["offered_rate"] = p.saturation.offered_rate;
    v["throughput_ratio"] = p.saturation.throughput_ratio;
    v["latency_growth"] = finite_or_null(p.saturation.latency_growth);
  }
  p.metrics.reserve(columns.size());
  for (const std::string& c : columns) {
    auto it = v.find(c);
    std::optional<double> x = it == v.end() ? std::nullopt : it->second;
    if (x && !std::isfinite(*x)) x = std::nullopt;
    if (p.saturated && is_latency_column(c)) x = std::nullopt;
    p.metrics.push_back(x);
  }
  return p;
}

// A point as it travels between processes (executor.h): every field, doubles exact.
json point_to_bytes_json(const SweepPoint& p) {
  json m = json::array();
  for (const auto& v : p.metrics) m.push_back(v ? json(*v) : json(nullptr));
  return json{{"value", p.value},
              {"saturated", p.saturated},
              {"applicable", p.saturation.applicable},
              {"sat", p.saturation.saturated},
              {"offered_rate", p.saturation.offered_rate},
              {"throughput_ratio", p.saturation.throughput_ratio},
              {"latency_growth", p.saturation.latency_growth},
              {"metrics", m}};
}

SweepPoint point_from_bytes_json(const json& j) {
  SweepPoint p;
  p.value = j.at("value").get<double>();
  p.saturated = j.at("saturated").get<bool>();
  p.saturation.applicable = j.at("applicable").get<bool>();
  p.saturation.saturated = j.at("sat").get<bool>();
  p.saturation.offered_rate = j.at("offered_rate").get<double>();
  p.saturation.throughput_ratio = j.at("throughput_ratio").get<double>();
  p.saturation.latency_growth = j.at("latency_growth").get<double>();
  for (const json& v : j.at("metrics")) {
    p.metrics.push_back(v.is_null() ? std::nullopt : std::optional<double>(v.get<double>()));
  }
  return p;
}

ordered_json deployment_echo(const sim::SimulationConfig& config,
                             const sim::PreparedDeployment& p) {
  const models::Deployment& d = p.deployment;
  ordered_json out = ordered_json{
      {"model", config.model},
      {"catalog_model", sim::catalog_model_json(p)},
      {"gpu", d.gpu.name},
      {"tensor_parallel_size", d.tensor_parallel_size},
      {"pipeline_parallel_size", d.pipeline_parallel_size},
      {"gpus_per_replica",
       d.tensor_parallel_size * d.pipeline_parallel_size * d.data_parallel_size},
      {"num_replicas", config.num_replicas},
      {"router", config.router},
      {"price_per_gpu_hour_usd",
       d.gpu.price_per_hour_usd > 0 ? json(d.gpu.price_per_hour_usd) : json(nullptr)},
      {"quantization", d.quantization.empty() ? json(nullptr) : json(d.quantization)},
      {"kv_cache_dtype", d.kv_cache_dtype},
      {"max_num_seqs", p.engine.max_num_seqs},
      {"max_num_batched_tokens", p.engine.max_num_batched_tokens},
      {"block_size", p.engine.block_size},
      {"gpu_memory_utilization", p.engine.gpu_memory_utilization},
      {"enable_prefix_caching", p.engine.enable_prefix_caching},
      {"max_model_len", p.engine.max_model_len},
      {"num_gpu_blocks", p.memory.num_blocks},
      {"kv_tokens", p.memory.kv_tokens},
      {"calibration", p.calibration_source.empty()
                          ? json(nullptr)
                          : json(relative_to_data_dir(p.calibration_source))},
      {"kernel_source", p.kernel_source},
  };
  if (p.pd) {
    // Disaggregated prefill/decode: the fields above describe the decode pool; the run's GPUs
    // are both pools' (sim/cluster/pd_simulation.h).
    const models::Deployment& pre = p.pd->prefill->deployment;
    out["gpus_per_replica"] = config.prefill_replicas * pre.tensor_parallel_size +
                              config.decode_replicas * d.tensor_parallel_size;
    out["router"] = "pd-least-loaded";
    out["prefill_replicas"] = config.prefill_replicas;
    out["prefill_gpu"] = pre.gpu.name;
    out["prefill_tensor_parallel_size"] = pre.tensor_parallel_size;
    out["decode_replicas"] = config.decode_replicas;
    out["kv_transfer_link"] = p.pd->link_name;
  }
  return out;
}

// A curve's config at one swept value.
sim::SimulationConfig config_at(const sim::SimulationConfig& curve, SweepAxis axis, double value) {
  sim::SimulationConfig c = curve;
  if (axis == SweepAxis::kRequestRate) {
    c.workload.request_rate = value;
  } else {
    c.max_concurrency = static_cast<int64_t>(value);
  }
  return c;
}

}  // namespace

const char* axis_key(SweepAxis axis) {
  return axis == SweepAxis::kRequestRate ? "request_rate" : "max_concurrency";
}

std::vector<std::string> point_columns(const metrics::MetricsOptions& metrics,
                                       const std::vector<std::string>& class_names) {
  std::vector<std::string> c = {"completed", "failed", "duration", "request_throughput"};
  if (!metrics.goodput_slo_ms.empty()) c.push_back("request_goodput");
  c.push_back("output_throughput");
  c.push_back("total_token_throughput");
  for (const char* name : kLatencyMetrics) {
    c.push_back(join3("mean_", name, "_ms"));
    c.push_back(join3("median_", name, "_ms"));
    c.push_back(join3("std_", name, "_ms"));
    for (double p : metrics.metric_percentiles) {
      const std::string col = join3("p", metrics::percentile_word(p), join3("_", name, "_ms"));
      if (std::find(c.begin(), c.end(), col) == c.end()) c.push_back(col);
    }
  }
  for (const char* s :
       {"kv_peak_blocks", "kv_capacity_blocks", "kv_peak_fraction", "preemptions",
        "prefix_cache_hit_rate", "busy_fraction", "mean_batch_size", "num_gpus",
        "output_tokens_per_s_per_gpu", "output_tokens_per_usd", "usd_per_million_output_tokens",
        "offered_rate", "throughput_ratio", "latency_growth"}) {
    c.push_back(s);
  }
  for (const std::string& k : class_names) {
    for (const char* s : {"completed", "failed", "request_throughput", "output_throughput"}) {
      c.push_back(k + "/" + s);
    }
    for (const char* name : kLatencyMetrics) {
      c.push_back(k + "/" + join3("mean_", name, "_ms"));
      c.push_back(k + "/" + join3("median_", name, "_ms"));
      c.push_back(k + "/" + join3("std_", name, "_ms"));
      for (double p : metrics.metric_percentiles) {
        const std::string col =
            k + "/" + join3("p", metrics::percentile_word(p), join3("_", name, "_ms"));
        if (std::find(c.begin(), c.end(), col) == c.end()) c.push_back(col);
      }
    }
  }
  return c;
}

std::optional<size_t> column_index(const std::vector<std::string>& columns, const std::string& c) {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == c) return i;
  }
  return std::nullopt;
}

bool is_latency_column(const std::string& qualified) {
  const auto slash = qualified.find('/');
  const std::string column = slash == std::string::npos ? qualified : qualified.substr(slash + 1);
  if (column.size() < 4 || column.compare(column.size() - 3, 3, "_ms") != 0) return false;
  return column.rfind("mean_", 0) == 0 || column.rfind("median_", 0) == 0 ||
         column.rfind("std_", 0) == 0 || column.rfind("p", 0) == 0;
}

void analyse_curve(SweepCurve& curve, const std::vector<std::string>& columns,
                   const SweepOptions& options) {
  const std::optional<size_t> metric = column_index(columns, options.knee_metric);
  SERVESIM_CHECK(metric.has_value(), "analyse_curve: knee metric is not a column");
  std::vector<double> xs;
  std::vector<std::optional<double>> ys;
  for (const SweepPoint& p : curve.points) {
    xs.push_back(p.value);
    ys.push_back(p.saturated ? std::nullopt : p.metrics[*metric]);
  }
  curve.knee = find_knee(xs, ys, options.knee);
  curve.knee_value.reset();
  if (curve.knee.index) curve.knee_value = xs[*curve.knee.index];

  curve.saturation_value.reset();
  curve.max_sustained_value.reset();
  curve.plateau_value.reset();
  for (const SweepPoint& p : curve.points) {
    if (p.saturated) {
      curve.saturation_value = p.value;
      break;
    }
    curve.max_sustained_value = p.value;
  }
  const std::optional<size_t> thr = column_index(columns, "request_throughput");
  curve.peak_request_throughput = 0;
  if (thr) {
    for (const SweepPoint& p : curve.points) {
      if (p.metrics[*thr]) {
        curve.peak_request_throughput = std::max(curve.peak_request_throughput, *p.metrics[*thr]);
      }
    }
    if (options.axis == SweepAxis::kMaxConcurrency && curve.peak_request_throughput > 0) {
      for (const SweepPoint& p : curve.points) {
        if (p.metrics[*thr] &&
            *p.metrics[*thr] >= options.plateau_fraction * curve.peak_request_throughput) {
          curve.plateau_value = p.value;
          break;
        }
      }
    }
  }
}

SweepResult run_sweep(const std::vector<SweepCurveSpec>& specs, const SweepOptions& options,
                      ProgressBar* progress, const std::atomic<bool>* cancel) {
  if (specs.empty()) throw ConfigError("sweep: nothing to run");
  if (options.values.empty()) throw ConfigError("sweep: no values to sweep");
  SweepResult result;
  result.axis = options.axis;
  {
    const std::string& file = specs.front().config.workload.workload_file;
    result.columns = point_columns(
        specs.front().config.metrics,
        file.empty() ? std::vector<std::string>{} : workloads::load_workload_classes(file).names());
  }
  if (!column_index(result.columns, options.knee_metric)) {
    std::string list;
    for (const std::string& c : result.columns) list += (list.empty() ? "" : ", ") + c;
    throw ConfigError("--knee-metric: '" + options.knee_metric +
                      "' is not a sweep metric; expected one of " + list +
                      " (a percentile must be listed in --metric-percentiles)");
  }
  const size_t n_curves = specs.size();
  const size_t n_values = options.values.size();

  // Build every curve's deployment; a curve that cannot be built is reported, not fatal.
  std::vector<std::unique_ptr<sim::PreparedDeployment>> prepared(n_curves);
  std::vector<std::string> errors(n_curves);
  parallel_for(static_cast<int64_t>(n_curves), options.jobs, [&](int64_t c) {
    try {
      prepared[size_t(c)] = std::make_unique<sim::PreparedDeployment>(
          sim::prepare_deployment(specs[size_t(c)].config));
    } catch (const ConfigError& e) {
      errors[size_t(c)] = e.what();
    }
  });
  if (std::all_of(errors.begin(), errors.end(), [](const std::string& e) { return !e.empty(); })) {
    throw ConfigError(specs.front().label.empty() ? errors.front()
                                                  : specs.front().label + ": " + errors.front());
  }

  // Every (curve, value) point; curve-major so that early stop cuts the tail of each curve.
  const bool early_stop = options.stop_at_saturation && options.axis == SweepAxis::kRequestRate;
  std::vector<std::atomic<int64_t>> first_saturated(n_curves);
  for (auto& f : first_saturated) f.store(INT64_MAX);
  std::vector<std::optional<SweepPoint>> slots(n_curves * n_values);
  JobLoop loop;
  loop.n = static_cast<int64_t>(slots.size());
  loop.skip = [&](int64_t j) {
    const size_t c = size_t(j) / n_values;
    const size_t i = size_t(j) % n_values;
    return !errors[c].empty() || (early_stop && int64_t(i) > first_saturated[c].load());
  };
  loop.compute = [&](int64_t j) {
    const size_t c = size_t(j) / n_values;
    const size_t i = size_t(j) % n_values;
    const double v = options.values[i];
    sim::SimulationConfig config = config_at(specs[c].config, options.axis, v);
    config.track_ideal_busy = false;  // a sweep point never reports it
    const sim::SimulationResult r = sim::run_simulation(config, *prepared[c]);
    return to_job_bytes(
        point_to_bytes_json(make_point(v, config, *prepared[c], r, result.columns, options)));
  };
  loop.accept = [&](int64_t j, std::string&& bytes) {
    const size_t c = size_t(j) / n_values;
    const size_t i = size_t(j) % n_values;
    SweepPoint point = point_from_bytes_json(from_job_bytes(bytes));
    // A result read back from a part file (merge) must be this job's: found by fuzz_study_results.
    if (point.value != options.values[i] || point.metrics.size() != result.columns.size()) {
      throw ConfigError("sweep: job " + std::to_string(j) + "'s stored result is not the point " +
                        "its index names (a damaged or foreign part file)");
    }
    if (point.saturated) {
      first_saturated[c].store(std::min(first_saturated[c].load(), int64_t(i)));
    }
    slots[size_t(j)] = std::move(point);
  };
  if (progress != nullptr) loop.tick = [progress] { progress->advance(); };
  run_jobs(options.executor, options.jobs, loop, cancel);

  for (size_t c = 0; c < n_curves; ++c) {
    SweepCurve curve;
    curve.label = specs[c].label;
    curve.vary = specs[c].vary;
    curve.error = errors[c];
    if (prepared[c]) curve.deployment = deployment_echo(specs[c].config, *prepared[c]);
    if (curve.error.empty()) {
      const int64_t cut = early_stop ? first_saturated[c].load() : INT64_MAX;
      for (size_t i = 0; i < n_values; ++i) {
        std::optional<SweepPoint>& slot = slots[c * n_values + i];
        if (int64_t(i) <= cut && slot) {
          // The basis at this point's load: computed here, not in the job, so that a part file
          // (merge) need not carry it.
          slot->basis = sim::prediction_basis(
              *prepared[c],
              sim::prediction_query(config_at(specs[c].config, options.axis, slot->value),
                                    *prepared[c]));
          curve.points.push_back(std::move(*slot));
        } else {
          curve.skipped_values.push_back(options.values[i]);
          if (int64_t(i) <= cut) result.interrupted = true;  // not run: cancelled
        }
      }
      analyse_curve(curve, result.columns, options);
    }
    result.curves.push_back(std::move(curve));
  }
  return result;
}

}  // namespace servesim::planning
