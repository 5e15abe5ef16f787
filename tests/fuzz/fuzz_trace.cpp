// libFuzzer target: the request-trace and dataset readers (workloads/trace_reader.h,
// workloads/length_datasets.h) through make_workload, as `simulate --dataset-name ...` builds the
// workload, every request drawn. First byte: the trace formats 'a' azure, 'm' mooncake,
// 'b' burstgpt, 'v' vidur, 's' splitwise, 'r' vllm-result, 'c' csv; the datasets 'g' sharegpt
// JSON, 'l' a lengths CSV (sharegpt), 'u' custom JSONL, 'B' burstgpt CSV. Traces of an odd size
// are rescaled to 10 req/s, even ones replayed as recorded (both code paths from one corpus).
// 'S' csv and 'M' mooncake are replayed as sessions (--multi-turn, trace_sessions.h): every
// request handed out is answered 1 ms after its send, releasing the session's next turn.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_common.h"
#include "workloads/workload.h"

namespace {

using servesim::workloads::WorkloadConfig;

void draw_all(const WorkloadConfig& config) {
  auto workload = servesim::workloads::make_workload(config);
  while (workload->next()) {
  }
}

std::function<void(const std::string&)> trace(const std::string& format) {
  return [format](const std::string& path) {
    WorkloadConfig c;
    c.dataset_name = "trace";
    c.trace_format = format;
    c.trace = path;
    if (std::filesystem::file_size(path) % 2 == 1) c.request_rate = 10;
    draw_all(c);
  };
}

std::function<void(const std::string&)> sessions(const std::string& format) {
  return [format](const std::string& path) {
    WorkloadConfig c;
    c.dataset_name = "trace";
    c.trace_format = format;
    c.trace = path;
    c.multi_turn = true;
    if (std::filesystem::file_size(path) % 2 == 1) c.request_rate = 10;
    auto workload = servesim::workloads::make_workload(c);
    std::vector<servesim::workloads::RequestSpec> open;
    while (auto r = workload->next()) open.push_back(*r);
    while (!open.empty()) {
      const servesim::workloads::RequestSpec r = open.back();
      open.pop_back();
      const servesim::SimTime done = r.arrival + servesim::SimTime::from_ns(1'000'000);
      if (auto next = workload->on_done(r.id, r.arrival, done)) open.push_back(*next);
    }
  };
}

std::function<void(const std::string&)> dataset(const std::string& name, int32_t output_len) {
  return [name, output_len](const std::string& path) {
    WorkloadConfig c;
    c.dataset_name = name;
    c.dataset_path = path;
    c.num_prompts = 50;
    c.custom_output_len = output_len;
    draw_all(c);
  };
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<servesim::fuzz::Reader> readers = {
      {'a', "azure.csv", trace("azure")},
      {'m', "mooncake.jsonl", trace("mooncake")},
      {'b', "burstgpt.csv", trace("burstgpt")},
      {'v', "vidur.csv", trace("vidur")},
      {'s', "splitwise.csv", trace("splitwise")},
      {'r', "result.json", trace("vllm-result")},
      {'g', "sharegpt.json", dataset("sharegpt", 256)},
      {'l', "lengths.csv", dataset("sharegpt", 256)},
      {'u', "custom.jsonl", dataset("custom", -1)},
      {'B', "burstgpt_dataset.csv", dataset("burstgpt", 256)},
      {'S', "sessions.csv", sessions("csv")},
      {'M', "sessions.jsonl", sessions("mooncake")},
      {'c', "trace.csv", trace("csv")},
  };
  return servesim::fuzz::run_reader(data, size, readers);
}
