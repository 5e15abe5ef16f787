// StepCosts: a replica's view of its cost models — the model that times its steps, the optional
// ideal one (its busy-time yardstick) and the optional drafter. Each is asked through its fast
// path (CostModel::fast_path(), models/cost_fast_path.h) with a memo of this replica's when the
// model has one, else through estimate(); the decode series by decoder count are made on first
// use, and only when both the model and the ideal one have a fast path.
// No model is owned; all must outlive the replica.
#ifndef SERVESIM_SIM_REPLICA_STEP_COSTS_H_
#define SERVESIM_SIM_REPLICA_STEP_COSTS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "models/batch_shape.h"
#include "models/cost_fast_path.h"
#include "models/cost_model.h"

namespace servesim::sim {

class StepCosts {
 public:
  // `ideal` may be null (then ideal_s() is 0).
  StepCosts(const models::CostModel& cost, const models::CostModel* ideal)
      : cost_(&cost), ideal_(ideal) {}

  bool has_ideal() const { return ideal_.model != nullptr; }
  // Speculative decoding's drafter (sim/cluster/drafter.h), run after each step with K draft
  // positions; null: no drafter on the GPU (n-gram's lookup runs on the host). Not owned.
  void set_drafter(const models::CostModel* drafter, int k) {
    drafter_ = Asked(drafter);
    draft_positions_ = k;
  }
  // The drafter's GPU time after a step of shape `step` (vLLM's EagleProposer.propose and the
  // draft-model proposer): one forward over every token of the step, then K − 1 forwards of one
  // token for each of the `rows` requests that sampled, whose contexts sum to `rows_ctx` before
  // the first of them. 0 without a drafter.
  double drafter_s(const models::BatchShape& step, int64_t rows, int64_t rows_ctx) {
    if (drafter_.model == nullptr || step.empty()) return 0.0;
    double s = drafter_.estimate(step).device_s();
    for (int j = 1; j < draft_positions_ && rows > 0; ++j) {
      models::BatchShape d;
      d.decode_seqs = rows;
      d.sampled_seqs = rows;
      d.decode_context_tokens = rows_ctx + rows * j;
      s += drafter_.estimate(d).device_s();
    }
    return s;
  }
  models::StepCost estimate(const models::BatchShape& shape) { return cost_.estimate(shape); }
  // The ideal model's step time for `shape`; 0 without an ideal model.
  double ideal_s(const models::BatchShape& shape) {
    return ideal_.model != nullptr ? ideal_.estimate(shape).total_s : 0.0;
  }
  // The decode series of `n` decoders for the model (`cost`) and the ideal model (`ideal`, left
  // alone without one). False when either model has none (then estimate() each step).
  bool decode_series(int64_t n, const models::DecodeSeries*& cost,
                     const models::DecodeSeries*& ideal) {
    if (cost_.fast == nullptr || (ideal_.model != nullptr && ideal_.fast == nullptr)) return false;
    const auto ni = static_cast<size_t>(n);
    if (ni >= decode_cost_.size()) {
      decode_cost_.resize(ni + 1);
      decode_ideal_.resize(ni + 1);
    }
    if (decode_cost_[ni].rows == 0) {
      decode_cost_[ni] = cost_.fast->decode_series(n, cost_.memo.get());
      if (ideal_.model != nullptr) {
        decode_ideal_[ni] = ideal_.fast->decode_series(n, ideal_.memo.get());
      }
    }
    cost = &decode_cost_[ni];
    ideal = &decode_ideal_[ni];
    return cost->valid && (ideal_.model == nullptr || ideal->valid);
  }

 private:
  // One model as the replica asks it: its fast path with this replica's memo, else estimate().
  struct Asked {
    Asked() = default;
    explicit Asked(const models::CostModel* m)
        : model(m),
          fast(m != nullptr ? m->fast_path() : nullptr),
          memo(fast != nullptr ? fast->make_memo() : nullptr) {}
    models::StepCost estimate(const models::BatchShape& shape) const {
      return fast != nullptr ? fast->estimate_memo(shape, memo.get()) : model->estimate(shape);
    }
    const models::CostModel* model = nullptr;
    const models::CostFastPath* fast = nullptr;
    std::unique_ptr<models::CostMemo> memo;
  };

  Asked cost_;
  Asked ideal_;
  Asked drafter_;
  int draft_positions_ = 0;
  // DecodeSeries::rows == 0: not made yet.
  std::vector<models::DecodeSeries> decode_cost_;
  std::vector<models::DecodeSeries> decode_ideal_;
};

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_STEP_COSTS_H_
