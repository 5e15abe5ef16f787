#include "sim/cluster/replica_outages.h"

#include <sstream>
#include <string>

#include "sim/base/error.h"

namespace servesim::sim {
namespace {

std::string outage_text(const ReplicaOutages::Outage& o) {
  std::ostringstream os;
  os << o.replica << "@" << o.down.seconds() << "-" << o.up.seconds();
  return os.str();
}

}  // namespace

ReplicaOutages::ReplicaOutages(const std::vector<std::unique_ptr<Replica>>* replicas,
                               int32_t routed, Router* router,
                               std::vector<metrics::RequestRecord>* records)
    : replicas_(replicas), routed_(routed), router_(router), records_(records) {}

void ReplicaOutages::schedule(engine::Simulator& sim, const Outage& o) {
  if (o.replica < 0 || o.replica >= routed_) {
    throw ConfigError("--replica-outage: " + outage_text(o) + " names replica " +
                      std::to_string(o.replica) + "; expected 0.." + std::to_string(routed_ - 1) +
                      " (--num-replicas " + std::to_string(routed_) + ")");
  }
  if (!(o.down < o.up)) {
    throw ConfigError("--replica-outage: " + outage_text(o) + " is invalid; expected T1 < T2");
  }
  for (const Outage& other : outages_) {
    if (other.replica == o.replica && o.down < other.up && other.down < o.up) {
      throw ConfigError("--replica-outage: " + outage_text(other) + " and " + outage_text(o) +
                        " overlap; expected disjoint windows for one replica");
    }
  }
  SERVESIM_CHECK(o.down >= sim.now(), "an outage in the past");
  const auto i = static_cast<int64_t>(outages_.size());
  outages_.push_back(o);
  sim.schedule_at(o.down, this, 2 * i);
  sim.schedule_at(o.up, this, 2 * i + 1);
}

void ReplicaOutages::on_event(engine::Simulator& sim, int64_t tag) {
  const Outage& o = outages_[static_cast<size_t>(tag / 2)];
  Replica& r = *(*replicas_)[static_cast<size_t>(o.replica)];
  if (tag % 2 == 1) {  // back
    r.set_down(false);
    router_->set_down(o.replica, false);
    return;
  }
  r.set_down(true);
  router_->set_down(o.replica, true);
  for (size_t slot = 0; slot < records_->size(); ++slot) {
    const metrics::RequestRecord& rec = (*records_)[slot];
    if (rec.replica != o.replica || rec.completed || rec.failed) continue;
    cut_[static_cast<int64_t>(slot)] = sim.now();
    r.abort_request(sim, static_cast<int64_t>(slot));
  }
}

SimTime ReplicaOutages::cut_time(int64_t slot) const {
  const metrics::RequestRecord& rec = (*records_)[static_cast<size_t>(slot)];
  if (rec.failed && rec.error.str() == Replica::kReplicaDownError) return rec.arrival;
  const auto it = cut_.find(slot);
  return it == cut_.end() ? SimTime::max() : it->second;
}

bool ReplicaOutages::up(int32_t replica) const {
  return !(*replicas_)[static_cast<size_t>(replica)]->down();
}

}  // namespace servesim::sim
