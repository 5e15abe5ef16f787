// Speculative decoding as --vary knobs (sim/planning/vary_spec.h, sim/app/vary_settings.h): K,
// a constant per-position acceptance rate or a mean acceptance length, each a key within
// --speculative-config.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "sim/app/vary_settings.h"
#include "sim/base/error.h"
#include "sim/planning/vary.h"
#include "sim/planning/vary_spec.h"
#include "sim/replica/speculative_config.h"

namespace servesim::planning {
namespace {

using Catch::Matchers::Contains;
using nlohmann::json;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

sim::SpecDecode eagle3(const std::string& acceptance) {
  return sim::parse_speculative_config(
      json::parse("{\"method\": \"eagle3\", \"model\": \"head\", \"num_speculative_tokens\": 3, " +
                  acceptance + "}"),
      "test");
}

TEST_CASE("num-speculative-tokens carries the base's per-position acceptance to each K",
          "[planning][vary][spec]") {
  // K = 0 turns speculation off, whatever the base.
  const sim::SpecDecode rates = eagle3("\"acceptance_rates\": [0.9, 0.8, 0.7]");
  CHECK_FALSE(vary_spec_decode(rates, {{kSpecTokensKey, 0}}).enabled());
  CHECK(vary_spec_decode(rates, {{kSpecTokensKey, 0}}).method.empty());
  // Rates: a_j is the rate of position j given the ones before, so K = 2 keeps the first two.
  const sim::SpecDecode k2 = vary_spec_decode(rates, {{kSpecTokensKey, 2}});
  CHECK(k2.method == "eagle3");
  CHECK(k2.model == "head");
  CHECK(k2.num_speculative_tokens == 2);
  CHECK(k2.acceptance_rates == std::vector<double>{0.9, 0.8});
  CHECK_THAT(error_of([&] {
               vary_spec_decode(rates, {{kSpecTokensKey, 4}});
             }),
             Contains("--speculative-config lists 3 acceptance_rates"));
  // A mean acceptance length τ = 2.5 over K0 = 3 is the constant rate a with
  // a(1 − a³)/(1 − a) = 1.5; K = 5 repeats that a, so its E[A] = a(1 − a⁵)/(1 − a) > 1.5.
  const sim::SpecDecode length = eagle3("\"acceptance_length\": 2.5");
  const sim::SpecDecode k5 = vary_spec_decode(length, {{kSpecTokensKey, 5}});
  REQUIRE(k5.acceptance_rates.size() == 5);
  const double a = k5.acceptance_rates[0];
  for (double r : k5.acceptance_rates) CHECK(r == a);
  CHECK(sim::mean_accepted(k5.acceptance_rates, 3) == Approx(1.5).epsilon(1e-9));
  CHECK(sim::mean_accepted(k5.acceptance_rates, 5) ==
        Approx(a * (1 - std::pow(a, 5)) / (1 - a)).epsilon(1e-12));
  // K = 3 (the base's own) keeps τ exactly.
  CHECK(
      1 + sim::mean_accepted(vary_spec_decode(length, {{kSpecTokensKey, 3}}).acceptance_rates, 3) ==
      Approx(2.5).epsilon(1e-9));
}

TEST_CASE("spec-acceptance-rate and spec-acceptance-length set the acceptance for the K in use",
          "[planning][vary][spec]") {
  const sim::SpecDecode base = eagle3("\"acceptance_length\": 2.0");
  // Rate a = 0.6 over K = 4: E[A] = Σ_{m=1..4} 0.6^m = 0.6 + 0.36 + 0.216 + 0.1296 = 1.3056.
  const sim::SpecDecode r = vary_spec_decode(base, {{kSpecTokensKey, 4}, {kSpecRateKey, 0.6}});
  CHECK(r.acceptance_rates == std::vector<double>(4, 0.6));
  CHECK(sim::mean_accepted(r.acceptance_rates, 4) == Approx(1.3056).epsilon(1e-12));
  // Without a K knob the base's K (3).
  CHECK(vary_spec_decode(base, {{kSpecRateKey, 1.0}}).acceptance_rates ==
        std::vector<double>(3, 1.0));
  // A length is kept as given (resolve turns it into rates and checks τ <= K + 1).
  const sim::SpecDecode l = vary_spec_decode(base, {{kSpecLengthKey, 3.5}});
  CHECK(l.acceptance_length == 3.5);
  CHECK(l.num_speculative_tokens == 3);
  CHECK_THAT(error_of([&] {
               vary_spec_decode(base, {{kSpecRateKey, 1.2}});
             }),
             Contains("--vary spec-acceptance-rate: '1.2' is invalid; expected a per-position "
                      "acceptance rate in [0, 1]"));
  CHECK_THAT(error_of([&] {
               vary_spec_decode(base, {{kSpecRateKey, 0.5}, {kSpecLengthKey, 2.0}});
             }),
             Contains("give one of the two"));
  CHECK_THAT(error_of([&] {
               vary_spec_decode(base, {{kSpecTokensKey, -1}});
             }),
             Contains("expected an integer >= 0"));
  // No method to vary: refused, not assumed.
  CHECK_THAT(error_of([] {
               vary_spec_decode(sim::SpecDecode{}, {{kSpecTokensKey, 2}});
             }),
             Contains("--vary num-speculative-tokens=2: needs --speculative-config"));
}

TEST_CASE("a --vary point applies run fields and the knobs within --speculative-config",
          "[planning][vary][spec]") {
  sim::SimulationConfig base;
  base.engine.spec = eagle3("\"acceptance_length\": 2.5");
  const auto points =
      vary_product({parse_vary("num-speculative-tokens=0,2"),
                    parse_vary("spec-acceptance-rate=0.5"), parse_vary("max-num-seqs=64")});
  REQUIRE(points.size() == 2);
  CHECK(points[1].label == "num-speculative-tokens=2 spec-acceptance-rate=0.5 max-num-seqs=64");
  sim::SimulationConfig off = base, on = base;
  app::apply_vary_settings(off, points[0].settings);
  app::apply_vary_settings(on, points[1].settings);
  CHECK_FALSE(off.engine.spec.enabled());
  CHECK(off.engine.max_num_seqs == 64);
  CHECK(on.engine.spec.num_speculative_tokens == 2);
  CHECK(on.engine.spec.acceptance_rates == std::vector<double>{0.5, 0.5});
  CHECK(on.engine.max_num_seqs == 64);
}

}  // namespace
}  // namespace servesim::planning
