// TraceSessionWorkload: --dataset-name trace --multi-turn. Replays a trace's conversations as
// sessions: each session's first turn at its recorded time (scaled as in trace_replay.h), each
// later turn when the client has the previous answer plus the think time the trace implies.
//
// Sessions: rows of one session are its turns, in row (= recorded send) order.
//   - CSV formats: the session_id column (trace_reader.h); an empty id is a one-turn session.
//   - mooncake: inferred from the hash ids (512-token prompt blocks). Request B continues request
//     A when A is the latest earlier request, still the last turn of its session, whose full
//     prompt blocks (floor(input_length / 512) ids, at least 2) are the first ids of B: B's prompt
//     starts with A's whole prompt up to A's last partial block, as a chat turn resending its
//     history does. The longest such A wins. At least 2 blocks, because every row of the FAST'25
//     conversation trace starts with id 0 (a shared system prompt), which says nothing about
//     conversations. A second request continuing the same A (a fork) starts a session of its own.
// Other formats carry no session id: ConfigError.
//
// Think time. A trace records when each turn was sent (t_k), not when its answer came back, so
// the think time before turn k+1 is the recorded gap minus the simulated answer time:
//   think_{k+1} = max(0, s·(t_{k+1} − t_k) − (done_k − sent_k)),
//   send_{k+1} = done_k + think_{k+1} = max(done_k, sent_k + s·(t_{k+1} − t_k)),
// with s the replay scale (--trace-time-scale, or the --request-rate rescale, computed over every
// row of the window), sent_k the simulated send of turn k (after any --max-concurrency wait) and
// done_k when the client learnt its answer. A server as fast as the recorded one reproduces the
// recorded send times; a slower one delays the next turn to the answer (think time 0).
//
// Prompt and prefix. Each row's prompt_tokens is the whole prompt as sent (history included, as a
// server records it). The history turn k+1 shares with turn k is
//   h_{k+1} = min(P_{k+1}, P_k + O_k)
// tokens: turn k's prompt and answer, or less when the recorded prompt is shorter (a client that
// trimmed the history, or retokenised it). Each turn carries a chain of 16-token blocks over its
// prompt and answer (RequestSpec::prefix_chain, chain_covers_output, as session_workload.h): its
// first floor(h / 16) keys are turn k's, the rest are new. A Mooncake session's first turn takes
// the keys of its full 512-token blocks from its hash ids (key of 16-token block j = mix(hash
// chain key of 512-block floor(j/32), j)), so sessions still share the prefixes the trace says
// they share (the conversation trace's system prompt); later turns' new blocks are the session's.
//
// Contract: size() = rows in the window; every id in [0, size()) is produced once, first turns by
// next() (in recorded order), later turns by on_done(). Deterministic: no randomness.
#ifndef SERVESIM_WORKLOADS_TRACE_SESSIONS_H_
#define SERVESIM_WORKLOADS_TRACE_SESSIONS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "workloads/trace_replay.h"
#include "workloads/workload.h"

namespace servesim::workloads {

class TraceSessionWorkload final : public Workload {
 public:
  static constexpr int32_t kChainBlockTokens = 16;
  static constexpr int32_t kMinChainedBlocks = 2;  // mooncake: shared full blocks to continue

  // Throws ConfigError on a bad file or flag, an empty window, or a format without sessions.
  explicit TraceSessionWorkload(const TraceReplayOptions& options);

  std::optional<RequestSpec> next() override;
  int64_t size() const override { return static_cast<int64_t>(rows_.size()); }
  std::optional<RequestSpec> on_done(int64_t id, SimTime sent, SimTime now) override;

  int64_t num_sessions() const { return static_cast<int64_t>(sessions_.size()); }
  // Session index (in first-turn order) of each row of the window, in file order.
  std::vector<int32_t> session_of_rows() const;
  const TraceWindow& window() const { return window_; }

 private:
  struct Row {
    int64_t offset_ns = 0;  // recorded, from the window's start
    int32_t prompt_tokens = 0;
    int32_t output_tokens = 0;
    int32_t session = 0;
    // mooncake first turns: the hash-id chain (prefix_chain_of), else null
    std::shared_ptr<const std::vector<uint64_t>> hash_chain;
  };
  struct Session {
    std::vector<int32_t> rows;                           // its turns, in order
    size_t next_turn = 0;                                // the turn to send next
    std::shared_ptr<const std::vector<uint64_t>> chain;  // the last sent turn's
  };
  RequestSpec make_turn(int32_t session, SimTime arrival);

  TraceWindow window_;
  int32_t hash_block_tokens_ = 0;
  std::vector<Row> rows_;
  std::vector<Session> sessions_;
  std::vector<int32_t> session_of_id_;
  int32_t started_ = 0;
  int64_t next_id_ = 0;
};

}  // namespace servesim::workloads

#endif  // SERVESIM_WORKLOADS_TRACE_SESSIONS_H_
