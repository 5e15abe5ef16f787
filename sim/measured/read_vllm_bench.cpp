// vLLM's `vllm bench serve` / benchmark_serving.py --save-result JSON (readers.h).
#include "sim/measured/readers.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "models/model_name.h"
#include "sim/base/error.h"
#include "sim/base/json_file.h"
#include "sim/measured/reader_helpers.h"

namespace servesim::measured {

using namespace detail;  // the parsing helpers every reader shares

namespace {

double number_of(const json& j, const std::string& key, const std::string& where) {
  const json& v = j.at(key);
  if (!v.is_number()) {
    throw ConfigError(where + ": field '" + key + "' has value " + v.dump() +
                      "; expected a number");
  }
  return v.get<double>();
}

bool close_rel(double a, double b, double rel) {
  return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b));
}

// vLLM commit 8668d7c's benchmark_serving.py wrote mean_e2el_ms = np.median and
// median_e2el_ms = np.mean. With per-request data the swap shows; it is undone and noted.
void fix_e2el_swap(MeasuredRun& run) {
  auto mean_it = run.metrics.find("mean_e2el_ms");
  auto median_it = run.metrics.find("median_e2el_ms");
  if (mean_it == run.metrics.end() || median_it == run.metrics.end()) return;
  MeasuredRun probe;
  probe.requests = run.requests;
  fill_metrics_from_requests(probe);
  if (!probe.metrics.count("mean_e2el_ms")) return;
  const double mean = probe.metrics["mean_e2el_ms"];
  const double median = probe.metrics["median_e2el_ms"];
  const double kRel = 0.005;  // arrays may be rounded (llm-k8s: 1 µs)
  if (!close_rel(mean_it->second, mean, kRel) && close_rel(mean_it->second, median, kRel) &&
      close_rel(median_it->second, mean, kRel)) {
    std::swap(mean_it->second, median_it->second);
    run.notes.push_back(
        "mean_e2el_ms and median_e2el_ms were swapped in the file (benchmark_serving.py at vLLM "
        "commit 8668d7c wrote mean = np.median and median = np.mean); swapped back, as the "
        "per-request latencies show");
  }
}

// Splits a shell command line on blanks ("--flag value" and "--flag=value" both occur).
std::map<std::string, std::string> command_flags(const std::string& command) {
  std::map<std::string, std::string> flags;
  std::stringstream in(command);
  std::vector<std::string> words;
  std::string w;
  while (in >> w) words.push_back(w);
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i].rfind("--", 0) != 0) continue;
    const auto eq = words[i].find('=');
    if (eq != std::string::npos) {
      flags[words[i].substr(0, eq)] = words[i].substr(eq + 1);
    } else if (i + 1 < words.size() && words[i + 1].rfind("--", 0) != 0) {
      flags[words[i]] = words[i + 1];
      ++i;
    } else {
      flags[words[i]] = "";
    }
  }
  return flags;
}

// The llm-k8s layout: "<stem>.commands" beside "<stem>.json" = {"client_command", "gpu_type"}.
void read_commands_file(MeasuredRun& run, const fs::path& json_path) {
  fs::path commands = json_path;
  commands.replace_extension(".commands");
  if (!fs::is_regular_file(commands)) return;
  const std::string where = commands.string();
  const json j = read_json_file(commands);
  if (!j.is_object()) throw ConfigError(where + ": expected a JSON object");
  if (auto it = j.find("gpu_type"); it != j.end() && it->is_string()) {
    run.deployment.hardware = it->get<std::string>();
    run.deployment.source["hardware"] = where + " (gpu_type)";
    const std::string gpu = catalog_gpu_for(run.deployment.hardware);
    if (!gpu.empty()) run.deployment.set("gpu", gpu, where + " (gpu_type)");
  }
  if (auto it = j.find("client_command"); it != j.end() && it->is_string()) {
    const auto flags = command_flags(it->get<std::string>());
    if (auto f = flags.find("--seed"); f != flags.end()) {
      // Exactly representable integers only (2^53): a seed is an identity, not a magnitude.
      run.seed = static_cast<uint64_t>(whole_number(to_double(f->second, where + ": --seed"), 0,
                                                    int64_t{1} << 53, where + ": --seed"));
    }
    if (auto f = flags.find("--dataset-name"); f != flags.end()) {
      run.notes.push_back("client dataset: " + f->second + " (" + where + ")");
    }
    if (auto f = flags.find("--max-concurrency"); f != flags.end() && run.max_concurrency == 0) {
      run.max_concurrency =
          whole_number(to_double(f->second, where + ": --max-concurrency"), 0,
                       std::numeric_limits<int32_t>::max(), where + ": --max-concurrency");
    }
  }
}

}  // namespace

std::vector<MeasuredRun> read_vllm_bench_json(const std::string& path) {
  const json j = parse_python_json(read_text(path), path);
  if (!j.is_object() ||
      !(j.contains("ttfts") || j.contains("mean_ttft_ms") || j.contains("completed"))) {
    throw ConfigError(path +
                      ": not a vllm bench serve result (no 'ttfts', 'mean_ttft_ms' or "
                      "'completed')");
  }
  MeasuredRun run;
  run.id = path;
  run.path = path;
  run.format = "vllm-bench";
  if (auto it = j.find("model_id"); it != j.end() && it->is_string()) {
    run.deployment.model_id = it->get<std::string>();
    const std::string model = models::catalog_name_for_id(run.deployment.model_id);
    if (!model.empty()) run.deployment.set("model", model, path + " (model_id)");
  }
  // What the client recorded: "endpoint_type" (newer clients; older ones wrote the backend there
  // too) or "backend": "openai-chat" posts to /v1/chat/completions, the others to completions.
  for (const char* key : {"endpoint_type", "backend"}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string() || !run.endpoint.empty()) continue;
    const std::string b = it->get<std::string>();
    run.endpoint = b.find("chat") != std::string::npos ? "chat" : "completions";
  }
  if (auto it = j.find("date"); it != j.end() && it->is_string()) run.date = it->get<std::string>();
  // vllm bench serve does not record the vLLM version; a --metadata vllm_version=X.Y.Z does.
  if (auto it = j.find("vllm_version"); it != j.end() && it->is_string()) {
    run.deployment.engine_version = it->get<std::string>();
    run.deployment.source["engine_version"] = path + " (vllm_version)";
  }
  if (j.contains("request_rate")) run.request_rate = rate_of(j["request_rate"], path);
  if (auto it = j.find("burstiness"); it != j.end() && !it->is_null()) {
    run.burstiness = number_of(j, "burstiness", path);
  }
  if (auto it = j.find("max_concurrency"); it != j.end() && !it->is_null()) {
    run.max_concurrency =
        whole_number(number_of(j, "max_concurrency", path), 0, std::numeric_limits<int32_t>::max(),
                     path + ": field 'max_concurrency'");
  }
  read_request_arrays(j, run, path);
  if (run.num_prompts == 0) {
    if (auto it = j.find("num_prompts"); it != j.end() && it->is_number()) {
      run.num_prompts = json_value_as<int64_t>(*it, path + ": field 'num_prompts'");
    } else if (auto c = j.find("completed"); c != j.end() && c->is_number()) {
      run.num_prompts = json_value_as<int64_t>(*c, path + ": field 'completed'");
    }
  }
  for (const std::string& m : latency_metric_names()) read_summaries(j, run, m, m);
  for (const char* key : {"request_throughput", "output_throughput", "total_token_throughput"}) {
    if (auto it = j.find(key); it != j.end() && it->is_number())
      run.metrics[key] = it->get<double>();
  }
  // Goodput: "request_goodput:" (old, trailing colon) or "request_goodput" (new); null unless
  // --goodput was given. Kept for reference, not compared.
  for (const char* key : {"request_goodput:", "request_goodput"}) {
    if (auto it = j.find(key); it != j.end() && it->is_number()) {
      run.metrics["request_goodput"] = it->get<double>();
    }
  }
  if (run.requests.empty()) {
    // --save-result without --save-detailed: no per-request arrays. vLLM still writes the token
    // totals, so the replay uses their means (replay.cpp refuses a file that has neither).
    read_mean_lengths(j, run, path);
    run.notes.push_back(
        "no per-request arrays (saved without --save-detailed): replayed with the "
        "mean input and output lengths");
  }
  if (!run.requests.empty()) {
    fix_e2el_swap(run);
    if (!j.contains("latencies")) {
      run.notes.push_back("E2E = ttft + sum(itls) per request (the file has no 'latencies')");
    }
  }
  read_commands_file(run, path);
  fill_metrics_from_requests(run);
  return {run};
}

}  // namespace servesim::measured
