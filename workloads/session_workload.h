// SessionWorkload: multi-turn conversations (--multi-turn), sent the way a chat client sends them.
//
// A conversation of T turns (--num-turns) starts at its arrival (the arrival process of the
// run: --request-rate, --burstiness; --num-prompts counts conversations). Turn k+1 is sent when
// the client has received turn k's whole answer, plus a think time (--think-time seconds,
// --think-time-dist constant | exponential), and its prompt is the whole history — every earlier
// user message and answer — followed by its own new message:
//   prompt_{k+1} = Σ_{j<=k} (u_j + o_j) + u_{k+1},
// with u_j and o_j the new-message and answer lengths of turn j, drawn from the dataset (one
// body per turn; with a workload file, every turn from the conversation's class).
//
// Prefix identity: the conversation is one token stream (u_0, o_0, u_1, o_1, ...) and every turn
// carries the stream's block-hash chain (RequestSpec::prefix_chain, kChainBlockTokens tokens per
// block, chain_covers_output = true). A turn's prompt therefore shares every full chain block of
// the history with the previous turn's prompt + answer, and the KV cache hits them when they are
// still cached (the answer's blocks are cached when the request finishes, as vLLM caches full
// blocks). Exact for engine block sizes that are multiples of kChainBlockTokens (16, 32, 64,
// 128); with smaller blocks the hit is rounded down to whole chain blocks.
//
// Feedback: the client calls on_done() when it learns a turn finished (or failed: the
// conversation goes on, its history counts the failed turn's answer at full length, as if the
// client had the whole conversation scripted). Ids are handed out as requests are created:
// first turns by next(), later turns by on_done(). With --max-concurrency the client holds one
// slot per conversation from its first turn to its last answer (closed-loop users).
//
// Contract: size() = conversations × turns; every id in [0, size()) is produced exactly once
// provided on_done() is called for every request produced. Deterministic per seed: lengths from
// the dataset's streams, session keys from (seed, conversation index), think times from stream
// "think-time".
#ifndef SERVESIM_WORKLOADS_SESSION_WORKLOAD_H_
#define SERVESIM_WORKLOADS_SESSION_WORKLOAD_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/base/rng.h"
#include "workloads/arrival_process.h"
#include "workloads/dataset.h"
#include "workloads/workload.h"
#include "workloads/workload_classes.h"

namespace servesim::workloads {

struct SessionOptions {
  int64_t num_sessions = 1;        // --num-prompts
  int32_t num_turns = 1;           // --num-turns, >= 1
  double think_time_s = 0;         // --think-time, >= 0
  bool exponential_think = false;  // --think-time-dist exponential
  uint64_t seed = 0;
};

// The key of a conversation's token-stream block j given the key of block j − 1 (a splitmix64
// round over (previous key, conversation key, j)), so chain[j] names the whole stream up to block
// j. Shared with trace_sessions.h.
uint64_t session_chain_key(uint64_t previous, uint64_t session_key, uint64_t j);

class SessionWorkload final : public Workload {
 public:
  static constexpr int32_t kChainBlockTokens = 16;

  // `bodies` gives each turn's new-message length (prompt_tokens) and answer length
  // (output_tokens): num_sessions × num_turns bodies, in conversation order — or, when it is a
  // ClassMixDataset, one per conversation from next() and the later turns from next_of_class().
  // `starts` has num_sessions arrivals.
  SessionWorkload(std::unique_ptr<Dataset> bodies, ArrivalSequence starts,
                  const SessionOptions& options, std::vector<std::string> class_names);

  std::optional<RequestSpec> next() override;
  int64_t size() const override { return options_.num_sessions * options_.num_turns; }
  std::optional<RequestSpec> on_done(int64_t id, SimTime sent, SimTime now) override;
  std::vector<std::string> class_names() const override { return class_names_; }

 private:
  struct Session {
    std::vector<RequestSpec> turns;  // bodies: prompt_tokens = u_k, output_tokens = o_k
    std::shared_ptr<const std::vector<uint64_t>> chain;
    int32_t next_turn = 1;  // the turn on_done() will send next
    int64_t history = 0;    // Σ (u_j + o_j) over the turns sent so far
  };
  RequestSpec make_turn(int64_t session, SimTime arrival);

  std::unique_ptr<Dataset> bodies_;
  ClassMixDataset* class_mix_;  // bodies_ when it is one, else null
  ArrivalSequence starts_;
  SessionOptions options_;
  std::vector<std::string> class_names_;
  RngStream think_rng_;
  int64_t started_ = 0;
  int64_t next_id_ = 0;
  std::vector<Session> sessions_;       // by conversation index; emptied when it ends
  std::vector<int64_t> session_of_id_;  // request id -> conversation index
};

}  // namespace servesim::workloads

#endif  // SERVESIM_WORKLOADS_SESSION_WORKLOAD_H_
