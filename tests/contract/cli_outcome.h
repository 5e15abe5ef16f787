// The CLI run in-process for the contract tests: exit code, stdout and stderr of one
// `servesim ARGS...` (app::run_cli), so a test checks what a user would see.
#ifndef SERVESIM_TESTS_CONTRACT_CLI_OUTCOME_H_
#define SERVESIM_TESTS_CONTRACT_CLI_OUTCOME_H_

#include <unistd.h>

#include <filesystem>
#include <fstream>
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

// A fresh-enough folder for one test binary's files: /tmp/<prefix><pid>, created.
inline std::filesystem::path temp_dir(const std::string& prefix) {
  std::filesystem::path d =
      std::filesystem::temp_directory_path() / (prefix + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d;
}

// A file's whole text ("" when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace servesim::app::testing

#endif  // SERVESIM_TESTS_CONTRACT_CLI_OUTCOME_H_
