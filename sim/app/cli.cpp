#include "sim/app/cli.h"

#include <algorithm>
#include <filesystem>
#include <new>
#include <sstream>

#include <CLI/CLI.hpp>

#include "sim/app/command.h"
#include "sim/app/flag_suggestions.h"
#include "sim/app/help_groups.h"
#include "sim/app/pasted_commands.h"
#include "sim/app/study.h"
#include "sim/app/vllm_flags.h"
#include "sim/base/edit_distance.h"
#include "sim/base/error.h"
#include "sim/base/input_files.h"
#include "sim/base/printable.h"
#include "sim/distributed/shard.h"
#include "sim/metrics/result_writer.h"

namespace servesim::app {
namespace {

// Every subcommand, in the order --help lists them.
std::vector<std::unique_ptr<Command>> make_commands() {
  std::vector<std::unique_ptr<Command>> c;
  c.push_back(make_simulate_command());
  c.push_back(make_list_command());
  c.push_back(make_sweep_command());
  c.push_back(make_compare_command());
  c.push_back(make_plan_command());
  c.push_back(make_matrix_command());
  c.push_back(make_validate_command());
  c.push_back(make_calibrate_command());
  c.push_back(make_merge_command());
  c.push_back(make_kernel_check_command());
  c.push_back(make_serve_command());
  c.push_back(make_report_command());
  return c;
}

// "PATH: why (expected …)" for a std::filesystem error on a path the user gave.
std::string filesystem_error_text(const std::filesystem::filesystem_error& e) {
  std::string paths = e.path1().string();
  if (!e.path2().empty()) paths += "' -> '" + e.path2().string();
  return "'" + paths + "': " + e.code().message() +
         "; expected a path the system can resolve (no symbolic-link loop, names within the "
         "system's length limits, folders you may read)";
}

}  // namespace

const std::vector<OutputFlag>& output_flags() {
  static const std::vector<OutputFlag> flags = {{"simulate", "--result-filename", "file"},
                                                {"simulate", "--result-dir", "folder"},
                                                {"sweep", "--output", "file+csv"},
                                                {"sweep", "--part-file", "file"},
                                                {"compare", "--output", "file"},
                                                {"compare", "--part-file", "file"},
                                                {"plan", "--output", "file+csv"},
                                                {"plan", "--part-file", "file"},
                                                {"matrix", "--output", "file"},
                                                {"validate", "--output", "file"},
                                                {"validate", "--part-file", "file"},
                                                {"validate", "--write-line-profiles", "folder"},
                                                {"calibrate", "--out", "file"},
                                                {"calibrate", "--part-file", "file"},
                                                {"kernel-check", "--output", "file"},
                                                {"report", "--output", "file"}};
  return flags;
}

std::vector<OptionInfo> command_options() {
  CLI::App app;
  std::vector<std::unique_ptr<Command>> commands = make_commands();
  std::vector<OptionInfo> out;
  for (auto& c : commands) {
    CLI::App* sub = c->add_to(app);
    for (const CLI::Option* o : sub->get_options()) {
      std::string name = o->get_name();
      if (name == "--help") continue;
      out.push_back(
          {sub->get_name(), name, o->get_description(), o->get_items_expected_max() != 0});
    }
  }
  return out;
}

int run_cli(const std::vector<std::string>& raw_args, std::ostream& out, std::ostream& err) {
  // vLLM's short flags: CLI11 has no two-letter ones (-tp, -pp, -dp, -ep); -q is --quantization.
  std::vector<std::string> args;
  for (const std::string& a : raw_args) {
    if (a == "-tp") {
      args.push_back("--tensor-parallel-size");
    } else if (a == "-pp") {
      args.push_back("--pipeline-parallel-size");
    } else if (a == "-dp") {
      args.push_back("--data-parallel-size");
    } else if (a == "-q") {
      args.push_back("--quantization");
    } else if (a == "-ep") {
      args.push_back("--enable-expert-parallel");
    } else {
      args.push_back(a);
    }
  }

  // Pasted vLLM command lines (simulate --vllm-serve-cmd "…", -- vllm bench serve …) become the
  // servesim flags they mean.
  try {
    args = expand_pasted_commands(args);
  } catch (const ConfigError& e) {
    err << "servesim: error: " << printable(e.what()) << "\n";
    return 2;
  }

  CLI::App app{"servesim: discrete-event simulator of LLM serving for capacity planning"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "servesim 0.1");
  std::vector<std::unique_ptr<Command>> commands = make_commands();
  std::vector<CLI::App*> subs;
  for (auto& c : commands) subs.push_back(c->add_to(app));
  for (CLI::App* s : subs) group_help(*s);  // --help by topic, the command's own flags first

  // A mistyped command: CLI11 would say only that a subcommand is required.
  if (!args.empty() && !args[0].empty() && args[0][0] != '-') {
    std::vector<std::string> names;
    for (const CLI::App* s : subs) names.push_back(s->get_name());
    if (std::find(names.begin(), names.end(), args[0]) == names.end()) {
      const std::string near = nearest_name(args[0], names);
      std::string all;
      for (const std::string& n : names) all += (all.empty() ? "" : ", ") + n;
      err << "servesim: error: '" << args[0] << "' is not a command"
          << (near.empty() ? "" : " (did you mean " + near + "?)") << "; expected one of " << all
          << "\n";
      return 2;
    }
  }
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses from the back
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    std::ostringstream o, e2;
    const int code = app.exit(e, o, e2);
    out << o.str();
    if (code != 0) {
      std::string what = e.what();
      // CLI11 2.1 joins the unexpected arguments from the back (detail::rjoin) although it
      // collected them front to back: "--foo 1 --bar 2" came out as "2 --bar 1 --foo". Name them
      // in the order they were given.
      if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
        const std::vector<std::string> extras = app.remaining(true);
        if (!extras.empty()) {
          what = extras.size() > 1 ? "The following arguments were not expected:"
                                   : "The following argument was not expected:";
          const CLI::App* given = nullptr;  // the command the arguments were given to
          for (const CLI::App* s : subs) {
            if (s->parsed()) given = s;
          }
          for (const std::string& a : extras) {
            what += " " + a + (given != nullptr ? flag_suggestion(*given, a) : "");
          }
        }
      }
      err << "servesim: error: " << printable(what) << "\n";
      return 2;
    }
    return 0;
  }

  // The command line being run: a shard's part file records it (study.h). Restored on return,
  // since merge runs the replayed command through run_cli too.
  struct ArgsScope {
    std::vector<std::string> saved;
    explicit ArgsScope(std::vector<std::string> now) : saved(std::move(study_context().args)) {
      study_context().args = std::move(now);
    }
    ~ArgsScope() { study_context().args = std::move(saved); }
  } args_scope(args);
  // The files this command reads, registered as they are checked (sim/base/input_files.h), so
  // that no output can replace one of them; merge's replay shares the scope of the merge.
  InputScope input_scope;

  try {
    for (size_t i = 0; i < commands.size(); ++i) {
      if (!subs[i]->parsed()) continue;
      // vLLM's flags: refused ones stop here; ignored ones are named once, before the run.
      check_vllm_flags(*subs[i]);
      const std::string note =
          ignored_note(ignored_flags(*subs[i], commands[i]->vllm_flags_read()));
      if (!note.empty()) err << "servesim: " << printable(note) << "\n";
      return commands[i]->run(out, err);
    }
  } catch (const distributed::ShardComplete& done) {
    // A shard stops after its share of the jobs: its output is the part file, not the study's.
    const distributed::PartFile& part = done.part();
    try {
      metrics::write_text_atomically(study_context().part_path, distributed::encode_part(part));
    } catch (const ConfigError& e) {
      err << "servesim: error: " << printable(e.what()) << "\n";
      return 2;
    }
    out << "Part " << part.shard.index << "/" << part.shard.count << " of the study ("
        << part.results.size() << " of " << part.jobs_total << " jobs) written to "
        << study_context().part_path << "\n";
    return 0;
  } catch (const ConfigError& e) {
    err << "servesim: error: " << printable(e.what()) << "\n";
    return 2;
  } catch (const InternalError& e) {
    err << "servesim: internal error (please report): " << printable(e.what()) << "\n";
    return 1;
  } catch (const std::filesystem::filesystem_error& e) {
    // A path the user gave that the OS cannot resolve (a symbolic-link loop, a name too long, a
    // folder without permission) reached a throwing std::filesystem call: bad input, named.
    err << "servesim: error: " << printable(filesystem_error_text(e)) << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    err << "servesim: error: out of memory (the run is larger than this machine can hold; "
           "reduce --num-prompts, --num-replicas or the KV cache size)\n";
    return 1;
  } catch (const std::exception& e) {
    // Anything else is a missing input check: report it, never abort.
    err << "servesim: internal error (please report): " << printable(e.what()) << "\n";
    return 1;
  }
  return 0;
}

}  // namespace servesim::app
