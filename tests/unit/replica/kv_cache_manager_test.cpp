#include "sim/replica/kv_cache_manager.h"

#include <catch2/catch.hpp>

#include <random>

#include "tests/unit/replica/reference_kv_cache.h"

namespace servesim::sim {
namespace {

TEST_CASE("allocation and free conserve blocks", "[kv]") {
  KvCacheManager kv(10, 16, true);
  KvTable a, b;
  kv.allocate(4, a);
  kv.allocate(6, b);
  REQUIRE(kv.num_free_blocks() == 0);
  REQUIRE(kv.num_used_blocks() == 10);
  kv.free(0, a, 4, /*preempted=*/false);
  REQUIRE(kv.num_free_blocks() == 4);
  REQUIRE(a.count == 0);
  kv.free(1, b, 0, false);
  REQUIRE(kv.num_free_blocks() == 10);
}

TEST_CASE("a preempted request's full blocks can be hit again until evicted", "[kv]") {
  KvCacheManager kv(6, 16, true);
  KvTable a, other;
  std::vector<int32_t> shared;
  kv.allocate(4, a);
  kv.free(/*request=*/3, a, /*full_blocks=*/3, /*preempted=*/true);  // the 4th was partial
  REQUIRE(kv.find_cached(3, -1, a, 10, shared) == 3);
  REQUIRE(shared.empty());
  REQUIRE(kv.find_cached(4, -1, a, 10, shared) == 0);  // another request's unique blocks
  REQUIRE(kv.blocks_needed(1, 3, shared) == 4);        // its own cached blocks are evictable
  // Free queue after the free: [unused 4, unused 5, a3, a2, a1, a0]: allocating 3 evicts a3, a2
  // is still there; allocating 4 evicts a2 too, which ends the cached prefix after a0, a1.
  kv.allocate(3, other);
  REQUIRE(kv.find_cached(3, -1, a, 10, shared) == 3);
  kv.allocate(1, other);
  REQUIRE(kv.find_cached(3, -1, a, 10, shared) == 2);
  // Taking the hits removes a0, a1 from the free queue.
  kv.take_hits(3, 2, shared, a);
  REQUIRE(a.count == 2);
  REQUIRE(kv.num_free_blocks() == 0);
}

TEST_CASE("a finished request's blocks are never hit", "[kv]") {
  KvCacheManager kv(6, 16, true);
  KvTable a;
  std::vector<int32_t> shared;
  kv.allocate(4, a);
  kv.free(3, a, 4, /*preempted=*/false);
  REQUIRE(kv.find_cached(3, -1, a, 10, shared) == 0);
}

TEST_CASE("shared prefix blocks are found by group and index", "[kv]") {
  KvCacheManager kv(8, 16, true);
  KvTable a, b, probe;
  std::vector<int32_t> hits;
  a.reset(/*shared_limit=*/2);
  probe.reset(2);
  kv.allocate(3, a);
  REQUIRE(a.ids.size() == 2);
  kv.register_shared(/*group=*/5, a, 0, 2);
  REQUIRE(kv.find_cached(99, 5, probe, 10, hits) == 2);
  REQUIRE(kv.find_cached(99, 6, probe, 10, hits) == 0);
  // In use (ref 1): a hit costs no free block; after a free it costs one each (evictable).
  kv.find_cached(99, 5, probe, 10, hits);
  REQUIRE(kv.blocks_needed(1, 2, hits) == 1);
  kv.free(0, a, 2, false);
  kv.find_cached(99, 5, probe, 10, hits);
  REQUIRE(kv.blocks_needed(1, 2, hits) == 3);
  b.reset(2);
  kv.take_hits(99, 2, hits, b);
  REQUIRE(kv.num_used_blocks() == 2);
}

TEST_CASE("max_blocks caps cache hits (vLLM recomputes the last token)", "[kv]") {
  KvCacheManager kv(8, 16, true);
  KvTable a, probe;
  std::vector<int32_t> hits;
  a.reset(2);
  probe.reset(2);
  kv.allocate(2, a);
  kv.register_shared(1, a, 0, 2);
  REQUIRE(kv.find_cached(9, 1, probe, 1, hits) == 1);
}

TEST_CASE("prefix caching off never hits", "[kv]") {
  KvCacheManager kv(8, 16, false);
  KvTable a;
  std::vector<int32_t> hits;
  a.reset(2);
  kv.allocate(2, a);
  kv.register_shared(1, a, 0, 2);
  kv.free(0, a, 2, true);
  REQUIRE(kv.find_cached(0, 1, a, 10, hits) == 0);
}

// Drives KvCacheManager and the per-block reference through the same random admissions, growth,
// registrations, preemptions and finishes; every hit count and free count must agree. This is
// the proof that block runs keep vLLM's LRU eviction order and every hit.
TEST_CASE("block runs hit and evict exactly like a per-block LRU free queue", "[kv]") {
  // Operations: arrivals, admissions (with cache hits), growth, registration of shared blocks,
  // preemption, completion, and blocks held outside the table (the sliding-window groups:
  // take_detached / release_detached).
  for (const bool caching : {true, false}) {
    int64_t hits_all_seeds = 0;
    for (uint64_t seed = 1; seed <= 40; ++seed) {
      std::mt19937_64 rng(seed);
      const auto uniform = [&rng](int64_t lo, int64_t hi) {  // inclusive
        return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
      };
      const int64_t num_blocks = uniform(8, 60);
      KvCacheManager kv(num_blocks, 16, caching);
      testing::ReferenceKvCache ref(num_blocks, 16, caching);
      enum State { kWaiting, kRunning, kDone };
      struct Request {
        int64_t id;
        int64_t group;
        int32_t shared;
        State state = kWaiting;
        int64_t hit_blocks = 0;  // taken from the cache at admission: computed, so full
        KvTable table;
        std::vector<int32_t> ref_table;
        std::vector<int32_t> ref_detached;  // the reference's blocks for take_detached
      };
      std::vector<Request> reqs;
      std::vector<int32_t> hits_new, hits_ref;
      int64_t hits_total = 0;
      for (int op = 0; op < 3000; ++op) {
        const int64_t kind = uniform(0, 9);
        if (kind == 0 || reqs.empty()) {  // a new request arrives
          Request r;
          r.id = static_cast<int64_t>(reqs.size());
          r.group = uniform(0, 3) == 0 ? -1 : uniform(0, 2);
          r.shared = r.group < 0 ? 0 : static_cast<int32_t>(uniform(0, 5));
          r.table.reset(r.shared);
          reqs.push_back(std::move(r));
          continue;
        }
        Request& r = reqs[static_cast<size_t>(uniform(0, static_cast<int64_t>(reqs.size()) - 1))];
        if (r.state == kWaiting) {  // admission
          const int64_t max_blocks = uniform(0, 12);
          const int64_t h = kv.find_cached(r.id, r.group, r.table, max_blocks, hits_new);
          const int64_t h_ref =
              ref.find_cached(r.id, r.group, r.shared, r.ref_table, max_blocks, hits_ref);
          REQUIRE(h == h_ref);
          hits_total += h;
          const int64_t fresh = uniform(0, 4);
          const int64_t need = kv.blocks_needed(fresh, h, hits_new);
          REQUIRE(need == ref.blocks_needed(fresh, hits_ref));
          if (need > kv.num_free_blocks()) continue;
          kv.take_hits(r.id, h, hits_new, r.table);
          kv.allocate(fresh, r.table);
          r.ref_table.clear();
          ref.take_hits(hits_ref, r.ref_table);
          ref.allocate(fresh, r.ref_table);
          r.hit_blocks = h;
          r.state = kRunning;
        } else if (r.state == kRunning) {
          const int64_t what = uniform(0, 5);
          if (what <= 1) {  // grows, and registers part of its shared prefix
            const int64_t n = std::min<int64_t>(uniform(0, 3), kv.num_free_blocks());
            kv.allocate(n, r.table);
            ref.allocate(n, r.ref_table);
            const int64_t last =
                uniform(0, std::min<int64_t>(r.shared, static_cast<int64_t>(r.table.ids.size())));
            if (r.group >= 0) {
              kv.register_shared(r.group, r.table, 0, last);
              ref.register_shared(r.group, r.ref_table, 0, last);
            }
          } else if (what == 4) {  // takes blocks outside its table
            const int64_t n = std::min<int64_t>(uniform(0, 3), kv.num_free_blocks());
            kv.take_detached(n);
            ref.allocate(n, r.ref_detached);
          } else if (what == 5) {  // gives back its oldest detached blocks
            const auto n = static_cast<std::ptrdiff_t>(
                uniform(0, static_cast<int64_t>(r.ref_detached.size())));
            const bool full = uniform(0, 1) == 1;
            kv.release_detached(n, full);
            ref.release_blocks({r.ref_detached.begin(), r.ref_detached.begin() + n}, full);
            r.ref_detached.erase(r.ref_detached.begin(), r.ref_detached.begin() + n);
          } else {  // preempted (what == 2) or finished (what == 3)
            kv.release_detached(static_cast<int64_t>(r.ref_detached.size()), false);
            ref.release_blocks(r.ref_detached, false);
            r.ref_detached.clear();
            // As in the replica: blocks served from the cache count as computed, so a free never
            // reports fewer full blocks than the request hit.
            const int64_t full = uniform(r.hit_blocks, r.table.count);
            REQUIRE(r.table.count == static_cast<int64_t>(r.ref_table.size()));
            kv.free(r.id, r.table, full, what == 2);
            ref.free(r.id, r.ref_table, full);
            if (what == 3) r.ref_table.clear();
            r.state = what == 2 ? kWaiting : kDone;
          }
        }
        REQUIRE(kv.num_free_blocks() == ref.num_free_blocks());
        REQUIRE(kv.evicted_blocks() == ref.evicted_blocks());
      }
      hits_all_seeds += hits_total;
    }
    // Not vacuous: with caching the sequences do hit (shared prefixes and own blocks).
    if (caching) REQUIRE(hits_all_seeds > 1000);
    if (!caching) REQUIRE(hits_all_seeds == 0);
  }
}

}  // namespace
}  // namespace servesim::sim
