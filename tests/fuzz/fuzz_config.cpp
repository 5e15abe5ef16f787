// libFuzzer target: a --config JSON file (sim/app/run_config.h), as simulate reads it, then the
// deployment it describes prepared (model, GPU and memory plan checks) when it parses.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "sim/app/run_config.h"
#include "sim/base/json_file.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace servesim;
  const std::string text(reinterpret_cast<const char*>(data), size);
  return fuzz::guarded([&] {
    sim::SimulationConfig config;
    app::apply_config_json(config, parse_json_text(text, "c.json"), "c.json");
    // Only catalog names: a fuzzed path must not read arbitrary files (--model reads an existing
    // path before the catalog, models/model_name.h).
    std::error_code ec;
    if (looks_like_path(config.model) || std::filesystem::exists(config.model, ec) ||
        looks_like_path(config.gpu) || looks_like_path(config.inter_node_link)) {
      return;
    }
    config.calibration = "none";
    config.kernel_table = "";
    sim::prepare_deployment(config);
  });
}
