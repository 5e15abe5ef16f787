// The cost model's calibrated terms: one typed field per term, and the one field table through
// which every term is read from and written to a profile file, bounded and fitted.
//
// Contract:
//  - A term that is absent (std::nullopt) keeps the GPU catalog's default (the "uncalibrated"
//    model); code reads a term as a member (`terms.client_ttft_overhead_s`), so a misspelt term
//    does not compile.
//  - term_fields() lists every term once, in the order profile files write them. The name is the
//    JSON key under "parameters"; [lo, hi] is the physically meaningful range (a value outside is
//    a broken file, not a fit); `fit` says how the serving fit (serving_fit.h) moves the term, and
//    is absent for a term that fit cannot move.
//  - find_term(name) is null for an unknown name; callers refuse it naming known_term_names().
#ifndef SERVESIM_SIM_CALIBRATION_CALIBRATION_TERMS_H_
#define SERVESIM_SIM_CALIBRATION_CALIBRATION_TERMS_H_

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace servesim::calibration {

struct FittedValue {
  double value = 0;
  double std_error = 0;  // 0 when not estimated
};

struct CalibrationTerms {
  // GEMM and collective terms (models/roofline_cost_model.h), fitted on kernel tables.
  std::optional<FittedValue> compute_efficiency;
  std::optional<FittedValue> memory_efficiency;
  std::optional<FittedValue> compute_ramp_tokens;
  std::optional<FittedValue> op_latency_s;
  // Serial step costs, never overlapped (their meaning before the host terms existed, so an older
  // profile predicts what it predicted then).
  std::optional<FittedValue> step_overhead_s;
  std::optional<FittedValue> per_seq_overhead_s;
  std::optional<FittedValue> per_prefill_token_overhead_s;  // per prompt token computed in the step
  std::optional<FittedValue> tp_broadcast_overhead_s;  // per step and TP worker beyond the first
  std::optional<FittedValue> link_latency_s;
  std::optional<FittedValue> link_bandwidth_bytes_per_s;
  std::optional<FittedValue> client_ttft_overhead_s;  // the benchmark client's own TTFT share
  // Host work of a step with a cause, overlapped under async scheduling.
  std::optional<FittedValue> host_step_s;
  std::optional<FittedValue> host_per_seq_s;
  std::optional<FittedValue> host_per_prefill_token_s;
  std::optional<FittedValue> host_per_sampled_token_s;
  // The API-server queue (sim/cluster/front_end.h).
  std::optional<FittedValue> frontend_per_request_s;
  std::optional<FittedValue> frontend_per_prompt_token_s;
  std::optional<FittedValue> frontend_per_output_token_s;

  bool empty() const;  // no term set
};

// How the serving fit moves a term: fitted value = x · scale, x bounded by [lo, hi] / scale,
// starting at `start` when the base profile has no value.
struct FitSpec {
  double scale;
  double lo, hi;
  double start;
};

struct TermField {
  std::string_view name;  // the profile's key
  std::optional<FittedValue> CalibrationTerms::*member;
  std::string_view unit;  // "s", "bytes/s", "tokens", "fraction"
  double lo, hi;          // accepted range of a profile's value
  std::optional<FitSpec> fit;
};

std::span<const TermField> term_fields();
const TermField* find_term(std::string_view name);
// "compute_efficiency, memory_efficiency, ...": every term, in table order (for errors).
std::string known_term_names();

// The name of a member (`term_name(&CalibrationTerms::op_latency_s)` = "op_latency_s").
std::string_view term_name(std::optional<FittedValue> CalibrationTerms::*member);

// The term called `name` (a name from input, e.g. calibrate --fit, checked against the table
// first). REQUIRES: find_term(name) != nullptr.
std::optional<FittedValue>& term_by_name(CalibrationTerms& terms, std::string_view name);
const std::optional<FittedValue>& term_by_name(const CalibrationTerms& terms,
                                               std::string_view name);

// The value of a term, or `fallback` when it is absent.
inline double value_or(const std::optional<FittedValue>& term, double fallback) {
  return term ? term->value : fallback;
}

}  // namespace servesim::calibration

#endif  // SERVESIM_SIM_CALIBRATION_CALIBRATION_TERMS_H_
