// LoraWorkload: gives the requests of another workload the LoRA adapter each names
// (RequestSpec::lora_adapter), drawn from a popularity law over --num-lora-adapters adapters:
//   zipf     P(adapter k) = (k + 1)^−s / Σ_{j=1..N} j^−s, k = 0..N−1 (s = --lora-zipf-exponent;
//            adapter 0 is the most popular; s = 0 is uniform)
//   uniform  P(adapter k) = 1/N (what `vllm bench serve --lora-modules` does: random.choice)
// A share --lora-request-fraction of the requests names an adapter, the others the base model.
// Each request takes two draws of its own stream ("lora-adapters", seeded by --seed) in the order
// requests are handed out, whatever the fraction, so changing the fraction or the law never
// reshuffles the lengths or arrivals (they draw from their own streams) or the other requests'
// draws.
#ifndef SERVESIM_WORKLOADS_LORA_WORKLOAD_H_
#define SERVESIM_WORKLOADS_LORA_WORKLOAD_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/base/rng.h"
#include "workloads/workload.h"

namespace servesim::workloads {

// The popularity law: adapter k's probability and the inverse of the cumulative distribution.
class AdapterPopularity {
 public:
  // REQUIRES: adapters >= 1, law "zipf" or "uniform", exponent finite and >= 0.
  AdapterPopularity(int32_t adapters, const std::string& law, double exponent);
  double probability(int32_t k) const;
  // The adapter whose cumulative interval holds u ∈ [0, 1).
  int32_t draw(double u) const;

 private:
  std::vector<double> cdf_;  // cdf_[k] = P(adapter <= k); cdf_.back() = 1
};

class LoraWorkload final : public Workload {
 public:
  LoraWorkload(std::unique_ptr<Workload> inner, const WorkloadConfig& config);
  std::optional<RequestSpec> next() override;
  int64_t size() const override { return inner_->size(); }
  std::optional<RequestSpec> on_done(int64_t id, SimTime sent, SimTime now) override;
  std::vector<std::string> class_names() const override { return inner_->class_names(); }

 private:
  void assign(RequestSpec& spec);

  std::unique_ptr<Workload> inner_;
  AdapterPopularity popularity_;
  double fraction_;
  RngStream rng_;
};

// Checks the --num-lora-adapters, --lora-popularity, --lora-zipf-exponent and
// --lora-request-fraction flags; throws ConfigError naming the flag, the value and what was
// expected. Adapters with --multi-turn or a trace (whose adapters come from its lora_adapter
// column) are refused.
void validate_lora_workload(const WorkloadConfig& config);

}  // namespace servesim::workloads

#endif  // SERVESIM_WORKLOADS_LORA_WORKLOAD_H_
