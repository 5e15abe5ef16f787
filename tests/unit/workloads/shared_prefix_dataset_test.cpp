// SGLang's generated-shared-prefix dataset.
#include "workloads/shared_prefix_dataset.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

namespace servesim::workloads {

TEST_CASE("generated-shared-prefix: groups, prefixes and counts", "[workloads]") {
  // Expectations: G x P requests; each group index appears exactly P times; every request
  // carries its group's system prompt as prefix (prefix_tokens = system len), prompt =
  // system + question, output = gsp_output_len (fixed lengths: SGLang's --gsp-range-ratio 1).
  SharedPrefixDatasetParams p;
  p.num_groups = 5;
  p.prompts_per_group = 7;
  p.system_prompt_len = 300;
  p.question_len = 40;
  p.output_len = 12;
  SharedPrefixDataset ds(p, 2);
  REQUIRE(ds.size() == 35);
  std::vector<int> per_group(5, 0);
  std::vector<int64_t> order;
  for (int64_t i = 0; i < ds.size(); ++i) {
    const RequestSpec r = ds.next();
    REQUIRE(r.prefix_group >= 0);
    REQUIRE(r.prefix_group < 5);
    REQUIRE(r.prefix_tokens == 300);
    REQUIRE(r.prompt_tokens == 340);
    REQUIRE(r.output_tokens == 12);
    ++per_group[static_cast<size_t>(r.prefix_group)];
    order.push_back(r.prefix_group);
  }
  for (int count : per_group) {
    CHECK(count == 7);
  }
  // Shuffled, as SGLang's random.shuffle: not the group-major construction order.
  std::vector<int64_t> group_major;
  for (int64_t g = 0; g < 5; ++g) {
    group_major.insert(group_major.end(), 7, g);
  }
  CHECK(order != group_major);
}

TEST_CASE("generated-shared-prefix shuffle is uniform and seeded", "[workloads]") {
  // Expectations: under a uniform shuffle the first request belongs to group g with probability
  // 1/G. Over 4000 seeds with G = 4 each group leads ~1000 times, binomial std sqrt(4000 *
  // 0.25 * 0.75) = 27.4; we allow 5 std.
  SharedPrefixDatasetParams p;
  p.num_groups = 4;
  p.prompts_per_group = 3;
  std::vector<int> first(4, 0);
  for (uint64_t seed = 0; seed < 4000; ++seed) {
    SharedPrefixDataset ds(p, seed);
    ++first[static_cast<size_t>(ds.next().prefix_group)];
  }
  for (int count : first) {
    CHECK(std::abs(count - 1000) <= 5 * 27.4);
  }

  // Same seed, same order; another seed, another order (36 requests: a repeat is ~1e-20 likely).
  p.num_groups = 6;
  p.prompts_per_group = 6;
  const auto order = [&](uint64_t seed) {
    SharedPrefixDataset ds(p, seed);
    std::vector<int64_t> groups;
    for (int64_t i = 0; i < ds.size(); ++i) {
      groups.push_back(ds.next().prefix_group);
    }
    return groups;
  };
  CHECK(order(5) == order(5));
  CHECK(order(5) != order(6));
}

TEST_CASE("generated-shared-prefix with one request", "[workloads]") {
  SharedPrefixDatasetParams p;
  p.num_groups = 1;
  p.prompts_per_group = 1;
  SharedPrefixDataset ds(p, 0);
  REQUIRE(ds.size() == 1);
  const RequestSpec r = ds.next();
  CHECK(r.prefix_group == 0);
  CHECK(r.prompt_tokens == p.system_prompt_len + p.question_len);
}

}  // namespace servesim::workloads
