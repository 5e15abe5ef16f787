// Argonne LLM-Inference-Bench's All_results.csv: static batches run offline (readers.h).
#include "sim/measured/readers.h"

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "sim/base/error.h"
#include "sim/base/resource_limits.h"
#include "sim/measured/reader_helpers.h"

namespace servesim::measured {

using namespace detail;  // the parsing helpers every reader shares

namespace {

// The models of the Argonne tables that servesim's catalog holds (models/catalog), and what a
// run of them needs beyond the catalog entry. Llama 3 (8B, 70B) has Llama 3.1's shape with an
// 8,192-token context (3.1's original_max_position_embeddings); Qwen2-7B and Qwen2-72B have the
// shapes of Qwen2.5-7B and -72B (hidden, intermediate, layers, heads, KV heads, vocab).
struct ArgonneModel {
  const char* id;         // the file's Model column
  const char* catalog;    // servesim model
  int64_t max_model_len;  // 0 = the catalog's
  const char* why;
};
constexpr ArgonneModel kArgonneModels[] = {
    {"meta-llama/Llama-2-7b-hf", "llama-2-7b", 0, ""},
    {"meta-llama/Llama-2-70b-hf", "llama-2-70b", 0, ""},
    {"meta-llama/Meta-Llama-3-8B", "llama-3.1-8b", 8192,
     "Llama 3 8B: Llama 3.1 8B's shape, 8,192-token context"},
    {"meta-llama/Meta-Llama-3-70B", "llama-3.1-70b", 8192,
     "Llama 3 70B: Llama 3.1 70B's shape, 8,192-token context"},
    {"mistralai/Mistral-7B-v0.1", "mistral-7b", 0, ""},
    {"mistralai/Mixtral-8x7B-v0.1", "mixtral-8x7b", 0, ""},
    {"Qwen/Qwen2-7B", "qwen2.5-7b", 0, "Qwen2-7B: Qwen2.5-7B's shape"},
    {"Qwen/Qwen2-72B", "qwen2.5-72b", 0, "Qwen2-72B: Qwen2.5-72B's shape"},
};

}  // namespace

std::vector<MeasuredRun> read_argonne_csv(const std::string& path) {
  const std::vector<std::string> lines = read_lines(path);
  if (lines.empty()) throw ConfigError(path + ": empty file");
  const std::map<std::string, size_t> col =
      csv_columns(lines[0], path,
                  {"Hardware", "Num of Hardware", "Framework", "Model", "Input Output Length",
                   "Batch Size", "Latency"});
  // The GPUs and the vLLM each was benchmarked with (the upstream repository's vLLM/<gpu>/
  // scripts, data/realdata/README.md): A100 on ALCF Polaris (4 × A100-SXM4-40GB per node), its
  // requirements pinning a vLLM 0.6.1+ stack; H100 on the JLSE testbed with a script importing
  // vllm.inputs.PromptInputs (vLLM 0.5.1 to 0.6.1). Both are simulated with servesim's oldest
  // release row, 0.6 (V0 engine).
  struct Gpu {
    const char* hardware;
    const char* catalog;
    const char* why;
  };
  static constexpr Gpu kGpus[] = {
      {"Nvidia A100 GPU", "a100-40gb",
       "ALCF Polaris (PBS script, /lus/grand): A100-SXM4-40GB; vLLM 0.6.x by its requirements"},
      {"Nvidia H100 GPU", "h100-sxm",
       "JLSE H100 (variant not recorded; SXM: a 7.8 ms batch-1 Llama-3-8B decode step needs "
       "1.9 TB/s, beyond an H100 PCIe); vLLM 0.5.1-0.6.1 by its script's imports"},
  };
  std::vector<MeasuredRun> runs;
  for (size_t li = 1; li < lines.size(); ++li) {
    if (trim(lines[li]).empty()) continue;
    const std::string at = path + ":" + std::to_string(li + 1);
    const std::vector<std::string> cells = csv_row(lines[li], col, at);
    auto cell = [&](const char* key) { return trim(cells[col.at(key)]); };
    // Only vLLM on the NVIDIA GPUs and models servesim has: the other frameworks, vendors and
    // models of the table are not what it simulates.
    if (cell("Framework") != "vLLM") continue;
    const Gpu* gpu = nullptr;
    for (const Gpu& g : kGpus) {
      if (cell("Hardware") == g.hardware) gpu = &g;
    }
    const ArgonneModel* model = nullptr;
    for (const ArgonneModel& m : kArgonneModels) {
      if (cell("Model") == m.id) model = &m;
    }
    if (gpu == nullptr || model == nullptr) continue;
    const int64_t tp = whole_number(to_double(cell("Num of Hardware"), at + ": Num of Hardware"), 1,
                                    std::numeric_limits<int32_t>::max(), at + ": Num of Hardware");
    const int32_t length =
        token_count(to_double(cell("Input Output Length"), at + ": Input Output Length"),
                    at + ": Input Output Length");
    const int64_t batch = whole_number(to_double(cell("Batch Size"), at + ": Batch Size"), 1,
                                       std::numeric_limits<int32_t>::max(), at + ": Batch Size");
    check_fits_in_memory(at + ": Batch Size", batch, "requests", 1024);
    const double latency_s = to_double(cell("Latency"), at + ": Latency");
    if (length < 1 || !(latency_s > 0)) {
      throw ConfigError(at + ": Input Output Length " + std::to_string(length) + ", Latency " +
                        cell("Latency") + "; expected positive values");
    }

    MeasuredRun run;
    run.id = join_index(path, static_cast<int64_t>(li));
    run.path = path;
    run.format = "argonne";
    run.label = "static batch " + std::to_string(batch) + " x " + std::to_string(length) + "/" +
                std::to_string(length);
    MeasuredDeployment& dep = run.deployment;
    dep.model_id = cell("Model");
    dep.hardware = gpu->hardware;
    dep.engine_version = "0.6";
    dep.source["engine_version"] = at + " (" + gpu->why + ")";
    dep.set("vllm_version", "0.6", at + " (" + gpu->why + ")");
    dep.set("gpu", gpu->catalog, at + " (" + gpu->why + ")");
    dep.set("model", model->catalog,
            at + (*model->why ? " (" + std::string(model->why) + ")" : std::string(" (Model)")));
    if (model->max_model_len > 0) {
      dep.set("max_model_len", model->max_model_len, at + " (" + model->why + ")");
    }
    dep.set("tensor_parallel_size", tp, at + " (Num of Hardware)");

    // vLLM's benchmark_latency.py / benchmark_throughput.py as the repository ran them: one
    // LLM.generate of `batch` random prompts of `length` tokens, ignore_eos, max_tokens =
    // `length`, timed from the call to its return. No API server and no HTTP client.
    run.offline = true;
    run.request_rate = kInf;
    run.num_prompts = batch;
    for (int64_t i = 0; i < batch; ++i) {
      MeasuredRequest r;
      r.input_tokens = length;
      r.output_tokens = length;
      run.requests.push_back(r);
    }
    // The call returns when the last request finishes: its latency is the batch's last E2E,
    // and completed / duration is batch / latency (vLLM's request_throughput).
    run.metrics["p100_e2el_ms"] = latency_s * 1e3;
    run.metrics["request_throughput"] = static_cast<double>(batch) / latency_s;
    run.notes.push_back(
        "static batch (offline LLM.generate): the measured latency is the last "
        "request's E2E; no per-request data");
    runs.push_back(std::move(run));
  }
  return runs;
}

}  // namespace servesim::measured
