#include "sim/cluster/front_end.h"

namespace servesim::sim {

FrontEndCosts FrontEndCosts::from_calibration(const calibration::Calibration& c) {
  FrontEndCosts f;
  f.per_request_s = calibration::value_or(c.terms.frontend_per_request_s, 0.0);
  f.per_prompt_token_s = calibration::value_or(c.terms.frontend_per_prompt_token_s, 0.0);
  f.per_output_token_s = calibration::value_or(c.terms.frontend_per_output_token_s, 0.0);
  return f;
}

FrontEnd::FrontEnd(const FrontEndCosts& costs, Replica* replica)
    : costs_(costs), replica_(replica) {}

void FrontEnd::send(engine::Simulator& sim, const workloads::RequestSpec& spec) {
  if (costs_.empty()) {  // no front-end cost: no queue, no event
    ++served_;
    replica_->add_request(sim, spec);
    return;
  }
  queue_.push_back(Queued{spec, sim.now()});
  if (!busy_) start_service(sim);
}

void FrontEnd::start_service(engine::Simulator& sim) {
  const Queued& q = queue_.front();
  total_wait_ns_ += (sim.now() - q.arrived).ns();
  const SimTime service =
      SimTime::from_seconds_ceil(costs_.service_s(q.spec.prompt_tokens, q.spec.output_tokens));
  busy_ns_ += service.ns();
  busy_ = true;
  sim.schedule_after(service, this, 0);
}

void FrontEnd::on_event(engine::Simulator& sim, int64_t /*tag*/) {
  const workloads::RequestSpec spec = queue_.front().spec;
  queue_.pop_front();
  busy_ = false;
  ++served_;
  // Start the next service before the engine sees this request, so that the queue's timing does
  // not depend on what the engine does at this instant.
  if (!queue_.empty()) start_service(sim);
  replica_->add_request(sim, spec);
}

}  // namespace servesim::sim
