// "did you mean" for a flag a command does not take: the command's nearest flag by edit distance
// (`--max-num-seq` -> `--max-num-seqs`), the dashed spelling of an underscored one (vLLM's parser
// takes `--max_num_seqs`; servesim's flags have dashes), and, for a flag of vLLM's benchmarks
// that servesim names otherwise, servesim's name and how the two differ.
#ifndef SERVESIM_SIM_APP_FLAG_SUGGESTIONS_H_
#define SERVESIM_SIM_APP_FLAG_SUGGESTIONS_H_

#include <string>

#include <CLI/CLI.hpp>

namespace servesim::app {

// " (did you mean --max-num-seqs?)" for an unexpected argument `arg` of `cmd`, or "" when `arg`
// is not a flag or no flag of `cmd` is near it. Only the flags `cmd --help` lists are suggested.
std::string flag_suggestion(const CLI::App& cmd, const std::string& arg);

}  // namespace servesim::app

#endif  // SERVESIM_SIM_APP_FLAG_SUGGESTIONS_H_
