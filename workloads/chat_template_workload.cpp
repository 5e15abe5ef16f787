#include "workloads/chat_template_workload.h"

#include <limits>
#include <string>
#include <utility>

#include "sim/base/error.h"

namespace servesim::workloads {

ChatTemplateWorkload::ChatTemplateWorkload(std::unique_ptr<Workload> inner, int32_t tokens,
                                           int32_t leading)
    : inner_(std::move(inner)), tokens_(tokens), leading_(leading) {
  SERVESIM_CHECK(tokens_ >= 1 && leading_ >= 0 && leading_ <= tokens_,
                 "chat template token counts out of range");
}

std::optional<RequestSpec> ChatTemplateWorkload::wrap(std::optional<RequestSpec> spec) const {
  if (!spec) return spec;
  if (spec->prompt_tokens > std::numeric_limits<int32_t>::max() - tokens_) {
    throw ConfigError("--endpoint /v1/chat/completions: a prompt of " +
                      std::to_string(spec->prompt_tokens) + " tokens plus the chat template's " +
                      std::to_string(tokens_) + " exceeds " +
                      std::to_string(std::numeric_limits<int32_t>::max()) + " tokens");
  }
  spec->prompt_tokens += tokens_;
  if (spec->prefix_group == kTemplatePrefixGroup) {
    throw ConfigError("--endpoint /v1/chat/completions: request " + std::to_string(spec->id) +
                      " has prefix group " + std::to_string(kTemplatePrefixGroup) +
                      ", the group servesim reserves for the chat template's opening; expected "
                      "another group id");
  }
  if (spec->prefix_group >= 0) {
    spec->prefix_tokens += leading_;
  } else if (leading_ >= kMinSharedOpening) {
    spec->prefix_group = kTemplatePrefixGroup;
    spec->prefix_tokens = leading_;
  }
  return spec;
}

std::optional<RequestSpec> ChatTemplateWorkload::next() { return wrap(inner_->next()); }

std::optional<RequestSpec> ChatTemplateWorkload::on_done(int64_t id, SimTime sent, SimTime now) {
  return wrap(inner_->on_done(id, sent, now));
}

}  // namespace servesim::workloads
