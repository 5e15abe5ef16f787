// DecoderIndex: implicit decode progress. A decoder with c computed tokens at base step b holds
// c + (k − b) tokens at step k, needs a new block at step k iff (c + k − b) % block_size == 0,
// and emits its last token at step b + (output − generated) − 1.
#include "sim/replica/decoder_index.h"

#include <catch2/catch.hpp>

#include <vector>

namespace servesim::sim {
namespace {

RequestState decoder(int64_t id, int32_t computed, int64_t base_step, int32_t output,
                     int32_t generated) {
  RequestState r;
  r.id = id;
  r.num_computed = computed;
  r.base_step = base_step;
  r.output = output;
  r.generated = generated;
  r.phase = RequestPhase::kDecode;
  return r;
}

std::vector<int32_t> bucket_slots(DecoderIndex& idx, int64_t k, int64_t bs,
                                  const std::vector<RequestState>& slots) {
  std::vector<int32_t> out;
  for (const auto& e : idx.live_bucket(static_cast<size_t>(k % bs), slots)) out.push_back(e.slot);
  return out;
}

TEST_CASE("the decoder index finds block boundaries, the context sum and finish steps",
          "[replica][decoder_index]") {
  constexpr int64_t bs = 4;
  DecoderIndex idx(bs);
  std::vector<RequestState> slots = {decoder(10, 5, 3, 8, 1), decoder(11, 8, 6, 3, 2),
                                     decoder(12, 2, 0, 20, 1)};
  for (int32_t s = 0; s < 3; ++s) idx.add(s, slots[s]);
  REQUIRE(idx.count() == 3);
  for (int64_t k = 6; k < 20; ++k) {
    // Σ context = Σ (c + k − b).
    REQUIRE(idx.context_at(k) == (5 + k - 3) + (8 + k - 6) + (2 + k - 0));
    // Every decoder whose context at k is a multiple of the block size, and no other.
    std::vector<int32_t> expect;
    for (int32_t s = 0; s < 3; ++s) {
      if ((slots[s].num_computed + k - slots[s].base_step) % bs == 0) expect.push_back(s);
    }
    REQUIRE(bucket_slots(idx, k, bs, slots) == expect);
  }
  // Finish steps b + (output − generated) − 1: 3 + 7 − 1 = 9, 6 + 1 − 1 = 6, 0 + 19 − 1 = 18.
  REQUIRE(idx.next_finish() == 6);
  REQUIRE(idx.pop_finish().id == 11);
  REQUIRE(idx.pop_finish().step == 9);
  REQUIRE(idx.pop_finish().step == 18);
  REQUIRE(idx.next_finish() == std::numeric_limits<int64_t>::max());
}

TEST_CASE("a removed or re-indexed decoder leaves only stale entries behind",
          "[replica][decoder_index]") {
  constexpr int64_t bs = 2;
  DecoderIndex idx(bs);
  std::vector<RequestState> slots = {decoder(0, 4, 0, 5, 1), decoder(1, 6, 0, 5, 1)};
  idx.add(0, slots[0]);
  idx.add(1, slots[1]);
  REQUIRE(bucket_slots(idx, 0, bs, slots) == std::vector<int32_t>{0, 1});
  // Slot 1 is preempted: out of the sums, its epoch bumped, its entries stale.
  idx.remove(slots[1]);
  ++slots[1].epoch;
  slots[1].phase = RequestPhase::kWaiting;
  REQUIRE(idx.count() == 1);
  REQUIRE(idx.context_at(7) == 4 + 7);
  REQUIRE(bucket_slots(idx, 0, bs, slots) == std::vector<int32_t>{0});
  // Slot 0 skips step 0: re-indexed one step later (base 1, same tokens), so its boundary moves
  // from even to odd steps.
  idx.remove(slots[0]);
  ++slots[0].epoch;
  slots[0].base_step = 1;
  idx.add(0, slots[0]);
  REQUIRE(bucket_slots(idx, 0, bs, slots).empty());
  REQUIRE(bucket_slots(idx, 1, bs, slots) == std::vector<int32_t>{0});
  REQUIRE(idx.context_at(1) == 4);
  // The heap still holds the stale entries; the replica skips them by epoch.
  const DecoderIndex::FinishEntry first = idx.pop_finish();
  REQUIRE(first.step == 3);
  REQUIRE_FALSE(DecoderIndex::live({first.slot, first.epoch}, slots));
}

}  // namespace
}  // namespace servesim::sim
