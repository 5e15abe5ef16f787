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

}  // namespace servesim::app

#endif  // SERVESIM_SIM_APP_CLI_H_
