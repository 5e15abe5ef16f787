// libFuzzer target: measured kernel tables (hardware/kernel_profile.h). First byte: 'c' a kernel
// CSV (kernels_<gpu>.csv, scripts/profile_gpu.py) read into a profile as `calibrate --kernels`
// does; anything else a profile JSON with a "kernels" object (hardware/kernels/<gpu>.json) read as
// `--kernel-table FILE` reads it. Either profile is then written and read back and looked up at a
// few shapes and token counts.
#include <cstddef>
#include <cstdint>

#include "hardware/kernel_profile.h"
#include "hardware/profiles.h"
#include "sim/calibration/profile.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

using namespace servesim::hardware;

void exercise(const KernelProfile& p) {
  const KernelProfile back = KernelProfile::from_json(p.to_json(), "round trip");
  for (const LinearShape& s : {LinearShape{"bf16", 6144, 4096}, LinearShape{"fp8", 1, 1}}) {
    for (double tokens : {1.0, 100.0, 1e6}) back.linear_time_s(s, tokens);
    if (auto near = back.nearest_linear_shape(s)) back.linear_time_s(*near, 7);
  }
  back.nearest_attention_shape(AttentionShape{32, 8, 128});
  for (const auto& [s, curve] : back.prefill_attention()) curve.at(4096);
  for (const ElementwiseShape& s : {ElementwiseShape{"bf16", 4096, 14336, 32, 8, 128},
                                    ElementwiseShape{"fp8", 1, 0, 1, 1, 1}}) {
    elementwise_bytes_per_token(s);
    if (auto near = back.nearest_elementwise_shape(s)) back.elementwise().at(*near).at(300);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<servesim::fuzz::Reader> readers = {
      {'c', "kernels_h100.csv",
       [](const std::string& p) {
         exercise(KernelProfile::from_rows(read_kernel_csv(p), "h100"));
       }},
      {'j', "kernels.json",
       [](const std::string& p) {
         const servesim::calibration::Calibration c = servesim::calibration::load_calibration(p);
         if (c.kernels) exercise(*c.kernels);
       }},
  };
  return servesim::fuzz::run_reader(data, size, readers);
}
