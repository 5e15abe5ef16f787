// servesim._core: the servesim command line, callable in process from Python.
//
// Why the CLI and not one binding per library type: the Python API (servesim/__init__.py) turns
// keyword arguments into the very flags a user types, so deployments, workloads, defaults,
// validation and error messages are the CLI's own (sim/app: run_config.cpp, run_options.cpp and
// each cmd_*.cpp), and a flag added to the CLI is available from Python with no change here.
// Commands write their JSON outputs to files the caller names; the Python side reads them back.
//
// Contract of run_cli(args): runs `servesim ARGS...` exactly as main() does and returns
// (exit_code, stdout_text, stderr_text). The GIL is released for the whole run, so simulations in
// several Python threads run in parallel and other Python threads keep running meanwhile.
// Exception: sweep, plan and compare run one at a time. Each already spreads its simulations over
// every core (--jobs), and each installs the process-wide Ctrl-C handler that lets an interrupted
// study return what it has (sim/planning/progress.h), of which only one may be alive.
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "sim/app/cli.h"
#include "sim/app/run_config.h"
#include "sim/base/json_file.h"

namespace py = pybind11;

PYBIND11_MODULE(_core, m) {
  m.doc() = "servesim native core: the CLI in process (use the servesim package, not this)";

  m.def(
      "run_cli",
      [](const std::vector<std::string>& args) {
        std::ostringstream out, err;
        int code = 0;
        {
          py::gil_scoped_release release;  // no Python object is touched until it is re-acquired
          static std::mutex studies;       // see the file comment
          const bool study =
              !args.empty() && (args[0] == "sweep" || args[0] == "plan" || args[0] == "compare");
          std::unique_lock<std::mutex> lock(studies, std::defer_lock);
          if (study) lock.lock();
          code = servesim::app::run_cli(args, out, err);
        }
        return py::make_tuple(code, out.str(), err.str());
      },
      py::arg("args"),
      "Runs `servesim ARGS...`; returns (exit_code, stdout, stderr). Releases the GIL.");

  m.def(
      "run_fields",
      [] {
        // The run options every run-describing command accepts: (key, help), in --help order.
        py::list fields;
        for (const servesim::app::ConfigField& f : servesim::app::config_fields()) {
          fields.append(py::make_tuple(f.key, f.help));
        }
        return fields;
      },
      "The run options (underscore keys of --config files) with their one-line help.");

  m.def(
      "options",
      [] {
        // Every option of every command: (command, name, takes_value), as --help lists them. The
        // Python side uses it to turn False into --no-X where the command has one and to refuse
        // a keyword that names no option, instead of dropping it.
        py::list options;
        for (const servesim::app::OptionInfo& o : servesim::app::command_options()) {
          options.append(py::make_tuple(o.command, o.name, o.takes_value));
        }
        return options;
      },
      "The options of every command: (command, name, takes_value).");

  m.def(
      "data_dir", [] { return servesim::data_dir().string(); },
      "The folder holding models/catalog and hardware/catalog.");
}
