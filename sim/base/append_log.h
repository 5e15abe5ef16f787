// AppendLog<T>: an append-only array of a trivially copyable T, for logs written once per engine
// step, that never copies itself as it grows.
//
// A run of a million requests at low load logs ~26 million step ends (210 MB). std::vector grows
// by allocating a larger buffer and copying into it, so every growth writes the whole log into
// fresh pages once more: on a virtual machine, where each fresh page costs a fault and a clear,
// the copies took ~15 % of such a run. AppendLog keeps its first kChunk elements in one buffer
// that grows like a vector's (small logs — most runs — cost what a vector costs) and every
// further element in fixed chunks of kChunk elements (2 MiB-aligned, advised to use huge pages)
// that are never moved: each page is written once. Element i is chunk i / kChunk, slot
// i % kChunk; contents, order and indexing are those of a vector.
#ifndef SERVESIM_SIM_BASE_APPEND_LOG_H_
#define SERVESIM_SIM_BASE_APPEND_LOG_H_

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <new>
#include <type_traits>
#include <vector>

#include "sim/base/huge_pages.h"

namespace servesim {

template <typename T>
class AppendLog {
  static_assert(std::is_trivially_copyable_v<T>, "AppendLog moves its first chunk with realloc");

 public:
  static constexpr std::size_t kShift = 21;  // 2 Mi elements per chunk (16 MiB of 8-byte T)
  static constexpr std::size_t kChunk = std::size_t{1} << kShift;

  AppendLog() = default;
  AppendLog(std::initializer_list<T> values) {
    for (const T& v : values) push_back(v);
  }
  AppendLog(const AppendLog& o) { append_all(o); }
  AppendLog(AppendLog&& o) noexcept { swap(o); }
  AppendLog& operator=(const AppendLog& o) {
    if (this != &o) {
      AppendLog copy(o);
      swap(copy);
    }
    return *this;
  }
  AppendLog& operator=(AppendLog&& o) noexcept {
    AppendLog moved(static_cast<AppendLog&&>(o));
    swap(moved);
    return *this;
  }
  AppendLog& operator=(std::initializer_list<T> values) {
    AppendLog copy(values);
    swap(copy);
    return *this;
  }
  ~AppendLog() {
    for (T* c : chunks_) std::free(c);
  }

  void push_back(const T& v) {
    if (tail_ == tail_end_) grow();
    *tail_++ = v;
  }

  // Chunks before the last are full (kChunk elements; the first becomes a chunk of kChunk before a
  // second exists), so the size follows from the write position.
  std::size_t size() const {
    if (chunks_.empty()) return 0;
    return (chunks_.size() - 1) * kChunk + static_cast<std::size_t>(tail_ - chunks_.back());
  }
  bool empty() const { return size() == 0; }
  [[gnu::always_inline]] const T& operator[](std::size_t i) const {
    return chunks_[i >> kShift][i & (kChunk - 1)];
  }
  const T& front() const { return chunks_.front()[0]; }
  // The last element (always in the chunk being written). REQUIRES: !empty().
  const T& back() const { return tail_[-1]; }
  T& back() { return tail_[-1]; }

  // Frees the chunks that lie wholly before element `i` (a live run's log that no reader needs
  // from the start: sim/cluster/live_engine.h). Indexes do not move: elements from the first
  // kept chunk on read as before, and size() is unchanged; reading a freed element is undefined.
  // Returns the number of elements freed so far (a multiple of kChunk). After it has freed
  // anything, copying the log and for_each_span are not allowed.
  std::size_t discard_before(std::size_t i) {
    const std::size_t keep = std::min(i >> kShift, chunks_.empty() ? 0 : chunks_.size() - 1);
    for (; discarded_ < keep; ++discarded_) {
      std::free(chunks_[discarded_]);
      chunks_[discarded_] = nullptr;
    }
    return discarded_ * kChunk;
  }
  std::size_t discarded() const { return discarded_ * kChunk; }  // elements freed so far
  // Calls f(first, count) for the stored elements, chunk by chunk, in order (for passes over
  // the whole log without indexing each element).
  template <typename F>
  void for_each_span(F&& f) const {
    std::size_t left = size();
    for (std::size_t c = 0; c < chunks_.size() && left > 0; ++c) {
      const std::size_t n = std::min(left, c == 0 ? first_capacity_ : kChunk);
      f(static_cast<const T*>(chunks_[c]), n);
      left -= n;
    }
  }

  void swap(AppendLog& o) noexcept {
    chunks_.swap(o.chunks_);
    std::swap(first_capacity_, o.first_capacity_);
    std::swap(tail_, o.tail_);
    std::swap(tail_end_, o.tail_end_);
    std::swap(discarded_, o.discarded_);
  }

 private:
  void append_all(const AppendLog& o) {
    const std::size_t n = o.size();
    for (std::size_t i = 0; i < n; ++i) push_back(o[i]);
  }
  [[gnu::noinline]] void grow() {
    const std::size_t size = this->size();
    if (size < kChunk) {  // the first chunk, growing 4× at a time up to kChunk
      const std::size_t n = std::min(kChunk, std::max<std::size_t>(4096, 4 * first_capacity_));
      void* p = std::realloc(chunks_.empty() ? nullptr : chunks_[0], n * sizeof(T));
      if (p == nullptr) throw std::bad_alloc();
      if (chunks_.empty()) chunks_.push_back(nullptr);
      chunks_[0] = static_cast<T*>(p);
      first_capacity_ = n;
      tail_ = chunks_[0] + size;
      tail_end_ = chunks_[0] + n;
      advise_huge_pages(tail_, (n - size) * sizeof(T));
      return;
    }
    constexpr std::size_t kAlign = std::size_t{2} << 20;  // a huge page
    void* p = std::aligned_alloc(kAlign, kChunk * sizeof(T));
    if (p == nullptr) throw std::bad_alloc();
    advise_huge_pages(p, kChunk * sizeof(T));
    chunks_.push_back(static_cast<T*>(p));
    tail_ = chunks_.back();
    tail_end_ = tail_ + kChunk;
  }

  std::vector<T*> chunks_;          // [0] grows to kChunk elements; the rest hold kChunk each
  std::size_t first_capacity_ = 0;  // elements allocated in chunks_[0]
  T* tail_ = nullptr;               // where the next element goes
  T* tail_end_ = nullptr;           // end of the chunk being written
  std::size_t discarded_ = 0;       // chunks [0, discarded_) are freed (discard_before)
};

}  // namespace servesim

#endif  // SERVESIM_SIM_BASE_APPEND_LOG_H_
