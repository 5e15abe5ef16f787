#include "sim/planning/slo.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "sim/base/error.h"
#include "sim/base/json_file.h"
#include "sim/base/number_text.h"
#include "sim/metrics/result_writer.h"

namespace servesim::planning {
namespace {

const char* kScalarKeys[] = {"request_throughput",
                             "request_goodput",
                             "output_throughput",
                             "total_token_throughput",
                             "max_output_tokens_per_s",
                             "max_concurrent_requests",
                             "completed",
                             "failed",
                             "duration",
                             "total_input_tokens",
                             "total_output_tokens"};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// A latency summary key split into (statistic, metric): "p99_ttft_ms" → ("p99", "ttft").
struct LatencyKey {
  std::string stat;  // "mean", "median", "std" or "p<P>"
  double percentile = -1;
  std::string metric;
};

std::optional<LatencyKey> parse_latency_key(const std::string& key) {
  if (key.size() < 4 || key.compare(key.size() - 3, 3, "_ms") != 0) return std::nullopt;
  const std::string body = key.substr(0, key.size() - 3);
  const auto us = body.rfind('_');
  if (us == std::string::npos) return std::nullopt;
  LatencyKey k;
  k.stat = body.substr(0, us);
  k.metric = body.substr(us + 1);
  if (std::find(std::begin(kLatencyMetrics), std::end(kLatencyMetrics), k.metric) ==
      std::end(kLatencyMetrics)) {
    return std::nullopt;
  }
  if (k.stat == "mean" || k.stat == "median" || k.stat == "std") return k;
  if (k.stat.size() < 2 || k.stat[0] != 'p') return std::nullopt;
  const auto p = parse_finite_double(k.stat.substr(1));
  if (!p || *p < 0 || *p > 100) return std::nullopt;
  k.percentile = *p;
  return k;
}

// "chat/p99_ttft_ms" → ("chat", "p99_ttft_ms"); an unqualified key has an empty class.
std::pair<std::string, std::string> split_class(const std::string& key) {
  const auto slash = key.find('/');
  if (slash == std::string::npos) return {"", key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

bool valid_class_name(const std::string& s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

std::string op_text(SloOp op) {
  switch (op) {
    case SloOp::kLe:
      return "<=";
    case SloOp::kLt:
      return "<";
    case SloOp::kGe:
      return ">=";
    case SloOp::kGt:
      return ">";
  }
  return "<=";
}

std::string number_text(double v) {
  std::ostringstream os;
  os.precision(15);
  os << v;
  return os.str();
}

}  // namespace

bool Slo::holds(double value) const {
  switch (op) {
    case SloOp::kLe:
      return value <= threshold;
    case SloOp::kLt:
      return value < threshold;
    case SloOp::kGe:
      return value >= threshold;
    case SloOp::kGt:
      return value > threshold;
  }
  return false;
}

double Slo::violation(double value) const {
  const double diff = is_upper_bound() ? value - threshold : threshold - value;
  return threshold != 0 ? diff / std::fabs(threshold) : diff;
}

std::string Slo::text() const { return key + op_text(op) + number_text(threshold); }

bool is_slo_metric(const std::string& qualified) {
  const auto [cls, key] = split_class(qualified);
  if (!cls.empty() && !valid_class_name(cls)) return false;
  if (std::find(std::begin(kScalarKeys), std::end(kScalarKeys), key) != std::end(kScalarKeys)) {
    return true;
  }
  return parse_latency_key(key).has_value();
}

Slo parse_slo(const std::string& raw) {
  const std::string text = trim(raw);
  auto bad = [&](const std::string& why) { return ConfigError("--slo: '" + raw + "' " + why); };
  const auto pos = text.find_first_of("<>");
  if (pos == std::string::npos) {
    throw bad("is not an SLO; expected METRIC<=VALUE (or <, >=, >), e.g. p99_ttft_ms<=500");
  }
  Slo slo;
  size_t op_len = 1;
  if (pos + 1 < text.size() && text[pos + 1] == '=') op_len = 2;
  if (text[pos] == '<') {
    slo.op = op_len == 2 ? SloOp::kLe : SloOp::kLt;
  } else {
    slo.op = op_len == 2 ? SloOp::kGe : SloOp::kGt;
  }
  slo.key = trim(text.substr(0, pos));
  if (slo.key == "request_goodput:") slo.key = "request_goodput";
  const std::string value = trim(text.substr(pos + op_len));
  if (slo.key.empty()) throw bad("has no metric; expected METRIC<=VALUE, e.g. p99_ttft_ms<=500");
  if (const auto [cls, metric] = split_class(slo.key);
      slo.key.find('/') != std::string::npos && !valid_class_name(cls)) {
    throw bad("names the class '" + cls +
              "'; expected CLASS/METRIC with a class name of "
              "letters, digits, '_', '-' or '.', e.g. chat/p99_ttft_ms<=500");
  }
  if (!is_slo_metric(slo.key)) {
    throw bad("names an unknown metric '" + slo.key +
              "'; expected a result-file key: {mean,median,std,pNN}_{ttft,tpot,itl,e2el}_ms "
              "(e.g. p99_ttft_ms) or request_throughput, request_goodput, output_throughput, "
              "total_token_throughput, ...");
  }
  const auto v = parse_finite_double(value);
  if (!v) throw bad("has no valid threshold '" + value + "'; expected a number, e.g. 500");
  // Latency and throughput metrics are never negative: a negative bound is a typo (it used to
  // surface later as a --goodput error).
  if (!(*v >= 0) || !std::isfinite(*v)) {
    throw bad("has threshold " + value + "; expected a finite number >= 0");
  }
  slo.threshold = *v;
  return slo;
}

std::vector<Slo> parse_slos(const std::vector<std::string>& texts) {
  std::vector<Slo> out;
  for (const std::string& t : texts) out.push_back(parse_slo(t));
  return out;
}

std::optional<double> metric_value(const metrics::BenchmarkMetrics& pooled,
                                   const std::string& qualified) {
  const auto [cls, key] = split_class(qualified);
  const metrics::BenchmarkMetrics* found = &pooled;
  if (!cls.empty()) {
    found = nullptr;
    for (const metrics::ClassMetrics& c : pooled.classes) {
      if (c.name == cls) found = &c.metrics;
    }
    if (found == nullptr) return std::nullopt;
  }
  const metrics::BenchmarkMetrics& m = *found;
  if (key == "request_throughput") return m.request_throughput;
  if (key == "request_goodput") return m.request_goodput;
  if (key == "output_throughput") return m.output_throughput;
  if (key == "total_token_throughput") return m.total_token_throughput;
  if (key == "max_output_tokens_per_s") return m.max_output_tokens_per_s;
  if (key == "max_concurrent_requests") return double(m.max_concurrent_requests);
  if (key == "completed") return double(m.completed);
  if (key == "failed") return double(m.failed);
  if (key == "duration") return m.duration_s;
  if (key == "total_input_tokens") return double(m.total_input_tokens);
  if (key == "total_output_tokens") return double(m.total_output_tokens);
  const auto k = parse_latency_key(key);
  if (!k) return std::nullopt;
  if (m.completed == 0) return std::nullopt;
  const auto it = m.summaries.find(k->metric);
  if (it == m.summaries.end()) return std::nullopt;
  const metrics::MetricSummary& s = it->second;
  if (k->stat == "mean") return s.mean_ms;
  if (k->stat == "median") return s.median_ms;
  if (k->stat == "std") return s.std_ms;
  for (const auto& [p, v] : s.percentiles_ms) {
    if (p == k->percentile) return v;
  }
  return std::nullopt;
}

void require_slo_metrics(metrics::MetricsOptions& options, const std::vector<Slo>& slos) {
  for (const char* m : kLatencyMetrics) {
    if (std::find(options.percentile_metrics.begin(), options.percentile_metrics.end(), m) ==
        options.percentile_metrics.end()) {
      options.percentile_metrics.push_back(m);
    }
  }
  for (const Slo& slo : slos) {
    const auto k = parse_latency_key(split_class(slo.key).second);
    if (!k || k->percentile < 0) continue;
    auto& ps = options.metric_percentiles;
    if (std::find(ps.begin(), ps.end(), k->percentile) == ps.end()) ps.push_back(k->percentile);
  }
}

void leave_out_unread_metrics(metrics::MetricsOptions& options, const std::vector<Slo>& slos) {
  bool itl = false, peak_rate = false, concurrency = false;
  for (const Slo& slo : slos) {
    const std::string key = split_class(slo.key).second;
    const auto k = parse_latency_key(key);
    itl |= k && k->metric == "itl";
    peak_rate |= key == "max_output_tokens_per_s";
    concurrency |= key == "max_concurrent_requests";
  }
  options.compute_itl = options.compute_itl && itl;
  options.compute_max_output_tokens_per_s = options.compute_max_output_tokens_per_s && peak_rate;
  options.compute_max_concurrent_requests = options.compute_max_concurrent_requests && concurrency;
}

std::map<std::string, double> goodput_from_slos(const std::vector<Slo>& slos) {
  std::map<std::string, double> out;
  for (const Slo& slo : slos) {
    if (!split_class(slo.key).first.empty()) continue;  // a class's SLO: not vLLM's goodput
    const auto k = parse_latency_key(slo.key);
    if (!k || !slo.is_upper_bound() || k->metric == "itl") continue;
    auto it = out.find(k->metric);
    if (it == out.end() || slo.threshold < it->second) out[k->metric] = slo.threshold;
  }
  return out;
}

std::vector<Slo> class_slos(const workloads::WorkloadClasses& classes) {
  std::vector<Slo> out;
  for (size_t i = 0; i < classes.classes.size(); ++i) {
    const workloads::WorkloadClass& c = classes.classes[i];
    for (size_t j = 0; j < c.slo.size(); ++j) {
      if (c.slo[j].find('/') != std::string::npos) {
        throw ConfigError(classes.path + ": classes[" + std::to_string(i) + "].slo[" +
                          std::to_string(j) + "]: value \"" + c.slo[j] +
                          "\"; expected an SLO without a class prefix (the class is " + c.name +
                          "), e.g. \"p99_ttft_ms<=500\"");
      }
      try {
        Slo slo = parse_slo(c.slo[j]);
        slo.key = c.name + "/" + slo.key;
        out.push_back(slo);
      } catch (const ConfigError& e) {
        std::string why = e.what();
        const std::string prefix = "--slo: ";
        if (why.rfind(prefix, 0) == 0) why = why.substr(prefix.size());
        throw ConfigError(classes.path + ": classes[" + std::to_string(i) + "].slo[" +
                          std::to_string(j) + "]: " + why);
      }
    }
  }
  return out;
}

void check_slo_classes(const std::vector<Slo>& slos, const std::vector<std::string>& names) {
  for (const Slo& slo : slos) {
    const std::string cls = split_class(slo.key).first;
    if (cls.empty() || std::find(names.begin(), names.end(), cls) != names.end()) continue;
    throw ConfigError("--slo: '" + slo.text() + "' names the class '" + cls + "'; expected " +
                      (names.empty() ? std::string("a --workload file that defines it")
                                     : "one of the workload file's classes: " + join_names(names)));
  }
}

std::string slos_text(const std::vector<Slo>& slos) {
  std::string out;
  for (const Slo& s : slos) {
    if (!out.empty()) out += ", ";
    out += s.text();
  }
  return out;
}

}  // namespace servesim::planning
