// Arrival processes: when the benchmark client sends each request.
//
// Two layers, as in vLLM's `vllm bench serve`:
//   * ArrivalProcess draws one raw inter-arrival gap at a time from an RngStream (Poisson,
//     gamma with a burstiness shape, or constant). Exact distributions: nothing is clamped.
//   * ArrivalSequence turns n raw gaps into n arrival times exactly as vLLM's client does:
//     cumulate the gaps, then rescale them so that the last arrival lands at n / rate.
//
// Source read: vllm-project/vllm `vllm/benchmarks/serve.py`, function `get_request` (and
// REFERENCE.md §2.2). What it does, and what we match:
//   1. delay_ts[i] = np.random.gamma(shape=burstiness, scale=1/(rate*burstiness)) for every
//      request i, including the first (so the first request is sent after one delay, not at t=0);
//      `burstiness == inf` gives the constant delay 1/rate; `rate == inf` gives delay 0.
//   2. delay_ts is cumulated (delay_ts[i] += delay_ts[i-1]).
//   3. Without ramp-up, and when delay_ts[-1] != 0, every delay is multiplied by
//      (n / rate) / delay_ts[-1], so the last request is sent at exactly n / rate ("closes the
//      1-2 % gap ... for stabilizing the throughput data from different random seeds").
//   4. Request i is sent at start + delay_ts[i].
// Consequences: the mean inter-arrival over a run is exactly 1/rate and the realised rate no
// longer varies from seed to seed; the gaps keep the CV of the sampled distribution (the rescale
// is a common factor), but they are no longer independent (they are a Dirichlet-like split of
// n/rate). SGLang's bench_serving instead sends the first request at t=0 and sleeps an
// unrescaled exponential gap after each; servesim follows vLLM for every dataset.
#ifndef SERVESIM_WORKLOADS_ARRIVAL_PROCESS_H_
#define SERVESIM_WORKLOADS_ARRIVAL_PROCESS_H_

#include <cstdint>
#include <memory>
#include <string_view>

#include "sim/base/rng.h"

namespace servesim::workloads {

// Name of the RngStream the arrival gaps come from. Lengths and shuffles use other streams, so
// changing a dataset knob never moves an arrival.
inline constexpr std::string_view kArrivalStreamName = "arrivals";

// Contract: next_gap_s() returns one raw inter-arrival gap in seconds (>= 0), drawn from `rng`
// (the only source of randomness), with mean mean_gap_s(). Implementations hold no other state.
class ArrivalProcess {
 public:
  virtual ~ArrivalProcess() = default;
  virtual double next_gap_s(RngStream& rng) const = 0;
  // Mean of the gap distribution: 1 / rate for every process here.
  virtual double mean_gap_s() const = 0;
  // Coefficient of variation (std / mean) of the gap distribution: 1 for Poisson, 1/sqrt(b) for
  // gamma with shape b, 0 for constant.
  virtual double cv() const = 0;
};

// Poisson process: gaps ~ Exponential(mean 1/rate). vLLM's default (burstiness 1, where
// np.random.gamma(shape=1) is the exponential distribution).
class PoissonArrivals final : public ArrivalProcess {
 public:
  explicit PoissonArrivals(double rate_per_s);  // REQUIRES: 0 < rate < inf
  double next_gap_s(RngStream& rng) const override { return rng.exponential(mean_gap_s_); }
  double mean_gap_s() const override { return mean_gap_s_; }
  double cv() const override { return 1.0; }

 private:
  double mean_gap_s_;
};

// Gamma renewal process: gaps ~ Gamma(shape = b, scale = 1/(rate*b)), mean 1/rate, CV 1/sqrt(b).
// b < 1 is burstier than Poisson, b > 1 more regular (vLLM `--burstiness`).
class GammaArrivals final : public ArrivalProcess {
 public:
  GammaArrivals(double rate_per_s, double burstiness);  // REQUIRES: 0 < rate, b < inf
  double next_gap_s(RngStream& rng) const override { return rng.gamma(shape_, scale_s_); }
  double mean_gap_s() const override { return shape_ * scale_s_; }
  double cv() const override;

 private:
  double shape_;
  double scale_s_;
};

// Deterministic gaps of exactly 1/rate (`--arrival-process constant`, servesim's own flag, and
// vLLM's `--burstiness inf`). Draws nothing from the stream.
class ConstantArrivals final : public ArrivalProcess {
 public:
  explicit ConstantArrivals(double rate_per_s);  // REQUIRES: 0 < rate < inf
  double next_gap_s(RngStream&) const override { return gap_s_; }
  double mean_gap_s() const override { return gap_s_; }
  double cv() const override { return 0.0; }

 private:
  double gap_s_;
};

// Picks the process for the flags: "constant" or burstiness == inf -> ConstantArrivals;
// "poisson" with burstiness == 1 -> PoissonArrivals; "poisson" otherwise -> GammaArrivals.
// REQUIRES: finite rate > 0, burstiness > 0, process in {"poisson", "constant"} (validated by
// workloads::validate; violations throw ConfigError here too).
std::unique_ptr<ArrivalProcess> make_arrival_process(double rate_per_s, double burstiness,
                                                     std::string_view process);

// The arrival times of n requests as `vllm bench serve` computes them (see the file comment),
// handed out one at a time so that a million requests need no array.
//
// The rescale needs the sum of all n gaps before the first arrival is known. Instead of storing
// the n cumulative delays as vLLM does, the constructor draws all gaps once from a fresh
// RngStream(seed, "arrivals") and keeps only their sum; next_s() then redraws the same gaps from a
// second fresh stream with the same seed. Both passes add the gaps in the same order as vLLM's
// cumulation, so the times are bit-identical to the stored-array version; memory is O(1) at the
// cost of drawing every gap twice.
//
// Special cases (as in get_request): rate == inf -> every arrival at 0; constant process ->
// arrival i (0-based) at (i + 1) / rate, computed directly (vLLM's cumulate-and-rescale gives the
// same values up to rounding in the last bit).
// Invariants: times are nondecreasing; the n-th (last) time is n / rate (to rounding) when the
// rate is finite; the first time is > 0 unless rate == inf.
class ArrivalSequence {
 public:
  // REQUIRES: n >= 1; rate > 0 (may be +inf); burstiness > 0 (may be +inf); process valid.
  // `rescale` false: older benchmark_serving.py's get_request — the first request at t = 0, then
  // request i at the sum of the first i raw gaps (no rescale; the last lands near, not at, n/rate).
  ArrivalSequence(int64_t n, double rate_per_s, double burstiness, std::string_view process,
                  uint64_t seed, bool rescale = true);

  int64_t size() const { return n_; }
  // Arrival time in seconds of the next request. REQUIRES: called at most size() times.
  double next_s();
  // The rescale factor (n / rate) / (sum of raw gaps); 1 for constant, 0 for rate == inf.
  double normalize_factor() const { return factor_; }

 private:
  enum class Mode { kAllAtZero, kConstant, kRandom };
  int64_t n_;
  int64_t issued_ = 0;
  Mode mode_;
  double rate_per_s_;
  std::unique_ptr<ArrivalProcess> process_;
  RngStream rng_;            // second pass: redraws the gaps the constructor summed
  double cumulative_s_ = 0;  // running sum of raw gaps (vLLM's delay_ts[i] before rescaling)
  double factor_ = 1.0;
  bool rescale_ = true;
};

}  // namespace servesim::workloads

#endif  // SERVESIM_WORKLOADS_ARRIVAL_PROCESS_H_
