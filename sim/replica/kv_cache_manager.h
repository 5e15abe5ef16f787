// KvCacheManager: the paged KV cache of one replica, with prefix caching of full blocks.
//
// Follows vLLM V1's BlockPool/KVCacheManager (REFERENCE.md §1.1–1.2): a fixed pool of blocks of
// `block_size` tokens; a request holds a block table; freeing a request returns its blocks to the
// tail of a free queue in reverse order (its last blocks are evicted first); allocation pops the
// head (least recently freed). With prefix caching, a freed full block keeps its content and can
// be hit again until it is evicted; a hit on a free block takes it out of the free queue.
//
// Which blocks can ever be hit. A block lying entirely inside a request's shared prefix (group,
// index) can be hit by any request of the group: such blocks are *identified* — each has an id,
// a reference count and, once computed, an entry in a hash map keyed by (group, index). Every
// other block (the rest of a prompt, every generated token) holds content unique to its request:
// only that request can hit it, and only after a preemption, as a prefix of the blocks it had.
// Those blocks are *anonymous*: a request holds a count of them, not ids. This is exact, not an
// approximation: which physical block holds what is never observable, only what stays cached.
//
// The free queue (LRU order) is a linked list of nodes, each standing for one or more blocks:
//   dead     n blocks whose content can never be hit again (never used, or unique blocks of a
//            finished request): only their number matters, and whether they hold content (an
//            eviction counts for evicted_blocks(), as vLLM counts a reused cached block);
//            adjacent dead frees of the same kind merge;
//   extent   the full unique blocks [lo, hi) of a preempted request, freed in reverse order, so
//            eviction takes hi−1 first and what stays cached is always a prefix [lo, hi');
//   block    one identified block with no holder (still findable through the map if cached).
// Allocation pops whole runs at a time, so a request's unique blocks cost O(1) to allocate and
// free instead of one linked-list operation each. The resulting hits and evictions are exactly
// those of a per-block free queue (tests/unit/replica/kv_cache_manager_test.cpp replays random
// operation sequences against the per-block implementation kept in the tests).
//
// Invariants: 0 <= used blocks <= num_blocks; an identified block is in the free queue iff its
// reference count is 0; Σ blocks of the queue's nodes == num_free_blocks().
#ifndef SERVESIM_SIM_REPLICA_KV_CACHE_MANAGER_H_
#define SERVESIM_SIM_REPLICA_KV_CACHE_MANAGER_H_

#include <cstdint>
#include <vector>

#include "sim/replica/index_list.h"
#include "sim/replica/key_index.h"

namespace servesim::sim {

// A request's block table. Blocks [0, ids.size()) are identified (ids.size() == min(count,
// shared_limit)); blocks [ids.size(), count) are anonymous. After a preemption `extent` names
// the queue node holding its cached unique blocks (−1: none), until its next admission.
struct KvTable {
  int32_t shared_limit = 0;  // blocks of the table that lie inside the shared prefix
  int64_t count = 0;         // blocks held
  std::vector<int32_t> ids;  // identified blocks, in table order
  int32_t extent = -1;       // free-queue node of the unique blocks cached at a preemption
  // Resets to an empty table for a new request whose first `shared_limit` blocks are shareable.
  void reset(int32_t limit) {
    shared_limit = limit;
    count = 0;
    ids.clear();
    extent = -1;
  }
};

class KvCacheManager {
 public:
  KvCacheManager(int64_t num_blocks, int block_size, bool enable_prefix_caching);

  int64_t num_blocks() const { return num_blocks_; }
  int block_size() const { return block_size_; }
  bool prefix_caching() const { return prefix_caching_; }
  // Blocks that can be handed out now: never used, or cached with no holder (evictable).
  int64_t num_free_blocks() const { return num_free_; }
  int64_t num_used_blocks() const { return num_blocks_ - num_free_; }

  // Key of block `index` of the shared prefix of `group` (when the request has no hash chain).
  static uint64_t shared_key(int64_t group, int64_t index) {
    return (static_cast<uint64_t>(group) << 24) | static_cast<uint64_t>(index);
  }
  // Key of a block whose content key comes from a trace's hash chain (kept apart from
  // shared_key's range by bit 61).
  static uint64_t chain_key(uint64_t content_hash) {
    return (1ull << 61) | (content_hash & ((1ull << 61) - 1));
  }

  // How many leading blocks of a request are cached, at most `max_blocks` (vLLM keeps at least
  // one token to compute). `table` is the request's table (empty, or as left by a preemption's
  // free()); its first table.shared_limit blocks are shared-prefix blocks of `group`. Fills
  // `shared_hits` with the ids of the hits among those; the rest of the hits are the request's
  // own cached unique blocks. With `chain_keys`, shared block i has key chain_keys[i] (values of
  // chain_key()) instead of (group, i). Does not change any state.
  int64_t find_cached(int64_t request_id, int64_t group, const KvTable& table, int64_t max_blocks,
                      std::vector<int32_t>& shared_hits,
                      const uint64_t* chain_keys = nullptr) const;

  // The number of free blocks that taking `hits` (from find_cached) and allocating `new_blocks`
  // fresh ones would consume: the fresh ones plus the hits that are currently evictable.
  int64_t blocks_needed(int64_t new_blocks, int64_t hits,
                        const std::vector<int32_t>& shared_hits) const;

  // Admits a request: empties `table` (what its previous extent did not hit can never be hit
  // again), then takes a reference on each hit (removing evictable ones from the free queue).
  // REQUIRES: `hits`/`shared_hits` come from find_cached on this table with no change since.
  void take_hits(int64_t request_id, int64_t hits, const std::vector<int32_t>& shared_hits,
                 KvTable& table);

  // Appends `n` fresh blocks to `table`, evicting cached blocks as needed.
  // REQUIRES: n <= num_free_blocks().
  void allocate(int64_t n, KvTable& table);

  // Registers the shared-prefix blocks [first, last) of the table (now computed) as cached for
  // `group`, so later requests can hit them. Blocks already registered are skipped.
  // `chain_keys` as in find_cached. REQUIRES: last <= table.ids.size().
  void register_shared(int64_t group, const KvTable& table, int64_t first, int64_t last,
                       const uint64_t* chain_keys = nullptr);

  // Releases a request's blocks (in reverse table order) and empties the table. The first
  // `full_blocks` are full and computed. With `preempted`, its full unique blocks stay cached for
  // the request itself (table.extent); otherwise (finished) they can never be hit again.
  void free(int64_t request_id, KvTable& table, int64_t full_blocks, bool preempted);

  // Blocks a request holds outside its table: the sliding-window groups of vLLM's hybrid KV cache
  // manager (SlidingWindowManager; sim/replica/replica.h, "Sliding-window layers"). They are never
  // hit again (servesim does not prefix-cache sliding-window blocks: docs/semantics.md).
  // take_detached pops `n` from the head of the free queue, evicting what they cached;
  // release_detached returns `n` to its tail (`full`: they hold computed content, so reusing them
  // later counts as an eviction, as vLLM counts a reused block that kept its hash).
  // REQUIRES: n <= num_free_blocks() for take_detached.
  void take_detached(int64_t n) { pop_head(n); }
  void release_detached(int64_t n, bool full) {
    push_dead(n, full && prefix_caching_ ? Kind::kDeadKeyed : Kind::kDead);
  }

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
  static constexpr uint64_t kNoKey = ~0ull;
  enum class Kind : int32_t { kDead, kDeadKeyed, kExtent, kBlock };
  struct Node {
    int32_t prev = -1, next = -1;
    Kind kind = Kind::kDead;
    int32_t a = 0;            // dead (keyed or not): block count; extent: lo; block: block id
    int32_t b = 0;            // extent: hi
    int64_t request_id = -1;  // extent: owner
    int64_t size() const {
      return kind == Kind::kDead || kind == Kind::kDeadKeyed ? a
             : kind == Kind::kExtent                         ? int64_t{b} - a
                                                             : 1;
    }
  };
  struct Block {            // an identified block
    uint64_t key = kNoKey;  // shared key when cached (then shared_ maps it here), else kNoKey
    int32_t ref = 0;        // holders
    int32_t node = -1;      // its free-queue node while ref == 0
  };

  int32_t new_node(const Node& n);                     // appended at the tail
  void unlink(int32_t node);                           // removed from the queue and recycled
  void push_dead(int64_t n, Kind kind = Kind::kDead);  // kDead or kDeadKeyed
  // Pops `n` blocks from the head, evicting what they cached; identified blocks popped are
  // released unless one is asked for in `reuse` (then the first such id is returned there).
  void pop_head(int64_t n);
  int32_t pop_identified();  // pops one block and returns an identified id for it (ref 0)
  int32_t new_block_id();
  void release_block_id(int32_t b);
  void evict(int32_t b);
  bool extent_valid(int64_t request_id, const KvTable& table) const;

  int64_t num_blocks_;
  int block_size_;
  bool prefix_caching_;
  int64_t num_free_;
  std::vector<Node> nodes_;
  std::vector<int32_t> free_nodes_;
  IndexList queue_;            // the free queue: head evicted first
  std::vector<Block> blocks_;  // identified blocks, by id
  std::vector<int32_t> free_ids_;
  KeyIndex shared_;  // shared key -> block id
  int64_t queried_tokens_ = 0;
  int64_t hit_tokens_ = 0;
  int64_t evicted_blocks_ = 0;
};

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_KV_CACHE_MANAGER_H_
