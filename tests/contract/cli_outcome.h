// The CLI run in-process for the contract tests: exit code, stdout and stderr of one
// `servesim ARGS...` (app::run_cli), so a test checks what a user would see.
#ifndef SERVESIM_TESTS_CONTRACT_CLI_OUTCOME_H_
#define SERVESIM_TESTS_CONTRACT_CLI_OUTCOME_H_

#include <sstream>
#include <string>
#include <vector>

#include "sim/app/cli.h"

namespace servesim::app::testing {

struct Outcome {
  int code;
  std::string out, err;
};

inline Outcome run(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = run_cli(args, out, err);
  return {code, out.str(), err.str()};
}

}  // namespace servesim::app::testing

#endif  // SERVESIM_TESTS_CONTRACT_CLI_OUTCOME_H_
