// The prompt tokens a model's chat template adds to one user message on /v1/chat/completions:
// the server tokenises the rendered template, the benchmark client counts the message alone
// (vllm bench serve's prompt_len), so a chat run's prefills are longer than its recorded lengths.
//
// Counted by hand from each family's published chat template for one user message, no system
// message, add_generation_prompt, the template's defaults (thinking left on), special tokens one
// token each:
//  - Qwen3 (Qwen/Qwen3-*, Qwen3-*-2507): "<|im_start|>user\n" + message + "<|im_end|>\n" +
//    "<|im_start|>assistant\n" = 8 tokens ([151644, 872, 198] … [151645, 198, 151644, 77091,
//    198]); Qwen3's template adds no default system message (Qwen2's does).
//  - GLM-4.5 (zai-org/GLM-4.5, -Air): "[gMASK]<sop><|user|>\n" + message + "<|assistant|>" =
//    5 tokens.
// gpt-oss renders a harmony system message (identity, knowledge cutoff, today's date, reasoning
// effort, channels) whose length needs the o200k_harmony tokenizer: not counted (nullopt), and
// so is every family not listed.
#ifndef SERVESIM_SIM_MEASURED_CHAT_TEMPLATE_TOKENS_H_
#define SERVESIM_SIM_MEASURED_CHAT_TEMPLATE_TOKENS_H_

#include <optional>
#include <string>

namespace servesim::measured {

struct ChatTemplateTokens {
  int tokens = 0;
  std::string family;  // "Qwen3 ChatML", for the run's note
};

// The template's tokens for the Hugging Face model id (`Qwen/Qwen3-14B-FP8`), nullopt when the
// family's count is not known.
std::optional<ChatTemplateTokens> chat_template_tokens(const std::string& hf_model_id);

}  // namespace servesim::measured

#endif  // SERVESIM_SIM_MEASURED_CHAT_TEMPLATE_TOKENS_H_
