// GpuIdentity: the GPU a measured kernel table or a fitted calibration profile was made on — its
// name, its architecture and the datasheet figures that decide kernel times (dense bf16 FLOP/s,
// HBM bandwidth, memory).
//
// A table or profile applies as measured only to the GPU it was measured on. A name alone does
// not say that: a GPU JSON named "h100-sxm" with a quarter of the H100's bandwidth is not an H100.
// Two identities name the same GPU when their names are equal and every figure agrees within
// kGpuFigureRelTolerance. Files written before identities were recorded carry only a GPU name;
// their identity is the catalog GPU of that name (identity_for_name).
#ifndef SERVESIM_HARDWARE_GPU_IDENTITY_H_
#define SERVESIM_HARDWARE_GPU_IDENTITY_H_

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "hardware/gpu_spec.h"

namespace servesim::hardware {

// Relative tolerance of a figure comparison. The catalog writes peaks with 3–4 significant
// digits (9.89e14, 3.35e12), so a copy of a catalog GPU agrees far within 1 %; real variants
// of one chip differ by much more (H100 SXM vs NVL bandwidth: 15 %; A100 40 vs 80 GB: 23 %).
inline constexpr double kGpuFigureRelTolerance = 0.01;

struct GpuIdentity {
  std::string name;          // GpuSpec::name
  std::string architecture;  // GpuSpec::architecture ("" = unknown)
  double bf16_flops = 0;     // dense bf16 peak, FLOP/s
  double fp8_flops = 0;      // dense fp8 peak, FLOP/s; 0 = no fp8 tensor cores
  double hbm_bandwidth_bytes_per_s = 0;
  double memory_bytes = 0;

  static GpuIdentity of(const GpuSpec& gpu);
  // As written in a profile ("gpu_identity"): the fields above, by these names.
  nlohmann::ordered_json to_json() const;
  // Throws ConfigError naming `where` and the field on a missing or non-positive figure.
  static GpuIdentity from_json(const nlohmann::json& j, const std::string& where);
};

// The identity of a file that records only a GPU name: the catalog GPU of that name; nullopt
// when the name is empty or not in the catalog.
std::optional<GpuIdentity> identity_for_name(const std::string& name);

// The GPU a file was measured on: `recorded` when the file has it, else identity_for_name(name).
std::optional<GpuIdentity> measured_identity(const std::optional<GpuIdentity>& recorded,
                                             const std::string& name);

// A GpuSpec carrying `g`'s figures: the catalog GPU of that name when its figures are g's, else
// a spec with g's name, architecture and peaks only (enough to scale kernel times by).
GpuSpec spec_of(const GpuIdentity& g);

// Refuses a file measured on a GPU that has the name of `in_use` but other figures: ConfigError
// "<file>: <what> measured on <describe(on)>; the GPU in use is also named <name> but its
// <figure> differs (...); expected <remedy>". Does nothing when the names differ or the figures
// agree.
void refuse_same_name_other_figures(const GpuIdentity& on, const GpuSpec& in_use,
                                    const std::string& file, const std::string& what,
                                    const std::string& remedy);

// The first of bf16 peak, fp8 peak, HBM bandwidth and memory on which `a` and `b` differ by more
// than kGpuFigureRelTolerance (relative to `a`), as "<figure> <a's value> vs <b's value>" with
// units (e.g. "HBM bandwidth 3.35 TB/s vs 0.84 TB/s"); "" when they agree on all four.
std::string differing_figure(const GpuIdentity& a, const GpuIdentity& b);

// Whether a kernel CSV's gpu column `label` names `gpu`: the GPU's name, or its family, the name
// up to its first '-' ("h100" for h100-sxm, h100-pcie and h100-nvl, as the measurement scripts
// write it). An empty label names no GPU and matches none.
bool label_names_gpu(const std::string& label, const GpuSpec& gpu);

// "h100-sxm (bf16 989 TFLOP/s, HBM 3.35 TB/s, 80 GiB)".
std::string describe(const GpuIdentity& g);

}  // namespace servesim::hardware

#endif  // SERVESIM_HARDWARE_GPU_IDENTITY_H_
