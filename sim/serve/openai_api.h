// The OpenAI-compatible request and response bodies of `servesim serve`, in vLLM's shapes
// (vllm/entrypoints/openai/protocol.py): what a completions or chat-completions body asks for,
// and the JSON of its answer, its stream chunks and its errors. No I/O here: sim/serve/server.h
// moves these bodies over HTTP.
//
// Prompt length. A prompt given as token ids (`prompt` as an array of integers, or
// `prompt_token_ids`) has that many tokens. Text has ceil(characters / chars_per_token) tokens
// (UTF-8 code points; default 4 per token, the usual rule of thumb for English with BPE
// vocabularies), at least 1; a chat request counts the characters of every message's text
// content. No chat template is applied.
//
// Output length. The simulated model has no EOS: every request generates max_tokens tokens
// (max_completion_tokens for chat), or max_model_len − prompt when neither is given (vLLM's
// default), and finishes with finish_reason "length". ignore_eos true asks for exactly that;
// min_tokens is checked (0 <= min_tokens <= max_tokens) and then met, since generation always
// runs to max_tokens. Each token's text is the filler " hello".
#ifndef SERVESIM_SIM_SERVE_OPENAI_API_H_
#define SERVESIM_SIM_SERVE_OPENAI_API_H_

#include <cstdint>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace servesim::serve {

// A request refused with an HTTP status and an OpenAI-shaped error body.
class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string type, const std::string& message)
      : std::runtime_error(message), status_(status), type_(std::move(type)) {}
  int status() const { return status_; }
  const std::string& type() const { return type_; }

 private:
  int status_;
  std::string type_;
};

// {"error": {"message", "type", "param": null, "code": status}} (OpenAI's error object, as vLLM's
// ErrorResponse writes it).
nlohmann::json error_body(int status, const std::string& type, const std::string& message);

enum class Endpoint { kCompletions, kChat };

struct ApiLimits {
  std::string served_model;  // the only model name accepted
  int64_t max_model_len = 0;
  double chars_per_token = 4.0;
};

struct CompletionRequest {
  Endpoint endpoint = Endpoint::kCompletions;
  int32_t prompt_tokens = 0;
  int32_t max_tokens = 0;  // generated exactly (see the file comment)
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
};

// Parses and checks a request body. Throws ApiError: 400 for malformed JSON, a missing or
// mistyped field, n != 1, several prompts, max_tokens < 1, min_tokens out of range, or a prompt
// plus max_tokens over max_model_len (vLLM's message); 404 for another model than served_model.
CompletionRequest parse_request(Endpoint endpoint, const std::string& body,
                                const ApiLimits& limits);

// Text tokens by the rule of the file comment.
int32_t text_tokens(const std::string& text, double chars_per_token);

// The filler text of one generated token.
inline constexpr const char* kFillerToken = " hello";

// Response bodies. `id` is "cmpl-…" / "chatcmpl-…", `created` Unix seconds.
struct ResponseIds {
  std::string id;
  int64_t created = 0;
  std::string model;
};
nlohmann::json usage_json(int64_t prompt_tokens, int64_t completion_tokens);
// The whole answer of a non-streaming request that generated `tokens` tokens.
nlohmann::json full_response(Endpoint endpoint, const ResponseIds& ids, int64_t prompt_tokens,
                             int64_t tokens);
// One stream chunk carrying `text` (finish_reason "length" when `last`); with include_usage,
// "usage": null as vLLM writes in every chunk but the usage one.
nlohmann::json token_chunk(Endpoint endpoint, const ResponseIds& ids, const std::string& text,
                           bool last, bool include_usage);
// Chat streams open with a chunk of the assistant role and empty content.
nlohmann::json role_chunk(const ResponseIds& ids, bool include_usage);
// The final usage chunk: "choices": [] and the usage.
nlohmann::json usage_chunk(Endpoint endpoint, const ResponseIds& ids, int64_t prompt_tokens,
                           int64_t tokens);

}  // namespace servesim::serve

#endif  // SERVESIM_SIM_SERVE_OPENAI_API_H_
