// Speculative decoding as --vary knobs: num-speculative-tokens (K; 0 turns it off),
// spec-acceptance-rate (a constant per-position conditional acceptance rate) and
// spec-acceptance-length (vLLM's mean acceptance length), each a key inside
// --speculative-config's JSON rather than a run field of its own.
//
// Contract of vary_spec_decode(base, knobs), `knobs` holding the VaryPoint settings whose knob is
// within "speculative_config" (vary.h):
//  - num_speculative_tokens 0 → speculative decoding off (SpecDecode{}), whatever else is given.
//  - Otherwise the method, drafter and seed are the base's (--speculative-config, required: no
//    method is assumed), K is the knob's or the base's, and the acceptance is
//      spec_acceptance_rate a  → acceptance_rates = K × a;
//      spec_acceptance_length L → acceptance_length = L (1 ≤ L ≤ K + 1, checked by resolve);
//      neither → the base's carried to K: its per-position rates, of which the first K are kept
//      (more than the base lists is refused), or, for a base acceptance_length over K0 drafts,
//      the constant rate a with 1 + E[A] = L over K0 (spec_decode.h) repeated K times — the
//      drafter's per-position quality is held, not its mean length, which grows with K.
//  - Both acceptance knobs at once, a K < 0, a rate outside [0, 1], or no base method throw
//    ConfigError naming the knob and value.
#ifndef SERVESIM_SIM_PLANNING_VARY_SPEC_H_
#define SERVESIM_SIM_PLANNING_VARY_SPEC_H_

#include <nlohmann/json.hpp>

#include "sim/replica/spec_decode.h"

namespace servesim::planning {

// The knob keys within --speculative-config (VaryPoint settings keys).
inline constexpr const char* kSpecTokensKey = "num_speculative_tokens";
inline constexpr const char* kSpecRateKey = "spec_acceptance_rate";
inline constexpr const char* kSpecLengthKey = "spec_acceptance_length";

sim::SpecDecode vary_spec_decode(const sim::SpecDecode& base, const nlohmann::json& knobs);

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_VARY_SPEC_H_
