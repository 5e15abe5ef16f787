// The device terms of a calibration profile fitted to profiling tables measured on one GPU, the
// parts of `servesim calibrate` that read no serving run:
//   fit_gemm_profiles     Vidur mlp.csv and LLMServingSim layers.csv GEMMs → compute/memory
//                         efficiency, small-GEMM ramp, per-kernel latency (hardware/profile_fit.h);
//   fit_allreduce_profile Vidur all_reduce.csv → the scale-up link's bus bandwidth;
//   read_kernel_tables    kernel tables (kernels_<gpu>.csv, or Vidur mlp.csv) → the profile's
//                         monotone per-shape kernel curves (hardware/kernel_profile.h).
// Each sets its terms in `cal`, names their source in `origin` (term name -> source, the
// "fitted on" column calibrate prints), appends its files to cal.fit_set (portable_source) and
// its record to cal.fit_info, and returns the one-line summary calibrate prints (with its "\n").
// A table the fit cannot use is refused by file (ConfigError).
#ifndef SERVESIM_SIM_CALIBRATION_PROFILE_SOURCES_H_
#define SERVESIM_SIM_CALIBRATION_PROFILE_SOURCES_H_

#include <map>
#include <string>
#include <vector>

#include "hardware/gpu_spec.h"
#include "sim/calibration/profile.h"

namespace servesim::calibration {

// A source path as a profile records it: from "realdata/" on for files of the shared real-data
// set, so that a profile does not depend on where the data was mounted (validate compares them
// the same way); other paths unchanged.
std::string portable_source(const std::string& path);

// GEMM profiles: every file's rows must have positive finite sizes and times. Layer tables need
// `layers_model` (a catalog name or config.json) for their layer shapes.
struct GemmSources {
  std::vector<std::string> vidur_mlp;             // --vidur-mlp
  std::vector<std::string> llmservingsim_layers;  // --llmservingsim-layers
  std::string layers_model;                       // --layers-model
};
std::string fit_gemm_profiles(const GemmSources& sources, const hardware::GpuSpec& gpu,
                              Calibration& cal, std::map<std::string, std::string>& origin);

// Single-node all-reduces, one α–β line per worker count; only the widest count's bandwidth
// becomes a term (the measured α is eager NCCL, not vLLM's custom all-reduce in CUDA graphs).
std::string fit_allreduce_profile(const std::string& vidur_allreduce, Calibration& cal,
                                  std::map<std::string, std::string>& origin);

// Kernel tables measured on `gpu` (a kernels CSV of another GPU is refused) become cal.kernels.
std::string read_kernel_tables(const std::vector<std::string>& files, const hardware::GpuSpec& gpu,
                               Calibration& cal);

}  // namespace servesim::calibration

#endif  // SERVESIM_SIM_CALIBRATION_PROFILE_SOURCES_H_
