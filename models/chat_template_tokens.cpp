#include "models/chat_template_tokens.h"

#include <string_view>

#include "models/model_name.h"

namespace servesim::models {

std::optional<ChatTemplateTokens> chat_template_tokens(const std::string& hf_model_id) {
  struct Family {
    std::string_view prefix;
    int tokens;
    int leading;
    std::string_view name;
  };
  // The header derives each count.
  static constexpr Family kFamilies[] = {
      {"Qwen/Qwen3-", 8, 3, "Qwen3 ChatML"},
      {"zai-org/GLM-4.5", 5, 4, "GLM-4.5"},
      {"openai/gpt-oss-", 65, 62, "gpt-oss harmony (system message)"},
  };
  for (const Family& f : kFamilies) {
    if (std::string_view(hf_model_id).substr(0, f.prefix.size()) == f.prefix) {
      return ChatTemplateTokens{f.tokens, f.leading, std::string(f.name)};
    }
  }
  return std::nullopt;
}

std::optional<ChatTemplateTokens> chat_template_tokens_for_model(const std::string& model) {
  if (auto t = chat_template_tokens(model)) return t;
  const ModelSource source = resolve_model(model);
  if (source.catalog_name.empty()) return std::nullopt;
  for (const CatalogModelIds& entry : catalog_model_ids()) {
    if (entry.name != source.catalog_name) continue;
    for (const std::string& id : entry.hf_ids) {
      if (auto t = chat_template_tokens(id)) return t;
    }
  }
  return std::nullopt;
}

}  // namespace servesim::models
