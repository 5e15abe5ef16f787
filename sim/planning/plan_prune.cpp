#include "sim/planning/plan_prune.h"

#include <algorithm>
#include <iterator>

#include "sim/base/number_format.h"
#include "sim/planning/error_band.h"

namespace servesim::planning {
namespace {

// A pruned candidate as every run reports it: its bound and the saturation probes it rests on,
// nothing that depends on how far its evaluation got before it was stopped. `band`: the combined
// band it lies beyond.
CandidateResult pruned_record(const CandidateResult& r, const CandidateResult& cheapest,
                              double band, const PlanOptions& options) {
  CandidateResult p;
  p.candidate = r.candidate;
  p.gpu = r.gpu;
  p.catalog_model = r.catalog_model;
  p.tensor_parallel_size = r.tensor_parallel_size;
  p.pipeline_parallel_size = r.pipeline_parallel_size;
  p.status = CandidateStatus::kPruned;
  p.gpus_per_replica = r.gpus_per_replica;
  p.price_per_gpu_hour = r.price_per_gpu_hour;
  p.capacity.saturation_rps = r.capacity.saturation_rps;
  p.min_stable_replicas = r.bound_gpus / r.gpus_per_replica;
  p.bound_gpus = r.bound_gpus;
  p.bound_cost_per_hour = r.bound_cost_per_hour;
  p.simulations = options.seeds;
  const double load = options.target_qps * (1 + options.headroom);
  auto count = [](int k, const char* what) {
    return std::to_string(k) + " " + what + (k == 1 ? "" : "s");
  };
  p.reason = "needs at least " + count(p.bound_gpus, "GPU") + ", $" +
             fixed_number(p.bound_cost_per_hour, 2) + "/h (" +
             count(p.min_stable_replicas, "replica") + " of " + count(p.gpus_per_replica, "GPU") +
             ": " + short_number(load) + " req/s over one replica's saturation throughput of " +
             fixed_number(r.capacity.saturation_rps, 2) + " req/s), " +
             fixed_number(p.bound_cost_per_hour / cheapest.cost_per_hour, 2) +
             "x the cheapest verified (" + cheapest.candidate.label + ", $" +
             fixed_number(cheapest.cost_per_hour, 2) +
             "/h): beyond any tie with it (combined band " + percent_text(band) +
             "), so not verified (--no-prune verifies it)";
  return p;
}

}  // namespace

void prune_results(const PlanOptions& options, std::vector<CandidateResult>* results) {
  PruneRule rule;
  rule.on = true;
  std::optional<size_t> cheapest;
  for (size_t i = 0; i < results->size(); ++i) {
    const CandidateResult& r = (*results)[i];
    if (r.status == CandidateStatus::kSkipped) continue;
    rule.on = rule.on && r.price_per_gpu_hour > 0;
    if (r.status == CandidateStatus::kOk &&
        (!cheapest || r.cost_per_hour < (*results)[*cheapest].cost_per_hour)) {
      cheapest = i;
    }
  }
  if (!cheapest) return;  // nothing verified: nothing was stopped either
  const CandidateResult best = (*results)[*cheapest];
  // The cheapest's own cost band; of several at that cost (the ranking then takes the fewer GPUs)
  // the widest, so that no tie with whichever ranks first is missed.
  double best_band = 0;
  for (const CandidateResult& r : *results) {
    if (r.status == CandidateStatus::kOk && r.cost_per_hour == best.cost_per_hour) {
      best_band = std::max(
          best_band, cost_band(r.basis.label, r.capacity.binding).value_or(widest_cost_band("")));
    }
  }
  for (CandidateResult& r : *results) {
    const double band = widest_cost_band(r.basis.label);
    const bool stopped = r.status == CandidateStatus::kPruned;
    const bool excluded = r.status != CandidateStatus::kSkipped && r.bound_gpus > 0 &&
                          rule.excludes(r.bound_cost_per_hour, band, best.cost_per_hour, best_band);
    if (stopped || excluded) r = pruned_record(r, best, combined_band(best_band, band), options);
  }
}

bool PruneRule::excludes(double bound_cost, double band, double best_cost, double best_band) const {
  return on && best_cost > 0 &&
         bound_cost >= best_cost * (1 + combined_band(best_band, band)) * (1 + 1e-9);
}

Incumbent::Incumbent(std::vector<CostAndBand> bounds) : bounds_(std::move(bounds)) {
  std::sort(bounds_.begin(), bounds_.end(),
            [](const CostAndBand& a, const CostAndBand& b) { return a.cost < b.cost; });
  for (size_t i = 1; i < bounds_.size(); ++i) {
    bounds_[i].band = std::max(bounds_[i].band, bounds_[i - 1].band);
  }
}

void Incumbent::offer(double verified_cost) {
  std::lock_guard<std::mutex> lock(mutex_);
  best_ = best_ ? std::min(*best_, verified_cost) : verified_cost;
}

std::optional<CostAndBand> Incumbent::best() const {
  std::optional<double> cost;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cost = best_;
  }
  if (!cost) return std::nullopt;
  // The widest band among the bounds at most `cost` (bounds_ is sorted, its bands running maxima).
  const auto it = std::upper_bound(bounds_.begin(), bounds_.end(), *cost,
                                   [](double c, const CostAndBand& b) { return c < b.cost; });
  if (it == bounds_.begin()) return std::nullopt;  // no bound that low: nothing to compare
  return CostAndBand{*cost, std::prev(it)->band};
}

}  // namespace servesim::planning
