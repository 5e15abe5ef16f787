// servesim entry point: all logic lives in sim/app/cli.cpp and the libraries. Started by mpirun
// (or srun) as one rank of several, it runs as an MPI rank (sim/app/study.h).
#include <iostream>
#include <string>
#include <vector>

#include "sim/app/cli.h"
#include "sim/app/study.h"
#include "sim/base/exit_signals.h"
#ifdef SERVESIM_HAVE_MPI
#include "sim/distributed/mpi_executor.h"
#endif

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  // SIGINT/SIGTERM remove the temporary files of outputs being written (sim/base/exit_signals.h).
  servesim::install_exit_signal_handlers();
#ifdef SERVESIM_HAVE_MPI
  if (servesim::distributed::MpiSession::launched_under_mpi()) {
    return servesim::app::run_cli_mpi(&argc, &argv, std::cout, std::cerr);
  }
#endif
  std::vector<std::string> args(argv + 1, argv + argc);
  return servesim::app::run_cli(args, std::cout, std::cerr);
}
