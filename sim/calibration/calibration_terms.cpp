#include "sim/calibration/calibration_terms.h"

#include <array>

#include "sim/base/error.h"

namespace servesim::calibration {
namespace {

using T = CalibrationTerms;

// The order is the order profile files are written in. Fit scales put a typical value near 1
// (ms per step, µs per sequence or token); fit bounds are tighter than the accepted range where a
// fit beyond them has stopped describing a serving engine.
constexpr std::array<TermField, 18> kFields = {{
    {"compute_efficiency", &T::compute_efficiency, "fraction", 1e-3, 1.0,
     FitSpec{1, 0.05, 1.0, 0.7}},
    {"memory_efficiency", &T::memory_efficiency, "fraction", 1e-3, 1.0, FitSpec{1, 0.05, 1.0, 0.8}},
    {"compute_ramp_tokens", &T::compute_ramp_tokens, "tokens", 0, 1e5, FitSpec{100, 0, 4096, 128}},
    {"op_latency_s", &T::op_latency_s, "s", 0, 1e-2, FitSpec{1e-3, 0, 1e-4, 6e-6}},
    {"step_overhead_s", &T::step_overhead_s, "s", 0, 1.0, FitSpec{1e-3, 0, 0.05, 1e-3}},
    {"per_seq_overhead_s", &T::per_seq_overhead_s, "s", 0, 1e-1, FitSpec{1e-3, 0, 1e-3, 1e-5}},
    {"per_prefill_token_overhead_s", &T::per_prefill_token_overhead_s, "s", 0, 1e-3,
     FitSpec{1e-6, 0, 1e-4, 1e-6}},
    {"tp_broadcast_overhead_s", &T::tp_broadcast_overhead_s, "s", 0, 0.1,
     FitSpec{1e-3, 0, 0.02, 1e-4}},
    {"link_latency_s", &T::link_latency_s, "s", 0, 1e-2, FitSpec{1e-3, 0, 1e-4, 5e-6}},
    {"link_bandwidth_bytes_per_s", &T::link_bandwidth_bytes_per_s, "bytes/s", 1e6, 1e14,
     std::nullopt},
    {"client_ttft_overhead_s", &T::client_ttft_overhead_s, "s", 0, 10.0,
     FitSpec{1e-3, 0, 2.0, 5e-3}},
    {"host_step_s", &T::host_step_s, "s", 0, 1.0, FitSpec{1e-3, 0, 0.05, 1e-3}},
    {"host_per_seq_s", &T::host_per_seq_s, "s", 0, 1e-2, FitSpec{1e-6, 0, 1e-3, 1e-5}},
    {"host_per_prefill_token_s", &T::host_per_prefill_token_s, "s", 0, 1e-3,
     FitSpec{1e-6, 0, 1e-4, 1e-7}},
    {"host_per_sampled_token_s", &T::host_per_sampled_token_s, "s", 0, 1e-2,
     FitSpec{1e-6, 0, 1e-3, 1e-5}},
    {"frontend_per_request_s", &T::frontend_per_request_s, "s", 0, 1.0,
     FitSpec{1e-3, 0, 0.5, 1e-3}},
    {"frontend_per_prompt_token_s", &T::frontend_per_prompt_token_s, "s", 0, 1e-3,
     FitSpec{1e-6, 0, 1e-4, 1e-6}},
    {"frontend_per_output_token_s", &T::frontend_per_output_token_s, "s", 0, 1e-3,
     FitSpec{1e-6, 0, 1e-4, 1e-6}},
}};

// Every member appears once: sizeof(CalibrationTerms) counts them.
static_assert(sizeof(CalibrationTerms) == kFields.size() * sizeof(std::optional<FittedValue>),
              "a CalibrationTerms member is missing from the field table (or one too many)");

}  // namespace

bool CalibrationTerms::empty() const {
  for (const TermField& f : kFields) {
    if (this->*f.member) return false;
  }
  return true;
}

std::span<const TermField> term_fields() { return kFields; }

const TermField* find_term(std::string_view name) {
  for (const TermField& f : kFields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::optional<FittedValue>& term_by_name(CalibrationTerms& terms, std::string_view name) {
  const TermField* f = find_term(name);
  SERVESIM_CHECK(f != nullptr, "calibration term '" + std::string(name) + "' is not in the table");
  return terms.*f->member;
}

const std::optional<FittedValue>& term_by_name(const CalibrationTerms& terms,
                                               std::string_view name) {
  return term_by_name(const_cast<CalibrationTerms&>(terms), name);
}

std::string_view term_name(std::optional<FittedValue> CalibrationTerms::*member) {
  for (const TermField& f : kFields) {
    if (f.member == member) return f.name;
  }
  SERVESIM_CHECK(false, "a CalibrationTerms member is missing from the field table");
  return {};
}

std::string known_term_names() {
  std::string out;
  for (const TermField& f : kFields) {
    if (!out.empty()) out += ", ";
    out += f.name;
  }
  return out;
}

}  // namespace servesim::calibration
