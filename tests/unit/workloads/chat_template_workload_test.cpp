// The chat endpoint (workloads/chat_template_workload.h): every prompt gains exactly the chat
// template's tokens, a shared prefix its leading ones, and nothing else moves (arrivals, outputs,
// prefix groups); what the template cannot be added to is refused by name.
#include "workloads/chat_template_workload.h"

#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <vector>

#include "sim/base/error.h"

namespace servesim::workloads {
namespace {

using Catch::Matchers::Contains;

std::vector<RequestSpec> drain(const WorkloadConfig& config) {
  auto w = make_workload(config);
  std::vector<RequestSpec> out;
  while (auto s = w->next()) out.push_back(*s);
  return out;
}

WorkloadConfig chat(WorkloadConfig c) {
  c.endpoint = "/v1/chat/completions";
  c.chat_template_tokens = 8;  // Qwen3's ChatML: 3 before the message, 5 after
  c.chat_template_leading = 3;
  return c;
}

TEST_CASE("chat endpoint: each prompt is its length plus the template's tokens, exactly",
          "[workloads][chat]") {
  WorkloadConfig c;
  c.num_prompts = 500;
  c.request_rate = 10.0;
  c.random_input_len = 100;
  c.random_output_len = 20;
  c.random_range_ratio = 0.5;  // lengths vary, so the pairing is checked request by request
  const std::vector<RequestSpec> plain = drain(c);
  const std::vector<RequestSpec> templated = drain(chat(c));
  REQUIRE(templated.size() == plain.size());
  for (size_t i = 0; i < plain.size(); ++i) {
    CHECK(templated[i].prompt_tokens == plain[i].prompt_tokens + 8);
    CHECK(templated[i].output_tokens == plain[i].output_tokens);
    CHECK(templated[i].arrival == plain[i].arrival);
    CHECK(templated[i].id == plain[i].id);
    CHECK(templated[i].prefix_group == -1);  // no shared prefix: none made up
    CHECK(templated[i].prefix_tokens == 0);
  }
}

TEST_CASE("chat endpoint: a shared prefix starts with the template's leading tokens",
          "[workloads][chat]") {
  // --random-prefix-len 64: every prompt = [opening 3][prefix 64][body 100][closing 5], so the
  // part shared by all requests is 64 + 3 tokens and the prompt 64 + 100 + 8.
  WorkloadConfig c;
  c.num_prompts = 50;
  c.random_input_len = 100;
  c.random_prefix_len = 64;
  for (const RequestSpec& s : drain(chat(c))) {
    CHECK(s.prompt_tokens == 64 + 100 + 8);
    CHECK(s.prefix_tokens == 64 + 3);
    CHECK(s.prefix_group >= 0);
  }
}

TEST_CASE("chat endpoint: an opening of a KV block or more is a shared prefix of its own",
          "[workloads][chat]") {
  // gpt-oss's harmony prompt: 65 tokens, the first 62 (its system message) the same in every
  // request. Requests with no prefix of their own share those 62: the template's group.
  WorkloadConfig c;
  c.num_prompts = 50;
  c.random_input_len = 100;
  c.endpoint = "/v1/chat/completions";
  c.chat_template_tokens = 65;
  c.chat_template_leading = 62;
  for (const RequestSpec& s : drain(c)) {
    CHECK(s.prompt_tokens == 100 + 65);
    CHECK(s.prefix_group == ChatTemplateWorkload::kTemplatePrefixGroup);
    CHECK(s.prefix_tokens == 62);
  }
  // The boundary: an opening of 15 tokens (one short of a 16-token block) is not shared, 16 is.
  c.chat_template_leading = ChatTemplateWorkload::kMinSharedOpening - 1;
  CHECK(drain(c).front().prefix_group == -1);
  c.chat_template_leading = ChatTemplateWorkload::kMinSharedOpening;
  CHECK(drain(c).front().prefix_tokens == 16);
  // A workload's own shared prefix keeps its group and starts with the opening.
  c.random_prefix_len = 64;
  c.chat_template_leading = 62;
  for (const RequestSpec& s : drain(c)) {
    CHECK(s.prefix_group == 0);
    CHECK(s.prefix_tokens == 64 + 62);
  }
}

// One request in the prefix group reserved for the template's opening.
class ReservedGroup final : public Workload {
 public:
  std::optional<RequestSpec> next() override {
    if (done_) return std::nullopt;
    done_ = true;
    RequestSpec s;
    s.id = 7;
    s.prompt_tokens = 100;
    s.output_tokens = 10;
    s.prefix_group = ChatTemplateWorkload::kTemplatePrefixGroup;
    s.prefix_tokens = 50;
    return s;
  }
  int64_t size() const override { return 1; }

 private:
  bool done_ = false;
};

TEST_CASE("chat endpoint: an inner request in the template's reserved group is refused",
          "[workloads][chat]") {
  ChatTemplateWorkload w(std::make_unique<ReservedGroup>(), 65, 62);
  CHECK_THROWS_WITH(w.next(), Contains("request 7 has prefix group 524287"));
}

TEST_CASE("chat endpoint: an unknown endpoint, a trace, multi-turn and a missing count are refused",
          "[workloads][chat][errors]") {
  WorkloadConfig c;
  c.endpoint = "/v1/embeddings";
  CHECK_THROWS_WITH(validate(c), Contains("--endpoint: \"/v1/embeddings\" is not modelled"));
  WorkloadConfig t = chat(WorkloadConfig{});
  t.dataset_name = "trace";
  t.trace = "x.csv";
  t.trace_format = "csv";
  CHECK_THROWS_WITH(validate(t), Contains("with --dataset-name trace is not modelled"));
  WorkloadConfig m = chat(WorkloadConfig{});
  m.multi_turn = true;
  CHECK_THROWS_WITH(validate(m), Contains("with --multi-turn is not modelled"));
  WorkloadConfig none = chat(WorkloadConfig{});
  none.chat_template_tokens = 0;
  CHECK_THROWS_AS(validate(none), ConfigError);
  // The completions endpoint (the default) adds nothing.
  CHECK_FALSE(chat_endpoint(WorkloadConfig{}));
}

}  // namespace
}  // namespace servesim::workloads
