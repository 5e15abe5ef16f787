// libFuzzer target: a calibration profile (sim/calibration/profile.h), read as `simulate
// --calibration FILE` reads it (its kernel tables included), applied to llama-3.1-8b on the GPU
// the profile names when that is a catalog GPU (else h100-sxm), and a few requests simulated; also
// read as validate/calibrate's --base reads it (sim/measured/replay.h).
#include <cstddef>
#include <cstdint>

#include "hardware/gpu_spec.h"
#include "sim/calibration/profile.h"
#include "sim/measured/replay.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace servesim;
  const std::string path = fuzz::write_input(data, size, "calibration.json");
  return fuzz::guarded([&] {
    const calibration::Calibration cal = calibration::load_calibration(path);
    measured::load_calibration_file(path);
    sim::SimulationConfig c;
    const auto names = hardware::gpu_catalog_names();
    if (std::find(names.begin(), names.end(), cal.gpu) != names.end()) c.gpu = cal.gpu;
    c.calibration = path;
    fuzz::simulate_briefly(c);
  });
}
