// The values of serve's fault-injection flags, parsed:
//   --replica-outage R@T1-T2   replica R (0-based) down from T1 to T2, seconds of simulated time
//   --latency-spike T1-T2:xF   steps that start in [T1, T2) last F times longer
// Each throws ConfigError naming the flag, the value and the form expected. What they do:
// sim/cluster/replica_outages.h, sim/replica/latency_spikes.h.
#ifndef SERVESIM_SIM_SERVE_FAULT_FLAGS_H_
#define SERVESIM_SIM_SERVE_FAULT_FLAGS_H_

#include <string>

#include "sim/cluster/replica_outages.h"
#include "sim/replica/latency_spikes.h"

namespace servesim::serve {

sim::ReplicaOutages::Outage parse_replica_outage(const std::string& text);
sim::LatencySpikes::Window parse_latency_spike(const std::string& text);

}  // namespace servesim::serve

#endif  // SERVESIM_SIM_SERVE_FAULT_FLAGS_H_
