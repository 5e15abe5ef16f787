// TraceReplayWorkload: --dataset-name trace. Replays a recorded trace (trace_reader.h) with its
// arrival times and lengths as recorded, streaming the file (memory O(1) in the trace length,
// plus one prefix chain per in-flight request for Mooncake traces).
//
// Time: request i arrives at scale * (t_i - t_origin - start), in integer nanoseconds, where
// t_origin is the file's first row and [start, start + duration) the replayed window
// (--trace-start, --trace-duration; duration 0 = to the end). scale is --trace-time-scale (0 sends
// the whole window at t = 0, the trace's "--request-rate inf": plan's saturation run uses it), or,
// with a finite --request-rate R, (n - 1) / (R * (t_last - t_first)) over the n rows of the
// window: the window's mean rate becomes R while every inter-arrival gap is scaled by the same
// factor, so burstiness, diurnal shape and the coefficient of variation of the gaps are kept.
// At scale 1 the arrival times are the file's, to the nanosecond.
//
// Prefix: Mooncake hash_ids become RequestSpec::prefix_chain, chain[j] = mix(chain[j-1], id_j)
// (a 64-bit hash of the whole id sequence up to j, so equal chains mean equal prefixes even if a
// file reused an id under another prefix), with chain_block_tokens 512.
//
// The file is read twice: once at construction (validates every row in the window, so bad input
// fails before anything runs; counts rows; finds the span), once while next() streams.
#ifndef SERVESIM_WORKLOADS_TRACE_REPLAY_H_
#define SERVESIM_WORKLOADS_TRACE_REPLAY_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "workloads/trace_reader.h"
#include "workloads/workload.h"

namespace servesim::workloads {

struct TraceReplayOptions {
  std::string path;         // --trace
  std::string format;       // --trace-format
  double time_scale = 1.0;  // --trace-time-scale (>= 0; 0 = every request at t = 0)
  double start_s = 0.0;     // --trace-start (>= 0)
  double duration_s = 0.0;  // --trace-duration (>= 0; 0 = to the end)
  double request_rate = std::numeric_limits<double>::infinity();  // finite: rescale to it
};

// The replayed window of a trace, found by one pass over the file.
struct TraceWindow {
  int64_t lo_ns = 0;     // absolute file time of the window's start
  int64_t hi_ns = 0;     // exclusive end (INT64_MAX = to the end)
  int64_t count = 0;     // rows in the window (>= 1)
  int64_t first_ns = 0;  // the window's first and last arrivals, as recorded
  int64_t last_ns = 0;
  double scale = 1.0;  // replay time = scale * (recorded - lo_ns)

  // A recorded time (or a gap between two) as replayed: exact at scale 1.
  int64_t scaled_ns(int64_t recorded_offset_ns) const;
};

// Checks the options, reads `options.path` once and calls `keep` (when set) on every row of the
// window, in file order. Throws ConfigError on a bad file, flag or an empty window.
TraceWindow scan_trace_window(const TraceReplayOptions& options,
                              const std::function<void(const TraceRow&)>& keep = {});

class TraceReplayWorkload final : public Workload {
 public:
  // Throws ConfigError on a bad file, flag or an empty window.
  explicit TraceReplayWorkload(const TraceReplayOptions& options);

  std::optional<RequestSpec> next() override;
  int64_t size() const override { return count_; }

  double scale() const { return window_.scale; }
  // Span of the window's arrivals as recorded (last - first), seconds.
  double recorded_span_s() const {
    return static_cast<double>(window_.last_ns - window_.first_ns) * 1e-9;
  }

 private:
  TraceReplayOptions options_;
  std::unique_ptr<TraceReader> reader_;
  TraceWindow window_;
  int64_t count_ = 0;
  int64_t served_ = 0;
  int32_t block_tokens_ = 0;
  TraceRow row_;
  // lora_adapter names in order of first appearance: a name's index is its adapter id.
  std::unordered_map<std::string, int32_t> adapters_;
};

// The chain key of a prefix of hash ids (exposed for tests): chain[j] for ids[0..j].
std::vector<uint64_t> prefix_chain_of(const std::vector<int64_t>& hash_ids);

}  // namespace servesim::workloads

#endif  // SERVESIM_WORKLOADS_TRACE_REPLAY_H_
