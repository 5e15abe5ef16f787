// RequestRecord: what the simulator observed of one request; the input to all latency metrics.
//
// Token times are not stored one by one. A replica logs the end time of every step it runs
// (StepLog), and a request records the runs of consecutive steps in which it emitted one token per
// step (TokenSegment). Token k's time is then step_end[step] for the k-th step across segments.
// This keeps memory O(requests + steps) while ITL stays exact (every gap, preemption gaps included).
#ifndef SERVESIM_SIM_METRICS_REQUEST_RECORD_H_
#define SERVESIM_SIM_METRICS_REQUEST_RECORD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/base/time.h"

namespace servesim::metrics {

// A request emitted one token at the end of each step first_step, first_step+1, ..., last_step
// (step indices of its replica's StepLog). Invariant: first_step <= last_step.
struct TokenSegment {
  int64_t first_step = 0;
  int64_t last_step = 0;
  int64_t tokens() const { return last_step - first_step + 1; }
};

struct RequestRecord {
  int64_t id = 0;
  int32_t replica = 0;
  SimTime arrival;  // when the client sent it (after any --max-concurrency wait), t=0 at bench start
  // Time it waited for the client's --max-concurrency semaphore before `arrival` (vLLM's
  // client_queue_time); zero when concurrency is unlimited. Added by sim/metrics.
  SimTime client_queue_time;
  int32_t prompt_tokens = 0;
  int32_t output_tokens = 0;  // requested = generated when completed
  bool completed = false;
  bool failed = false;
  std::string error;  // why it failed (e.g. longer than --max-model-len); empty otherwise
  bool warmup = false;  // excluded from metrics (--warmup-requests)
  SimTime first_token;  // valid when completed
  SimTime last_token;   // valid when completed
  int32_t preemptions = 0;
  int64_t cached_prompt_tokens = 0;  // prompt tokens served from the prefix cache at first admission
  // Token segments in time order; Σ tokens() == output_tokens when completed.
  std::vector<TokenSegment> segments;
};

// End time of every step a replica ran, in order; index = step index.
struct StepLog {
  std::vector<SimTime> step_end;
};

}  // namespace servesim::metrics

#endif  // SERVESIM_SIM_METRICS_REQUEST_RECORD_H_
