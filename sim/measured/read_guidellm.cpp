// inference-sim's guidellm per-request CSV with the experiment files beside it (readers.h).
#include "sim/measured/readers.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "models/model_name.h"
#include "sim/base/error.h"
#include "sim/measured/reader_helpers.h"

namespace servesim::measured {

using namespace detail;  // the parsing helpers every reader shares

namespace {

// "key: value" lines of a flat YAML file (no nesting needed here); comments dropped.
std::map<std::string, std::string> flat_yaml(const fs::path& path) {
  std::map<std::string, std::string> out;
  for (std::string line : read_lines(path)) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(line.substr(0, colon));
    const std::string value = trim(line.substr(colon + 1));
    if (!key.empty() && !value.empty()) out.emplace(key, value);  // first occurrence wins
  }
  return out;
}

}  // namespace

std::vector<MeasuredRun> read_guidellm_csv(const std::string& path) {
  const std::vector<std::string> lines = read_lines(path);
  if (lines.empty()) throw ConfigError(path + ": empty file");
  const size_t width = split_csv_line(lines[0]).size();
  const std::map<std::string, size_t> col =
      csv_columns(lines[0], path,
                  {"bench_idx", "strategy", "target_rate", "status", "request_start_time",
                   "prompt_tokens", "output_tokens", "ttft_ms", "itl_ms", "request_latency_s"});
  struct Bench {
    std::string strategy;
    double target_rate = kUnknown;
    std::vector<MeasuredRequest> requests;
    std::vector<double> starts;
  };
  std::map<int64_t, Bench> benches;
  for (size_t li = 1; li < lines.size(); ++li) {
    if (trim(lines[li]).empty()) continue;
    const std::string at = path + ":" + std::to_string(li + 1);
    std::vector<std::string> cells = split_csv_line(lines[li]);
    if (cells.size() < width) cells.resize(width);
    auto cell = [&](const char* key) { return cells[col.at(key)]; };
    const int64_t idx =
        token_count(to_double(cell("bench_idx"), at + ": bench_idx"), at + ": bench_idx");
    Bench& b = benches[idx];
    b.strategy = cell("strategy");
    if (!cell("target_rate").empty()) b.target_rate = to_double(cell("target_rate"), at);
    MeasuredRequest r;
    r.failed = cell("status") != "successful";
    r.input_tokens = token_count(to_double(cell("prompt_tokens"), at), at + ": prompt_tokens");
    const double start = to_double(cell("request_start_time"), at + ": request_start_time");
    if (!r.failed) {
      r.output_tokens = token_count(to_double(cell("output_tokens"), at), at + ": output_tokens");
      r.ttft_s = to_double(cell("ttft_ms"), at + ": ttft_ms") * 1e-3;
      r.e2e_s = to_double(cell("request_latency_s"), at + ": request_latency_s");
      // guidellm's per-request itl_ms = (latency − TTFT)/(output − 1): vLLM's TPOT.
      if (r.output_tokens > 1) r.tpot_s = to_double(cell("itl_ms"), at + ": itl_ms") * 1e-3;
    }
    b.requests.push_back(r);
    b.starts.push_back(start);
  }
  if (benches.empty()) throw ConfigError(path + ": no rows");

  // Deployment and workload files beside the CSV (inference-sim's ground-truth layout).
  const fs::path folder = fs::path(path).parent_path();
  MeasuredDeployment dep;
  std::vector<std::string> notes;
  const fs::path exp = folder / "exp-config.yaml";
  if (fs::is_regular_file(exp)) {
    const auto y = flat_yaml(exp);
    const std::string w = exp.string();
    if (auto it = y.find("model"); it != y.end()) {
      dep.model_id = it->second;
      const std::string model = models::catalog_name_for_id(dep.model_id);
      if (!model.empty()) dep.set("model", model, w);
    }
    const std::pair<const char*, const char*> kKeys[] = {
        {"tensor_parallelism", "tensor_parallel_size"},
        {"max_model_len", "max_model_len"},
        {"max_num_batched_tokens", "max_num_batched_tokens"},
        {"max_num_seqs", "max_num_seqs"}};
    for (const auto& [from, to] : kKeys) {
      if (auto it = y.find(from); it != y.end()) {
        dep.set(to,
                whole_number(to_double(it->second, w + ": " + from), 0,
                             std::numeric_limits<int32_t>::max(), w + ": " + from),
                w);
      }
    }
  }
  int32_t prefix_tokens = 0;
  const fs::path profile = folder / "profile.yaml";
  if (fs::is_regular_file(profile)) {
    const auto y = flat_yaml(profile);
    if (auto it = y.find("prefix_tokens"); it != y.end()) {
      prefix_tokens = token_count(to_double(it->second, profile.string() + ": prefix_tokens"),
                                  profile.string() + ": prefix_tokens");
    }
  }
  const fs::path log = folder / "vllm.log";
  if (fs::is_regular_file(log)) {
    static const std::regex kVersion(R"(vLLM API server version ([0-9][^\s]*))");
    static const std::regex kKvTokens(R"(GPU KV cache size: ([0-9,]+) tokens)");
    for (const std::string& line : read_lines(log)) {
      std::smatch m;
      if (dep.engine_version.empty() && std::regex_search(line, m, kVersion)) {
        dep.engine_version = m[1];
        dep.source["engine_version"] = log.string();
      }
      if (std::regex_search(line, m, kKvTokens)) {
        std::string digits = m[1];
        digits.erase(std::remove(digits.begin(), digits.end(), ','), digits.end());
        const int64_t tokens = std::stoll(digits);
        const int64_t block = 16;  // vLLM's CUDA default; the log's KV size is blocks × 16
        if (tokens % block == 0) {
          dep.set("num_gpu_blocks_override", tokens / block,
                  log.string() + " (GPU KV cache size: " + m[1].str() + " tokens)");
        }
      }
    }
  }

  std::vector<MeasuredRun> runs;
  for (auto& [idx, b] : benches) {
    MeasuredRun run;
    run.id = join_index(path, idx);
    run.path = path;
    run.format = "guidellm";
    run.deployment = dep;
    run.shared_prefix_tokens = prefix_tokens;
    const double t0 = *std::min_element(b.starts.begin(), b.starts.end());
    for (size_t i = 0; i < b.requests.size(); ++i) {
      MeasuredRequest r = b.requests[i];
      r.start_s = b.starts[i] - t0;
      if (r.failed) continue;  // rejected at once (≈12 ms); not replayed, not measured
      run.requests.push_back(r);
    }
    const size_t failed = b.requests.size() - run.requests.size();
    if (failed > 0) {
      run.notes.push_back(std::to_string(failed) + " errored request(s) left out");
    }
    std::stable_sort(
        run.requests.begin(), run.requests.end(),
        [](const MeasuredRequest& a, const MeasuredRequest& c) { return a.start_s < c.start_s; });
    run.num_prompts = static_cast<int64_t>(run.requests.size());
    if (b.strategy == "synchronous") {
      // One request at a time: the next is sent when the previous finishes.
      run.label = "synchronous";
      run.max_concurrency = 1;
      run.request_rate = kInf;
      run.has_start_times = false;
    } else if (b.strategy == "throughput") {
      run.label = "throughput";
      run.request_rate = kInf;
      run.has_start_times = true;
    } else if (b.strategy == "constant") {
      std::ostringstream os;
      os.precision(3);
      os << "constant " << b.target_rate << " req/s";
      run.label = os.str();
      run.request_rate = b.target_rate;
      run.arrival_process = "constant";
      run.has_start_times = true;
    } else {
      run.label = b.strategy;
      run.has_start_times = true;
    }
    // Pooled ITL mean = Σ per-request mean gap × (output − 1) / Σ (output − 1), exactly.
    double gaps = 0, weight = 0;
    for (const MeasuredRequest& r : run.requests) {
      if (r.output_tokens > 1 && !std::isnan(r.tpot_s)) {
        gaps += r.tpot_s * (r.output_tokens - 1);
        weight += r.output_tokens - 1;
      }
    }
    if (weight > 0) run.metrics["mean_itl_ms"] = gaps / weight * 1e3;
    // Request starts are known for every benchmark; fill_metrics_from_requests uses them for
    // the achieved throughput.
    fill_metrics_from_requests(run);
    runs.push_back(std::move(run));
  }
  for (MeasuredRun& run : runs) {
    if (prefix_tokens > 0) {
      run.notes.push_back("every prompt starts with the same " + std::to_string(prefix_tokens) +
                          "-token prefix (profile.yaml)");
    }
  }
  return runs;
}

}  // namespace servesim::measured
