#include "sim/app/study.h"

#include "sim/app/cli.h"
#include "sim/base/error.h"
#include "sim/base/output_file.h"
#include "sim/distributed/shard.h"
#include "sim/metrics/result_writer.h"
#ifdef SERVESIM_HAVE_MPI
#include "sim/distributed/mpi_executor.h"
#endif

namespace servesim::app {

StudyContext& study_context() {
  static StudyContext context;
  return context;
}

const char* servesim_version() { return "servesim 0.1"; }

std::vector<std::string> study_identity(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    bool dropped = false;
    for (const char* flag : {"--shard", "--part-file", "--jobs"}) {
      const std::string f = flag;
      if (a == f) {
        ++i;  // and its value
        dropped = true;
      } else if (a.rfind(f + "=", 0) == 0) {
        dropped = true;
      }
    }
    if (!dropped) out.push_back(a);
  }
  return out;
}

StudyFlags::StudyFlags(std::string why_not_shardable)
    : why_not_shardable_(std::move(why_not_shardable)) {}

void StudyFlags::add_to(CLI::App& cmd) {
  cmd.add_option("--shard", shard_,
                 "I/N: run only the I-th of N parts of the study (job arrays) and write a part "
                 "file; `servesim merge` joins the parts");
  cmd.add_option("--part-file", part_file_,
                 "where --shard writes its part [<command>.part-I-of-N]");
}

JobExecutor* StudyFlags::executor(int jobs) {
  StudyContext& context = study_context();
  if (context.replay != nullptr) return context.replay;
  if (!shard_.empty()) {
    const distributed::ShardSpec shard = distributed::parse_shard(shard_);
    const std::vector<std::string> identity = study_identity(context.args);
    context.part_path = !part_file_.empty()
                            ? part_file_
                            : (identity.empty() ? std::string("servesim") : identity.front()) +
                                  ".part-" + std::to_string(shard.index) + "-of-" +
                                  std::to_string(shard.count);
    // The part is this process's output: the output rule, against the inputs the command has
    // registered by now (its config, model, workload, ... files).
    check_output_path(context.part_path, "--part-file", {});
    if (!why_not_shardable_.empty()) throw ConfigError("--shard: " + why_not_shardable_);
    if (context.mpi != nullptr) {
      throw ConfigError(
          "--shard: not under mpirun (the ranks already share the study); use one "
          "or the other");
    }
    owned_ =
        std::make_unique<distributed::ShardExecutor>(shard, jobs, identity, servesim_version());
    return owned_.get();
  }
  if (!part_file_.empty()) throw ConfigError("--part-file: only with --shard I/N");
  return context.mpi;
}

std::string StudyFlags::workers_text(int jobs) const {
  const StudyContext& context = study_context();
  if (context.replay != nullptr) return "part files (merge)";
  if (context.mpi != nullptr && !owned_) return std::to_string(context.mpi_ranks) + " MPI ranks";
  const int n = jobs > 0 ? jobs : default_jobs();
  return std::to_string(n) + (n == 1 ? " thread" : " threads");
}

#ifdef SERVESIM_HAVE_MPI
namespace {
// Swallows everything: the stdout and stderr of ranks > 0.
class NullBuffer : public std::streambuf {
 protected:
  int overflow(int c) override { return c; }
};
}  // namespace

int run_cli_mpi(int* argc, char*** argv, std::ostream& out, std::ostream& err) {
  std::vector<std::string> args(*argv + 1, *argv + *argc);
  distributed::MpiSession session(argc, argv);
  study_context().mpi = session.executor();
  study_context().mpi_ranks = session.size();
  int code = 0;
  if (session.rank() == 0) {
    code = run_cli(args, out, err);
  } else {
    NullBuffer null;
    std::ostream quiet(&null);
    metrics::set_file_writes_enabled(false);
    code = run_cli(args, quiet, quiet);
  }
  study_context().mpi = nullptr;
  return code;
}
#endif

}  // namespace servesim::app
