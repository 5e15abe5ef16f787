// ReferenceKvCache: the per-block KV cache servesim used before block runs (kept for tests only).
//
// Every block is one struct in one LRU free queue, freed one by one in reverse table order; unique
// blocks carry a (request, index) key checked against the request's previous table. The
// differential test in kv_cache_manager_test.cpp drives it and KvCacheManager through the same
// random operations and requires the same hits and free counts at every step.
#ifndef SERVESIM_TESTS_UNIT_REPLICA_REFERENCE_KV_CACHE_H_
#define SERVESIM_TESTS_UNIT_REPLICA_REFERENCE_KV_CACHE_H_

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "sim/base/error.h"

namespace servesim::sim::testing {

class ReferenceKvCache {
 public:
  static constexpr uint64_t kNoKey = ~0ull;

  ReferenceKvCache(int64_t num_blocks, int block_size, bool enable_prefix_caching);

  int64_t num_blocks() const { return num_blocks_; }
  int block_size() const { return block_size_; }
  bool prefix_caching() const { return prefix_caching_; }
  // Blocks that can be handed out now: never used, or cached with no holder (evictable).
  int64_t num_free_blocks() const { return num_free_; }
  int64_t num_used_blocks() const { return num_blocks_ - num_free_; }

  // Key of block `index` of a request (see the class comment).
  static uint64_t shared_key(int64_t group, int64_t index) {
    return (static_cast<uint64_t>(group) << 24) | static_cast<uint64_t>(index);
  }
  static uint64_t unique_key(int64_t request_id, int64_t index) {
    return (1ull << 62) | (static_cast<uint64_t>(request_id) << 24) | static_cast<uint64_t>(index);
  }

  // How many leading blocks of a request are cached. `max_blocks` caps the answer (vLLM keeps at
  // least one token to compute). `previous` is the request's block table from before a
  // preemption (empty for a new request); `shared_blocks` of them are shared-prefix blocks of
  // `group`. Fills `hits` with the block ids, in order. Does not change any state.
  int64_t find_cached(int64_t request_id, int64_t group, int64_t shared_blocks,
                      const std::vector<int32_t>& previous, int64_t max_blocks,
                      std::vector<int32_t>& hits) const;

  // The number of free blocks that allocate() would consume: `new_blocks` fresh ones plus the
  // hits that are currently evictable (ref count 0).
  int64_t blocks_needed(int64_t new_blocks, const std::vector<int32_t>& hits) const;

  // Takes a reference on each hit block (removing evictable ones from the free queue) and
  // appends them to `table`. REQUIRES: the hits come from find_cached with no change since.
  void take_hits(const std::vector<int32_t>& hits, std::vector<int32_t>& table);

  // Appends `n` fresh blocks to `table`, evicting cached blocks as needed.
  // REQUIRES: n <= num_free_blocks().
  void allocate(int64_t n, std::vector<int32_t>& table);

  // Registers the shared-prefix blocks table[first, last) of `group` (now computed) as cached,
  // so later requests can hit them. Blocks already registered are skipped.
  void register_shared(int64_t group, const std::vector<int32_t>& table, int64_t first,
                       int64_t last);

  // Releases a request's blocks. The first `full_blocks` of them are full and computed: they keep
  // their content key (unique_key unless already shared) so they can be hit again. The table is
  // left intact so that it can serve as `previous` after a preemption.
  void free(int64_t request_id, const std::vector<int32_t>& table, int64_t full_blocks);

  // Blocks held outside a table (KvCacheManager::take_detached / release_detached): taken like
  // fresh blocks (allocate into a list of their own), returned to the tail in the order given;
  // `full` ones (with prefix caching) keep a content key nobody looks up, so that reusing them
  // counts as an eviction.
  void release_blocks(const std::vector<int32_t>& blocks, bool full);

  // Counters for the prefix-cache hit rate (tokens).
  void record_query(int64_t queried_tokens, int64_t hit_tokens) {
    queried_tokens_ += queried_tokens;
    hit_tokens_ += hit_tokens;
  }
  int64_t queried_tokens() const { return queried_tokens_; }
  int64_t hit_tokens() const { return hit_tokens_; }
  int64_t evicted_blocks() const { return evicted_blocks_; }

 private:
  void push_free_tail(int32_t b);
  void unlink_free(int32_t b);
  int32_t pop_free_head();

  int64_t num_blocks_;
  int block_size_;
  bool prefix_caching_;
  int64_t num_free_;
  // One struct per block (not parallel arrays): allocation and free touch a block and its free
  // queue neighbours, and a block's fields then share one cache line.
  struct Block {
    uint64_t key = kNoKey;  // content key, kNoKey when none
    int32_t ref = 0;        // holders
    int32_t prev = -1;      // free queue links (-1 = none)
    int32_t next = -1;
  };
  std::vector<Block> blocks_;
  int32_t head_ = -1;
  int32_t tail_ = -1;
  std::unordered_map<uint64_t, int32_t> shared_;  // shared key -> block
  int64_t queried_tokens_ = 0;
  int64_t hit_tokens_ = 0;
  int64_t evicted_blocks_ = 0;
};

inline ReferenceKvCache::ReferenceKvCache(int64_t num_blocks, int block_size,
                                          bool enable_prefix_caching)
    : num_blocks_(num_blocks),
      block_size_(block_size),
      prefix_caching_(enable_prefix_caching),
      num_free_(0),
      blocks_(num_blocks) {
  SERVESIM_CHECK(num_blocks > 0 && num_blocks < (1ll << 31), "block count out of range");
  for (int32_t b = 0; b < num_blocks; ++b) push_free_tail(b);
}

inline void ReferenceKvCache::push_free_tail(int32_t b) {
  blocks_[b].prev = tail_;
  blocks_[b].next = -1;
  if (tail_ >= 0) {
    blocks_[tail_].next = b;
  } else {
    head_ = b;
  }
  tail_ = b;
  ++num_free_;
}

inline void ReferenceKvCache::unlink_free(int32_t b) {
  Block& blk = blocks_[b];
  if (blk.prev >= 0) {
    blocks_[blk.prev].next = blk.next;
  } else {
    head_ = blk.next;
  }
  if (blk.next >= 0) {
    blocks_[blk.next].prev = blk.prev;
  } else {
    tail_ = blk.prev;
  }
  blk.prev = blk.next = -1;
  --num_free_;
}

inline int32_t ReferenceKvCache::pop_free_head() {
  SERVESIM_CHECK(head_ >= 0, "KV cache over-allocated");
  const int32_t b = head_;
  unlink_free(b);
  // Evict whatever the block cached (vLLM BlockPool._maybe_evict_cached_block).
  if (blocks_[b].key != kNoKey) {
    ++evicted_blocks_;
    if ((blocks_[b].key >> 62) == 0) {
      auto it = shared_.find(blocks_[b].key);
      if (it != shared_.end() && it->second == b) shared_.erase(it);
    }
    blocks_[b].key = kNoKey;
  }
  return b;
}

inline int64_t ReferenceKvCache::find_cached(int64_t request_id, int64_t group,
                                             int64_t shared_blocks,
                                             const std::vector<int32_t>& previous,
                                             int64_t max_blocks, std::vector<int32_t>& hits) const {
  hits.clear();
  if (!prefix_caching_) return 0;
  for (int64_t i = 0; i < max_blocks; ++i) {
    if (i < shared_blocks) {
      auto it = shared_.find(shared_key(group, i));
      if (it == shared_.end()) break;
      hits.push_back(it->second);
    } else {
      if (i >= static_cast<int64_t>(previous.size())) break;
      const int32_t b = previous[i];
      if (blocks_[b].key != unique_key(request_id, i)) break;
      hits.push_back(b);
    }
  }
  return static_cast<int64_t>(hits.size());
}

inline int64_t ReferenceKvCache::blocks_needed(int64_t new_blocks,
                                               const std::vector<int32_t>& hits) const {
  int64_t evictable = 0;
  for (int32_t b : hits) evictable += (blocks_[b].ref == 0);
  return new_blocks + evictable;
}

inline void ReferenceKvCache::take_hits(const std::vector<int32_t>& hits,
                                        std::vector<int32_t>& table) {
  for (int32_t b : hits) {
    if (blocks_[b].ref == 0) unlink_free(b);
    ++blocks_[b].ref;
    table.push_back(b);
  }
}

inline void ReferenceKvCache::allocate(int64_t n, std::vector<int32_t>& table) {
  SERVESIM_CHECK(n <= num_free_, "allocate beyond free blocks");
  for (int64_t i = 0; i < n; ++i) {
    const int32_t b = pop_free_head();
    blocks_[b].ref = 1;
    table.push_back(b);
  }
}

inline void ReferenceKvCache::register_shared(int64_t group, const std::vector<int32_t>& table,
                                              int64_t first, int64_t last) {
  if (!prefix_caching_) return;
  for (int64_t i = first; i < last; ++i) {
    const int32_t b = table[i];
    const uint64_t k = shared_key(group, i);
    if (blocks_[b].key == k) continue;
    // Another copy may already be cached (two requests computed the same prefix at once); like
    // vLLM, the first one stays the map's entry and this block stays a private duplicate.
    if (shared_.emplace(k, b).second) blocks_[b].key = k;
  }
}

inline void ReferenceKvCache::free(int64_t request_id, const std::vector<int32_t>& table,
                                   int64_t full_blocks) {
  // Reverse order: the tail of a request is evicted before its head (vLLM free_blocks reversed).
  for (int64_t i = static_cast<int64_t>(table.size()) - 1; i >= 0; --i) {
    const int32_t b = table[i];
    SERVESIM_CHECK(blocks_[b].ref > 0, "double free of a KV block");
    if (prefix_caching_ && i < full_blocks && blocks_[b].key == kNoKey) {
      blocks_[b].key = unique_key(request_id, i);
    }
    if (--blocks_[b].ref == 0) push_free_tail(b);
  }
}

inline void ReferenceKvCache::release_blocks(const std::vector<int32_t>& blocks, bool full) {
  for (const int32_t b : blocks) {
    SERVESIM_CHECK(blocks_[b].ref == 1, "releasing a block that is not held once");
    if (prefix_caching_ && full) blocks_[b].key = (1ull << 62) | static_cast<uint64_t>(b);
    blocks_[b].ref = 0;
    push_free_tail(b);
  }
}

}  // namespace servesim::sim::testing

#endif  // SERVESIM_TESTS_UNIT_REPLICA_REFERENCE_KV_CACHE_H_
