#include "sim/planning/pd_search.h"

#include "sim/base/error.h"

namespace servesim::planning {

std::vector<PdRatio> parse_pd_ratios(const std::string& flag,
                                     const std::vector<std::string>& items) {
  std::vector<std::string> texts;
  for (const std::string& raw : items) {
    std::string item;
    for (char c : raw + ",") {
      if (c == ',' || c == ' ') {
        if (!item.empty()) texts.push_back(item);
        item.clear();
      } else {
        item += c;
      }
    }
  }
  const std::string expected = "expected P:D pairs of integers in [1, 64] such as 1:1,1:2,2:3";
  if (texts.empty()) throw ConfigError(flag + ": no ratio; " + expected);
  std::vector<PdRatio> out;
  for (const std::string& t : texts) {
    auto bad = [&](const std::string& why) {
      return ConfigError(flag + ": '" + t + "' is invalid: " + why + "; " + expected);
    };
    const size_t colon = t.find(':');
    if (colon == std::string::npos) throw bad("no ':'");
    auto part = [&](const std::string& s, const char* what) {
      size_t used = 0;
      int v = 0;
      try {
        v = std::stoi(s, &used);
      } catch (const std::exception&) {
        throw bad(std::string(what) + " '" + s + "' is not an integer");
      }
      if (used != s.size()) throw bad(std::string(what) + " '" + s + "' is not an integer");
      if (v < 1 || v > 64) throw bad(std::string(what) + " " + s + " is outside [1, 64]");
      return v;
    };
    PdRatio r{part(t.substr(0, colon), "P"), part(t.substr(colon + 1), "D")};
    for (const PdRatio& seen : out) {
      // Equal ratios (1:1 and 2:2) are one candidate: plan counts whole units.
      if (seen.prefill * r.decode == seen.decode * r.prefill) {
        throw bad("the ratio " + std::to_string(seen.prefill) + ":" + std::to_string(seen.decode) +
                  " is already given (plan scales a unit by " +
                  "whole units, so equal ratios are the same candidate)");
      }
    }
    out.push_back(r);
  }
  return out;
}

sim::SimulationConfig aggregated_of(const sim::SimulationConfig& config) {
  sim::SimulationConfig c = config;
  const sim::SimulationConfig none;
  c.prefill_replicas = none.prefill_replicas;
  c.decode_replicas = none.decode_replicas;
  c.prefill_tensor_parallel_size = none.prefill_tensor_parallel_size;
  c.decode_tensor_parallel_size = none.decode_tensor_parallel_size;
  c.prefill_gpu = none.prefill_gpu;
  c.decode_gpu = none.decode_gpu;
  c.kv_transfer_link = none.kv_transfer_link;
  c.pd_local_prefill_threshold = none.pd_local_prefill_threshold;
  return c;
}

sim::SimulationConfig pd_unit_of(const sim::SimulationConfig& config, const PdRatio& ratio) {
  sim::SimulationConfig c = config;
  c.prefill_replicas = ratio.prefill;
  c.decode_replicas = ratio.decode;
  return c;
}

}  // namespace servesim::planning
