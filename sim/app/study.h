// How this process runs a study's jobs: threads here, the ranks of an MPI job, one shard of a job
// array, or (inside `servesim merge`) a replay of part files. Commands ask StudyFlags for the
// executor and hand it to the study (sim/base/executor.h), so there is one code path.
//
// Contract:
//  - StudyContext is process-wide (MPI is initialised once per process): `mpi` is set by
//    run_cli_mpi for the whole run; `replay` by merge while it replays; `args` by run_cli (the
//    command line being run, for part files); `part_path` by the shard executor's owner.
//  - StudyFlags adds --shard I/N and --part-file to a study command. executor() returns, in this
//    order: the merge replay; a ShardExecutor when --shard is given (ConfigError under mpirun, or
//    for a command that cannot be sharded, or when the part file breaks the output rule of
//    sim/base/output_file.h: call it after the command has registered its inputs); the MPI
//    executor; null (threads, `--jobs`).
//  - run_cli_mpi() runs the CLI as one rank of an MPI job: ranks > 0 print nothing and write no
//    file (rank 0 writes the one-process output); every rank returns the same exit code for the
//    same error.
#ifndef SERVESIM_SIM_APP_STUDY_H_
#define SERVESIM_SIM_APP_STUDY_H_

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "sim/base/executor.h"

namespace servesim::app {

struct StudyContext {
  JobExecutor* mpi = nullptr;     // the MPI executor (null: not under mpirun, or one rank)
  int mpi_ranks = 1;              // ranks of the MPI job
  JobExecutor* replay = nullptr;  // merge's replay of part files
  std::vector<std::string> args;  // the command line being run
  std::string part_path;          // where a shard writes its part
};
StudyContext& study_context();

// "servesim 0.1": parts must be merged by the version that wrote them.
const char* servesim_version();

class StudyFlags {
 public:
  // `why_not_shardable` non-empty: --shard is refused with that reason.
  explicit StudyFlags(std::string why_not_shardable = "");
  void add_to(CLI::App& cmd);
  JobExecutor* executor(int jobs);
  // Where the last executor() runs the jobs, for the wall-time line on stderr: "2 threads",
  // "4 MPI ranks", "part files (merge)".
  std::string workers_text(int jobs) const;

 private:
  std::string why_not_shardable_;
  std::string shard_;
  std::string part_file_;
  std::unique_ptr<JobExecutor> owned_;
};

// The command line without the flags that do not change a study's output (--shard, --part-file,
// --jobs): a part's identity.
std::vector<std::string> study_identity(const std::vector<std::string>& args);

#ifdef SERVESIM_HAVE_MPI
int run_cli_mpi(int* argc, char*** argv, std::ostream& out, std::ostream& err);
#endif

}  // namespace servesim::app

#endif  // SERVESIM_SIM_APP_STUDY_H_
