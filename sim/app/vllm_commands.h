// vLLM's command lines, written: the `vllm serve` command of one replica of a simulated
// deployment, and the `vllm bench serve` command that would check it at a request rate. `plan`
// prints and records both for its answer (docs/capacity-planning.md).
//
// Contract:
//  - The serve command names the model as vLLM takes it (a catalog name as the first Hugging Face
//    id its entry records, anything else as given: models::vllm_model_argument), TP, PP and DP,
//    expert parallelism when set, and the engine limits as servesim resolved them for the config's
//    vLLM release and GPU (--max-model-len, --max-num-seqs, --max-num-batched-tokens,
//    --gpu-memory-utilization), so that it runs the engine that was simulated whatever release's
//    defaults apply; every other engine flag only when set to other than vLLM's default.
//    Speculative decoding is its
//    --speculative-config with vLLM's keys only (servesim's acceptance_* keys say what vLLM would
//    measure, not what it takes).
//  - The bench command sends the simulated workload (dataset and lengths, --ignore-eos so that
//    outputs are as long as simulated, --seed, --burstiness, --max-concurrency) at `rate`, reports
//    the percentiles and goodput of `slos`, and saves its result file. Workloads without a vllm
//    bench serve equivalent (SGLang's generated-shared-prefix, traces, workload classes,
//    multi-turn, constant arrivals, a lengths CSV) get no command and the reason.
// Throws ConfigError only for a model or GPU that does not load.
#ifndef SERVESIM_SIM_APP_VLLM_COMMANDS_H_
#define SERVESIM_SIM_APP_VLLM_COMMANDS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/cluster/simulation.h"
#include "sim/planning/slo.h"

namespace servesim::app {

std::string vllm_serve_command(const sim::SimulationConfig& config);

struct BenchCommand {
  std::string command;  // "" when the workload has no vllm bench serve equivalent
  std::string why_not;  // then: why
};
BenchCommand vllm_bench_command(const sim::SimulationConfig& config, double rate,
                                int64_t num_prompts, const std::vector<planning::Slo>& slos);

}  // namespace servesim::app

#endif  // SERVESIM_SIM_APP_VLLM_COMMANDS_H_
