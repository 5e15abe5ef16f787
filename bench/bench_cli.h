// The command lines of the benchmark programs (servesim_bench, servesim_trace_bench), parsed with
// CLI11 as servesim's own: --help prints the options and exits 0; an unknown option, a missing or
// unconvertible value, or a value a check refuses exits 2 with one line naming the program, the
// option and the value, then a pointer to --help.
#ifndef SERVESIM_BENCH_BENCH_CLI_H_
#define SERVESIM_BENCH_BENCH_CLI_H_

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace servesim::bench {

// A CLI11 check that a value is a number (a whole number when `whole`) of at least `low`; the
// error names the option, the value and what is expected.
inline CLI::Validator at_least(double low, bool whole = false) {
  char bound[32];
  std::snprintf(bound, sizeof bound, "%g", low);
  const std::string expected = std::string(whole ? "a whole number" : "a number") + " >= " + bound;
  return CLI::Validator(
      [low, whole, expected](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = whole ? static_cast<double>(std::strtoll(s.c_str(), &end, 10))
                               : std::strtod(s.c_str(), &end);
        if (s.empty() || end != s.c_str() + s.size() || !(v >= low)) {
          return "'" + s + "'; expected " + expected;
        }
        return "";
      },
      ">= " + std::string(bound));
}

// Parses the command line into `app`. `aliases` rewrites whole arguments before CLI11 sees them
// (vLLM's "-tp": CLI11 has no two-letter short options). Returns -1 when the program should run,
// else the status to exit with: 0 after --help (printed on stdout), 2 after an error (printed on
// stderr as "PROGRAM: error: WHAT").
inline int parse_command_line(
    CLI::App& app, int argc, char** argv,
    const std::vector<std::pair<std::string, std::string>>& aliases = {}) {
  std::vector<std::string> args;
  for (int i = argc - 1; i >= 1; --i) {  // CLI11 parses a vector from the back
    std::string a = argv[i];
    for (const auto& [from, to] : aliases) {
      if (a == from) a = to;
    }
    args.push_back(std::move(a));
  }
  const std::string program = app.get_name();
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    // CLI11 2.1 names unexpected arguments back to front: name them in the order given.
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      const std::vector<std::string> extras = app.remaining(true);
      if (!extras.empty()) {
        what = extras.size() > 1 ? "the following arguments were not expected:"
                                 : "the following argument was not expected:";
        for (const std::string& a : extras) what += " " + a;
      }
    }
    std::fprintf(stderr, "%s: error: %s\nRun %s --help for the options.\n", program.c_str(),
                 what.c_str(), program.c_str());
    return 2;
  }
  return -1;
}

}  // namespace servesim::bench

#endif  // SERVESIM_BENCH_BENCH_CLI_H_
