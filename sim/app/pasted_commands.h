// Pasted vLLM command lines (simulate's --vllm-serve-cmd "…", --vllm-bench-cmd "…", or a
// trailing `-- vllm …`) turned into servesim's own flags.
//
// Contract: expand_pasted_commands() runs before parsing: it replaces the pasted lines by the
// servesim flags they mean and puts them before the flags typed on the servesim command line,
// minus any flag typed there too (the typed one wins). Flags a pasted line has that servesim
// neither models nor ignores (vllm_flags.h's table) are refused by name. Throws ConfigError.
#ifndef SERVESIM_SIM_APP_PASTED_COMMANDS_H_
#define SERVESIM_SIM_APP_PASTED_COMMANDS_H_

#include <string>
#include <vector>

namespace servesim::app {

// `args` is the servesim command line (subcommand first). For simulate: expands
// --vllm-serve-cmd TEXT, --vllm-bench-cmd TEXT and a trailing `-- vllm …` (several commands
// separated by further `--`). Other commands: refuses those flags. Returns `args` unchanged when
// none is given.
std::vector<std::string> expand_pasted_commands(const std::vector<std::string>& args);

}  // namespace servesim::app

#endif  // SERVESIM_SIM_APP_PASTED_COMMANDS_H_
