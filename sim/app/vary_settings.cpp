#include "sim/app/vary_settings.h"

#include "sim/app/run_config.h"
#include "sim/planning/vary.h"
#include "sim/planning/vary_spec.h"

namespace servesim::app {

void apply_vary_settings(sim::SimulationConfig& config, const nlohmann::json& settings) {
  nlohmann::json fields = nlohmann::json::object();
  nlohmann::json spec = nlohmann::json::object();
  for (const auto& item : settings.items()) {
    bool in_spec = false;
    for (const planning::KnobInfo& k : planning::vary_knobs()) {
      in_spec = in_spec || (k.key == item.key() && k.within == "speculative_config");
    }
    (in_spec ? spec : fields)[item.key()] = item.value();
  }
  apply_config_json(config, fields, "--vary");
  if (!spec.empty()) config.engine.spec = planning::vary_spec_decode(config.engine.spec, spec);
}

}  // namespace servesim::app
