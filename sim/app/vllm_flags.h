// vLLM's flags on servesim's command lines: the flags of `vllm serve` and `vllm bench serve` that
// servesim accepts without modelling (they change nothing that is simulated: --port, --backend
// vllm, --tokenizer, ...) and the ones it refuses by name (they change serving in ways not
// modelled: --speculative-model, --enable-lora, ...). Pasted command lines (simulate's
// --vllm-serve-cmd "…", --vllm-bench-cmd "…", or `-- vllm …`) are read against the same table by
// pasted_commands.h.
//
// Sources of the flag names and arities (docs/cli.md cites them): vllm/engine/arg_utils.py and
// vllm/entrypoints/openai/cli_args.py (`vllm serve`); vllm/benchmarks/serve.py and
// vllm/benchmarks/datasets.py (`vllm bench serve`).
//
// Contract:
//  - add_vllm_flags() registers every accepted-and-ignored and every refused flag on a run
//    command, hidden from --help (the command's footer names the rule). After parsing,
//    check_vllm_flags() throws ConfigError for a refused flag or value, naming it and why;
//    ignored_flags() lists the ignored ones given, in the order given.
//  - vllm_flags() is the table of those flags; find_flag() looks one up by its long name
//    (pasted_commands.cpp reads pasted lines against the same table).
#ifndef SERVESIM_SIM_APP_VLLM_FLAGS_H_
#define SERVESIM_SIM_APP_VLLM_FLAGS_H_

#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace servesim::app {

// How many words follow a flag: none (a bare flag), one, or argparse's nargs "+"/"*" (the words
// up to the next flag).
enum class Arity { kNone, kOne, kMany };

// Which command lines have the flag.
enum In : unsigned { kServe = 1, kBench = 2, kBoth = 3 };

// A value of an ignored flag that changes serving: returns why it is refused, "" when the value
// changes nothing that is simulated.
using ValueCheck = std::string (*)(const std::string& value);

struct VllmFlag {
  const char* name;
  Arity arity;
  unsigned in;
  const char* refused = nullptr;  // null: accepted and ignored; else why it is refused
  ValueCheck check = nullptr;
  const char* shown = nullptr;  // the name printed, when it differs from `name`
};

// The flags of `vllm serve` and `vllm bench serve` that servesim ignores or refuses.
const std::vector<VllmFlag>& vllm_flags();

// The table's entry for `name` ("--port"), null when the flag is not in it.
const VllmFlag* find_flag(const std::string& name);

// The name printed for `f`: `shown` when set, else `name`.
std::string shown_name(const VllmFlag& f);

// One accepted-and-ignored flag as given: "--port" {"8000"}; a bare flag has no values.
struct IgnoredFlag {
  std::string flag;
  std::vector<std::string> values;
};

void add_vllm_flags(CLI::App& cmd);

// Throws ConfigError for the first refused flag given (or an ignored flag with a value that
// changes the simulation, such as --speculative-config or --backend tgi).
void check_vllm_flags(const CLI::App& cmd);

// Throws ConfigError when `cmd` has --backend openai-chat and `endpoint` (the run's, "" = the
// default /v1/completions) is not /v1/chat/completions, as vllm bench serve refuses it.
// check_vllm_flags calls it with the --endpoint typed (or the default when no --config file is
// given); build_config (run_options.h) and take_declared_endpoint (measured_endpoint.h) with the
// endpoint in effect once the --config file is read.
void check_chat_backend(const CLI::App& cmd, const std::string& endpoint);

// `read`: flags the command reads although they are in the table (validate's and calibrate's
// --endpoint, checked against the measured runs' files): not listed.
std::vector<IgnoredFlag> ignored_flags(const CLI::App& cmd,
                                       const std::vector<std::string>& read = {});

// "ignored (no effect on the simulation): --backend vllm, --port 8000", or "" when none.
std::string ignored_note(const std::vector<IgnoredFlag>& flags);

// [{"flag": "--backend", "values": ["vllm"]}, ...] for the result file (servesim.ignored_flags).
nlohmann::json ignored_to_json(const std::vector<IgnoredFlag>& flags);

}  // namespace servesim::app

#endif  // SERVESIM_SIM_APP_VLLM_FLAGS_H_
