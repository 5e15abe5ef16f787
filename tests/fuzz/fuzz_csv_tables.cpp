// libFuzzer target: the kernel-profile CSV tables (hardware/profiles.h). First byte: 'm' Vidur
// mlp.csv, 'a' Vidur all_reduce.csv, anything else LLMServingSim layers.csv.
#include <cstddef>
#include <cstdint>

#include "hardware/profiles.h"
#include "sim/base/error.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace servesim;
  if (size < 1) return 0;
  const char kind = static_cast<char>(data[0]);
  try {
    if (kind == 'm') {
      hardware::read_vidur_mlp(fuzz::write_input(data + 1, size - 1, "mlp.csv"));
    } else if (kind == 'a') {
      hardware::read_vidur_collective(fuzz::write_input(data + 1, size - 1, "all_reduce.csv"));
    } else {
      hardware::read_llmservingsim_layers(fuzz::write_input(data + 1, size - 1, "layers.csv"));
    }
  } catch (const ConfigError&) {
  }
  return 0;
}
