// Diagnostic for bench/RESULTS.md (Distributed, 2026-12-07): Open MPI's all-reduce of float32 between 2 ranks,
// blocking, non-blocking + MPI_Wait, and non-blocking polled with MPI_Test the way engine/dist/src/mpi/mpi_work.cpp
// waits (1000 yields, then sleeps growing by 20 us up to 1 ms). Median of 10 after 2 warm-ups, the slower rank's time.
//   mpicc -O2 -o /tmp/mpi_iallreduce bench/dist/mpi_iallreduce.c
//   for alg in 0 1; do OMPI_MCA_coll_libnbc_iallreduce_algorithm=$alg mpirun -np 2 --oversubscribe --bind-to none \
//       /tmp/mpi_iallreduce; done      # 0: libnbc's default choice, 1: ring (as root: OMPI_ALLOW_RUN_AS_ROOT=1 ...)
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static int cmp(const void* a, const void* b) { double x = *(double*)a, y = *(double*)b; return x < y ? -1 : x > y; }
static void backoff_wait(MPI_Request* r) {
  int done = 0, polls = 0; long pause = 0;
  for (;;) {
    MPI_Test(r, &done, MPI_STATUS_IGNORE);
    if (done) return;
    if (++polls < 1000) sched_yield();
    else { pause = pause + 20 > 1000 ? 1000 : pause + 20; struct timespec ts = {0, pause * 1000}; nanosleep(&ts, 0); }
  }
}
int main(int argc, char** argv) {
  int provided; MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int sizes[] = {1, 16, 64};
  for (int s = 0; s < 3; ++s) {
    size_t n = (size_t)sizes[s] * 1048576 / 4; float* buf = calloc(n, 4);
    for (int mode = 0; mode < 3; ++mode) {
      double t[12];
      for (int i = 0; i < 12; ++i) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now();
        if (mode == 0) MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        else { MPI_Request r; MPI_Iallreduce(MPI_IN_PLACE, buf, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &r);
               if (mode == 1) MPI_Wait(&r, MPI_STATUS_IGNORE); else backoff_wait(&r); }
        double dt = now() - t0, mx; MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD); t[i] = mx;
      }
      qsort(t + 2, 10, sizeof(double), cmp);
      const char* names[] = {"MPI_Allreduce", "MPI_Iallreduce+MPI_Wait", "MPI_Iallreduce+backoff MPI_Test"};
      if (rank == 0) printf("%2d MB %-32s %7.2f ms  busbw %.2f GB/s\n", sizes[s], names[mode], (t[6] + t[7]) / 2 * 1e3,
                            n * 4.0 / ((t[6] + t[7]) / 2) / 1e9);
    }
    free(buf);
  }
  MPI_Finalize();
}
