// The CLI run in-process for the contract tests: exit code, stdout and stderr of one
// `servesim ARGS...` (app::run_cli), so a test checks what a user would see; and a fresh folder
// per test case.
#ifndef SERVESIM_TESTS_CONTRACT_CLI_OUTCOME_H_
#define SERVESIM_TESTS_CONTRACT_CLI_OUTCOME_H_

#include <unistd.h>

#include <algorithm>
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

// The whole content of the file at `path` ("" when it cannot be read).
inline std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh folder per test case (named after `tag` and the process), removed at scope exit.
struct TempDir {
  explicit TempDir(const std::string& tag)
      : path(std::filesystem::temp_directory_path() /
             ("servesim_test_" + tag + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const { return (path / name).string(); }
  std::vector<std::string> names() const {
    std::vector<std::string> n;
    for (const auto& e : std::filesystem::directory_iterator(path)) {
      n.push_back(e.path().filename().string());
    }
    std::sort(n.begin(), n.end());
    return n;
  }
  std::filesystem::path path;
};

// The same as file_text (the name some tests use).
inline std::string slurp(const std::filesystem::path& p) { return file_text(p); }

}  // namespace servesim::app::testing

#endif  // SERVESIM_TESTS_CONTRACT_CLI_OUTCOME_H_
