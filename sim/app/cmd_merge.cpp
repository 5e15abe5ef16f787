// `servesim merge`: joins the part files of a sharded study (`--shard I/N`, a job array) into
// exactly the output one process writes. It reads and checks the parts (sim/distributed/shard.h),
// then runs the study's own command line with a replay executor: the command builds its study as
// usual, takes every job's result from the parts instead of simulating, and writes its files.
#include "sim/app/cli.h"
#include "sim/app/command.h"
#include "sim/app/study.h"
#include "sim/base/error.h"
#include "sim/distributed/shard.h"

namespace servesim::app {
namespace {

class MergeCommand : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    cmd_ = app.add_subcommand(
        "merge",
        "join the part files of a study run with --shard I/N (job arrays) into the "
        "output one process writes; run it from the directory the shards ran in");
    cmd_->add_option("parts", parts_, "the part files, one per shard, any order")->required();
    return cmd_;
  }

  int run(std::ostream& out, std::ostream& err) override {
    std::vector<distributed::PartFile> parts = distributed::read_parts(parts_);
    const std::vector<std::string> command = parts.front().command;
    if (parts.front().version != servesim_version()) {
      throw ConfigError(parts.front().path + ": written by " + parts.front().version +
                        "; this is " + servesim_version());
    }
    distributed::ReplayExecutor replay(std::move(parts));
    StudyContext& context = study_context();
    if (context.replay != nullptr) throw ConfigError("merge: cannot merge inside a merge");
    context.replay = &replay;
    int code = 0;
    try {
      code = run_cli(command, out, err);
    } catch (...) {
      context.replay = nullptr;
      throw;
    }
    context.replay = nullptr;
    return code;
  }

 private:
  CLI::App* cmd_ = nullptr;
  std::vector<std::string> parts_;
};

}  // namespace

std::unique_ptr<Command> make_merge_command() { return std::make_unique<MergeCommand>(); }

}  // namespace servesim::app
