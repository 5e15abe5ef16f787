// libFuzzer target: the catalog JSON readers. First byte: 'm' a model config.json
// (models/model_spec.h), 'g' a GPU JSON (hardware/gpu_spec.h), anything else a calibration
// profile (hardware/calibration.h).
#include <cstddef>
#include <cstdint>

#include "hardware/calibration.h"
#include "hardware/gpu_spec.h"
#include "models/model_spec.h"
#include "sim/base/error.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace servesim;
  if (size < 1) return 0;
  const char kind = static_cast<char>(data[0]);
  try {
    if (kind == 'm') {
      models::load_model(fuzz::write_input(data + 1, size - 1, "model.json"));
    } else if (kind == 'g') {
      hardware::load_gpu(fuzz::write_input(data + 1, size - 1, "gpu.json"));
    } else {
      hardware::load_calibration(fuzz::write_input(data + 1, size - 1, "calibration.json"));
    }
  } catch (const ConfigError&) {
  }
  return 0;
}
