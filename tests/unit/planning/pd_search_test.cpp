// The P:D ratios of `plan --pd-ratios` and the aggregated / P/D configs of one candidate
// (sim/planning/pd_search.h).
#include <catch2/catch.hpp>

#include <string>

#include "sim/base/error.h"
#include "sim/cluster/pd_simulation.h"
#include "sim/planning/pd_search.h"

namespace servesim::planning {
namespace {

using Catch::Matchers::Contains;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_CASE("P:D ratios are read in order and equal ratios are refused", "[planning][pd]") {
  const std::vector<PdRatio> r = parse_pd_ratios("--pd-ratios", {"1:1,1:2", "2:3"});
  REQUIRE(r.size() == 3);
  CHECK((r[0].prefill == 1 && r[0].decode == 1));
  CHECK((r[1].prefill == 1 && r[1].decode == 2));
  CHECK((r[2].prefill == 2 && r[2].decode == 3));
  CHECK_THAT(error_of([] { parse_pd_ratios("--pd-ratios", {"1:1,2:2"}); }),
             Contains("--pd-ratios: '2:2' is invalid: the ratio 1:1 is already given"));
  CHECK_THAT(error_of([] { parse_pd_ratios("--pd-ratios", {"2"}); }), Contains("no ':'"));
  CHECK_THAT(error_of([] { parse_pd_ratios("--pd-ratios", {"0:1"}); }),
             Contains("P 0 is outside [1, 64]"));
  CHECK_THAT(error_of([] { parse_pd_ratios("--pd-ratios", {"1:x"}); }),
             Contains("D 'x' is not an integer"));
  CHECK_THAT(error_of([] { parse_pd_ratios("--pd-ratios", {""}); }), Contains("no ratio"));
}

TEST_CASE("a candidate's aggregated config has no pools and its P/D unit keeps the pool flags",
          "[planning][pd]") {
  sim::SimulationConfig c;
  c.decode_tensor_parallel_size = 4;
  c.kv_transfer_link = "infiniband-ndr";
  c.pd_local_prefill_threshold = 256;
  const sim::SimulationConfig agg = aggregated_of(c);
  CHECK_FALSE(sim::pd_enabled(agg));
  CHECK_NOTHROW(sim::check_pd_flags_need_pools(agg));  // the pool flags are gone
  const sim::SimulationConfig unit = pd_unit_of(c, {2, 3});
  CHECK(sim::pd_enabled(unit));
  CHECK(unit.prefill_replicas == 2);
  CHECK(unit.decode_replicas == 3);
  CHECK(unit.decode_tensor_parallel_size == 4);
  CHECK(unit.kv_transfer_link == "infiniband-ndr");
  CHECK(unit.pd_local_prefill_threshold == 256);
}

}  // namespace
}  // namespace servesim::planning
