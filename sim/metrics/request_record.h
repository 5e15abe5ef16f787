// RequestRecord: what the simulator observed of one request; the input to all latency metrics.
//
// Token times are not stored one by one. A replica logs the end time of every step it runs
// (StepLog), and a request records the runs of consecutive steps in which it emitted one token per
// step (TokenSegment). Token k's time is then step_end[step] for the k-th step across segments.
// This keeps memory O(requests + steps) while ITL stays exact (every gap, preemption gaps
// included).
#ifndef SERVESIM_SIM_METRICS_REQUEST_RECORD_H_
#define SERVESIM_SIM_METRICS_REQUEST_RECORD_H_

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "sim/base/time.h"
#include "sim/metrics/segment_list.h"
#include "sim/metrics/step_ends.h"

namespace servesim::metrics {

// A request's error message. Nearly every request has none, so it costs one pointer in the
// record (a std::string costs 32 bytes in each of a run's millions of records).
class ErrorText {
 public:
  ErrorText() = default;
  ErrorText(const ErrorText& o)
      : text_(o.text_ ? std::make_unique<std::string>(*o.text_) : nullptr) {}
  ErrorText(ErrorText&&) noexcept = default;
  ErrorText& operator=(const ErrorText& o) {
    if (this != &o) text_ = o.text_ ? std::make_unique<std::string>(*o.text_) : nullptr;
    return *this;
  }
  ErrorText& operator=(ErrorText&&) noexcept = default;
  ErrorText& operator=(std::string text) {
    text_ = text.empty() ? nullptr : std::make_unique<std::string>(std::move(text));
    return *this;
  }
  bool empty() const { return text_ == nullptr; }
  const std::string& str() const {
    static const std::string kNone;
    return text_ ? *text_ : kNone;
  }
  operator const std::string&() const { return str(); }  // NOLINT: reads like the string it was
  size_t find(const std::string& s) const { return str().find(s); }

 private:
  std::unique_ptr<std::string> text_;
};

inline std::string operator+(const std::string& a, const ErrorText& b) { return a + b.str(); }
inline std::string operator+(const char* a, const ErrorText& b) { return a + b.str(); }
inline std::string operator+(const ErrorText& a, const std::string& b) { return a.str() + b; }
inline std::ostream& operator<<(std::ostream& os, const ErrorText& e) { return os << e.str(); }

// Fields are ordered to pack (8-byte, then 4-byte, then 1-byte members): 96 bytes with libstdc++.
struct RequestRecord {
  int64_t id = 0;
  SimTime
      arrival;  // when the client sent it (after any --max-concurrency wait), t=0 at bench start
  // Time it waited for the client's --max-concurrency semaphore before `arrival` (vLLM's
  // client_queue_time); zero when concurrency is unlimited. Added by sim/metrics.
  SimTime client_queue_time;
  SimTime first_token;  // valid when completed
  SimTime last_token;   // valid when completed
  int32_t cached_prompt_tokens =
      0;  // prompt tokens served from the prefix cache at first admission
  int32_t replica = 0;
  int32_t prompt_tokens = 0;
  int32_t output_tokens = 0;  // requested = generated when completed
  int32_t preemptions = 0;
  int32_t class_id = -1;  // workload class (RequestSpec::class_id), -1 = none
  // Streamed chunks when a step may emit several tokens of the request (speculative decoding):
  // then a segment's steps are its chunks, and Σ tokens() == output_chunks. 0: one token per
  // step (Σ tokens() == output_tokens).
  int32_t output_chunks = 0;
  bool completed = false;
  bool failed = false;
  bool warmup = false;  // excluded from metrics (--warmup-requests)
  ErrorText error;      // why it failed (e.g. longer than --max-model-len); empty otherwise
  // Token segments in time order; Σ tokens() == output_tokens (or output_chunks) when completed.
  // The first one is stored inline (segment_list.h), so a record needs no allocation of its own.
  SegmentList segments;
};

// End time of every step a replica ran, in order; index = step index.
// (~4.5 bytes per step, not a vector's 8: at low load a run logs tens of millions of steps;
// step_ends.h.)
struct StepLog {
  StepEnds step_end;
};

}  // namespace servesim::metrics

#endif  // SERVESIM_SIM_METRICS_REQUEST_RECORD_H_
