// libFuzzer target: the measured-run readers (sim/measured/readers.h), then the replay's request
// list for every run read. First byte: 'v' vllm bench serve JSON, 's' SGLang JSONL, 'n' genai-perf
// JSON, anything else a guidellm per-request CSV.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/base/error.h"
#include "sim/measured/readers.h"
#include "sim/measured/replay.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace servesim;
  if (size < 1) return 0;
  const char kind = static_cast<char>(data[0]);
  try {
    std::vector<measured::MeasuredRun> runs;
    if (kind == 'v') {
      runs = measured::read_vllm_bench_json(fuzz::write_input(data + 1, size - 1, "run.json"));
    } else if (kind == 's') {
      runs = measured::read_sglang_jsonl(fuzz::write_input(data + 1, size - 1, "run.jsonl"));
    } else if (kind == 'n') {
      runs = measured::read_genai_perf_json(
          fuzz::write_input(data + 1, size - 1, "profile_export_genai_perf.json"));
    } else {
      runs = measured::read_guidellm_csv(
          fuzz::write_input(data + 1, size - 1, "guidellm_per_request_DERIVED.csv"));
    }
    for (const auto& r : runs) measured::replay_requests(r, 0);
  } catch (const ConfigError&) {
  }
  return 0;
}
