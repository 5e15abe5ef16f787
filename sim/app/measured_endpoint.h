// validate's and calibrate's --endpoint: the endpoint a measured run was sent to is read from its
// file (vllm bench serve's "endpoint_type" or "backend", a public-runs row's endpoint column), so
// the flag, a vllm bench serve flag that a pasted client line brings along, changes nothing. It is
// accepted where it agrees with every run read and refused by name where it contradicts one.
//
// Contract:
//  - take_declared_endpoint() returns the endpoint the command line declares: --endpoint when
//    given, else a --config file's "endpoint" key (which it removes from `overrides`, the keys
//    applied to every run: a run's endpoint is not a deployment setting); empty `value` = none.
//    It also applies vllm bench serve's --backend openai-chat rule to it (check_chat_backend).
//  - check_declared_endpoint() throws ConfigError naming the flag (or the --config file), the
//    first run that contradicts it and what that run's file records. A run whose file records
//    no endpoint is simulated as /v1/completions: --endpoint /v1/completions agrees with it, and
//    /v1/chat/completions is refused (the chat template's tokens cannot be declared for it here).
//  - declared_endpoint_note() says, once the check passed, that the declaration agrees.
#ifndef SERVESIM_SIM_APP_MEASURED_ENDPOINT_H_
#define SERVESIM_SIM_APP_MEASURED_ENDPOINT_H_

#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "sim/measured/measured_run.h"

namespace servesim::app {

struct DeclaredEndpoint {
  std::string value;  // "/v1/completions" | "/v1/chat/completions"; "" = not declared
  std::string from;   // "--endpoint" or "--config FILE (endpoint)"
};

DeclaredEndpoint take_declared_endpoint(const CLI::App& cmd, const std::string& config_file,
                                        nlohmann::json& overrides);

void check_declared_endpoint(const DeclaredEndpoint& declared,
                             const std::vector<measured::MeasuredRun>& runs);

// After check_declared_endpoint passed: "--endpoint /v1/chat/completions agrees with the runs
// read (3 record it); each run is simulated with the endpoint its file records" (and how many
// record none, simulated as /v1/completions), for stderr; "" when nothing was declared. validate
// and calibrate print it instead of listing --endpoint among the ignored vLLM flags
// (Command::vllm_flags_read).
std::string declared_endpoint_note(const DeclaredEndpoint& declared,
                                   const std::vector<measured::MeasuredRun>& runs);

}  // namespace servesim::app

#endif  // SERVESIM_SIM_APP_MEASURED_ENDPOINT_H_
