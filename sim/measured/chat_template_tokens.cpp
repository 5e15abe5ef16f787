#include "sim/measured/chat_template_tokens.h"

#include <string_view>

namespace servesim::measured {

std::optional<ChatTemplateTokens> chat_template_tokens(const std::string& hf_model_id) {
  struct Family {
    std::string_view prefix;
    int tokens;
    std::string_view name;
  };
  // The header derives each count.
  static constexpr Family kFamilies[] = {
      {"Qwen/Qwen3-", 8, "Qwen3 ChatML"},
      {"zai-org/GLM-4.5", 5, "GLM-4.5"},
  };
  for (const Family& f : kFamilies) {
    if (std::string_view(hf_model_id).substr(0, f.prefix.size()) == f.prefix) {
      return ChatTemplateTokens{f.tokens, std::string(f.name)};
    }
  }
  return std::nullopt;
}

}  // namespace servesim::measured
