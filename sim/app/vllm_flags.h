// vLLM's command lines, read: the flags of `vllm serve` and `vllm bench serve` that servesim
// accepts without modelling (they change nothing that is simulated: --port, --backend vllm,
// --tokenizer, ...), the ones it refuses by name (they change serving in ways not modelled:
// --speculative-model, --enable-lora, ...), and pasted command lines (simulate's
// --vllm-serve-cmd "…", --vllm-bench-cmd "…", or `-- vllm …`) turned into servesim's flags.
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
//  - expand_pasted_commands() runs before parsing: it replaces the pasted lines by the servesim
//    flags they mean and puts them before the flags typed on the servesim command line, minus
//    any flag typed there too (the typed one wins). Flags a pasted line has that servesim neither
//    models nor ignores are refused by name. Throws ConfigError.
#ifndef SERVESIM_SIM_APP_VLLM_FLAGS_H_
#define SERVESIM_SIM_APP_VLLM_FLAGS_H_

#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace servesim::app {

// One accepted-and-ignored flag as given: "--port" {"8000"}; a bare flag has no values.
struct IgnoredFlag {
  std::string flag;
  std::vector<std::string> values;
};

void add_vllm_flags(CLI::App& cmd);

// Throws ConfigError for the first refused flag given (or an ignored flag with a value that
// changes the simulation, such as --speculative-config or --endpoint /v1/chat/completions).
void check_vllm_flags(const CLI::App& cmd);

std::vector<IgnoredFlag> ignored_flags(const CLI::App& cmd);

// "ignored (no effect on the simulation): --backend vllm, --port 8000", or "" when none.
std::string ignored_note(const std::vector<IgnoredFlag>& flags);

// [{"flag": "--backend", "values": ["vllm"]}, ...] for the result file (servesim.ignored_flags).
nlohmann::json ignored_to_json(const std::vector<IgnoredFlag>& flags);

// Splits a pasted shell command line into words as bash would: whitespace, '…' and "…" quotes,
// $'…' (ANSI-C quotes), backslash escapes and backslash-newline continuations, # comments.
// Refuses (ConfigError naming `flag`) what it cannot reproduce without a shell: $VARIABLES,
// `commands`, and ; | & < > (more than one command, redirections, placeholders such as <path>).
std::vector<std::string> split_shell_words(const std::string& line, const std::string& flag);

// A word as a shell reads it back: unchanged when it has no special character, else in '…'.
std::string shell_quote(const std::string& word);

// `args` is the servesim command line (subcommand first). For simulate: expands
// --vllm-serve-cmd TEXT, --vllm-bench-cmd TEXT and a trailing `-- vllm …` (several commands
// separated by further `--`). Other commands: refuses those flags. Returns `args` unchanged when
// none is given.
std::vector<std::string> expand_pasted_commands(const std::vector<std::string>& args);

}  // namespace servesim::app

#endif  // SERVESIM_SIM_APP_VLLM_FLAGS_H_
