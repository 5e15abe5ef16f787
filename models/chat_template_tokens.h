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
//  - gpt-oss (openai/gpt-oss-*): vLLM renders the conversation in OpenAI's harmony format
//    (vllm/entrypoints/harmony_utils.py: get_system_message, render_for_completion): a system
//    message vLLM writes itself, then the user's message, then the assistant's header:
//      "<|start|>system<|message|>" + body + "<|end|>" + "<|start|>user<|message|>" + message +
//      "<|end|>" + "<|start|>assistant"
//    with the body harmony's SystemContent defaults render (no reasoning_effort in the request:
//    medium; no tools: the commentary channel removed):
//      "You are ChatGPT, a large language model trained by OpenAI.\nKnowledge cutoff: 2024-06\n"
//      "Current date: YYYY-MM-DD\n\nReasoning: medium\n\n# Valid channels: analysis, final. "
//      "Channel must be included for every message."
//    55 tokens in o200k_base (o200k_harmony is o200k_base plus the special tokens; counted with
//    the js-tiktoken package, any date of that form gives 55), so 65 in all: 62 before the
//    message (3 + 55 + 1 + 3), 3 after. A vLLM that keeps the commentary channel renders 2
//    more. The date changes daily, so the shared prefix lasts a day.
// Every family not listed is not counted (nullopt).
//
// Used twice: the public-runs reader adds the count to a chat run's recorded lengths, and a run
// with --endpoint /v1/chat/completions adds it to every prompt the workload sends
// (workloads/chat_template_workload.h).
#ifndef SERVESIM_MODELS_CHAT_TEMPLATE_TOKENS_H_
#define SERVESIM_MODELS_CHAT_TEMPLATE_TOKENS_H_

#include <optional>
#include <string>

namespace servesim::models {

struct ChatTemplateTokens {
  int tokens = 0;
  // Of `tokens`, those before the user's message ("<|im_start|>user\n": 3 for Qwen3,
  // "[gMASK]<sop><|user|>\n": 4 for GLM-4.5): every request's prompt starts with them, so they
  // lengthen a shared prefix.
  int leading = 0;
  std::string family;  // "Qwen3 ChatML", for the run's note
};

// The template's tokens for the Hugging Face model id (`Qwen/Qwen3-14B-FP8`), nullopt when the
// family's count is not known.
std::optional<ChatTemplateTokens> chat_template_tokens(const std::string& hf_model_id);

// The same for a --model value (model_name.h): the value itself as an id, else the Hugging Face
// ids its catalog entry records. nullopt when none has a known count (a config.json path, a
// family not listed). Throws ConfigError when the value names no model (resolve_model).
std::optional<ChatTemplateTokens> chat_template_tokens_for_model(const std::string& model);

}  // namespace servesim::models

#endif  // SERVESIM_MODELS_CHAT_TEMPLATE_TOKENS_H_
