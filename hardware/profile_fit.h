// Fits of the roofline's free parameters to measured op profiles (hardware/profiles.h).
//
// GEMM fit: the roofline of one linear op as the cost model computes it
//   t(T) = max(2·T·in·out·(T + a)/T / (P·η_c), (in·out + (in + out)·T)·2 B / (BW·η_m)) + t0
// fitted (Levenberg–Marquardt on log time, so every sample weighs by its relative error) for
// θ = (η_c, a, η_m, t0) given the GPU's datasheet peak P and bandwidth BW.
// Collective fit: t = α + x/BW with x = 2(p−1)/p·bytes (all-reduce) or bytes (send/recv), by
// linear least squares per worker count.
#ifndef SERVESIM_HARDWARE_PROFILE_FIT_H_
#define SERVESIM_HARDWARE_PROFILE_FIT_H_

#include <vector>

#include "hardware/profiles.h"

namespace servesim::hardware {

struct GemmModelParams {
  double compute_efficiency = 0.7;
  double compute_ramp_tokens = 128;
  double memory_efficiency = 0.8;
  double op_latency_s = 6e-6;
};

// The cost model's time for one GEMM sample (2-byte weights and activations).
double gemm_model_time_s(const GemmSample& s, const GemmModelParams& p, double peak_flops,
                         double bandwidth);

struct GemmFit {
  GemmModelParams params;
  GemmModelParams std_error;
  int samples = 0;
  double rms_log_error = 0;         // sqrt(mean(log(pred/meas)²))
  double median_abs_rel_error = 0;  // median |pred/meas − 1|
  int iterations = 0;
};

// REQUIRES: samples non-empty, peak_flops and bandwidth > 0.
GemmFit fit_gemm(const std::vector<GemmSample>& samples, double peak_flops, double bandwidth);

struct LinkFit {
  int num_workers = 0;
  double latency_s = 0;              // α
  double bandwidth_bytes_per_s = 0;  // 1/β (bus bandwidth for all-reduce)
  double latency_std_error = 0;
  int samples = 0;
  double median_abs_rel_error = 0;
};

// Fits samples of one collective with `num_workers` workers (and, when >= 0, devices_per_node).
LinkFit fit_collective(const std::vector<CollectiveSample>& samples, const std::string& collective,
                       int num_workers, int devices_per_node = -1);

}  // namespace servesim::hardware

#endif  // SERVESIM_HARDWARE_PROFILE_FIT_H_
