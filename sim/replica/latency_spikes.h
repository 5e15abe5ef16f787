// LatencySpikes: windows of simulated time in which every engine step is slower by a factor —
// fault injection for `servesim serve --latency-spike T1-T2:xF` (a noisy neighbour, a throttled
// GPU, a stalled host).
//
// The rule: a step that starts at t with T1 <= t < T2 lasts F times the duration the cost model
// gives it, rounded up to the clock's nanosecond (ceil(F · d)); a step that starts outside every
// window keeps its duration, even one that starts before T1 and ends inside the window. So a
// lone decoding request's inter-token latency inside the window is exactly F times the one
// outside (for an integer F; else to the nanosecond), but for the step that straddles T1.
// Nothing else changes: the scheduler, the batch shapes and the KV cache see the same steps.
#ifndef SERVESIM_SIM_REPLICA_LATENCY_SPIKES_H_
#define SERVESIM_SIM_REPLICA_LATENCY_SPIKES_H_

#include <vector>

#include "sim/base/time.h"

namespace servesim::sim {

class LatencySpikes {
 public:
  struct Window {
    SimTime from;  // first instant inside
    SimTime to;    // first instant after
    double factor = 1;
  };
  // Throws ConfigError (naming --latency-spike) when a window is empty (from >= to), its factor
  // is not in (0, 1000], or two windows overlap.
  explicit LatencySpikes(std::vector<Window> windows);

  // The duration of a step that starts at `start` and takes `duration` without spikes.
  SimTime apply(SimTime start, SimTime duration) const;
  const std::vector<Window>& windows() const { return windows_; }

 private:
  std::vector<Window> windows_;  // by start time, disjoint
};

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_LATENCY_SPIKES_H_
