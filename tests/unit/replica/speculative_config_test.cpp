// --speculative-config (sim/replica/speculative_config.h): vLLM's method aliases and defaults,
// the servesim-only acceptance keys, and what is refused by name.
#include <catch2/catch.hpp>

#include <string>

#include "models/model_spec.h"
#include "sim/base/error.h"
#include "sim/replica/speculative_config.h"

namespace servesim::sim {
namespace {

SpecDecode parse(const std::string& text) {
  return parse_speculative_config(nlohmann::json(text), "--speculative-config");
}

TEST_CASE("speculative config: methods resolve as SpeculativeConfig.__post_init__",
          "[replica][spec][config]") {
  // No method: "ngram" / "[ngram]" models are ngram, "eagle-" / "eagle3" in the model name pick
  // EAGLE, any other model is a draft model; MTP model types are mtp.
  CHECK(parse(R"({"model": "[ngram]", "num_speculative_tokens": 3, "acceptance_length": 2})")
            .method == "ngram");
  CHECK(parse(R"({"model": "yuhuili/EAGLE-LLaMA3-Instruct-8B", "num_speculative_tokens": 3,
                 "acceptance_length": 2})")
            .method == "eagle");
  CHECK(parse(R"({"model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3,
                 "acceptance_length": 2})")
            .method == "eagle3");
  CHECK(parse(R"({"model": "llama-3.2-1b", "num_speculative_tokens": 3,
                 "acceptance_length": 2})")
            .method == "draft_model");
  CHECK(parse(R"({"method": "deepseek_mtp", "acceptance_length": 1.5})").method == "mtp");
  CHECK(parse(R"({"method": "[ngram]", "num_speculative_tokens": 3, "acceptance_length": 2})")
            .method == "ngram");
}

TEST_CASE("speculative config: n-gram lookup defaults", "[replica][spec][config]") {
  // Both absent: 5 / 5; one given: the other equals it; min > max is refused.
  SpecDecode s = parse(R"({"method": "ngram", "num_speculative_tokens": 3,
                           "acceptance_length": 2})");
  CHECK(s.prompt_lookup_min == 5);
  CHECK(s.prompt_lookup_max == 5);
  CHECK(s.lookahead() == 0);
  s = parse(R"({"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4,
                "acceptance_length": 2})");
  CHECK(s.prompt_lookup_min == 4);
  CHECK_THROWS_WITH(parse(R"({"method": "ngram", "num_speculative_tokens": 3,
                              "prompt_lookup_min": 5, "prompt_lookup_max": 2,
                              "acceptance_length": 2})"),
                    Catch::Contains("prompt_lookup_min=5 must be <= prompt_lookup_max=2"));
}

TEST_CASE("speculative config: acceptance keys and model-dependent defaults",
          "[replica][spec][config]") {
  models::ModelSpec dense;
  dense.name = "dense";
  models::ModelSpec mtp_model;
  mtp_model.name = "mtp-model";
  mtp_model.num_mtp_layers = 1;

  SpecDecode s =
      resolve_spec_decode(parse(R"({"method": "eagle", "model": "h", "num_speculative_tokens": 4,
                "acceptance_length": 3})"),
                          dense);
  REQUIRE(s.acceptance_rates.size() == 4);
  CHECK(1 + mean_accepted(s.acceptance_rates, 4) == Approx(3.0).margin(1e-12));
  CHECK(s.lookahead() == 4);

  s = resolve_spec_decode(parse(R"({"method": "mtp", "acceptance_rates": [0.8]})"), mtp_model);
  CHECK(s.num_speculative_tokens == 1);  // the model's MTP layers
  CHECK_THROWS_WITH(
      resolve_spec_decode(parse(R"({"method": "mtp", "acceptance_length": 1.5})"), dense),
      Catch::Contains("method mtp needs a model with multi-token-prediction"));
  CHECK_THROWS_WITH(
      resolve_spec_decode(parse(R"({"method": "eagle", "model": "h", "num_speculative_tokens": 3,
                                    "acceptance_rates": [0.5, 0.5]})"),
                          dense),
      Catch::Contains("acceptance_rates has 2 entries; expected one per speculative token (3)"));
  // The echo reads back to the same configuration.
  const SpecDecode back =
      resolve_spec_decode(parse_speculative_config(speculative_config_json(s), "echo"), mtp_model);
  CHECK(back.method == s.method);
  CHECK(back.acceptance_rates == s.acceptance_rates);
}

TEST_CASE("speculative config: what is not modelled is refused by name",
          "[replica][spec][config]") {
  CHECK_THROWS_WITH(parse(R"({"method": "ngram", "num_speculative_tokens": 3})"),
                    Catch::Contains("give exactly one of acceptance_rates"));
  CHECK_THROWS_WITH(parse(R"({"method": "ngram", "num_speculative_tokens": 3,
                              "acceptance_length": 2, "acceptance_rates": [1, 1, 1]})"),
                    Catch::Contains("give exactly one of acceptance_rates"));
  CHECK_THROWS_WITH(parse(R"({"method": "eagle", "model": "h", "num_speculative_tokens": 3,
                              "acceptance_length": 2, "parallel_drafting": true})"),
                    Catch::Contains("key 'parallel_drafting': vLLM's, but servesim does not"));
  CHECK_THROWS_WITH(parse(R"({"method": "eagle", "model": "h", "num_speculative_tokens": 3,
                              "acceptance_length": 2, "acceptance": 2})"),
                    Catch::Contains("key 'acceptance': unknown"));
  CHECK_THROWS_WITH(parse(R"({"method": "suffix", "acceptance_length": 2})"),
                    Catch::Contains("'suffix': not modelled"));
  CHECK_THROWS_WITH(parse(R"({"method": "eagle", "num_speculative_tokens": 3,
                              "acceptance_length": 2})"),
                    Catch::Contains("key 'model' is missing"));
  CHECK_THROWS_WITH(parse(R"({"method": "eagle", "model": "h", "acceptance_length": 2})"),
                    Catch::Contains("key 'num_speculative_tokens' is missing"));
  CHECK_THROWS_WITH(parse(R"({"method": "eagle", "model": "h", "num_speculative_tokens": 3,
                              "acceptance_rates": [0.5, 1.5, 0.5]})"),
                    Catch::Contains("expected rates in [0, 1]"));
  CHECK_THROWS_WITH(parse("[1, 2]"), Catch::Contains("expected a JSON object"));
  CHECK_THROWS_AS(parse("{not json"), ConfigError);
}

}  // namespace
}  // namespace servesim::sim
