// LLMServingSim's bench_examples vLLM runs: requests.jsonl, meta.json, summary.txt (readers.h).
#include "sim/measured/readers.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
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

std::vector<MeasuredRun> read_llmservingsim(const std::string& path) {
  fs::path example(path);
  if (example.filename() == "requests.jsonl") {
    example = example.parent_path().parent_path();
  } else if (fs::is_regular_file(example / "requests.jsonl")) {
    example = example.parent_path();
  }
  const fs::path requests_path = example / "vllm" / "requests.jsonl";
  const std::string where = requests_path.string();
  if (!fs::is_regular_file(requests_path)) throw ConfigError(where + ": no such file");

  MeasuredRun run;
  run.path = requests_path.string();
  run.id = run.path;
  run.format = "llmservingsim";
  const std::vector<std::string> lines = read_lines(requests_path);
  std::vector<double> arrivals;
  for (size_t li = 0; li < lines.size(); ++li) {
    if (trim(lines[li]).empty()) continue;
    const std::string at = where + ":" + std::to_string(li + 1);
    const json j = parse_python_json(lines[li], at);
    for (const char* key : {"input_toks", "output_toks", "arrival_time", "queued_ts",
                            "first_token_ts", "last_token_ts"}) {
      if (!j.contains(key) || !j[key].is_number()) {
        throw ConfigError(at + ": missing required field '" + key + "'");
      }
    }
    MeasuredRequest r;
    r.input_tokens = require_field<int32_t>(j, "input_toks", at);
    r.output_tokens = require_field<int32_t>(j, "output_toks", at);
    const double queued = j["queued_ts"].get<double>();
    const double first = j["first_token_ts"].get<double>();
    const double last = j["last_token_ts"].get<double>();
    // The engine's clock only (arrival_time is another clock): realdata README.
    r.ttft_s = first - queued;
    r.e2e_s = last - queued;
    if (r.output_tokens > 1) r.tpot_s = (last - first) / (r.output_tokens - 1);
    r.failed = r.output_tokens <= 0;
    arrivals.push_back(j["arrival_time"].get<double>());
    run.requests.push_back(r);
  }
  if (run.requests.empty()) throw ConfigError(where + ": no requests");
  const double a0 = *std::min_element(arrivals.begin(), arrivals.end());
  for (size_t i = 0; i < arrivals.size(); ++i) run.requests[i].start_s = arrivals[i] - a0;
  run.has_start_times = true;
  run.num_prompts = static_cast<int64_t>(run.requests.size());
  const double span = *std::max_element(arrivals.begin(), arrivals.end()) - a0;
  if (span > 0) run.request_rate = double(run.requests.size() - 1) / span;
  run.notes.push_back(
      "send times: arrival_time deltas; latencies from the engine's *_ts (TTFT = "
      "first_token_ts - queued_ts)");

  const fs::path meta_path = example / "vllm" / "meta.json";
  if (fs::is_regular_file(meta_path)) {
    const std::string mw = meta_path.string();
    const json meta = read_json_file(meta_path);
    if (auto v = meta.find("vllm_version"); v != meta.end() && v->is_string()) {
      run.deployment.engine_version = v->get<std::string>();
      run.deployment.source["engine_version"] = mw;
    }
    if (auto v = meta.find("model"); v != meta.end() && v->is_string()) {
      run.deployment.model_id = v->get<std::string>();
      const std::string model = models::catalog_name_for_id(run.deployment.model_id);
      if (!model.empty()) run.deployment.set("model", model, mw + " (model)");
    }
    if (auto ek = meta.find("engine_kwargs"); ek != meta.end() && ek->is_object()) {
      for (const char* key :
           {"tensor_parallel_size", "max_num_seqs", "max_num_batched_tokens", "max_model_len"}) {
        if (auto v = ek->find(key); v != ek->end() && v->is_number_integer()) {
          run.deployment.set(key, *v, mw + " (engine_kwargs)");
        }
      }
      if (auto v = ek->find("kv_cache_dtype"); v != ek->end() && v->is_string()) {
        run.deployment.set("kv_cache_dtype", *v, mw + " (engine_kwargs)");
      }
    }
    // The server's resolved scheduler config says whether async scheduling was on (vLLM 0.19:
    // resolved_config.scheduler_config.async_scheduling = true, its default).
    if (auto rc = meta.find("resolved_config"); rc != meta.end() && rc->is_object()) {
      if (auto sc = rc->find("scheduler_config"); sc != rc->end() && sc->is_object()) {
        if (auto v = sc->find("async_scheduling"); v != sc->end() && v->is_boolean()) {
          run.deployment.set("async_scheduling", *v,
                             mw + " (resolved_config.scheduler_config.async_scheduling)");
        }
      }
    }
    if (auto kv = meta.find("kv_cache"); kv != meta.end() && kv->is_object()) {
      if (auto v = kv->find("num_gpu_blocks"); v != kv->end() && v->is_number_integer()) {
        run.deployment.set("num_gpu_blocks_override", *v, mw + " (kv_cache.num_gpu_blocks)");
      }
      if (auto v = kv->find("block_size"); v != kv->end() && v->is_number_integer()) {
        run.deployment.set("block_size", *v, mw + " (kv_cache)");
      }
      if (auto v = kv->find("gpu_memory_utilization"); v != kv->end() && v->is_number()) {
        run.deployment.set("gpu_memory_utilization", *v, mw + " (kv_cache)");
      }
      if (auto v = kv->find("enable_prefix_caching"); v != kv->end() && v->is_boolean()) {
        run.deployment.set("enable_prefix_caching", *v, mw + " (kv_cache)");
      }
    }
    if (auto hw = meta.find("hardware"); hw != meta.end() && hw->is_object()) {
      if (auto v = hw->find("device_name"); v != hw->end() && v->is_string()) {
        run.deployment.hardware = v->get<std::string>();
        const std::string gpu = catalog_gpu_for(run.deployment.hardware);
        if (!gpu.empty()) run.deployment.set("gpu", gpu, mw + " (hardware.device_name)");
      }
    }
  }
  // LLMServingSim's own cluster config names the hardware when meta.json does not.
  const fs::path config_path = example / "config.json";
  if (!run.deployment.config.contains("gpu") && fs::is_regular_file(config_path)) {
    const json c = read_json_file(config_path);
    const json* inst = nullptr;
    if (c.contains("nodes") && c["nodes"].is_array() && !c["nodes"].empty() &&
        c["nodes"][0].contains("instances") && c["nodes"][0]["instances"].is_array() &&
        !c["nodes"][0]["instances"].empty()) {
      inst = &c["nodes"][0]["instances"][0];
    }
    if (inst != nullptr && inst->contains("hardware") && (*inst)["hardware"].is_string()) {
      run.deployment.hardware = (*inst)["hardware"].get<std::string>();
      const std::string gpu = catalog_gpu_for(run.deployment.hardware);
      if (!gpu.empty()) run.deployment.set("gpu", gpu, config_path.string() + " (hardware)");
    }
  }
  // Published summary: the vLLM column of validation/summary.txt.
  const fs::path summary_path = example / "validation" / "summary.txt";
  if (fs::is_regular_file(summary_path)) {
    const std::map<std::string, std::string> kMetric = {
        {"TTFT", "ttft"}, {"TPOT", "tpot"}, {"Latency", "e2el"}, {"ITL", "itl"}};
    const std::map<std::string, std::string> kStat = {
        {"Mean", "mean"}, {"Median", "median"}, {"P90", "p90"}, {"P95", "p95"}, {"P99", "p99"}};
    const std::vector<std::string> lines2 = read_lines(summary_path);
    for (size_t li = 0; li < lines2.size(); ++li) {
      std::stringstream in(lines2[li]);
      std::string metric, stat, value;
      if (!(in >> metric >> stat >> value)) continue;
      auto m = kMetric.find(metric);
      auto s = kStat.find(stat);
      if (m == kMetric.end() || s == kStat.end()) continue;
      run.metrics[metric_key(s->second, m->second)] =
          to_double(value, summary_path.string() + ":" + std::to_string(li + 1) + ": vLLM column");
    }
  }
  fill_metrics_from_requests(run);
  return {run};
}

}  // namespace servesim::measured
