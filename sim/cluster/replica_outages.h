// ReplicaOutages: replicas that crash and come back at given simulated times — fault injection
// for `servesim serve --replica-outage R@T1-T2` (sim/cluster/live_engine.h owns one).
//
// At T1 replica R's engine dies as a vLLM process does when it crashes: every request it holds
// (running, waiting, or in its API server's queue) fails — the ones it holds at T1 leave at the
// end of the step in flight, as an abort (Replica::abort_request), their KV blocks freed; the
// ones still in its API server's queue fail when they reach it — and the router sends it nothing
// until T2 (Router::set_down). The requests' cut time is T1: a token produced after it never
// reaches a client. At T2 it takes requests again, empty: no request, no KV block in use (once
// the step in flight at T1 has ended). Its prefix cache has nothing to lose: serve's requests
// carry no prefix identity (their text is not read), so no block of theirs is ever cached for
// another request.
#ifndef SERVESIM_SIM_CLUSTER_REPLICA_OUTAGES_H_
#define SERVESIM_SIM_CLUSTER_REPLICA_OUTAGES_H_

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "sim/cluster/router.h"
#include "sim/engine/simulator.h"
#include "sim/metrics/request_record.h"
#include "sim/replica/replica.h"

namespace servesim::sim {

class ReplicaOutages : public engine::EventHandler {
 public:
  struct Outage {
    int32_t replica = 0;
    SimTime down;  // the crash
    SimTime up;    // back, empty
  };
  // `replicas` (by id; the first `routed` are the router's), `router` and `records` (by slot)
  // must outlive this.
  ReplicaOutages(const std::vector<std::unique_ptr<Replica>>* replicas, int32_t routed,
                 Router* router, std::vector<metrics::RequestRecord>* records);

  // Queues an outage. Throws ConfigError (naming --replica-outage) for a replica that does not
  // exist, an empty window or one that overlaps another of the same replica.
  // REQUIRES: down >= sim.now().
  void schedule(engine::Simulator& sim, const Outage& outage);
  void on_event(engine::Simulator& sim, int64_t tag) override;

  // When the request in `slot` was cut by a crash (SimTime::max(): it was not). A request that
  // reached a replica already down was cut at its arrival there.
  SimTime cut_time(int64_t slot) const;
  // The slot is reused: forget its cut.
  void forget(int64_t slot) {
    if (!cut_.empty()) cut_.erase(slot);
  }
  bool any_up() const { return router_->any_up(); }
  bool up(int32_t replica) const;

 private:
  const std::vector<std::unique_ptr<Replica>>* replicas_;
  int32_t routed_;
  Router* router_;
  std::vector<metrics::RequestRecord>* records_;
  std::vector<Outage> outages_;               // tag 2i: outage i's crash, 2i + 1: its return
  std::unordered_map<int64_t, SimTime> cut_;  // slot → crash time, for the requests it cut
};

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_CLUSTER_REPLICA_OUTAGES_H_
