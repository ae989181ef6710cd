// mpi/mpi_environment.h — what the mpi backend learnt about the MPI library it runs on, for tests and
// `rtorch info` (no <mpi.h> here, so callers need not find MPI's headers).
//
//   rt::dist::mpi::ThreadLevel level = rt::dist::mpi::thread_level();   // initialises MPI if needed
//   std::printf("MPI gives %s\n", rt::dist::mpi::thread_level_name(level));
#pragma once
#include "rt/export.h"

RT_API_BEGIN

namespace rt::dist::mpi {

// MPI's thread-support levels, in MPI's order (MPI_THREAD_SINGLE < ... < MPI_THREAD_MULTIPLE).
enum class ThreadLevel { Single, Funneled, Serialized, Multiple };
const char* thread_level_name(ThreadLevel level);  // "MPI_THREAD_MULTIPLE", ...

// The level MPI provides to this process; initialises MPI (MPI_Init_thread) on first use, as
// make_mpi_group does. See Note [MPI thread level] in mpi_runtime.cpp.
ThreadLevel thread_level();
// True when the backend funnels every MPI call through one mutex (the level is below MULTIPLE).
bool calls_serialized();
// True when this library called MPI_Init_thread (and so finalizes MPI at exit); false when someone
// else in the process (mpi4py, the application) initialised MPI first.
bool initialised_here();

}  // namespace rt::dist::mpi

RT_API_END
