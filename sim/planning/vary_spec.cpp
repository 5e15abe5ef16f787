#include "sim/planning/vary_spec.h"

#include <string>
#include <vector>

#include "sim/base/error.h"
#include "sim/replica/speculative_config.h"

namespace servesim::planning {

using nlohmann::json;

sim::SpecDecode vary_spec_decode(const sim::SpecDecode& base, const json& knobs) {
  const bool has_k = knobs.contains(kSpecTokensKey);
  const bool has_rate = knobs.contains(kSpecRateKey);
  const bool has_length = knobs.contains(kSpecLengthKey);
  auto text = [&](const char* key) { return knobs.at(key).dump(); };
  auto flag = [](const char* key) {
    std::string f = key;
    for (char& c : f) c = c == '_' ? '-' : c;
    return "--vary " + f;
  };
  const int k = has_k ? knobs.at(kSpecTokensKey).get<int>() : base.num_speculative_tokens;
  if (has_k && k < 0) {
    throw ConfigError(flag(kSpecTokensKey) + ": '" + text(kSpecTokensKey) +
                      "' is invalid; expected an integer >= 0 (0 turns speculative decoding off)");
  }
  if (has_k && k == 0) return sim::SpecDecode{};
  if (has_rate && has_length) {
    throw ConfigError(
        "--vary spec-acceptance-rate and spec-acceptance-length: give one of the "
        "two; each sets the whole acceptance");
  }
  const char* first = has_k ? kSpecTokensKey : (has_rate ? kSpecRateKey : kSpecLengthKey);
  if (base.method.empty()) {
    throw ConfigError(flag(first) + "=" + text(first) +
                      ": needs --speculative-config for the method, the drafter and, unless "
                      "varied too, the acceptance (e.g. '{\"method\": \"eagle3\", \"model\": "
                      "\"...\", \"num_speculative_tokens\": 2, \"acceptance_length\": 2.2}')");
  }
  json j = sim::speculative_config_json(base);
  j.erase("acceptance_rates");
  j.erase("acceptance_length");
  if (k > 0) j["num_speculative_tokens"] = k;
  if (has_rate) {
    const double a = knobs.at(kSpecRateKey).get<double>();
    if (!(a >= 0.0 && a <= 1.0)) {
      throw ConfigError(flag(kSpecRateKey) + ": '" + text(kSpecRateKey) +
                        "' is invalid; expected a per-position acceptance rate in [0, 1]");
    }
    if (k <= 0) {
      throw ConfigError(flag(kSpecRateKey) +
                        ": the number of drafts is not known; give num_speculative_tokens in "
                        "--speculative-config or --vary num-speculative-tokens");
    }
    j["acceptance_rates"] = std::vector<double>(static_cast<size_t>(k), a);
  } else if (has_length) {
    j["acceptance_length"] = knobs.at(kSpecLengthKey).get<double>();
  } else if (!base.acceptance_rates.empty() && base.acceptance_length <= 0) {
    // Per-position rates: the first K (position j's rate does not depend on how many follow).
    if (static_cast<size_t>(k) > base.acceptance_rates.size()) {
      throw ConfigError(flag(kSpecTokensKey) + "=" + std::to_string(k) +
                        ": --speculative-config lists " +
                        std::to_string(base.acceptance_rates.size()) +
                        " acceptance_rates; list one per draft position up to the largest K, or "
                        "--vary spec-acceptance-rate");
    }
    j["acceptance_rates"] =
        std::vector<double>(base.acceptance_rates.begin(), base.acceptance_rates.begin() + k);
  } else {
    // A mean acceptance length over the base's K0 drafts: its constant per-position rate.
    const int k0 = base.num_speculative_tokens;
    if (k0 <= 0) {
      throw ConfigError(flag(first) +
                        ": --speculative-config's acceptance_length has no number of drafts to "
                        "convert from; give num_speculative_tokens there, or --vary "
                        "spec-acceptance-rate");
    }
    if (base.acceptance_length > k0 + 1) {
      throw ConfigError("--speculative-config: acceptance_length " +
                        json(base.acceptance_length).dump() +
                        " is above K + 1 = " + std::to_string(k0 + 1));
    }
    const double a = sim::constant_rate_for_acceptance_length(base.acceptance_length, k0);
    j["acceptance_rates"] = std::vector<double>(static_cast<size_t>(k), a);
  }
  return sim::parse_speculative_config(j, flag(first));
}

}  // namespace servesim::planning
