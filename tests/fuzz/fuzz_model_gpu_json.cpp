// libFuzzer target: the catalog JSON readers. First byte: 'm' a model config.json
// (models/model_spec.h), 'l' a network link JSON (hardware/topology.h), anything else a GPU JSON
// (hardware/gpu_spec.h). What parses is then deployed (with llama-3.1-8b / h100-sxm as the other
// half) and a few requests simulated.
#include <cstddef>
#include <cstdint>

#include "hardware/gpu_spec.h"
#include "hardware/topology.h"
#include "models/model_spec.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace servesim;
  static const std::vector<fuzz::Reader> readers = {
      {'m', "model.json",
       [](const std::string& p) {
         models::load_model(p);
         sim::SimulationConfig c;
         c.model = p;
         c.calibration = "none";
         fuzz::simulate_briefly(c);
       }},
      {'l', "link.json",
       [](const std::string& p) {
         hardware::load_network_link(p);
         sim::SimulationConfig c;
         c.model = "llama-3.1-70b";
         c.tensor_parallel_size = 4;
         c.pipeline_parallel_size = 2;
         c.gpus_per_node = 4;
         c.inter_node_link = p;
         c.calibration = "none";
         fuzz::simulate_briefly(c);
       }},
      {'g', "gpu.json",
       [](const std::string& p) {
         hardware::load_gpu(p);
         sim::SimulationConfig c;
         c.gpu = p;
         c.calibration = "none";
         fuzz::simulate_briefly(c);
       }},
  };
  return fuzz::run_reader(data, size, readers);
}
