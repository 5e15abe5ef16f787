// The servesim command line. main() is a thin wrapper around run_cli so that tests can drive the
// exact code path a user does, with captured streams.
//
// Exit codes: 0 success; 2 bad input (a one-line "servesim: error: ..." on stderr, and no output
// file written); 1 an internal error (a bug).
#ifndef SERVESIM_SIM_APP_CLI_H_
#define SERVESIM_SIM_APP_CLI_H_

#include <ostream>
#include <string>
#include <vector>

namespace servesim::app {

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// One option of a subcommand, as `servesim <command> --help` lists it.
struct OptionInfo {
  std::string command;      // "sweep"
  std::string name;         // "--part-file" (a positional's name, such as "configs")
  std::string description;  // the help text
  bool takes_value = true;  // false for a flag such as --save-result
};
// Every option of every subcommand (for the tests that check each against a rule).
std::vector<OptionInfo> command_options();

// An option that names a file or folder servesim writes. Every one gets the output rule of
// sim/base/output_file.h before any work (no directory, FIFO, device, symlink or input of the
// command; written to a temporary file and renamed into place): "file" and "file+csv" (the JSON
// and the CSV beside it) are checked as given; "folder" is the folder the files go into (it must
// be one if it exists; each file written into it is checked when written).
struct OutputFlag {
  std::string command;
  std::string flag;
  std::string kind;  // "file" | "file+csv" | "folder"
};
// The one list of output flags. tests/contract/output_rule_test.cpp fails when an option whose
// name or help says it writes a file is missing here, and runs each one against the rule.
const std::vector<OutputFlag>& output_flags();

}  // namespace servesim::app

#endif  // SERVESIM_SIM_APP_CLI_H_
