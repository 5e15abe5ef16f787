// KeyIndex (sim/replica/key_index.h) against std::unordered_map on random operations, and the
// cases a backward-shift deletion gets wrong when it is wrong: runs that wrap around the end of
// the array and entries whose home lies before the hole.
#include "sim/replica/key_index.h"

#include <catch2/catch.hpp>

#include <random>
#include <unordered_map>

namespace servesim::sim {
namespace {

TEST_CASE("key index: empty, insert once, find, erase", "[replica][key_index]") {
  KeyIndex m;
  CHECK(m.find(7) == -1);
  CHECK_FALSE(m.erase(7));
  CHECK(m.insert(7, 3));
  CHECK_FALSE(m.insert(7, 4));  // the first mapping stays, as unordered_map::emplace
  CHECK(m.find(7) == 3);
  CHECK(m.size() == 1);
  CHECK(m.insert(~0ull, 0));  // every key value is a key, including all ones and 0
  CHECK(m.insert(0, 9));
  CHECK(m.find(~0ull) == 0);
  CHECK(m.find(0) == 9);
  CHECK_FALSE(m.erase_if(7, 4));  // mapped to 3, not 4: stays
  CHECK(m.find(7) == 3);
  CHECK(m.erase_if(7, 3));
  CHECK(m.find(7) == -1);
  CHECK(m.size() == 2);
}

TEST_CASE("key index: random operations agree with std::unordered_map", "[replica][key_index]") {
  // Small key universes make long probe runs, collisions and wrap-around common; the structured
  // keys are the cache's own (group << 24 | index).
  for (uint64_t universe : {40ull, 1000ull, 100000ull}) {
    for (bool structured : {false, true}) {
      INFO("universe " << universe << " structured " << structured);
      std::mt19937_64 rng(universe * 2 + structured);
      KeyIndex m;
      std::unordered_map<uint64_t, int32_t> ref;
      for (int op = 0; op < 200000; ++op) {
        const uint64_t r = rng() % universe;
        const uint64_t key = structured ? ((r % 7) << 24) | (r / 7) : r * 0x9e3779b97f4a7c15ull;
        const auto value = static_cast<int32_t>(rng() % 1000000);
        switch (rng() % 4) {
          case 3: {  // erase only when mapped to `value` (what KvCacheManager::evict asks)
            auto it = ref.find(key);
            const int32_t v = it != ref.end() && rng() % 2 ? it->second : value;
            const bool mapped = it != ref.end() && it->second == v;
            REQUIRE(m.erase_if(key, v) == mapped);
            if (mapped) ref.erase(it);
            break;
          }
          case 0:
            REQUIRE(m.insert(key, value) == ref.emplace(key, value).second);
            break;
          case 1:
            REQUIRE(m.erase(key) == (ref.erase(key) == 1));
            break;
          default: {
            auto it = ref.find(key);
            REQUIRE(m.find(key) == (it == ref.end() ? -1 : it->second));
          }
        }
        REQUIRE(m.size() == ref.size());
      }
      for (const auto& [k, v] : ref) REQUIRE(m.find(k) == v);
    }
  }
}

}  // namespace
}  // namespace servesim::sim
