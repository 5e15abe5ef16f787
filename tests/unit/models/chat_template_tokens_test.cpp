// A --model value's chat template count (models/chat_template_tokens.h): a Hugging Face id of a
// counted family, a catalog name through the ids its entry records, and the families not counted.
#include "models/chat_template_tokens.h"

#include <catch2/catch.hpp>

namespace servesim::models {
namespace {

TEST_CASE("chat template tokens of a --model value", "[models][chat]") {
  // Qwen3's ChatML: <|im_start|>user\n (3) … <|im_end|>\n<|im_start|>assistant\n (5).
  const auto by_id = chat_template_tokens_for_model("Qwen/Qwen3-14B");
  REQUIRE(by_id.has_value());
  CHECK(by_id->tokens == 8);
  CHECK(by_id->leading == 3);
  // A catalog name: its entry's recorded ids (qwen3-14b.json: Qwen/Qwen3-14B).
  const auto by_name = chat_template_tokens_for_model("qwen3-14b");
  REQUIRE(by_name.has_value());
  CHECK(by_name->tokens == 8);
  // GLM-4.5: [gMASK]<sop><|user|>\n (4) … <|assistant|> (1).
  const auto glm = chat_template_tokens_for_model("glm-4.5-air");
  REQUIRE(glm.has_value());
  CHECK(glm->tokens == 5);
  CHECK(glm->leading == 4);
  // gpt-oss: harmony's system message, 3 + 55 + 1 tokens, the user's header 3 (62 before the
  // message), and "<|end|><|start|>assistant" 3 after it.
  const auto oss = chat_template_tokens_for_model("gpt-oss-20b");
  REQUIRE(oss.has_value());
  CHECK(oss->tokens == 65);
  CHECK(oss->leading == 62);
  CHECK(chat_template_tokens("openai/gpt-oss-120b")->tokens == 65);
  // Not counted: Llama 3's template.
  CHECK_FALSE(chat_template_tokens_for_model("llama-3.1-8b").has_value());
}

}  // namespace
}  // namespace servesim::models
