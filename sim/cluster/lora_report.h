// The LoRA part of a run's summary (servesim_summary): the flags echoed under "config", and a
// "lora" object — the slots' memory, what one adapter load costs, the adapter loads of the run,
// the CPU cache's hit rate and the time requests waited for a LoRA slot — with where each of its
// parameters comes from. Nothing is added when --enable-lora is off, so other result files stay
// as they were.
#ifndef SERVESIM_SIM_CLUSTER_LORA_REPORT_H_
#define SERVESIM_SIM_CLUSTER_LORA_REPORT_H_

#include <nlohmann/json.hpp>

#include "sim/cluster/simulation.h"

namespace servesim::sim {

// Adds to `summary` (servesim_summary's object, with its "config" and "kv_cache").
void add_lora_summary(const SimulationConfig& config, const PreparedDeployment& prepared,
                      const SimulationResult& result, nlohmann::json& summary);

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_CLUSTER_LORA_REPORT_H_
