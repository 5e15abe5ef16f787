// Command: one servesim subcommand. cli.cpp owns the CLI11 app and calls each command's
// add_to() before parsing and run() on the one that was parsed. A command lives in its own
// cmd_<name>.cpp and is listed once in cli.cpp's make_commands().
#ifndef SERVESIM_SIM_APP_COMMAND_H_
#define SERVESIM_SIM_APP_COMMAND_H_

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace servesim::app {

class Command {
 public:
  virtual ~Command() = default;
  // Adds the subcommand and its options to `app`; keeps the returned CLI::App* to test parsed().
  virtual CLI::App* add_to(CLI::App& app) = 0;
  // Runs after a successful parse. Returns the exit code; throws ConfigError on bad input.
  virtual int run(std::ostream& out, std::ostream& err) = 0;
  // vLLM flags (vllm_flags.h) this command reads rather than ignores: cli.cpp leaves them out of
  // the "ignored" note (validate and calibrate: --endpoint, checked against the runs' files).
  virtual std::vector<std::string> vllm_flags_read() const { return {}; }
};

std::unique_ptr<Command> make_simulate_command();
std::unique_ptr<Command> make_list_command();
std::unique_ptr<Command> make_sweep_command();
std::unique_ptr<Command> make_compare_command();
std::unique_ptr<Command> make_plan_command();
std::unique_ptr<Command> make_validate_command();
std::unique_ptr<Command> make_calibrate_command();
std::unique_ptr<Command> make_matrix_command();
std::unique_ptr<Command> make_merge_command();
std::unique_ptr<Command> make_kernel_check_command();
std::unique_ptr<Command> make_serve_command();
std::unique_ptr<Command> make_report_command();

}  // namespace servesim::app

#endif  // SERVESIM_SIM_APP_COMMAND_H_
