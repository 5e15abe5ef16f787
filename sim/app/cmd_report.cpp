// `servesim report`: the one-page HTML report of a plan. The page is drawn by the Python module
// servesim.report (its figures are matplotlib's, the same code as `python3 -m servesim.plot`);
// this command checks the inputs and the output by the CLI's rules (sim/base/input_files.h,
// sim/base/output_file.h) before any work, then runs `python3 -m servesim.report` with the
// Python the module was built for and the build's package folder first on PYTHONPATH, and
// returns its exit status. The module writes the page to a temporary file and renames it.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "sim/app/command.h"
#include "sim/base/error.h"
#include "sim/base/input_files.h"
#include "sim/base/output_file.h"

extern char** environ;

namespace servesim::app {
namespace {

// The interpreter and package folder of this build's Python module (python/CMakeLists.txt), set
// by sim/app/CMakeLists.txt; empty when the module is not built.
#ifndef SERVESIM_PYTHON_EXECUTABLE
#define SERVESIM_PYTHON_EXECUTABLE ""
#endif
#ifndef SERVESIM_PYTHON_PACKAGE_DIR
#define SERVESIM_PYTHON_PACKAGE_DIR ""
#endif

class ReportCommand : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    cmd_ = app.add_subcommand(
        "report",
        "one self-contained HTML page of a plan: the answer, its basis and error band, the "
        "candidates with cost, the latency-vs-rate curve with the SLO and the maximum rate that "
        "meets it, the GPUs per candidate and the vllm serve command (docs/capacity-planning.md)");
    cmd_->add_option("files", files_,
                     "a plan --output file and optionally a sweep --output file of the same model "
                     "and workload (for the whole latency curve)")
        ->required();
    cmd_->add_option("-o,--output", output_, "HTML file to write")->required();
    return cmd_;
  }

  int run(std::ostream& out, std::ostream& err) override {
    for (const std::string& f : files_) check_input_file(f, "report", kMaxDataFileBytes);
    check_output_path(output_, "-o/--output", files_);
    const char* env_python = std::getenv("SERVESIM_PYTHON");
    const std::string python =
        env_python != nullptr && *env_python != '\0' ? env_python : SERVESIM_PYTHON_EXECUTABLE;
    if (python.empty()) {
      throw ConfigError(
          "report: this build has no Python module (SERVESIM_BUILD_PYTHON=OFF or pybind11 "
          "missing); expected a build with it (scripts/setup.sh), or SERVESIM_PYTHON naming a "
          "Python that can import servesim");
    }
    out.flush();
    err.flush();
    return run_python(python, err);
  }

 private:
  // Runs `python -m servesim.report FILES -o OUTPUT`, its output going to this process's.
  int run_python(const std::string& python, std::ostream& err) const {
    std::vector<std::string> args = {python, "-m", "servesim.report"};
    args.insert(args.end(), files_.begin(), files_.end());
    args.insert(args.end(), {"-o", output_});
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    // The build's package folder first, so that this build's module is the one imported.
    std::vector<std::string> env_text;
    const std::string package_dir = SERVESIM_PYTHON_PACKAGE_DIR;
    std::string pythonpath;
    std::error_code ec;
    if (!package_dir.empty() && std::filesystem::is_directory(package_dir, ec)) {
      pythonpath = package_dir;
    }
    for (char** e = environ; *e != nullptr; ++e) {
      if (std::strncmp(*e, "PYTHONPATH=", 11) == 0) {
        const std::string old = *e + 11;
        if (!old.empty()) pythonpath += (pythonpath.empty() ? "" : ":") + old;
      } else {
        env_text.emplace_back(*e);
      }
    }
    if (!pythonpath.empty()) env_text.push_back("PYTHONPATH=" + pythonpath);
    std::vector<char*> envp;
    for (std::string& e : env_text) envp.push_back(e.data());
    envp.push_back(nullptr);

    pid_t pid = 0;
    const int rc = ::posix_spawnp(&pid, python.c_str(), nullptr, nullptr, argv.data(), envp.data());
    if (rc != 0) {
      throw ConfigError("report: cannot run '" + python + "': " + std::strerror(rc) +
                        "; expected the Python the servesim module was built for (or set "
                        "SERVESIM_PYTHON)");
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
      if (errno != EINTR) throw InternalError("report: waitpid failed");
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    err << "servesim: error: report: '" << python << "' stopped by signal " << WTERMSIG(status)
        << "\n";
    return 128 + WTERMSIG(status);
  }

  CLI::App* cmd_ = nullptr;
  std::vector<std::string> files_;
  std::string output_;
};

}  // namespace

std::unique_ptr<Command> make_report_command() { return std::make_unique<ReportCommand>(); }

}  // namespace servesim::app
