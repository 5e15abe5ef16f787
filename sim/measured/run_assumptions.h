// What validate assumed for a measured run: the facts a simulation needs that neither the result
// file records nor anyone declared (a sidecar, --config or the command line), so servesim picked
// them. validate prints them on stderr and records them per run in its --output JSON, so that a
// prediction resting on a guess says so (a bare `vllm bench serve` JSON does not record the vLLM
// version; simulating it as the newest release can move TTFT by tens of percent).
#ifndef SERVESIM_SIM_MEASURED_RUN_ASSUMPTIONS_H_
#define SERVESIM_SIM_MEASURED_RUN_ASSUMPTIONS_H_

#include <string>
#include <vector>

#include "sim/cluster/simulation.h"
#include "sim/measured/measured_run.h"

namespace servesim::measured {

// The assumptions, one sentence each, in a fixed order:
//   * the vLLM version, when the run has no engine_version (file, sidecar, --engine-version) and
//     no "vllm_version" key: it is simulated as config.engine.vllm_version (the newest release
//     modelled, unless --vllm-version says otherwise); the file's date is quoted when it has one;
//   * the endpoint of a vllm bench serve file: /v1/completions when the file records neither
//     "endpoint_type" nor "backend"; with /v1/chat/completions recorded, that the chat template's
//     prompt tokens are not simulated (the lengths are the client's).
// Empty when nothing was assumed.
std::vector<std::string> run_assumptions(const MeasuredRun& run,
                                         const sim::SimulationConfig& config);

// The deployment keys model, gpu and tensor_parallel_size that the result file does not record
// and a sidecar or the command line declared: "gpu a100-80gb (from command line)". Not guesses,
// but not evidence either: validate lists them in its JSON beside the assumptions.
std::vector<std::string> declared_not_recorded(const MeasuredRun& run);

}  // namespace servesim::measured

#endif  // SERVESIM_SIM_MEASURED_RUN_ASSUMPTIONS_H_
