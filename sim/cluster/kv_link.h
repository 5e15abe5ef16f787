// KvLink: one link that carries KV-cache transfers between a prefill and a decode instance
// (disaggregated prefill/decode, sim/cluster/pd_simulation.h), shared by processor sharing.
//
// Model. A transfer of B bytes started at t0 on an idle link of bandwidth W and latency α ends at
// t0 + B/W + α. The bandwidth is shared equally by the transfers in flight: while n are on the
// link each is served at W/n, so n equal transfers started together each take n·B/W + α. The
// latency α is not shared: it is added once after a transfer's last byte (the RDMA read's
// completion reaching the decode side), so a transfer occupies the bandwidth for its bytes only.
// Every start and every end re-times the completions of the others (virtual-time bookkeeping: V
// grows at W/n bytes per second per transfer; a transfer ends when V has grown by its bytes since
// it started).
//
// The class is a pure state machine over simulated time; the caller (an event handler) asks for
// next_drain() after every start() or drain() and schedules an event for it. Times are SimTime
// (integer ns), completions rounded up to the next ns, so a transfer never ends early.
//
// Deterministic: transfers that drain at the same instant come out in start order.
#ifndef SERVESIM_SIM_CLUSTER_KV_LINK_H_
#define SERVESIM_SIM_CLUSTER_KV_LINK_H_

#include <cstdint>
#include <optional>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/base/time.h"

namespace servesim::sim {

class KvLink {
 public:
  // REQUIRES: bandwidth > 0 and finite, latency >= 0 (ConfigError otherwise).
  KvLink(double bandwidth_bytes_per_s, double latency_s);

  // A transfer of `bytes` (>= 0) starts at `now`, identified by `key`. REQUIRES: now is not
  // before the last start() or drain() time.
  void start(SimTime now, int64_t key, double bytes);

  // When the next transfer's last byte leaves the link (the time to call drain() at), or none
  // when the link is idle.
  std::optional<SimTime> next_drain() const;

  // Removes the transfers whose last byte has left by `now` and returns their keys, in start
  // order. Each is complete (at the decode side) at now + latency_s().
  std::vector<int64_t> drain(SimTime now);

  double bandwidth_bytes_per_s() const { return bandwidth_; }
  double latency_s() const { return latency_s_; }
  int64_t in_flight() const { return static_cast<int64_t>(active_.size()); }
  // Time with at least one transfer on the link, up to the last start()/drain() call.
  SimTime busy() const { return busy_; }
  double bytes_started() const { return bytes_started_; }
  int64_t transfers_started() const { return started_; }

 private:
  // Advances the virtual time V and the busy time to `now`.
  void advance(SimTime now);

  double bandwidth_;
  double latency_s_;
  SimTime last_;  // time V was last advanced to
  double v_ = 0;  // bytes served to every transfer in flight since the link was built
  // (V at which the transfer's bytes are all served, start sequence number, key)
  std::set<std::tuple<double, int64_t, int64_t>> active_;
  int64_t seq_ = 0;
  SimTime busy_;
  double bytes_started_ = 0;
  int64_t started_ = 0;
};

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_CLUSTER_KV_LINK_H_
