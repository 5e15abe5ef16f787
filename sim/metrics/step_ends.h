// StepEnds: the end time of every step a replica ran, in order, in about 4 bytes per step.
//
// A low-load run of a million requests runs ~26 million steps; at 8 bytes each the log was the
// largest buffer of the run, and on a virtual machine every fresh page of it costs a fault and a
// clear (~1 ns per byte there). Steps are stored in blocks of kBlock: a block keeps the end of its
// first step as a 64-bit base and each step as a 32-bit offset from it (4.5 bytes per step), which
// holds while the block spans under 2^32 ns (4.3 s: 16 steps of 268 ms; an overloaded 8B replica
// takes ~65 ms per step). A block whose span exceeds that (idle gaps, very slow steps) keeps its
// steps as full 64-bit times instead. Reading step i gives exactly the SimTime that was appended;
// the layout is invisible to readers.
#ifndef SERVESIM_SIM_METRICS_STEP_ENDS_H_
#define SERVESIM_SIM_METRICS_STEP_ENDS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <vector>

#include "sim/base/append_log.h"
#include "sim/base/time.h"

namespace servesim::metrics {

class StepEnds {
 public:
  static constexpr std::size_t kBlockShift = 4;
  static constexpr std::size_t kBlock = std::size_t{1} << kBlockShift;  // steps per block

  StepEnds() = default;
  StepEnds(std::initializer_list<SimTime> ends) {
    for (SimTime t : ends) push_back(t);
  }

  // REQUIRES: t ≥ the previous end (steps end in order).
  void push_back(SimTime t) {
    if (block_left_ == 0) start_block(t);
    --block_left_;
    const uint64_t off = static_cast<uint64_t>(t.ns()) - static_cast<uint64_t>(block_base_);
    if (off < offset_limit_) [[likely]] {
      offsets_.push_back(static_cast<uint32_t>(off));
    } else {
      push_wide(t);
    }
  }

  std::size_t size() const { return offsets_.size(); }
  bool empty() const { return offsets_.empty(); }
  [[gnu::always_inline]] SimTime operator[](std::size_t i) const {
    const int64_t base = base_[i >> kBlockShift];
    if (base >= 0) [[likely]]
      return SimTime::from_ns(base + static_cast<int64_t>(offsets_[i]));
    return wide_at(i);
  }
  // Calls f(i, end of step i) for every step in order: a pass over the whole log without the
  // per-element lookups of operator[].
  template <typename F>
  void for_each(F&& f) const {
    std::size_t i = 0;
    int64_t base = 0;
    offsets_.for_each_span([&](const uint32_t* off, std::size_t n) {
      for (std::size_t j = 0; j < n; ++j, ++i) {
        if ((i & (kBlock - 1)) == 0) base = base_[i >> kBlockShift];
        f(i, base >= 0 ? SimTime::from_ns(base + static_cast<int64_t>(off[j])) : wide_at(i));
      }
    });
  }

  // Frees the storage of steps before step `i` that no longer needs to be read (AppendLog's
  // discard_before: whole chunks of 2 Mi steps; the wide blocks' times are kept). Indexes do not
  // move; reading a freed step is undefined, and so is for_each() or a copy after a discard.
  // Returns the steps freed so far.
  std::size_t discard_before(std::size_t i) {
    base_.discard_before(i >> kBlockShift);
    return offsets_.discard_before(i);
  }
  std::size_t discarded() const { return offsets_.discarded(); }  // steps freed so far

  SimTime front() const { return (*this)[0]; }
  SimTime back() const { return (*this)[size() - 1]; }

 private:
  static constexpr uint64_t kMaxOffset = std::numeric_limits<uint32_t>::max();

  [[gnu::noinline]] SimTime wide_at(std::size_t i) const {
    const auto w = static_cast<std::size_t>(~base_[i >> kBlockShift]);
    return SimTime::from_ns(wide_[w * kBlock + (i & (kBlock - 1))]);
  }

  // A new block, based at t. (A negative time, never a step's end, would read as a wide block's
  // index: its block is based at 0, and the offset, negative, sends it to the wide path.)
  [[gnu::noinline]] void start_block(SimTime t) {
    block_base_ = std::max<int64_t>(t.ns(), 0);
    base_.push_back(block_base_);
    block_left_ = kBlock;
    offset_limit_ = kMaxOffset + 1;
  }

  // The current block does not fit 32-bit offsets (or no longer does): its steps so far move to
  // wide_, and so does this one. offsets_ keeps a placeholder so that indexes stay aligned.
  [[gnu::noinline]] void push_wide(SimTime t) {
    const std::size_t first = base_.size() * kBlock - kBlock;
    if (base_.back() >= 0) {
      const std::size_t start = wide_.size();
      wide_.resize(start + kBlock, 0);
      for (std::size_t j = first; j < offsets_.size(); ++j) {
        wide_[start + (j - first)] = base_.back() + static_cast<int64_t>(offsets_[j]);
      }
      base_.back() = ~static_cast<int64_t>(start / kBlock);
      offset_limit_ = 0;  // the rest of the block goes here too
    }
    const std::size_t i = offsets_.size();
    wide_[static_cast<std::size_t>(~base_.back()) * kBlock + (i - first)] = t.ns();
    offsets_.push_back(0);
  }

  AppendLog<uint32_t> offsets_;  // per step: its end − its block's base (0 in a wide block)
  // Per block: the end of its first step in ns (≥ 0: step ends are never negative), or, for a
  // wide block, ~(its index among the wide blocks) (< 0).
  AppendLog<int64_t> base_;
  std::vector<int64_t> wide_;  // kBlock full times per wide block
  // The block being written: its base, the steps it still takes, and the offsets it can store
  // (2^32 while compact, 0 once wide).
  int64_t block_base_ = 0;
  std::size_t block_left_ = 0;
  uint64_t offset_limit_ = 0;
};

}  // namespace servesim::metrics

#endif  // SERVESIM_SIM_METRICS_STEP_ENDS_H_
