// libFuzzer target: the measured-run readers (sim/measured/readers.h), then, for every run read,
// the simulate config it implies (sim/measured/replay.h, with the CLI's config applier) and the
// replay's request list as a TraceWorkload checks it. First byte: 'v' vllm bench serve JSON,
// 's' SGLang JSONL, 'n' genai-perf JSON, 'l' LLMServingSim requests.jsonl, 'x' InferenceX CSV,
// 'a' Argonne LLM-Inference-Bench CSV, anything else a guidellm per-request CSV.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/app/run_config.h"
#include "sim/measured/readers.h"
#include "sim/measured/replay.h"
#include "tests/fuzz/fuzz_common.h"
#include "workloads/trace_workload.h"

namespace {

using servesim::measured::MeasuredRun;

std::function<void(const std::string&)> then_replay(
    std::vector<MeasuredRun> (*reader)(const std::string&)) {
  return [reader](const std::string& path) {
    for (const MeasuredRun& run : reader(path)) {
      servesim::measured::simulation_config(run, servesim::app::apply_config_json);
      servesim::workloads::TraceWorkload replay(servesim::measured::replay_requests(run, 0),
                                                run.id);
    }
  };
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace servesim::measured;
  static const std::vector<servesim::fuzz::Reader> readers = {
      {'v', "run.json", then_replay(read_vllm_bench_json)},
      {'s', "run.jsonl", then_replay(read_sglang_jsonl)},
      {'n', "profile_export_genai_perf.json", then_replay(read_genai_perf_json)},
      {'l', "example/vllm/requests.jsonl", then_replay(read_llmservingsim)},
      {'x', "inferencex_DERIVED.csv", then_replay(read_inferencex_csv)},
      {'a', "All_results.csv", then_replay(read_argonne_csv)},
      {'g', "guidellm_per_request_DERIVED.csv", then_replay(read_guidellm_csv)},
  };
  return servesim::fuzz::run_reader(data, size, readers);
}
