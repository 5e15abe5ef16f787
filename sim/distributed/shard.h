// Job arrays: a study cut into N shards that run anywhere (sbatch --array, a Kubernetes Indexed
// Job), each writing a part file, and the merge that joins the parts into the one-process output.
//
// Contract:
//  - parse_shard("I/N") accepts 0 <= I < N; anything else is a ConfigError naming --shard.
//  - ShardExecutor (JobExecutor) runs the jobs i with i mod N = I of the study's FIRST loop (a
//    round-robin share: sweep values grow in cost along a curve, so every shard gets some of each)
//    on `jobs` threads, honouring skip() with what this shard knows, then throws ShardComplete
//    with the results instead of returning: the command stops before writing any output, and the
//    app writes the part file. Studies whose later loops depend on earlier ones (calibrate) cannot
//    be sharded; the app refuses them.
//  - A part file (CBOR) holds: the format tag, the servesim version, the command line without the
//    shard flags (the study's identity), I, N, the loop's job count, the (path, content hash) of
//    every input file the study read (InputRegistry: --config, --model files, workloads, traces),
//    the (index, bytes) of every job this shard ran, and a checksum (64-bit FNV-1a) of all of it.
//  - read_parts() checks each file's checksum (a damaged part is refused by name), that the files
//    are parts of one study (same command, version, N, job count; an input file two parts both
//    recorded has the same content in both), that I = 0..N−1 each
//    appear exactly once, and that every input file still has the content the shards read (merge
//    runs the command again to write its outputs: an input edited between the shards and the merge
//    would label old numbers with a new config); otherwise a ConfigError names the file or the
//    missing / duplicated part.
//  - ReplayExecutor replays the loop from the parts: in index order, asking skip() as one process
//    would, accepting the stored result of every job not skipped. A job needed but absent from its
//    part is a ConfigError naming the part. So the replayed command, with its own output code,
//    writes exactly what one process writes.
#ifndef SERVESIM_SIM_DISTRIBUTED_SHARD_H_
#define SERVESIM_SIM_DISTRIBUTED_SHARD_H_

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/base/executor.h"

namespace servesim::distributed {

struct ShardSpec {
  int index = 0;  // I
  int count = 1;  // N
};

ShardSpec parse_shard(const std::string& text);

struct PartFile {
  std::string path;                  // where it was read from (for messages)
  std::string version;               // servesim version that wrote it
  std::vector<std::string> command;  // the study's command line, shard flags removed
  ShardSpec shard;
  int64_t jobs_total = 0;  // jobs in the study's loop
  // Every input file the study read: path and FNV-1a 64 of its content (input_content_hash).
  std::vector<std::pair<std::string, uint64_t>> inputs;
  std::map<int64_t, std::string> results;  // job index -> result bytes
};

// FNV-1a 64 of the content of the file at `path`; nullopt when it cannot be read.
std::optional<uint64_t> input_content_hash(const std::string& path);

// The bytes of a part file, and back. decode throws ConfigError naming `path`.
std::string encode_part(const PartFile& part);
PartFile decode_part(const std::string& bytes, const std::string& path);

// Thrown by ShardExecutor when its share is done; carries the part (path empty).
class ShardComplete : public std::exception {
 public:
  explicit ShardComplete(PartFile part) : part_(std::move(part)) {}
  const char* what() const noexcept override { return "shard complete"; }
  const PartFile& part() const { return part_; }

 private:
  PartFile part_;
};

class ShardExecutor final : public JobExecutor {
 public:
  // `command`: the study's command line without the shard flags.
  ShardExecutor(ShardSpec shard, int jobs, std::vector<std::string> command, std::string version);
  int64_t run(const JobLoop& loop, const std::atomic<bool>* cancel) override;

 private:
  ShardSpec shard_;
  int jobs_;
  std::vector<std::string> command_;
  std::string version_;
};

// Reads and checks the part files (contract above). REQUIRES: paths not empty.
std::vector<PartFile> read_parts(const std::vector<std::string>& paths);

class ReplayExecutor final : public JobExecutor {
 public:
  explicit ReplayExecutor(std::vector<PartFile> parts);
  int64_t run(const JobLoop& loop, const std::atomic<bool>* cancel) override;

 private:
  std::vector<PartFile> parts_;  // indexed by shard
  int loops_ = 0;
};

}  // namespace servesim::distributed

#endif  // SERVESIM_SIM_DISTRIBUTED_SHARD_H_
