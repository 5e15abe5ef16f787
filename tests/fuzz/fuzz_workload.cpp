// libFuzzer target: workload files (`--workload FILE`, workloads/workload_classes.h), read as a
// run reads them: workload_input_paths() (what the output rule registers), load_workload_classes()
// (every field checked, empirical length files read), then the workload built by make_workload
// and every request drawn, so that a file that passes the checks is also sampled. First byte:
// 'w' a workload of single requests; 's' the same file for --multi-turn sessions (each request
// answered 1 ms after its send, releasing the session's next turn). Beside the file lie the length
// files a fuzzed "path" may name: lengths.csv (prompt_tokens,output_tokens), trace.csv (servesim's
// csv trace), mooncake.jsonl.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_common.h"
#include "workloads/workload.h"
#include "workloads/workload_classes.h"

namespace {

using servesim::workloads::WorkloadConfig;

// The small data files a workload's empirical "lengths" may name, written once per input beside it
// (relative paths are resolved against the workload file's folder).
void write_length_files(const std::filesystem::path& dir) {
  if (std::filesystem::exists(dir / "mooncake.jsonl")) return;  // written by an earlier input
  std::ofstream(dir / "lengths.csv") << "prompt_tokens,output_tokens\n12,4\n30,7\n5,1\n";
  std::ofstream(dir / "trace.csv") << "arrival_s,prompt_tokens,output_tokens\n0,10,3\n0.5,20,5\n";
  std::ofstream(dir / "mooncake.jsonl")
      << "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 4, \"hash_ids\": [1, 2]}\n";
}

WorkloadConfig config_for(const std::string& path) {
  write_length_files(std::filesystem::path(path).parent_path());
  // What the run registers as its inputs, then the full check: both must agree on bad input.
  (void)servesim::workloads::workload_input_paths(path);
  (void)servesim::workloads::load_workload_classes(path);
  WorkloadConfig c;
  c.workload_file = path;
  c.num_prompts = 40;
  c.request_rate = 20;
  return c;
}

void single(const std::string& path) {
  WorkloadConfig c = config_for(path);
  auto workload = servesim::workloads::make_workload(c);
  while (workload->next()) {
  }
}

void sessions(const std::string& path) {
  WorkloadConfig c = config_for(path);
  c.multi_turn = true;
  c.num_prompts = 8;
  c.num_turns = 3;
  auto workload = servesim::workloads::make_workload(c);
  std::vector<servesim::workloads::RequestSpec> open;
  while (auto r = workload->next()) open.push_back(*r);
  while (!open.empty()) {
    const servesim::workloads::RequestSpec r = open.back();
    open.pop_back();
    const servesim::SimTime done = r.arrival + servesim::SimTime::from_ns(1'000'000);
    if (auto next = workload->on_done(r.id, r.arrival, done)) open.push_back(*next);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<servesim::fuzz::Reader> readers = {
      {'s', "sessions/workload.json", [](const std::string& p) { sessions(p); }},
      {'w', "single/workload.json", [](const std::string& p) { single(p); }},
  };
  return servesim::fuzz::run_reader(data, size, readers);
}
