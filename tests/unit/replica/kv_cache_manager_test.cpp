#include "sim/replica/kv_cache_manager.h"

#include <catch2/catch.hpp>

namespace servesim::sim {
namespace {

TEST_CASE("allocation and free conserve blocks", "[kv]") {
  KvCacheManager kv(10, 16, true);
  std::vector<int32_t> a, b;
  kv.allocate(4, a);
  kv.allocate(6, b);
  REQUIRE(kv.num_free_blocks() == 0);
  REQUIRE(kv.num_used_blocks() == 10);
  kv.free(0, a, 4);
  REQUIRE(kv.num_free_blocks() == 4);
  kv.free(1, b, 0);
  REQUIRE(kv.num_free_blocks() == 10);
}

TEST_CASE("a freed request's full blocks can be hit again until evicted", "[kv]") {
  KvCacheManager kv(6, 16, true);
  std::vector<int32_t> a, hits;
  kv.allocate(4, a);
  kv.free(/*request=*/3, a, /*full_blocks=*/3);  // the 4th was partial
  REQUIRE(kv.find_cached(3, -1, 0, a, 10, hits) == 3);
  REQUIRE(kv.find_cached(4, -1, 0, a, 10, hits) == 0);  // another request's unique blocks
  // Free queue after the free: [unused 4, unused 5, a3, a2, a1, a0]: allocating 3 evicts a3, a2
  // is still there; allocating 4 evicts a2 too, which ends the cached prefix after a0, a1.
  std::vector<int32_t> other;
  kv.allocate(4, other);
  REQUIRE(kv.find_cached(3, -1, 0, a, 10, hits) == 2);
}

TEST_CASE("shared prefix blocks are found by group and index", "[kv]") {
  KvCacheManager kv(8, 16, true);
  std::vector<int32_t> a, hits;
  kv.allocate(3, a);
  kv.register_shared(/*group=*/5, a, 0, 2);
  REQUIRE(kv.find_cached(99, 5, 2, {}, 10, hits) == 2);
  REQUIRE(kv.find_cached(99, 6, 2, {}, 10, hits) == 0);
  // In use (ref 1): a hit costs no free block; after a free it costs one each (evictable).
  REQUIRE(kv.blocks_needed(1, hits) == 1);
  kv.find_cached(99, 5, 2, {}, 10, hits);
  REQUIRE(kv.blocks_needed(1, hits) == 1);
  kv.free(0, a, 2);
  kv.find_cached(99, 5, 2, {}, 10, hits);
  REQUIRE(kv.blocks_needed(1, hits) == 3);
  std::vector<int32_t> b;
  kv.take_hits(hits, b);
  REQUIRE(kv.num_used_blocks() == 2);
}

TEST_CASE("max_blocks caps cache hits (vLLM recomputes the last token)", "[kv]") {
  KvCacheManager kv(8, 16, true);
  std::vector<int32_t> a, hits;
  kv.allocate(2, a);
  kv.register_shared(1, a, 0, 2);
  REQUIRE(kv.find_cached(9, 1, 2, {}, 1, hits) == 1);
}

TEST_CASE("prefix caching off never hits", "[kv]") {
  KvCacheManager kv(8, 16, false);
  std::vector<int32_t> a, hits;
  kv.allocate(2, a);
  kv.register_shared(1, a, 0, 2);
  kv.free(0, a, 2);
  REQUIRE(kv.find_cached(0, 1, 2, a, 10, hits) == 0);
}

}  // namespace
}  // namespace servesim::sim
