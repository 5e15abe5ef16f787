// `servesim COMMAND --help` grouped by topic: the command's own flags first (plan's --target-qps,
// --slo, ...), then the run settings every run command shares, by topic (deployment, prefill/
// decode pools, calibration, engine, LoRA, load, report), then the distributed-study flags.
//
// Contract: group_help(cmd) is called once a command has registered all its options. It puts
// every visible option in a group (hidden ones, such as the accepted vLLM flags, stay hidden) and
// gives the command a help formatter that prints the groups in that order. Parsing is unchanged.
#ifndef SERVESIM_SIM_APP_HELP_GROUPS_H_
#define SERVESIM_SIM_APP_HELP_GROUPS_H_

#include <string>

#include <CLI/CLI.hpp>

namespace servesim::app {

void group_help(CLI::App& cmd);

// The help group of a run setting's flag ("--max-num-seqs" -> "Engine (vLLM)"), or "" when the
// flag is not a shared run setting (a command's own flag).
std::string run_setting_topic(const std::string& flag);

}  // namespace servesim::app

#endif  // SERVESIM_SIM_APP_HELP_GROUPS_H_
