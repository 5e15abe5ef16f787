// Swept-axis and --vary parsing (sim/planning/vary.h), and that every --vary knob is a real config
// field of the CLI's table with the same type.
#include <catch2/catch.hpp>

#include <string>

#include "sim/app/run_config.h"
#include "sim/base/error.h"
#include "sim/planning/vary.h"

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

TEST_CASE("ranges are inclusive and exact", "[planning][vary]") {
  // 1:40:1 = 1, 2, ..., 40 (40 values).
  const auto v = parse_axis_values("--request-rate", "1:40:1", false);
  REQUIRE(v.size() == 40);
  CHECK(v.front() == 1);
  CHECK(v.back() == 40);
  // start + k·step, rounded to 10 decimals: 0.1:0.5:0.1 gives the doubles nearest to the
  // decimals (0.3, not 0.1+0.1+0.1 = 0.30000000000000004), and includes the stop.
  CHECK(parse_axis_values("--request-rate", "0.1:0.5:0.1", false) ==
        std::vector<double>{0.1, 0.2, 0.3, 0.4, 0.5});
  // A step that does not land on stop: 1:10:4 = 1, 5, 9.
  CHECK(parse_axis_values("--request-rate", "1:10:4", false) == std::vector<double>{1, 5, 9});
  CHECK(parse_axis_values("--request-rate", "3:3:1", false) == std::vector<double>{3});
}

TEST_CASE("lists are sorted and deduplicated", "[planning][vary]") {
  CHECK(parse_axis_values("--request-rate", "1,2,5,10", false) == std::vector<double>{1, 2, 5, 10});
  CHECK(parse_axis_values("--request-rate", "10, 2,5,2", false) == std::vector<double>{2, 5, 10});
  CHECK(parse_axis_values("--max-concurrency", "1,2,4,8", true) == std::vector<double>{1, 2, 4, 8});
}

TEST_CASE("bad axis values give one clear line", "[planning][vary]") {
  auto rate = [](const std::string& t) {
    return error_of([&] { parse_axis_values("--request-rate", t, false); });
  };
  CHECK_THAT(rate("5:1:1"),
             Contains("--request-rate: '5:1:1' is invalid: start 5 is above stop 1"));
  CHECK_THAT(rate("1:5:0"), Contains("step 0 is not > 0"));
  CHECK_THAT(rate("1:5:-1"), Contains("step -1 is not > 0"));
  CHECK_THAT(rate("1:5"), Contains("a range has three parts"));
  CHECK_THAT(rate("a,b"), Contains("value 'a' is not a finite number"));
  CHECK_THAT(rate("inf"), Contains("is not a finite number"));
  CHECK_THAT(rate("0,1"), Contains("value 0 is not > 0"));
  CHECK_THAT(rate(""), Contains("no values"));
  CHECK_THAT(rate("1,,2"), Contains("empty list item"));
  CHECK_THAT(rate("1:100000:1"), Contains("more than 10000 values"));
  CHECK_THAT(error_of([] { parse_axis_values("--max-concurrency", "1,1.5", true); }),
             Contains("value 1.5 is not an integer"));
}

TEST_CASE("vary: parses typed values", "[planning][vary]") {
  VaryAxis a = parse_vary("max-num-seqs=64,128,256");
  CHECK(a.knob.key == "max_num_seqs");
  REQUIRE(a.values.size() == 3);
  CHECK(a.values[0].is_number_integer());
  CHECK(a.values[2].get<int>() == 256);
  a = parse_vary("--gpu=h100-sxm,h200");
  CHECK(a.knob.key == "gpu");
  CHECK(a.values[1] == "h200");
  a = parse_vary("gpu_memory_utilization=0.8,0.9");
  CHECK(a.values[0].is_number_float());
  a = parse_vary("enable-prefix-caching=true,off");
  CHECK(a.values[0] == true);
  CHECK(a.values[1] == false);
  a = parse_vary("quantization=none,fp8");
  CHECK(a.values[0] == "");
  CHECK(a.texts[0] == "none");
}

TEST_CASE("vary: errors name the knob and value", "[planning][vary]") {
  CHECK_THAT(error_of([] { parse_vary("max-num-seqs"); }), Contains("expected KNOB=v1,v2"));
  CHECK_THAT(error_of([] { parse_vary("foo=1,2"); }), Contains("'foo' is not a knob"));
  CHECK_THAT(error_of([] { parse_vary("request-rate=1,2"); }), Contains("is not a knob"));
  CHECK_THAT(error_of([] { parse_vary("max-num-seqs="); }), Contains("no values"));
  CHECK_THAT(error_of([] { parse_vary("max-num-seqs=64,abc"); }),
             Contains("--vary max-num-seqs: 'abc' is invalid; expected an integer"));
  CHECK_THAT(error_of([] { parse_vary("enable-prefix-caching=maybe"); }),
             Contains("expected true or false"));
  CHECK_THAT(error_of([] { parse_vary("max-num-seqs=64,64"); }), Contains("given twice"));
}

TEST_CASE("several --vary form a cartesian product, first axis slowest", "[planning][vary]") {
  // 2 × 3 = 6 points: (64,a) (64,b) (64,c) (128,a) ...
  const auto points =
      vary_product({parse_vary("max-num-seqs=64,128"), parse_vary("gpu=h100-sxm,h200,a100-80gb")});
  REQUIRE(points.size() == 6);
  CHECK(points[0].label == "max-num-seqs=64 gpu=h100-sxm");
  CHECK(points[2].label == "max-num-seqs=64 gpu=a100-80gb");
  CHECK(points[3].settings["max_num_seqs"] == 128);
  CHECK(points[3].settings["gpu"] == "h100-sxm");
  CHECK(vary_product({}).size() == 1);
  CHECK(vary_product({}).front().label.empty());
  CHECK_THAT(error_of([] {
               vary_product({parse_vary("block-size=16"), parse_vary("block_size=32")});
             }),
             Contains("given twice"));
}

TEST_CASE("every --vary knob is a config field of the same type", "[planning][vary]") {
  for (const KnobInfo& k : vary_knobs()) {
    INFO(k.flag);
    const app::ConfigField* field = nullptr;
    for (const auto& f : app::config_fields()) {
      if (f.key == (k.within.empty() ? k.key : k.within)) field = &f;
    }
    REQUIRE(field != nullptr);
    if (!k.within.empty()) {  // a key inside a JSON-valued field (vary_spec.h)
      CHECK(field->kind == app::FieldKind::kString);
      continue;
    }
    using FK = app::FieldKind;
    switch (k.type) {
      case KnobType::kInt:
        CHECK((field->kind == FK::kInt || field->kind == FK::kPositiveInt));
        break;
      case KnobType::kDouble:
        CHECK(field->kind == FK::kDouble);
        break;
      case KnobType::kString:
        CHECK(field->kind == FK::kString);
        break;
      case KnobType::kBool:
        CHECK(field->kind == FK::kBool);
        break;
    }
  }
  // And a VaryPoint applies through the field table.
  sim::SimulationConfig c;
  const auto points = vary_product({parse_vary("max-num-seqs=96"), parse_vary("gpu=h200"),
                                    parse_vary("enable-prefix-caching=false")});
  app::apply_config_json(c, points[0].settings, "--vary");
  CHECK(c.engine.max_num_seqs == 96);
  CHECK(c.gpu == "h200");
  CHECK(c.engine.enable_prefix_caching == false);
}

}  // namespace
}  // namespace servesim::planning
