// genai-perf's profile_export_genai_perf.json (readers.h).
#include "sim/measured/readers.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "models/model_name.h"
#include "sim/base/error.h"
#include "sim/base/json_file.h"
#include "sim/measured/reader_helpers.h"

namespace servesim::measured {

using namespace detail;  // the parsing helpers every reader shares

namespace {

double genai_unit_to_ms(const std::string& unit, const std::string& where) {
  if (unit.empty() || unit == "ms") return 1.0;
  if (unit == "ns") return 1e-6;
  if (unit == "us") return 1e-3;
  if (unit == "s" || unit == "sec") return 1e3;
  throw ConfigError(where + ": unknown time unit '" + unit + "'; expected ms, ns, us or s");
}

}  // namespace

std::vector<MeasuredRun> read_genai_perf_json(const std::string& path) {
  const json j = parse_python_json(read_text(path), path);
  if (!j.is_object() || !j.contains("time_to_first_token")) {
    throw ConfigError(path + ": not a genai-perf profile export (no 'time_to_first_token')");
  }
  MeasuredRun run;
  run.id = path;
  run.path = path;
  run.format = "genai-perf";
  // genai-perf metric -> vLLM metric. inter_token_latency is per request
  // (request_latency − TTFT)/(output − 1) (genai_perf/metrics/llm_metrics.py), vLLM's TPOT.
  const std::pair<const char*, const char*> kMap[] = {{"time_to_first_token", "ttft"},
                                                      {"inter_token_latency", "tpot"},
                                                      {"request_latency", "e2el"}};
  const std::pair<const char*, const char*> kStats[] = {{"avg", "mean"}, {"p50", "median"},
                                                        {"std", "std"},  {"p90", "p90"},
                                                        {"p95", "p95"},  {"p99", "p99"}};
  for (const auto& [name, metric] : kMap) {
    auto it = j.find(name);
    if (it == j.end()) continue;
    const std::string where = path + ": " + name;
    if (!it->is_object()) throw ConfigError(where + " is not an object");
    const double scale =
        genai_unit_to_ms(optional_field<std::string>(*it, "unit", where, "ms"), where);
    for (const auto& [from, to] : kStats) {
      if (auto v = it->find(from); v != it->end() && v->is_number()) {
        run.metrics[metric_key(to, metric)] = v->get<double>() * scale;
      }
    }
  }
  auto avg_of = [&](const char* name) -> double {
    auto it = j.find(name);
    if (it == j.end() || !it->is_object() || !it->contains("avg") || !(*it)["avg"].is_number()) {
      return kUnknown;
    }
    return (*it)["avg"].get<double>();
  };
  if (double v = avg_of("request_throughput"); !std::isnan(v))
    run.metrics["request_throughput"] = v;
  if (double v = avg_of("output_token_throughput"); !std::isnan(v)) {
    run.metrics["output_throughput"] = v;
  }
  run.mean_input_tokens = avg_of("input_sequence_length");
  run.mean_output_tokens = avg_of("output_sequence_length");
  if (std::isnan(run.mean_input_tokens) || std::isnan(run.mean_output_tokens)) {
    throw ConfigError(path +
                      ": missing input_sequence_length.avg or output_sequence_length.avg "
                      "(needed to replay the run)");
  }
  run.num_prompts = 0;
  if (auto ic = j.find("input_config"); ic != j.end() && ic->is_object()) {
    const std::string where = path + ": input_config";
    if (auto m = ic->find("model"); m != ic->end()) {
      if (m->is_array() && !m->empty() && (*m)[0].is_string()) {
        run.deployment.model_id = (*m)[0].get<std::string>();
      } else if (m->is_string()) {
        run.deployment.model_id = m->get<std::string>();
      }
      const std::string model = models::catalog_name_for_id(run.deployment.model_id);
      if (!model.empty()) run.deployment.set("model", model, where + ".model");
    }
    if (auto c = ic->find("concurrency");
        c != ic->end() && c->is_number() && c->get<double>() > 0) {
      run.max_concurrency = json_value_as<int64_t>(*c, path + ": input_config.concurrency");
    }
    if (auto r = ic->find("request_rate"); r != ic->end() && r->is_number()) {
      run.request_rate = r->get<double>();
      // perf_analyzer's --request-distribution defaults to constant.
      run.arrival_process = "constant";
      if (auto d = ic->find("request_distribution");
          d != ic->end() && d->is_string() && d->get<std::string>() == "poisson") {
        run.arrival_process = "poisson";
      }
    }
    if (auto n = ic->find("request_count"); n != ic->end() && n->is_number()) {
      run.num_prompts = json_value_as<int64_t>(*n, path + ": input_config num_prompts");
    }
  }
  if (run.num_prompts <= 0) {
    run.num_prompts = 100;
    run.notes.push_back("the number of requests is not in the file; replayed 100");
  }
  run.notes.push_back("no per-request data: replayed with the mean input and output lengths");
  return {run};
}

}  // namespace servesim::measured
