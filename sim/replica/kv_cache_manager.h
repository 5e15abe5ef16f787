// KvCacheManager: the paged KV cache of one replica, with prefix caching of full blocks.
//
// Follows vLLM V1's BlockPool/KVCacheManager (REFERENCE.md §1.1–1.2): a fixed pool of blocks of
// `block_size` tokens; a request holds a block table; freeing a request returns its blocks to the
// tail of a free queue in reverse order (its last blocks are evicted first); allocation pops the
// head (least recently freed). With prefix caching, a freed full block keeps its content key and
// can be hit again until it is evicted; a hit on a free block takes it out of the free queue.
//
// Block content keys. A full block's identity is (prefix group, block index) when the block lies
// entirely inside the request's shared prefix, else (request id, block index): the rest of a
// prompt and every generated token are unique to the request. Shared keys live in a hash map
// (any request can hit them); unique keys are only ever hit by the same request after a
// preemption, so they are checked against the request's previous block table instead of being
// hashed — this keeps the map small and the common path free of hashing.
//
// Invariants: 0 <= used blocks <= num_blocks; a block is in the free queue iff its ref count is 0.
#ifndef SERVESIM_SIM_REPLICA_KV_CACHE_MANAGER_H_
#define SERVESIM_SIM_REPLICA_KV_CACHE_MANAGER_H_

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace servesim::sim {

class KvCacheManager {
 public:
  static constexpr uint64_t kNoKey = ~0ull;

  KvCacheManager(int64_t num_blocks, int block_size, bool enable_prefix_caching);

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

  // Key of a block whose content key comes from a trace's hash chain (kept apart from
  // shared_key's range by bit 61; the top two bits stay 0 so it is hashed like a shared key).
  static uint64_t chain_key(uint64_t content_hash) {
    return (1ull << 61) | (content_hash & ((1ull << 61) - 1));
  }

  // How many leading blocks of a request are cached. `max_blocks` caps the answer (vLLM keeps at
  // least one token to compute). `previous` is the request's block table from before a
  // preemption (empty for a new request); `shared_blocks` of them are shared-prefix blocks of
  // `group` — or, when `chain_keys` is not null, blocks whose keys are chain_keys[0..shared_blocks)
  // (values of chain_key()). Fills `hits` with the block ids, in order. Does not change any state.
  int64_t find_cached(int64_t request_id, int64_t group, int64_t shared_blocks,
                      const std::vector<int32_t>& previous, int64_t max_blocks,
                      std::vector<int32_t>& hits, const uint64_t* chain_keys = nullptr) const;

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
                       int64_t last, const uint64_t* chain_keys = nullptr);

  // Releases a request's blocks. The first `full_blocks` of them are full and computed: they keep
  // their content key (unique_key unless already shared) so they can be hit again. The table is
  // left intact so that it can serve as `previous` after a preemption.
  void free(int64_t request_id, const std::vector<int32_t>& table, int64_t full_blocks);

  // Counters for the prefix-cache hit rate (tokens).
  void record_query(int64_t queried_tokens, int64_t hit_tokens) {
    queried_tokens_ += queried_tokens;
    hit_tokens_ += hit_tokens;
  }
  int64_t queried_tokens() const { return queried_tokens_; }
  int64_t hit_tokens() const { return hit_tokens_; }
  // Cached blocks (with a content key) reused for other content: vLLM's evictions.
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

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_KV_CACHE_MANAGER_H_
