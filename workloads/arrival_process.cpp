#include "workloads/arrival_process.h"

#include <cmath>
#include <limits>
#include <string>

#include "sim/base/error.h"
#include "workloads/flag_format.h"

namespace servesim::workloads {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void require_finite_rate(double rate_per_s) {
  if (!(rate_per_s > 0.0) || !std::isfinite(rate_per_s)) {
    throw ConfigError("--request-rate: " + detail::format_flag_value(rate_per_s) +
                      " is out of range; an arrival process needs a finite rate > 0");
  }
}

}  // namespace

PoissonArrivals::PoissonArrivals(double rate_per_s) : mean_gap_s_(1.0 / rate_per_s) {
  require_finite_rate(rate_per_s);
}

// vLLM get_request: theta = 1.0 / (current_request_rate * burstiness);
// np.random.gamma(shape=burstiness, scale=theta).
GammaArrivals::GammaArrivals(double rate_per_s, double burstiness)
    : shape_(burstiness), scale_s_(1.0 / (rate_per_s * burstiness)) {
  require_finite_rate(rate_per_s);
  if (!(burstiness > 0.0) || !std::isfinite(burstiness)) {
    throw ConfigError("--burstiness: " + detail::format_flag_value(burstiness) +
                      " is out of range; a gamma arrival process needs a finite shape > 0");
  }
}

double GammaArrivals::cv() const { return 1.0 / std::sqrt(shape_); }

ConstantArrivals::ConstantArrivals(double rate_per_s) : gap_s_(1.0 / rate_per_s) {
  require_finite_rate(rate_per_s);
}

std::unique_ptr<ArrivalProcess> make_arrival_process(double rate_per_s, double burstiness,
                                                     std::string_view process) {
  if (process == "constant" || burstiness == kInf) {
    return std::make_unique<ConstantArrivals>(rate_per_s);
  }
  if (process != "poisson") {
    throw ConfigError("--arrival-process: \"" + std::string(process) +
                      "\" is not supported; expected poisson or constant");
  }
  // burstiness 1 is the exponential distribution; the dedicated sampler is exact and cheaper
  // than the gamma rejection loop (numpy's gamma also special-cases shape 1).
  if (burstiness == 1.0) {
    return std::make_unique<PoissonArrivals>(rate_per_s);
  }
  return std::make_unique<GammaArrivals>(rate_per_s, burstiness);
}

ArrivalSequence::ArrivalSequence(int64_t n, double rate_per_s, double burstiness,
                                 std::string_view process, uint64_t seed, bool rescale)
    : n_(n), rate_per_s_(rate_per_s), rng_(seed, kArrivalStreamName), rescale_(rescale) {
  SERVESIM_CHECK(n >= 1, "an arrival sequence needs at least one request");
  if (rate_per_s == kInf) {
    // get_request: delay 0 for every request; delay_ts[-1] == 0, so no rescale.
    mode_ = Mode::kAllAtZero;
    factor_ = 0.0;
    return;
  }
  process_ = make_arrival_process(rate_per_s, burstiness, process);
  if (process_->cv() == 0.0) {
    mode_ = Mode::kConstant;
    return;
  }
  mode_ = Mode::kRandom;
  if (!rescale) return;  // factor_ stays 1: the raw cumulated gaps
  // First pass: the sum of all n raw gaps (vLLM's delay_ts[-1] after cumulation), from a stream
  // identical to rng_; rng_ itself is left untouched for the second pass in next_s().
  RngStream first_pass(seed, kArrivalStreamName);
  double total_s = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    total_s += process_->next_gap_s(first_pass);
  }
  // target_total_delay_s = total_requests / request_rate; normalize_factor = target / delay_ts[-1].
  // A zero sum (impossible in practice: every gap would have to be exactly 0) leaves the
  // times unscaled, as vLLM's `delay_ts[-1] != 0` guard does.
  if (total_s != 0.0) {
    factor_ = (static_cast<double>(n) / rate_per_s) / total_s;
  }
}

double ArrivalSequence::next_s() {
  SERVESIM_CHECK(issued_ < n_, "ArrivalSequence::next_s called more than size() times");
  ++issued_;
  switch (mode_) {
    case Mode::kAllAtZero:
      return 0.0;
    case Mode::kConstant:
      return static_cast<double>(rescale_ ? issued_ : issued_ - 1) / rate_per_s_;
    case Mode::kRandom:
      if (!rescale_) {
        // Older client: send, then sleep one gap; request i waits for the first i gaps.
        const double t = cumulative_s_;
        cumulative_s_ += process_->next_gap_s(rng_);
        return t;
      }
      cumulative_s_ += process_->next_gap_s(rng_);
      return cumulative_s_ * factor_;
  }
  return 0.0;  // unreachable
}

}  // namespace servesim::workloads
