// StepCosts: a replica's view of its cost models — the model that times its steps and the
// optional ideal one (its busy-time yardstick), each with its memo (CostModel::make_memo), and
// their decode series by decoder count, made on first use (CostModel::decode_series).
// Neither model is owned; both must outlive the replica.
#ifndef SERVESIM_SIM_REPLICA_STEP_COSTS_H_
#define SERVESIM_SIM_REPLICA_STEP_COSTS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "models/batch_shape.h"
#include "models/cost_model.h"

namespace servesim::sim {

class StepCosts {
 public:
  // `ideal` may be null (then ideal_s() is 0).
  StepCosts(const models::CostModel& cost, const models::CostModel* ideal)
      : cost_(cost),
        ideal_(ideal),
        cost_memo_(cost.make_memo()),
        ideal_memo_(ideal != nullptr ? ideal->make_memo() : nullptr) {}

  bool has_ideal() const { return ideal_ != nullptr; }
  // Speculative decoding's drafter (sim/cluster/drafter.h), run after each step with K draft
  // positions; null: no drafter on the GPU (n-gram's lookup runs on the host). Not owned.
  void set_drafter(const models::CostModel* drafter, int k) {
    drafter_ = drafter;
    draft_positions_ = k;
    drafter_memo_ = drafter != nullptr ? drafter->make_memo() : nullptr;
  }
  // The drafter's GPU time after a step of shape `step` (vLLM's EagleProposer.propose and the
  // draft-model proposer): one forward over every token of the step, then K − 1 forwards of one
  // token for each of the `rows` requests that sampled, whose contexts sum to `rows_ctx` before
  // the first of them. 0 without a drafter.
  double drafter_s(const models::BatchShape& step, int64_t rows, int64_t rows_ctx) {
    if (drafter_ == nullptr || step.empty()) return 0.0;
    double s = drafter_->estimate_memo(step, drafter_memo_.get()).device_s();
    for (int j = 1; j < draft_positions_ && rows > 0; ++j) {
      models::BatchShape d;
      d.decode_seqs = rows;
      d.sampled_seqs = rows;
      d.decode_context_tokens = rows_ctx + rows * j;
      s += drafter_->estimate_memo(d, drafter_memo_.get()).device_s();
    }
    return s;
  }
  // The model's sliding window (CostModel::sliding_window; 0: no sliding-window layers).
  int64_t sliding_window() const { return cost_.sliding_window(); }
  models::StepCost estimate(const models::BatchShape& shape) {
    return cost_.estimate_memo(shape, cost_memo_.get());
  }
  // The ideal model's step time for `shape`; 0 without an ideal model.
  double ideal_s(const models::BatchShape& shape) {
    return ideal_ != nullptr ? ideal_->estimate_memo(shape, ideal_memo_.get()).total_s : 0.0;
  }
  // The decode series of `n` decoders for the model (`cost`) and the ideal model (`ideal`, left
  // alone without one). False when either model has none (then estimate() each step).
  bool decode_series(int64_t n, const models::DecodeSeries*& cost,
                     const models::DecodeSeries*& ideal) {
    const auto ni = static_cast<size_t>(n);
    if (ni >= decode_cost_.size()) {
      decode_cost_.resize(ni + 1);
      decode_ideal_.resize(ni + 1);
    }
    if (decode_cost_[ni].rows == 0) {
      decode_cost_[ni] = cost_.decode_series(n, cost_memo_.get());
      if (ideal_ != nullptr) decode_ideal_[ni] = ideal_->decode_series(n, ideal_memo_.get());
    }
    cost = &decode_cost_[ni];
    ideal = &decode_ideal_[ni];
    return cost->valid && (ideal_ == nullptr || ideal->valid);
  }

 private:
  const models::CostModel& cost_;
  const models::CostModel* ideal_;
  const models::CostModel* drafter_ = nullptr;
  int draft_positions_ = 0;
  std::unique_ptr<models::CostMemo> cost_memo_;
  std::unique_ptr<models::CostMemo> ideal_memo_;
  std::unique_ptr<models::CostMemo> drafter_memo_;
  // DecodeSeries::rows == 0: not made yet.
  std::vector<models::DecodeSeries> decode_cost_;
  std::vector<models::DecodeSeries> decode_ideal_;
};

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_STEP_COSTS_H_
