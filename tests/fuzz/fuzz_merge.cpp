// libFuzzer target: the part files of a sharded study (`--shard I/N`, CBOR; sim/distributed/
// shard.h), read as `servesim merge` reads them: read_parts() on the file alone and twice (the
// duplicate check), then, when they pass, the replay of the study's loop from them
// (ReplayExecutor), with every stored result decoded as a study decodes it (from_job_bytes). The
// replayed loop is as long as the part says (capped: a real merge takes the length from the
// command, which a part cannot change). First byte: 'm' (the only reader). Seeds: part files
// written by `servesim sweep|plan|compare ... --shard 0/1`.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/base/executor.h"
#include "sim/distributed/shard.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

void read_and_replay(const std::string& path) {
  using namespace servesim::distributed;
  read_parts({path, path});  // the same part twice: "given twice", or another error first
  std::vector<PartFile> parts = read_parts({path});
  const int64_t n = parts.front().jobs_total;
  if (n > 4096) return;
  servesim::JobLoop loop;
  loop.n = n;
  loop.compute = [](int64_t) -> std::string { return {}; };
  loop.accept = [](int64_t, std::string&& bytes) { servesim::from_job_bytes(bytes); };
  ReplayExecutor replay(std::move(parts));
  replay.run(loop, nullptr);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<servesim::fuzz::Reader> readers = {
      {'m', "study.part-0-of-1", read_and_replay},
  };
  return servesim::fuzz::run_reader(data, size, readers);
}
