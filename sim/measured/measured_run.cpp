#include "sim/measured/measured_run.h"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>

#include "models/model_name.h"
#include "sim/base/error.h"
#include "sim/base/json_file.h"
#include "sim/measured/latency_samples.h"
#include "sim/measured/readers.h"
#include "sim/metrics/benchmark_metrics.h"

namespace servesim::measured {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Keys a sidecar may hold besides servesim config keys.
bool is_measured_only_key(const std::string& key) {
  return key == "match" || key == "engine_version" || key == "hardware" || key == "notes" ||
         key == "warm_prefix_cache" || key == "endpoint" || (!key.empty() && key[0] == '_');
}

// A sidecar's "endpoint": what the run was sent to, as the file records it or not. It declares,
// it does not set: the run is simulated with the endpoint its file records (a file that records
// none as /v1/completions), so a contradicting value is refused by name.
void check_sidecar_endpoint(const MeasuredRun& run, const json& value, const std::string& where) {
  const std::string chat = "/v1/chat/completions", completions = "/v1/completions";
  if (!value.is_string() || (value.get<std::string>() != chat && value != completions)) {
    throw ConfigError(where + ": key 'endpoint' has value " + value.dump() +
                      "; expected \"/v1/completions\" or \"/v1/chat/completions\"");
  }
  const std::string declared = value.get<std::string>();
  if (run.endpoint.empty()) {
    if (declared == completions) return;
    throw ConfigError(where + ": 'endpoint' is \"" + declared + "\" but " + run.id +
                      " does not record its endpoint and is simulated as /v1/completions (the "
                      "chat template's prompt tokens cannot be declared for it); expected "
                      "\"/v1/completions\" or no 'endpoint' key");
  }
  const std::string recorded = run.endpoint == "chat" ? chat : completions;
  if (declared == recorded) return;
  throw ConfigError(where + ": 'endpoint' is \"" + declared + "\" but " + run.id + " records " +
                    recorded + " (" +
                    (run.format == "public-vllm-runs" ? "its endpoint column" : "its file") +
                    "); expected \"" + recorded + "\" or no 'endpoint' key");
}

// Applies one sidecar object to the run's deployment.
void apply_sidecar(MeasuredRun& run, const json& j, const std::string& where) {
  if (!j.is_object()) throw ConfigError(where + ": expected a JSON object of deployment settings");
  for (const auto& [key, value] : j.items()) {
    if (key == "engine_version" || key == "hardware") {
      if (!value.is_string()) {
        throw ConfigError(where + ": key '" + key + "' has value " + value.dump() +
                          "; expected a string");
      }
      (key == "engine_version" ? run.deployment.engine_version : run.deployment.hardware) =
          value.get<std::string>();
      run.deployment.source[key] = where;
      continue;
    }
    if (key == "warm_prefix_cache") {
      if (!value.is_boolean()) {
        throw ConfigError(where + ": key 'warm_prefix_cache' has value " + value.dump() +
                          "; expected true or false");
      }
      run.warm_prefix_cache = value.get<bool>();
      continue;
    }
    if (key == "notes") {
      if (value.is_string()) run.notes.push_back(value.get<std::string>());
      continue;
    }
    if (key == "endpoint") {
      check_sidecar_endpoint(run, value, where);
      continue;
    }
    if (is_measured_only_key(key)) continue;
    run.deployment.set(key, value, where);
  }
}

struct Stats {
  double mean = 0, median = 0, std = 0, p90 = 0, p95 = 0, p99 = 0;
};

Stats stats_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  Stats s;
  const double n = static_cast<double>(v.size());
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / n;
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.std = std::sqrt(ss / n);  // np.std: population
  s.median = metrics::percentile_linear(v, 50);
  s.p90 = metrics::percentile_linear(v, 90);
  s.p95 = metrics::percentile_linear(v, 95);
  s.p99 = metrics::percentile_linear(v, 99);
  return s;
}

void put_missing(std::map<std::string, double>& m, const std::string& metric,
                 const std::vector<double>& values_ms) {
  if (values_ms.empty()) return;
  const Stats s = stats_of(values_ms);
  const std::pair<const char*, double> items[] = {{"mean", s.mean}, {"median", s.median},
                                                  {"std", s.std},   {"p90", s.p90},
                                                  {"p95", s.p95},   {"p99", s.p99}};
  for (const auto& [stat, v] : items) m.emplace(metric_key(stat, metric), v);  // keeps existing
}

}  // namespace

void MeasuredDeployment::set(const std::string& key, const json& value, const std::string& where) {
  config[key] = value;
  source[key] = where;
}

const std::vector<std::string>& latency_metric_names() {
  static const std::vector<std::string> names = {"ttft", "tpot", "itl", "e2el"};
  return names;
}

const std::vector<std::string>& compared_stats() {
  static const std::vector<std::string> stats = {"mean", "median", "p90", "p99"};
  return stats;
}

std::string metric_key(const std::string& stat, const std::string& metric) {
  return stat + "_" + metric + "_ms";
}

void fill_metrics_from_requests(MeasuredRun& run) {
  const LatencySamples s = measured_samples(run);
  int64_t completed = 0;
  int64_t output_tokens = 0;
  double first_start = std::numeric_limits<double>::infinity();
  double last_end = -std::numeric_limits<double>::infinity();
  bool ends_known = true;  // every completed request has a start and an E2E
  for (const MeasuredRequest& r : run.requests) {
    if (r.failed) continue;
    ++completed;
    output_tokens += r.output_tokens;
    const double e = request_e2e_s(r);
    if (std::isnan(e) || std::isnan(r.start_s)) {
      ends_known = false;
    } else {
      first_start = std::min(first_start, r.start_s);
      last_end = std::max(last_end, r.start_s + e);
    }
  }
  put_missing(run.metrics, "ttft", s.ttft_ms);
  put_missing(run.metrics, "tpot", s.tpot_ms);
  put_missing(run.metrics, "itl", s.itl_ms);
  put_missing(run.metrics, "e2el", s.e2el_ms);
  if (ends_known && completed > 0 && last_end > first_start) {
    const double duration = last_end - first_start;
    run.metrics.emplace("request_throughput", double(completed) / duration);
    run.metrics.emplace("output_throughput", double(output_tokens) / duration);
  }
}

std::string catalog_gpu_for(const std::string& hardware) {
  // Exact product names as nvidia-smi / torch report them, and the one cloud SKU in realdata.
  static const std::pair<const char*, const char*> kTable[] = {
      {"Standard_ND96asr_v4", "a100-40gb"},  // Azure: 8x A100-SXM4-40GB, NVLink
      {"A100-SXM4-40GB", "a100-40gb"},
      {"A100-SXM4-80GB", "a100-80gb"},
      {"H100 80GB HBM3", "h100-sxm"},
      {"GeForce RTX 4090", "rtx-4090"},
      {"RTX PRO 6000", "rtx-pro-6000"},
      {"RTX4090", "rtx-4090"},  // LLMServingSim's hardware labels
      {"RTXPRO6000", "rtx-pro-6000"},
  };
  for (const auto& [needle, name] : kTable) {
    if (hardware.find(needle) != std::string::npos) return name;
  }
  return "";
}

void resolve_deployment(MeasuredRun& run, const SidecarOptions& opts) {
  const fs::path file(run.path);
  const fs::path folder = fs::is_directory(file) ? file : file.parent_path();
  const fs::path folder_sidecar = folder / "servesim.json";
  if (fs::is_regular_file(folder_sidecar)) {
    apply_sidecar(run, read_json_file(folder_sidecar), folder_sidecar.string());
  }
  const fs::path file_sidecar(run.path + ".servesim.json");
  if (fs::is_regular_file(file_sidecar)) {
    apply_sidecar(run, read_json_file(file_sidecar), file_sidecar.string());
  }
  const std::string absolute = fs::weakly_canonical(fs::absolute(file)).string();
  for (const std::string& dir : opts.sidecar_dirs) {
    if (!fs::is_directory(dir)) throw ConfigError("--sidecars: " + dir + " is not a folder");
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.is_regular_file() && entry.path().extension() == ".json") {
        files.push_back(entry.path());
      }
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      const json j = read_json_file(f);
      const std::string pattern = require_field<std::string>(j, "match", f.string());
      if (fnmatch(pattern.c_str(), absolute.c_str(), 0) == 0) apply_sidecar(run, j, f.string());
    }
  }
  if (!opts.overrides.is_object()) throw InternalError("overrides must be a JSON object");
  for (const auto& [key, value] : opts.overrides.items()) {
    if (key == "engine_version") {
      run.deployment.engine_version = value.get<std::string>();
      run.deployment.source[key] = "command line";
    } else {
      run.deployment.set(key, value, "command line");
    }
  }
  for (const char* key : {"model", "gpu", "tensor_parallel_size"}) {
    if (!run.deployment.config.contains(key)) {
      std::string flag = std::string("--") + key;
      std::replace(flag.begin(), flag.end(), '_', '-');
      throw ConfigError(run.path + ": the deployment has no '" + key +
                        "' (the file does not say; give it in " + run.path +
                        ".servesim.json, a --sidecars folder, or with " + flag + ")");
    }
  }
  // A model given as a Hugging Face id (by a sidecar or --model) is recorded under the catalog
  // name it resolves to, as the readers record the files' ids: groups, calibration domains and
  // later --model queries name catalog entries. A value that names nothing is left for the
  // simulation of the run to refuse, with its message.
  if (const json& model = run.deployment.config["model"]; model.is_string()) {
    const std::string given = model.get<std::string>();
    try {
      const std::string name = models::resolve_model(given).catalog_name;
      if (!name.empty() && name != given) {
        run.deployment.set("model", name, run.deployment.source["model"] + " (" + given + ")");
      }
    } catch (const ConfigError&) {
    }
  }
}

std::vector<MeasuredRun> read_measured(const std::string& path, const SidecarOptions& opts) {
  // Sidecars (<run>.servesim.json, a folder's servesim.json) are not runs: a runs/*.json glob
  // picks them up with the runs they describe, and they are read through those runs.
  const std::string name = fs::path(path).filename().string();
  if (name == "servesim.json" || ends_with(name, ".servesim.json")) return {};
  std::vector<MeasuredRun> runs = read_runs(path);
  for (MeasuredRun& run : runs) {
    if (run.refused.empty()) resolve_deployment(run, opts);
  }
  return runs;
}

std::vector<MeasuredRun> take_refused(std::vector<MeasuredRun>& runs) {
  std::vector<MeasuredRun> kept, refused;
  for (MeasuredRun& r : runs) (r.refused.empty() ? kept : refused).push_back(std::move(r));
  runs = std::move(kept);
  return refused;
}

}  // namespace servesim::measured
