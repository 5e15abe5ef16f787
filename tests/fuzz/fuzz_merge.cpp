// libFuzzer target: the part files of a sharded study (`--shard I/N`, CBOR; sim/distributed/
// shard.h), read as `servesim merge` reads them: read_parts() on the file alone and twice (the
// duplicate check), then, when they pass, the replay of the study's loop from them
// (ReplayExecutor), with every stored result decoded as a study decodes it (from_job_bytes). The
// replayed loop is as long as the part says (capped: a real merge takes the length from the
// command, which a part cannot change). First byte: 'm' (the only reader). Seeds: part files
// written by `servesim sweep|plan|compare ... --shard 0/1`.
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/base/executor.h"
#include "sim/distributed/shard.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

// A mutated part almost never carries a matching checksum, which would stop every input at the
// checksum check; half of the inputs (by their last byte) are given the right one first, so the
// field checks behind it are fuzzed too. (FNV-1a 64 of the CBOR of every field but "checksum",
// as sim/distributed/shard.cpp computes it.)
void reseal(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.empty() || (static_cast<unsigned char>(bytes.back()) & 1) == 0) return;
  nlohmann::json j;
  try {  // not CBOR: left as it is, for read_parts to refuse
    j = nlohmann::json::from_cbor(bytes);
  } catch (const nlohmann::json::exception&) {
    return;
  }
  if (!j.is_object()) return;
  j.erase("checksum");
  const std::vector<std::uint8_t> body = nlohmann::json::to_cbor(j);
  uint64_t h = 1469598103934665603ull;
  for (std::uint8_t b : body) h = (h ^ b) * 1099511628211ull;
  j["checksum"] = h;
  const std::vector<std::uint8_t> sealed = nlohmann::json::to_cbor(j);
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(sealed.data()),
             static_cast<std::streamsize>(sealed.size()));
}

void read_and_replay(const std::string& path) {
  using namespace servesim::distributed;
  reseal(path);
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
