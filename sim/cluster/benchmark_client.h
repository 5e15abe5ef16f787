// BenchmarkClient: the client side of `vllm bench serve`.
//
// It takes requests from a Workload in arrival order and sends each at its arrival time to a
// RequestSink (one replica, or a router in front of many). With --max-concurrency N it behaves like
// vLLM's asyncio semaphore: at most N requests are outstanding; a request whose arrival time has
// come while all slots are busy waits, and waiting requests are sent first-come first-served as
// slots free. The send time (after any wait) is the request's start for TTFT and E2E, as in vLLM,
// where the timer starts inside the request function after the semaphore is acquired.
//
// Closed-loop workloads (multi-turn sessions, workloads/session_workload.h): when the client
// learns that a request finished, it asks the workload for the request this releases
// (Workload::on_done) and sends it at its arrival time (the answer's time plus a think time).
// A conversation keeps its --max-concurrency slot from its first turn to its last answer, so
// with sessions --max-concurrency counts users, not requests.
#ifndef SERVESIM_SIM_CLUSTER_BENCHMARK_CLIENT_H_
#define SERVESIM_SIM_CLUSTER_BENCHMARK_CLIENT_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <queue>
#include <vector>

#include "sim/engine/simulator.h"
#include "sim/metrics/request_record.h"
#include "sim/replica/replica.h"
#include "workloads/workload.h"

namespace servesim::sim {

// Where the client sends requests.
class RequestSink {
 public:
  virtual ~RequestSink() = default;
  virtual void send(engine::Simulator& sim, const workloads::RequestSpec& spec) = 0;
};

class BenchmarkClient : public engine::EventHandler, public RequestObserver {
 public:
  // `max_concurrency` 0 = unlimited. `records` (indexed by request id) is filled with each
  // request's send time and lengths; the first `warmup_requests` are marked warmup.
  BenchmarkClient(workloads::Workload& workload, RequestSink& sink, int64_t max_concurrency,
                  int64_t warmup_requests, std::vector<metrics::RequestRecord>* records);

  // The client learns of a completion this long after the engine finishes the request (the
  // client-side TTFT overhead of a calibration: HTTP, detokenisation, streaming). With
  // --max-concurrency the slot is freed only then, as a real client's semaphore is. Default 0.
  void set_completion_delay(SimTime delay) { completion_delay_ = delay; }

  // Schedules the first arrival. Call once before Simulator::run().
  void start(engine::Simulator& sim);

  void on_event(engine::Simulator& sim, int64_t tag) override;
  void on_request_done(engine::Simulator& sim, int64_t request_id) override;

  int64_t sent() const { return sent_; }
  int64_t done() const { return done_; }
  int64_t peak_outstanding() const { return peak_outstanding_; }

 private:
  // Event tags: kArrival (the workload's next request), kFollowUp (the earliest pending
  // follow-up), and kReleaseBase + id (request id's completion reaches the client).
  enum EventTag : int64_t { kFollowUp = -1, kArrival = 0, kReleaseBase = 1 };
  struct LaterFirst {  // min-heap order of pending follow-ups: (arrival, id)
    bool operator()(const workloads::RequestSpec& a, const workloads::RequestSpec& b) const {
      return a.arrival != b.arrival ? a.arrival > b.arrival : a.id > b.id;
    }
  };
  // `acquire`: the request takes a concurrency slot (false for a conversation's later turns,
  // whose conversation already holds one).
  void send_now(engine::Simulator& sim, const workloads::RequestSpec& spec, bool acquire = true);
  void release(engine::Simulator& sim, int64_t request_id);
  void schedule_next_arrival(engine::Simulator& sim);

  workloads::Workload& workload_;
  RequestSink& sink_;
  int64_t max_concurrency_;
  int64_t warmup_requests_;
  std::vector<metrics::RequestRecord>* records_;
  std::optional<workloads::RequestSpec> next_;  // the next request not yet arrived
  std::deque<workloads::RequestSpec> blocked_;  // arrived, waiting for a concurrency slot
  std::priority_queue<workloads::RequestSpec, std::vector<workloads::RequestSpec>, LaterFirst>
      follow_ups_;  // later turns released by a completion, not yet sent
  SimTime completion_delay_;
  int64_t outstanding_ = 0;
  int64_t peak_outstanding_ = 0;
  int64_t sent_ = 0;
  int64_t done_ = 0;
};

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_CLUSTER_BENCHMARK_CLIENT_H_
