// Part 3 of 8 of the bad-input table (tests/contract/bad_inputs.h): Output files refused before any
// work, and measured runs. Row order is docs/reliability.md's order; new rows go at the end of
// bad_inputs_latest_test.cpp.
#include "tests/contract/bad_inputs.h"

namespace servesim::app::bad_inputs {

std::vector<BadInput> output_and_measured_rows() {
  const std::string cfg = "{dir}/c.json";
  return {
      // Output files: refused before any work.
      {"output is a directory",
       S({"--save-result", "--result-filename", "{dir}/out.json"}),
       {},
       2,
       "is a directory",
       "dir"},
      {"output is a symbolic link",
       S({"--save-result", "--result-filename", "{dir}/out.json"}),
       {},
       2,
       "symbolic link",
       "symlink"},
      {"output is a FIFO",
       S({"--save-result", "--result-filename", "{dir}/out.json"}),
       {},
       2,
       "FIFO",
       "fifo"},
      {"output is a device",
       S({"--save-result", "--result-filename", "/dev/null"}),
       {},
       2,
       "device"},
      {"output folder missing",
       S({"--save-result", "--result-dir", "{dir}/nope", "--result-filename", "out.json"}),
       {},
       2,
       "does not exist"},
      {"output equal to the --config input",
       S({"--config", cfg, "--save-result", "--result-filename", cfg}),
       {{"c.json", R"({"seed": 1})"}},
       2,
       "also an input"},
      {"validate output equal to its measured input",
       {"validate", "--measured", "{dir}/m.json", "--output", "{dir}/m.json"},
       {{"m.json", kMeasured}},
       2,
       "also an input"},
      {"calibrate output equal to its input",
       {"calibrate", "--gpu", "h100-sxm", "--vidur-mlp", "{dir}/x.csv", "--out", "{dir}/x.csv"},
       {{"x.csv", "a,b\n1,2\n"}},
       2,
       "also an input"},
      {"sweep CSV path is a directory",
       {"sweep", "--request-rate", "1,2", "--num-prompts", "20", "--output", "{dir}/out.json"},
       {},
       2,
       "its CSV",
       "csvdir"},
      // Measured runs.
      {"measured file missing",
       {"validate", "--measured", "{dir}/absent.json"},
       {},
       2,
       "absent.json"},
      {"measured format unknown",
       {"validate", "--measured", "{dir}/m.json"},
       {{"m.json", R"({"x": 1})"}},
       2,
       "m.json"},
      {"measured number beyond double",
       {"validate", "--measured", "{dir}/m.json"},
       {{"m.json", R"({"completed": 1e400, "mean_ttft_ms": 1})"}},
       2,
       "1e400"},
  };
}

}  // namespace servesim::app::bad_inputs
