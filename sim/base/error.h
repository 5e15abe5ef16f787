// Errors. ConfigError is bad user input (unknown model, malformed file, nonsensical flag value):
// the CLI prints its message on one line and exits with code 2. SERVESIM_CHECK guards internal
// invariants, stays on in release builds, and throws InternalError (a bug in servesim).
#ifndef SERVESIM_SIM_BASE_ERROR_H_
#define SERVESIM_SIM_BASE_ERROR_H_

#include <stdexcept>
#include <string>

namespace servesim {

// Bad input. The message names the file or flag, the field, the value and what was expected.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A broken invariant inside the simulator.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace servesim

#define SERVESIM_CHECK(cond, msg)                                                              \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      throw ::servesim::InternalError(std::string(__FILE__) + ":" + std::to_string(__LINE__) + \
                                      ": check failed: " #cond " — " + std::string(msg));      \
    }                                                                                          \
  } while (0)

#endif  // SERVESIM_SIM_BASE_ERROR_H_
