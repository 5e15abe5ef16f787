// Shared by the libFuzzer targets: the input's first byte picks the reader (so one target covers a
// family of formats), the rest is the file's content, written to a file of the name that reader
// expects. A reader may throw ConfigError (bad input, the contract); anything else — another
// exception, a sanitizer report, an abort — is a bug the fuzzer reports.
#ifndef SERVESIM_TESTS_FUZZ_FUZZ_INPUT_H_
#define SERVESIM_TESTS_FUZZ_FUZZ_INPUT_H_

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace servesim::fuzz {

// Writes `size` bytes at `data` to <temp>/servesim_fuzz_<pid>/<name> and returns the path.
inline std::string write_input(const uint8_t* data, size_t size, const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("servesim_fuzz_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path p = dir / name;
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return p.string();
}

}  // namespace servesim::fuzz

#endif  // SERVESIM_TESTS_FUZZ_FUZZ_INPUT_H_
