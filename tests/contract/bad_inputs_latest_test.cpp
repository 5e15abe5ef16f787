// The last rows of the bad-input table (tests/contract/bad_inputs.h): measured data that overrides
// physics, multimodal and hybrid model configs, serve's fault injection and queue-limit status.
// NEW ROWS GO AT THE END OF THIS FILE'S TABLE (docs/reliability.md numbers the rows in order).
#include "tests/contract/bad_inputs.h"

namespace servesim::app::bad_inputs {

std::vector<BadInput> latest_rows() {
  // Measured data that overrides physics: a kernel table or calibration profile applies as
  // measured only to the GPU it was measured on (name and figures; docs/cost_model.md §2.2).
  const std::string quarter_h100 =
      R"({"name": "h100-sxm", "architecture": "hopper", "memory_bytes": 85029027840,
          "hbm_bandwidth_bytes_per_s": 8.375e11, "bf16_flops": 2.4725e14,
          "fp8_flops": 4.9475e14, "step_overhead_s": 0.00018,
          "scale_up": {"kind": "nvlink", "bandwidth_bytes_per_s": 4.5e11, "latency_s": 5e-6}})";
  const std::string h100_rows =
      "gpu,kind,dtype,model,tp,op,m_tokens,n,k,batch,q_len,kv_len,q_heads,kv_heads,head_dim,"
      "time_us,tflops,gbps\n"
      "h100,linear,bf16,llama-3.1-8b,1,qkv_proj,1,6144,4096,,,,,,,8.8,5.7,5720.0\n";
  const std::string kernels_obj =
      R"("linear": [{"dtype": "bf16", "n": 6144, "k": 4096, "tokens": [1, 8],
          "time_us": [8.8, 9.1]}], "attention_prefill": [])";
  return {
      {"GPU JSON with a catalog GPU's name and a quarter of its figures",
       S({"--gpu", "{dir}/h100-sxm.json"}),
       {{"h100-sxm.json", quarter_h100}},
       2,
       "the GPU in use is also named h100-sxm but differs: dense bf16 peak 989 TFLOP/s vs "
       "247.2 TFLOP/s"},
      {"GPU JSON with a catalog GPU's name, its shipped kernel table",
       S({"--gpu", "{dir}/h100-sxm.json", "--calibration", "none"}),
       {{"h100-sxm.json", quarter_h100}},
       2,
       "hardware/kernels/h100-sxm.json: kernel table measured on h100-sxm"},
      {"calibration profile for a GPU of the same name, other figures, passed by path",
       S({"--gpu", "{dir}/h100-sxm.json", "--calibration", "hardware/calibration/h100-sxm.json",
          "--kernel-table", "none"}),
       {{"h100-sxm.json", quarter_h100}},
       2,
       "hardware/calibration/h100-sxm.json: calibration profile measured on h100-sxm"},
      {"kernel table of another architecture",
       S({"--gpu", "rtx-4090", "--kernel-table", "hardware/kernels/h200.json"}),
       {},
       2,
       "tables are transferred only between GPUs of one architecture"},
      {"kernel table recording a GPU of the same name with other figures",
       S({"--gpu", "h100-sxm", "--kernel-table", "{dir}/t.json"}),
       {{"t.json", R"({"servesim_calibration": 1, "gpu": "h100-sxm", "parameters": {},
          "kernels": {"gpu": "h100-sxm", "gpu_identity": {"name": "h100-sxm",
          "architecture": "hopper", "bf16_flops": 2.4725e14, "fp8_flops": 4.9475e14,
          "hbm_bandwidth_bytes_per_s": 8.375e11, "memory_bytes": 85029027840}, )" +
                       kernels_obj + "}}"}},
       2,
       "t.json: kernel table measured on h100-sxm (bf16 247.2 TFLOP/s"},
      {"kernel table of a GPU outside the catalog without its figures",
       S({"--gpu", "h100-sxm", "--kernel-table", "{dir}/t.json"}),
       {{"t.json", R"({"servesim_calibration": 1, "gpu": "my-gpu", "parameters": {},
          "kernels": {"gpu": "my-gpu", )" +
                       kernels_obj + "}}"}},
       2,
       "which is not in the GPU catalog, and the file records no gpu_identity"},
      {"calibrate --kernels with another GPU's table",
       {"calibrate", "--gpu", "rtx-4090", "--kernels", "{dir}/k.csv", "--out", "{dir}/p.json"},
       {{"k.csv", h100_rows}},
       2,
       "k.csv: data row 1 has gpu 'h100', another GPU than rtx-4090"},
      {"kernel-check of another GPU's table",
       {"kernel-check", "--measured", "{dir}/k.csv", "--gpu", "h200"},
       {{"k.csv", h100_rows}},
       2,
       "k.csv: data row 1 has gpu 'h100', another GPU than h200"},
      {"calibrate --base fitted on a GPU of the same name, other figures",
       {"calibrate", "--gpu", "{dir}/h100-sxm.json", "--base", "hardware/calibration/h100-sxm.json",
        "--kernels", "{dir}/k.csv", "--out", "{dir}/p.json"},
       {{"h100-sxm.json", quarter_h100}, {"k.csv", h100_rows}},
       2,
       "--base: hardware/calibration/h100-sxm.json: calibration profile measured on h100-sxm"},
      // Multimodal and hybrid configs (models/model_spec.h): what is not modelled is refused.
      {"model multimodal config without its vision encoder",
       S({"--model", "{dir}/m.json"}),
       {{"m.json", R"({"architectures": ["Gemma3ForConditionalGeneration"], "text_config": {}})"}},
       2,
       "m.json: field 'vision_config' must be an object (the vision encoder of "
       "Gemma3ForConditionalGeneration)"},
      {"model Llama-4 MoE layers off the interleave step",
       S({"--model", "{dir}/m.json"}),
       {{"m.json", R"({"architectures": ["Llama4ForCausalLM"], "hidden_size": 512,
          "intermediate_size": 256, "intermediate_size_mlp": 1024, "num_attention_heads": 8,
          "num_key_value_heads": 2, "num_hidden_layers": 4, "vocab_size": 1000,
          "max_position_embeddings": 4096, "num_local_experts": 4, "num_experts_per_tok": 1,
          "interleave_moe_layer_step": 2, "moe_layers": [0, 2]})"}},
       2,
       "field 'moe_layers' differs from every interleave_moe_layer_step-th layer"},
      // serve's fault injection and queue-limit status.
      {"serve replica outage without its replica",
       {"serve", "--replica-outage", "30-90"},
       {},
       2,
       "--replica-outage: \"30-90\" is invalid; expected R@T1-T2"},
      {"serve replica outage ending before it starts",
       {"serve", "--replica-outage", "0@90-30"},
       {},
       2,
       "--replica-outage: \"0@90-30\" is invalid"},
      {"serve replica outage of a replica not deployed",
       {"serve", "--num-replicas", "2", "--replica-outage", "2@1-2"},
       {},
       2,
       "names replica 2; expected 0..1 (--num-replicas 2)"},
      {"serve replica outages overlapping",
       {"serve", "--replica-outage", "0@1-5", "--replica-outage", "0@4-6"},
       {},
       2,
       "--replica-outage: 0@1-5 and 0@4-6 overlap"},
      {"serve latency spike without its factor",
       {"serve", "--latency-spike", "60-120"},
       {},
       2,
       "--latency-spike: \"60-120\" is invalid; expected T1-T2:xF"},
      {"serve latency spike factor zero",
       {"serve", "--latency-spike", "60-120:x0"},
       {},
       2,
       "a step-time factor F in (0, 1000]"},
      {"serve latency spikes overlapping",
       {"serve", "--latency-spike", "1-5:x2", "--latency-spike", "4-6:x3"},
       {},
       2,
       "--latency-spike: 1-5:x2 and 4-6:x3 overlap"},
      {"serve latency spike with data parallelism",
       {"serve", "--data-parallel-size", "2", "--latency-spike", "1-2:x2"},
       {},
       2,
       "--latency-spike: not modelled with --data-parallel-size"},
      {"serve queue-limit status not 429 or 503",
       {"serve", "--max-waiting-requests", "4", "--max-waiting-status", "500"},
       {},
       2,
       "--max-waiting-status: 500 is invalid; expected 429"},
  };
}

}  // namespace servesim::app::bad_inputs
