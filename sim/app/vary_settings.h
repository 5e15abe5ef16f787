// Applies one --vary point (planning::VaryPoint::settings) to a run config: run fields through
// the field table (apply_config_json, as --config files), and the knobs within
// --speculative-config through planning::vary_spec_decode, after the fields (so a varied
// --speculative-config, were it a knob, would come first). Throws ConfigError naming --vary.
#ifndef SERVESIM_SIM_APP_VARY_SETTINGS_H_
#define SERVESIM_SIM_APP_VARY_SETTINGS_H_

#include <nlohmann/json.hpp>

#include "sim/cluster/simulation.h"

namespace servesim::app {

void apply_vary_settings(sim::SimulationConfig& config, const nlohmann::json& settings);

}  // namespace servesim::app

#endif  // SERVESIM_SIM_APP_VARY_SETTINGS_H_
