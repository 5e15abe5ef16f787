// MPI: the ranks of an `mpirun -n N servesim ...` job share a study's jobs.
//
// MpiSession contract:
//  - launched_under_mpi() is true when the environment says a process manager started this
//    process as one rank of several (Open MPI's OMPI_COMM_WORLD_SIZE, PMIx's PMIX_RANK, or
//    PMI_SIZE from MPICH/Slurm) and servesim was built with MPI. A plain `servesim ...` never
//    initialises MPI.
//  - The constructor calls MPI_Init_thread (MPI_THREAD_FUNNELED: only the main thread calls
//    MPI); the destructor MPI_Finalize. One session per process.
//  - executor() is null with one rank (plain threads do the work), else the MpiExecutor.
//
// MpiExecutor contract (JobExecutor, sim/base/executor.h):
//  - Every rank calls run() with the same loops in the same order (SPMD: the same command line
//    builds the same study everywhere).
//  - Rank 0 hands out job indices in ascending order, one at a time, to whichever rank is idle
//    (dynamic assignment: simulations differ in cost), asking skip() first; it also runs jobs
//    itself on one worker thread while its main thread does the messaging. Ranks > 0 compute the
//    jobs they are sent and send back the bytes.
//  - At the end of the loop rank 0 broadcasts every result (and the error, if a job threw) to all
//    ranks; each rank accepts them, so every rank leaves run() with the same state and the study
//    continues identically everywhere (plan's and calibrate's later rounds). Only rank 0 writes
//    output (the app's hook).
//  - Waiting ranks poll with short sleeps instead of spinning in MPI calls, so `-n 4` on 2 cores
//    (oversubscribed) leaves the cores to the ranks that compute.
#ifndef SERVESIM_SIM_DISTRIBUTED_MPI_EXECUTOR_H_
#define SERVESIM_SIM_DISTRIBUTED_MPI_EXECUTOR_H_

#include <memory>

#include "sim/base/executor.h"

namespace servesim::distributed {

class MpiSession {
 public:
  static bool launched_under_mpi();
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  JobExecutor* executor() { return executor_.get(); }

 private:
  int rank_ = 0;
  int size_ = 1;
  std::unique_ptr<JobExecutor> executor_;
};

}  // namespace servesim::distributed

#endif  // SERVESIM_SIM_DISTRIBUTED_MPI_EXECUTOR_H_
