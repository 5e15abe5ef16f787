// The OpenAI Node SDK (npm `openai`) against `servesim serve`: a streaming chat completion with
// usage, a non-streaming completion, the model list, and an error. Prints one JSON line of what
// it saw; serve_test.py checks it. Usage: node serve_openai_node.mjs BASE_URL MODEL
import OpenAI from "openai";

const [baseURL, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0 });
const out = {};
const stream = await client.chat.completions.create({
  model, messages: [{ role: "user", content: "hello there" }], max_tokens: 9, stream: true,
  stream_options: { include_usage: true },
});
out.chunks = 0;
out.text = "";
for await (const chunk of stream) {
  out.chunks += 1;
  if (chunk.choices.length > 0) {
    out.text += chunk.choices[0].delta.content ?? "";
    if (chunk.choices[0].finish_reason) out.finish_reason = chunk.choices[0].finish_reason;
  }
  if (chunk.usage) out.usage = chunk.usage;
}
const c = await client.completions.create({ model, prompt: [1, 2, 3, 4, 5], max_tokens: 4 });
out.completion_text = c.choices[0].text;
out.completion_usage = c.usage;
out.models = (await client.models.list()).data.map((m) => m.id);
try {
  await client.completions.create({ model: "nope", prompt: "a", max_tokens: 1 });
} catch (e) {
  out.error_status = e.status;
  out.error_type = e.error?.type ?? e.type;
}
console.log(JSON.stringify(out));
