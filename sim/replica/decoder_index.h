// DecoderIndex: the decoding requests of one replica, with their progress kept implicit.
//
// A decoder advances by one token per step, so its progress is (base step, tokens at base) and it
// is settled only when something happens to it. The index answers the two questions a step asks
// without visiting every decoder: which decoders need a new KV block at step k (a decoder needs
// one at step j iff (num_computed + j − base_step) % block_size == 0, so block_size buckets hold
// them), and which finish next (a min-heap of finish steps, ties by request id). It also keeps
// Σ (num_computed − base_step) over decoders, so that Σ context at step k is offset + n·k.
// Entries are invalidated lazily: a request's epoch changes whenever its entries go stale, and an
// entry counts only while the epoch matches and the request is decoding.
// With explicit progress (speculative decoding: a decoder advances by a drawn number of tokens
// per step, and the replica settles every decoder it runs at the end of each step) only the count
// and the context sum are kept: no buckets, no finish heap.
#ifndef SERVESIM_SIM_REPLICA_DECODER_INDEX_H_
#define SERVESIM_SIM_REPLICA_DECODER_INDEX_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <vector>

#include "sim/replica/request_state.h"

namespace servesim::sim {

class DecoderIndex {
 public:
  struct Entry {  // a lazily-invalidated reference to a request slot
    int32_t slot;
    uint32_t epoch;
  };
  struct FinishEntry {
    int64_t step;
    int64_t id;  // tie-break: deterministic order among requests finishing in the same step
    int32_t slot;
    uint32_t epoch;
    bool operator>(const FinishEntry& o) const {
      return step != o.step ? step > o.step : id > o.id;
    }
  };

  explicit DecoderIndex(int64_t block_size, bool implicit_progress = true)
      : block_size_(block_size), implicit_(implicit_progress), buckets_(block_size) {}

  int64_t count() const { return count_; }
  // Σ context tokens of the decoders at step k.
  int64_t context_at(int64_t k) const { return ctx_offset_ + count_ * k; }
  int64_t context_offset() const { return ctx_offset_; }

  // `r` (in `slot`) decodes from r.base_step on, with r.num_computed and r.generated settled there.
  void add(int32_t slot, const RequestState& r) {
    ++count_;
    ctx_offset_ += r.num_computed - r.base_step;
    if (!implicit_) return;
    const int64_t bucket =
        ((r.base_step - r.num_computed) % block_size_ + block_size_) % block_size_;
    buckets_[bucket].push_back(Entry{slot, r.epoch});
    finishes_.push(FinishEntry{r.base_step + (r.output - r.generated) - 1, r.id, slot, r.epoch});
  }
  // Takes `r` out of the sums; its entries go stale once its epoch or phase changes.
  void remove(const RequestState& r) {
    --count_;
    ctx_offset_ -= r.num_computed - r.base_step;
  }
  static bool live(const Entry& e, const std::vector<RequestState>& slots) {
    const RequestState& r = slots[e.slot];
    return r.epoch == e.epoch && r.phase == RequestPhase::kDecode;
  }
  // The live decoders of bucket `b` (= step % block_size): those whose next token starts a new
  // block. Drops the stale entries on the way.
  std::vector<Entry>& live_bucket(size_t b, const std::vector<RequestState>& slots) {
    std::vector<Entry>& bucket = buckets_[b];
    size_t n = 0;
    for (const Entry& e : bucket) {
      if (live(e, slots)) bucket[n++] = e;
    }
    bucket.resize(n);
    return bucket;
  }
  // The step of the earliest finish entry (possibly stale); max() when there is none.
  int64_t next_finish() const {
    return finishes_.empty() ? std::numeric_limits<int64_t>::max() : finishes_.top().step;
  }
  FinishEntry pop_finish() {
    const FinishEntry e = finishes_.top();
    finishes_.pop();
    return e;
  }

 private:
  int64_t block_size_;
  bool implicit_;
  int64_t count_ = 0;
  int64_t ctx_offset_ = 0;                   // Σ (num_computed − base_step) over decoders
  std::vector<std::vector<Entry>> buckets_;  // [step % block_size]: decoders needing a block
  std::priority_queue<FinishEntry, std::vector<FinishEntry>, std::greater<FinishEntry>> finishes_;
};

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_DECODER_INDEX_H_
