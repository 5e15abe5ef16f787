// libFuzzer target: the job results that `plan`, `compare` and `sweep` read back from part files
// in `servesim merge` — plan's candidate results (candidate_result_from_json), compare's
// per-seed metric values, sweep's points (point_from_bytes_json) — and everything the command
// then does with them (tables, verdicts, JSON). First byte: 'p' plan, 'c' compare, anything else
// sweep; the rest is one job's result (CBOR, as to_job_bytes writes it). The target runs a small
// study of that command once per process with --shard 0/1 (so the part file and its job count
// come from the tool itself), stores the fuzzed bytes as job 0's result in a copy of that part
// (the other jobs keep theirs), and runs `servesim merge` on it. Exit 2 (a ConfigError: damaged
// input) is the contract; exit 1 is an internal error, a bug: the target aborts so that libFuzzer
// keeps the input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "sim/app/cli.h"
#include "sim/distributed/shard.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

using servesim::distributed::PartFile;

const std::vector<std::string> kCommon = {"--model",
                                          "llama-3.1-8b",
                                          "--num-prompts",
                                          "20",
                                          "--random-input-len",
                                          "64",
                                          "--random-output-len",
                                          "8"};

std::vector<std::string> study(const std::string& name) {
  std::vector<std::string> args;
  if (name == "plan") {
    args = {"plan",
            "--target-qps",
            "5",
            "--slo",
            "p99_ttft_ms<=400",
            "--gpu",
            "h100-sxm",
            "--tensor-parallel-size",
            "1,2",
            "--seeds",
            "1"};
  } else if (name == "compare") {
    args = {"compare", "--vary", "max-num-seqs=32,256", "--request-rate", "5", "--seeds", "2"};
  } else {
    args = {"sweep", "--request-rate", "5,10", "--vary", "max-num-seqs=8,256"};
  }
  args.insert(args.end(), kCommon.begin(), kCommon.end());
  return args;
}

int cli(const std::vector<std::string>& args, std::string* err) {
  std::ostringstream out, e;
  const int code = servesim::app::run_cli(args, out, e);
  *err = e.str();
  return code;
}

// The study's one-shard part file, made by the tool on first use.
const PartFile& part_of(const std::string& name) {
  static std::map<std::string, PartFile> parts;
  auto it = parts.find(name);
  if (it != parts.end()) return it->second;
  const std::string path = servesim::fuzz::write_input(nullptr, 0, name + ".part-0-of-1");
  std::vector<std::string> args = study(name);
  for (const char* a : {"--shard", "0/1", "--part-file"}) args.push_back(a);
  args.push_back(path);
  std::string err;
  if (cli(args, &err) != 0) {
    std::fprintf(stderr, "fuzz_study_results: the %s study failed: %s\n", name.c_str(),
                 err.c_str());
    std::abort();
  }
  return parts.emplace(name, servesim::distributed::read_parts({path}).front()).first->second;
}

std::function<void(const std::string&)> merge_with_results(const std::string& name) {
  return [name](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    PartFile part = part_of(name);
    part.results.begin()->second = bytes.str();  // job 0 (the seeds are its real result)
    const std::string part_path = path + ".part";
    std::ofstream(part_path, std::ios::binary | std::ios::trunc)
        << servesim::distributed::encode_part(part);
    std::string err;
    if (cli({"merge", part_path}, &err) == 1) {
      std::fprintf(stderr, "fuzz_study_results: merge of a %s part: %s\n", name.c_str(),
                   err.c_str());
      std::abort();
    }
  };
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<servesim::fuzz::Reader> readers = {
      {'p', "plan_result", merge_with_results("plan")},
      {'c', "compare_result", merge_with_results("compare")},
      {'s', "sweep_result", merge_with_results("sweep")},
  };
  return servesim::fuzz::run_reader(data, size, readers);
}
