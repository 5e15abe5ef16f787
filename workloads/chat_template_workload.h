// ChatTemplateWorkload: the requests of another workload as the server sees them on
// /v1/chat/completions (`vllm bench serve --endpoint /v1/chat/completions`). The client sends each
// prompt as one user message; the server renders the model's chat template around it and prefills
// the result, so every prompt gains the template's tokens (models/chat_template_tokens.h), of which
// the leading ones come before the message.
//
// Contract: every request keeps its id, arrival, output length, class, adapter and priority; its
// prompt_tokens grow by `tokens`. A request with a shared prefix (prefix_group >= 0) has its
// prefix_tokens grow by `leading`: the template's opening is identical for every request, so the
// shared part starts with it. A request without one keeps prefix_tokens 0: Qwen3's and GLM-4.5's
// openings (3 and 4 tokens) are shorter than a KV block, so no cache hit is lost; gpt-oss's
// (harmony's 62-token system message) fills 3 blocks of 16 that vLLM's prefix cache shares
// between requests, which this wrapper does not share, so such a run prefills 48 tokens per
// request more than vLLM (docs/cli.md, --endpoint). Requests carrying a prefix chain (traces) and
// multi-turn sessions are refused by validate() before this wrapper is built.
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
