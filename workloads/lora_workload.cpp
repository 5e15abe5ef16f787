#include "workloads/lora_workload.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "sim/base/error.h"
#include "workloads/flag_format.h"

namespace servesim::workloads {

namespace {
// Adapter ids stay within the 20 bits the replica's prefix keys give them
// (sim/replica/replica.cpp).
constexpr int32_t kMaxAdapters = (1 << 20) - 1;
// Prefix groups stay within the replica's 19 bits for them, with adapters.
constexpr int64_t kMaxPrefixGroups = int64_t{1} << 19;
}  // namespace

AdapterPopularity::AdapterPopularity(int32_t adapters, const std::string& law, double exponent) {
  cdf_.resize(static_cast<size_t>(adapters));
  double sum = 0.0;
  for (int32_t k = 0; k < adapters; ++k) {
    sum += law == "uniform" ? 1.0 : std::pow(static_cast<double>(k + 1), -exponent);
    cdf_[static_cast<size_t>(k)] = sum;
  }
  for (double& c : cdf_) c /= sum;
  cdf_.back() = 1.0;
}

double AdapterPopularity::probability(int32_t k) const {
  const auto i = static_cast<size_t>(k);
  return cdf_[i] - (i == 0 ? 0.0 : cdf_[i - 1]);
}

int32_t AdapterPopularity::draw(double u) const {
  const auto it = std::upper_bound(cdf_.begin(), cdf_.end(), u);
  const auto k = static_cast<int32_t>(it - cdf_.begin());
  return std::min<int32_t>(k, static_cast<int32_t>(cdf_.size()) - 1);
}

LoraWorkload::LoraWorkload(std::unique_ptr<Workload> inner, const WorkloadConfig& config)
    : inner_(std::move(inner)),
      popularity_(config.num_lora_adapters, config.lora_popularity, config.lora_zipf_exponent),
      fraction_(config.lora_request_fraction),
      rng_(config.seed, "lora-adapters") {}

void LoraWorkload::assign(RequestSpec& spec) {
  const double share = rng_.uniform01();
  const double u = rng_.uniform01();
  spec.lora_adapter = share < fraction_ ? popularity_.draw(u) : -1;
}

std::optional<RequestSpec> LoraWorkload::next() {
  std::optional<RequestSpec> spec = inner_->next();
  if (spec) assign(*spec);
  return spec;
}

std::optional<RequestSpec> LoraWorkload::on_done(int64_t id, SimTime sent, SimTime now) {
  std::optional<RequestSpec> spec = inner_->on_done(id, sent, now);
  if (spec) assign(*spec);
  return spec;
}

void validate_lora_workload(const WorkloadConfig& c) {
  using detail::format_flag_value;
  const WorkloadConfig d;
  if (c.num_lora_adapters == 0) {
    const char* flag = c.lora_popularity != d.lora_popularity         ? "--lora-popularity"
                       : c.lora_zipf_exponent != d.lora_zipf_exponent ? "--lora-zipf-exponent"
                       : c.lora_request_fraction != d.lora_request_fraction
                           ? "--lora-request-fraction"
                           : nullptr;
    if (flag != nullptr) {
      throw ConfigError(std::string(flag) +
                        " is set but --num-lora-adapters is 0; expected --num-lora-adapters N "
                        "(the adapters the requests name)");
    }
    return;
  }
  if (c.num_lora_adapters < 0 || c.num_lora_adapters > kMaxAdapters) {
    throw ConfigError("--num-lora-adapters: " + std::to_string(c.num_lora_adapters) +
                      " is out of range; expected an integer from 0 to " +
                      std::to_string(kMaxAdapters));
  }
  if (c.lora_popularity != "zipf" && c.lora_popularity != "uniform") {
    throw ConfigError("--lora-popularity: \"" + c.lora_popularity +
                      "\" is not a popularity law; expected zipf or uniform");
  }
  if (!(std::isfinite(c.lora_zipf_exponent) && c.lora_zipf_exponent >= 0)) {
    throw ConfigError("--lora-zipf-exponent: " + format_flag_value(c.lora_zipf_exponent) +
                      " is out of range; expected a number >= 0 (0 = uniform)");
  }
  if (!(c.lora_request_fraction >= 0 && c.lora_request_fraction <= 1)) {
    throw ConfigError("--lora-request-fraction: " + format_flag_value(c.lora_request_fraction) +
                      " is out of range; expected a share in [0, 1]");
  }
  if ((c.dataset_name == "generated-shared-prefix" && c.gsp_num_groups > kMaxPrefixGroups) ||
      (c.dataset_name == "prefix_repetition" &&
       c.prefix_repetition_num_prefixes > kMaxPrefixGroups)) {
    throw ConfigError("--num-lora-adapters: " + std::to_string(c.num_lora_adapters) +
                      " with more than " + std::to_string(kMaxPrefixGroups) +
                      " prefix groups is not modelled; expected fewer groups");
  }
  if (c.multi_turn) {
    throw ConfigError("--num-lora-adapters: " + std::to_string(c.num_lora_adapters) +
                      " with --multi-turn is not modelled (one adapter per conversation); "
                      "expected --num-lora-adapters 0 with --multi-turn");
  }
  if (c.dataset_name == "trace") {
    throw ConfigError("--num-lora-adapters: " + std::to_string(c.num_lora_adapters) +
                      " with --dataset-name trace; expected 0: a trace names its requests' "
                      "adapters in its lora_adapter column");
  }
}

}  // namespace servesim::workloads
