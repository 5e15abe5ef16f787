// SGLang's `python -m sglang.bench_serving` JSONL: one run per line (readers.h).
#include "sim/measured/readers.h"

#include <cstdint>
#include <string>
#include <vector>

#include "models/model_name.h"
#include "sim/base/error.h"
#include "sim/base/json_file.h"
#include "sim/measured/reader_helpers.h"

namespace servesim::measured {

using namespace detail;  // the parsing helpers every reader shares

std::vector<MeasuredRun> read_sglang_jsonl(const std::string& path) {
  const std::vector<std::string> lines = read_lines(path);
  std::vector<MeasuredRun> runs;
  for (size_t li = 0; li < lines.size(); ++li) {
    if (trim(lines[li]).empty()) continue;
    const std::string where = path + ":" + std::to_string(li + 1);
    const json j = parse_python_json(lines[li], where);
    if (!j.is_object() || !(j.contains("completed") || j.contains("mean_ttft_ms"))) {
      throw ConfigError(where +
                        ": not an SGLang bench_serving result (no 'completed' or "
                        "'mean_ttft_ms')");
    }
    MeasuredRun run;
    run.id = join_index(path, static_cast<int64_t>(runs.size()) + 1);
    run.path = path;
    run.format = "sglang-bench";
    for (const char* key : {"model_id", "model", "tokenizer_id"}) {
      if (auto it = j.find(key); it != j.end() && it->is_string()) {
        run.deployment.model_id = it->get<std::string>();
        const std::string model = models::catalog_name_for_id(run.deployment.model_id);
        if (!model.empty()) run.deployment.set("model", model, where + " (" + key + ")");
        break;
      }
    }
    if (j.contains("request_rate")) run.request_rate = rate_of(j["request_rate"], where);
    if (auto it = j.find("max_concurrency"); it != j.end() && it->is_number()) {
      run.max_concurrency = json_value_as<int64_t>(*it, where + ": field 'max_concurrency'");
    }
    if (auto it = j.find("backend"); it != j.end() && it->is_string()) {
      run.label = it->get<std::string>();
    }
    read_request_arrays(j, run, where);
    if (run.num_prompts == 0) {
      run.num_prompts = optional_field<int64_t>(j, "completed", where, 0);
    }
    read_summaries(j, run, "ttft", "ttft");
    read_summaries(j, run, "tpot", "tpot");
    read_summaries(j, run, "itl", "itl");
    read_summaries(j, run, "e2e_latency", "e2el");
    for (const char* key : {"request_throughput", "output_throughput"}) {
      if (auto it = j.find(key); it != j.end() && it->is_number()) {
        run.metrics[key] = it->get<double>();
      }
    }
    if (run.requests.empty()) {
      read_mean_lengths(j, run, where);
      run.notes.push_back(
          "no per-request data (run without --output-details): replayed with the "
          "mean input and output lengths");
    } else if (!j.contains("latencies")) {
      run.notes.push_back("E2E = ttft + sum(itls) per request");
    }
    fill_metrics_from_requests(run);
    runs.push_back(std::move(run));
  }
  if (runs.empty()) throw ConfigError(path + ": no runs (the file is empty)");
  return runs;
}

}  // namespace servesim::measured
