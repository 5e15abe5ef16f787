// libFuzzer target: the profiling CSV tables (hardware/profiles.h) and what calibrate does with
// them first. First byte: 'm' Vidur mlp.csv (then its GEMMs as kernel rows), 'a' Vidur
// all_reduce.csv, 's' Splitwise perf_model.csv, anything else LLMServingSim layers.csv (then its
// GEMMs for Llama-3.1-8B's dimensions).
#include <cstddef>
#include <cstdint>

#include "hardware/kernel_profile.h"
#include "hardware/profiles.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace servesim::hardware;
  static const std::vector<servesim::fuzz::Reader> readers = {
      {'m', "mlp.csv",
       [](const std::string& p) {
         KernelProfile::from_rows(kernel_rows_from_gemms(read_vidur_mlp(p), "h100-sxm"),
                                  "h100-sxm");
       }},
      {'a', "all_reduce.csv", [](const std::string& p) { read_vidur_collective(p); }},
      {'s', "perf_model.csv", [](const std::string& p) { read_splitwise(p); }},
      {'l', "layers.csv",
       [](const std::string& p) {
         LayerDims dims{4096, 32, 8, 128, 14336, 128256};
         gemm_samples_from_layers(read_llmservingsim_layers(p), dims);
       }},
  };
  return servesim::fuzz::run_reader(data, size, readers);
}
