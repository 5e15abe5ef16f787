#include "sim/replica/dp_group.h"

#include <algorithm>

#include "sim/base/error.h"
#include "sim/replica/replica.h"

namespace servesim::sim {

Replica* DpGroup::route() const {
  SERVESIM_CHECK(!members_.empty(), "a DP group without ranks");
  Replica* best = members_.front();
  int64_t best_score = INT64_MAX;
  for (Replica* r : members_) {
    const int64_t score = r->num_waiting() * 4 + r->num_running();
    if (score < best_score) {
      best_score = score;
      best = r;
    }
  }
  return best;
}

void DpGroup::join(engine::Simulator& sim, Replica* r, const models::StepCost& c,
                   double linear_tokens, bool overlap) {
  round_.push_back(Entry{r, c, overlap});
  round_tokens_ += linear_tokens;
  if (!round_open_) {
    round_open_ = true;
    sim.schedule_at(sim.now(), this, 0);  // after every event already due at this instant
  }
}

void DpGroup::on_event(engine::Simulator& sim, int64_t) {
  const double moe = moe_ != nullptr ? moe_->dp_group_moe_s(round_tokens_) : 0.0;
  double step = 0, sum = 0;
  for (const Entry& e : round_) {
    const double device = e.cost.device_s() + moe;
    const double own = e.overlap ? std::max(device, e.cost.host_s) : device + e.cost.host_s;
    step = std::max(step, own);
    sum += own;
  }
  const SimTime end = sim.now() + std::max(SimTime::from_ns(1), SimTime::from_seconds_ceil(step));
  ++rounds_;
  sync_wait_s_ += step - sum / static_cast<double>(round_.size());
  busy_until_ = end;
  // The ranks' ends are queued in join order: the same order every run.
  std::vector<Entry> ranks;
  ranks.swap(round_);
  round_tokens_ = 0;
  round_open_ = false;
  for (const Entry& e : ranks) e.rank->end_dp_step(sim, end);
}

}  // namespace servesim::sim
