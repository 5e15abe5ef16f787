// SegmentList: a RequestRecord's token segments, stored without a heap allocation when there is
// one segment (a request that was never preempted or skipped: almost all of them).
//
// A contiguous list like std::vector<TokenSegment> (size, [], front, back, iteration, push_back),
// 24 bytes, holding the first segment inline; a second one moves the list to the heap.
#ifndef SERVESIM_SIM_METRICS_SEGMENT_LIST_H_
#define SERVESIM_SIM_METRICS_SEGMENT_LIST_H_

#include <algorithm>
#include <cstdint>
#include <vector>

namespace servesim::metrics {

// A request emitted one token at the end of each step first_step, first_step+1, ..., last_step
// (step indices of its replica's StepLog). Invariant: first_step <= last_step.
struct TokenSegment {
  int64_t first_step = 0;
  int64_t last_step = 0;
  int64_t tokens() const { return last_step - first_step + 1; }
};

class SegmentList {
 public:
  SegmentList() : inline_{} {}
  SegmentList(const SegmentList& o) : inline_{} { assign(o.begin(), o.end()); }
  SegmentList(SegmentList&& o) noexcept : inline_(o.inline_), size_(o.size_), cap_(o.cap_) {
    o.size_ = 0;
    o.cap_ = 1;
  }
  SegmentList& operator=(const SegmentList& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  SegmentList& operator=(SegmentList&& o) noexcept {
    if (this != &o) {
      release();
      inline_ = o.inline_;
      size_ = o.size_;
      cap_ = o.cap_;
      o.size_ = 0;
      o.cap_ = 1;
    }
    return *this;
  }
  SegmentList& operator=(const std::vector<TokenSegment>& v) {
    assign(v.data(), v.data() + v.size());
    return *this;
  }
  ~SegmentList() { release(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  TokenSegment* begin() { return data(); }
  TokenSegment* end() { return data() + size_; }
  const TokenSegment* begin() const { return data(); }
  const TokenSegment* end() const { return data() + size_; }
  TokenSegment& operator[](size_t i) { return data()[i]; }
  const TokenSegment& operator[](size_t i) const { return data()[i]; }
  TokenSegment& front() { return data()[0]; }
  const TokenSegment& front() const { return data()[0]; }
  TokenSegment& back() { return data()[size_ - 1]; }
  const TokenSegment& back() const { return data()[size_ - 1]; }
  void clear() { size_ = 0; }

  void push_back(const TokenSegment& s) {
    if (size_ == cap_) grow(cap_ * 2);
    data()[size_++] = s;
  }

 private:
  // Both members of the union are trivial; which one is live is told by cap_ (1 = inline).
  union Storage {
    TokenSegment one;
    TokenSegment* heap;
  };
  TokenSegment* data() { return cap_ == 1 ? &inline_.one : inline_.heap; }
  const TokenSegment* data() const { return cap_ == 1 ? &inline_.one : inline_.heap; }
  void release() {
    if (cap_ > 1) delete[] inline_.heap;
    cap_ = 1;
    size_ = 0;
  }
  void grow(uint32_t cap) {
    auto* heap = new TokenSegment[cap];
    std::copy(begin(), end(), heap);
    if (cap_ > 1) delete[] inline_.heap;
    inline_.heap = heap;
    cap_ = cap;
  }
  void assign(const TokenSegment* first, const TokenSegment* last) {
    const auto n = static_cast<uint32_t>(last - first);
    if (n > cap_) {
      // Copy first: `first` may point into this list only when n <= size_ <= cap_.
      auto* heap = new TokenSegment[n];
      std::copy(first, last, heap);
      if (cap_ > 1) delete[] inline_.heap;
      inline_.heap = heap;
      cap_ = n;
    } else {
      std::copy(first, last, data());
    }
    size_ = n;
  }

  Storage inline_;
  uint32_t size_ = 0;
  uint32_t cap_ = 1;
};

}  // namespace servesim::metrics

#endif  // SERVESIM_SIM_METRICS_SEGMENT_LIST_H_
