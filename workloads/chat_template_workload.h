// ChatTemplateWorkload: the requests of another workload as the server sees them on
// /v1/chat/completions (`vllm bench serve --endpoint /v1/chat/completions`). The client sends each
// prompt as one user message; the server renders the model's chat template around it and prefills
// the result, so every prompt gains the template's tokens (models/chat_template_tokens.h), of which
// the leading ones come before the message.
//
// Contract: every request keeps its id, arrival, output length, class, adapter and priority; its
// prompt_tokens grow by `tokens`. A request with a shared prefix (prefix_group >= 0) has its
// prefix_tokens grow by `leading`: the template's opening is identical for every request, so the
// shared part starts with it. A request without one gets the opening as a shared prefix of its
// own when it spans at least kMinSharedOpening tokens (gpt-oss: harmony's 62-token system
// message, 3 KV blocks of 16 that vLLM's prefix cache shares between requests):
// prefix_group kTemplatePrefixGroup, prefix_tokens `leading`. Shorter openings (Qwen3's 3,
// GLM-4.5's 4 tokens) fill no KV block at any block size vLLM's CUDA attention backends take, so
// those requests keep prefix_group -1 (and the default routing of a request with no prefix). An
// inner request whose own group is kTemplatePrefixGroup is refused (ConfigError). Requests
// carrying a prefix chain (traces) and multi-turn sessions are refused by validate() before this
// wrapper is built.
#ifndef SERVESIM_WORKLOADS_CHAT_TEMPLATE_WORKLOAD_H_
#define SERVESIM_WORKLOADS_CHAT_TEMPLATE_WORKLOAD_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "workloads/workload.h"

namespace servesim::workloads {

class ChatTemplateWorkload final : public Workload {
 public:
  // The prefix group of the template's opening. Below 2^19, as the KV cache's keys need of a
  // group when requests carry LoRA adapters (sim/replica/replica.cpp).
  static constexpr int64_t kTemplatePrefixGroup = (int64_t{1} << 19) - 1;
  // The smallest block size of vLLM's CUDA attention backends (16): a shorter opening fills no
  // block, so sharing it would change nothing but the routing.
  static constexpr int32_t kMinSharedOpening = 16;

  // REQUIRES: tokens >= 1, 0 <= leading <= tokens.
  ChatTemplateWorkload(std::unique_ptr<Workload> inner, int32_t tokens, int32_t leading);
  std::optional<RequestSpec> next() override;
  int64_t size() const override { return inner_->size(); }
  std::optional<RequestSpec> on_done(int64_t id, SimTime sent, SimTime now) override;
  std::vector<std::string> class_names() const override { return inner_->class_names(); }

 private:
  std::optional<RequestSpec> wrap(std::optional<RequestSpec> spec) const;

  std::unique_ptr<Workload> inner_;
  int32_t tokens_;
  int32_t leading_;
};

}  // namespace servesim::workloads

#endif  // SERVESIM_WORKLOADS_CHAT_TEMPLATE_WORKLOAD_H_
