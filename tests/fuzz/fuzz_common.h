// Shared by the libFuzzer targets (one per reader family, tests/fuzz/fuzz_*.cpp). A target lists
// its readers; the input's first byte picks one (by its key; the last reader when no key
// matches), the rest is the file's content, written under the file name that reader expects
// (readers pick formats by name). A reader may throw ConfigError (bad input: the contract);
// anything else escaping — another exception, a sanitizer report, an abort, a timeout — is a bug
// that libFuzzer reports with the input that caused it.
//
// Regression inputs live beside the seeds in tests/fuzz/corpus/<target>/ and are replayed by the
// ctest `fuzz.<target>.corpus` in the sanitizer build; each also has a Catch2 test in the normal
// suite named after its input class.
#ifndef SERVESIM_TESTS_FUZZ_FUZZ_COMMON_H_
#define SERVESIM_TESTS_FUZZ_FUZZ_COMMON_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/cluster/simulation.h"

namespace servesim::fuzz {

struct Reader {
  char key;               // the input's first byte that selects this reader
  std::string file_name;  // where the rest is written, relative to a private temp folder
                          //   (may hold '/': parent folders are created)
  std::function<void(const std::string& path)> read;
};

// Writes `size` bytes at `data` to <temp>/servesim_fuzz_<pid>/<name> and returns the path.
std::string write_input(const uint8_t* data, size_t size, const std::string& name);

// Runs `f`; a ConfigError is the expected answer to bad input and is swallowed. Returns 0 (what
// LLVMFuzzerTestOneInput returns).
int guarded(const std::function<void()>& f);

// One fuzz input through the reader its first byte selects (see the file comment).
int run_reader(const uint8_t* data, size_t size, const std::vector<Reader>& readers);

// A short run (a few requests) on `config`, so that a deployment a fuzzed file describes is
// pushed through the cost model, the memory plan and the engine, not only parsed. The load is
// replaced by `num_prompts` random requests of at most 64/16 tokens at rate inf.
void simulate_briefly(sim::SimulationConfig config, int64_t num_prompts = 4);

}  // namespace servesim::fuzz

#endif  // SERVESIM_TESTS_FUZZ_FUZZ_COMMON_H_
