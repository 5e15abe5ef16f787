// The one table of a served deployment's keys (sim/app/serve_keys.h): every row is a run-config
// field, listed once, taken by at least one command; the two columns differ where the commands
// do (servesim's own deployment keys, and the features servesim serve does not serve).
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "sim/app/run_config.h"
#include "sim/app/serve_keys.h"

namespace servesim::app {
namespace {

TEST_CASE("serve keys: one row per run-config field, each taken by a command",
          "[cli][serve][vllm]") {
  std::set<std::string> fields;
  for (const ConfigField& f : config_fields()) fields.insert(f.key);
  std::set<std::string> seen;
  for (const ServeKey& k : serve_keys()) {
    INFO(k.key);
    CHECK(fields.count(k.key) == 1);
    CHECK(seen.insert(k.key).second);
    CHECK((k.vllm_serve_flag || k.servesim_serve));
  }
  // servesim's own deployment keys are no vllm serve flag; serve does not take the load.
  CHECK(is_servesim_serve_key("model"));
  CHECK_FALSE(is_vllm_serve_flag_key("model"));
  CHECK_FALSE(is_vllm_serve_flag_key("num_replicas"));
  CHECK(is_vllm_serve_flag_key("max_num_seqs"));
  CHECK(is_servesim_serve_key("max_num_seqs"));
  CHECK_FALSE(is_servesim_serve_key("request_rate"));
  CHECK_FALSE(is_vllm_serve_flag_key("request_rate"));
  // A pasted vllm serve line may set speculative decoding; servesim serve does not serve it.
  CHECK(is_vllm_serve_flag_key("speculative_config"));
  CHECK_FALSE(is_servesim_serve_key("speculative_config"));
}

}  // namespace
}  // namespace servesim::app
