/* A small MPI "simulation" that checkpoints through Sluice and restarts
 * from its highest committed checkpoint, on any number of ranks.
 *
 *   mpiexec -n 4 checkpoint_sim DATA_ROOT STEPS [EVERY [MS_PER_STEP]]
 *
 * The state is two global arrays of G doubles, split in blocks over the
 * ranks. Every EVERY steps (default 5) the ranks write checkpoint id STEP of
 * dataset "state": the arrays as shared elements (each rank its block, at
 * its offset in the global array: blocking for one, non-blocking for the
 * other) and the step in rank 0's unique element "meta". The commit makes
 * the id exist only once every rank's data is durable. At start the program
 * opens SLUICE_DATASET_ID_HIGHEST: if there is one, it continues from there
 * whatever the number of ranks that wrote it, since each rank reads its own
 * block of the global arrays. It prints a checksum of the final state that
 * does not depend on the number of ranks or on restarts.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sluice/c_mpi.h>
#include <sluice/sluice.h>

enum { G = 1 << 16 }; /* doubles in each global array */

static int rank, nranks;

static void check(int rc, const char* what) {
  if (rc != SLUICE_OK) {
    fprintf(stderr, "rank %d: %s: %s: %s\n", rank, what, sluice_strerror(rc),
            sluice_errmsg());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

/* This rank's block [lo, hi) of the global arrays. */
static void block(int r, int n, uint64_t* lo, uint64_t* hi) {
  *lo = (uint64_t)G * r / n;
  *hi = (uint64_t)G * (r + 1) / n;
}

static void save(sluice_context_t* ctx, int64_t step, const double* rho,
                 const double* vel, uint64_t lo, uint64_t n) {
  sluice_dataset_t* ds;
  sluice_element_t *e_rho, *e_vel;
  sluice_request_t* req;
  check(sluice_dataset_open(ctx, "state", step, SLUICE_DATASET_WRITE, &ds),
        "open checkpoint");
  check(sluice_element_open(ds, "velocity", SLUICE_ELEMENT_SHARED, &e_vel),
        "open velocity");
  /* The velocity goes in the background while the density is written. */
  check(sluice_element_write_nb(e_vel, lo * sizeof(double), vel,
                                n * sizeof(double), &req),
        "write velocity");
  check(sluice_element_open(ds, "density", SLUICE_ELEMENT_SHARED, &e_rho),
        "open density");
  check(sluice_element_write(e_rho, lo * sizeof(double), rho,
                             n * sizeof(double)),
        "write density");
  if (rank == 0) {
    sluice_element_t* meta;
    int64_t m[2] = {step, G};
    check(sluice_element_open(ds, "meta", SLUICE_ELEMENT_UNIQUE, &meta),
          "open meta");
    check(sluice_element_write(meta, 0, m, sizeof m), "write meta");
    check(sluice_element_close(meta), "close meta");
  }
  check(sluice_request_wait(&req, NULL), "velocity written");
  check(sluice_element_close(e_rho), "close density");
  check(sluice_element_close(e_vel), "close velocity");
  check(sluice_dataset_close(ds), "commit");
}

/* Continues from the highest committed checkpoint; returns its step, or 0
 * when there is none. */
static int64_t restore(sluice_context_t* ctx, double* rho, double* vel,
                       uint64_t lo, uint64_t n) {
  sluice_dataset_t* ds;
  int rc = sluice_dataset_open(ctx, "state", SLUICE_DATASET_ID_HIGHEST,
                               SLUICE_DATASET_READ, &ds);
  if (rc == SLUICE_NOT_FOUND) return 0;
  check(rc, "open the highest checkpoint");
  sluice_element_t* el;
  size_t got;
  int64_t m[2];
  check(sluice_element_open_rank(ds, "meta", 0, &el), "open meta");
  check(sluice_element_read(el, 0, m, sizeof m, &got), "read meta");
  check(sluice_element_close(el), "close meta");
  if (got != sizeof m || m[1] != G) {
    int64_t id = -1;
    check(sluice_dataset_id(ds, &id), "the id opened");
    fprintf(stderr, "checkpoint %lld is not of this program\n", (long long)id);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  check(sluice_element_open(ds, "density", SLUICE_ELEMENT_SHARED, &el),
        "open density");
  check(sluice_element_read(el, lo * sizeof(double), rho, n * sizeof(double),
                            &got),
        "read density");
  check(sluice_element_close(el), "close density");
  check(sluice_element_open(ds, "velocity", SLUICE_ELEMENT_SHARED, &el),
        "open velocity");
  check(sluice_element_read(el, lo * sizeof(double), vel, n * sizeof(double),
                            &got),
        "read velocity");
  check(sluice_element_close(el), "close velocity");
  check(sluice_dataset_close(ds), "close checkpoint");
  return m[0];
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (argc < 3) {
    if (rank == 0) {
      fprintf(stderr, "usage: %s DATA_ROOT STEPS [EVERY [MS_PER_STEP]]\n",
              argv[0]);
    }
    MPI_Finalize();
    return 2;
  }
  const int64_t steps = atoll(argv[2]);
  const int64_t every = argc > 3 ? atoll(argv[3]) : 5;
  const int ms = argc > 4 ? atoi(argv[4]) : 0;
  /* Where checkpoints go, as a job script would say it (SLUICE_DATA_ROOTS);
   * a configuration file's data_roots line does the same. */
  setenv("SLUICE_DATA_ROOTS", argv[1], 1);

  sluice_context_t* ctx;
  check(sluice_init_mpi(MPI_COMM_WORLD, "checkpoint_sim", NULL, &ctx),
        "init");
  uint64_t lo, hi;
  block(rank, nranks, &lo, &hi);
  const uint64_t n = hi - lo;
  /* With a ghost cell on each side. */
  double* rho = calloc(n + 2, sizeof(double));
  double* vel = calloc(n, sizeof(double));
  int64_t step = restore(ctx, rho + 1, vel, lo, n);
  if (step > 0) {
    if (rank == 0) printf("restart from checkpoint %lld\n", (long long)step);
  } else {
    for (uint64_t i = 0; i < n; ++i) rho[1 + i] = (double)((lo + i) % 97);
    if (rank == 0) printf("fresh start\n");
  }
  fflush(stdout);
  const int left = (rank + nranks - 1) % nranks, right = (rank + 1) % nranks;
  while (step < steps) {
    /* Periodic halo exchange, then a diffusion step. */
    MPI_Sendrecv(&rho[1], 1, MPI_DOUBLE, left, 0, &rho[n + 1], 1, MPI_DOUBLE,
                 right, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&rho[n], 1, MPI_DOUBLE, right, 1, &rho[0], 1, MPI_DOUBLE,
                 left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    double prev = rho[0];
    for (uint64_t i = 1; i <= n; ++i) {
      const double cur = rho[i];
      rho[i] = 0.5 * cur + 0.25 * (prev + rho[i + 1]);
      prev = cur;
      vel[i - 1] += 0.01 * rho[i];
    }
    ++step;
    if (ms) usleep(ms * 1000);
    if (step % every == 0) {
      save(ctx, step, rho + 1, vel, lo, n);
      if (rank == 0) {
        printf("checkpoint %lld committed\n", (long long)step);
        fflush(stdout);
      }
      /* Keep the last two checkpoints. */
      if (step > 2 * every) {
        check(sluice_dataset_unlink(ctx, "state", step - 2 * every),
              "unlink");
      }
    }
  }
  /* A checksum of the bits of the state, the same for any decomposition. */
  uint64_t sum = 0, total = 0;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t a, b;
    memcpy(&a, &rho[1 + i], 8);
    memcpy(&b, &vel[i], 8);
    sum += a * (2 * (lo + i) + 1) + b * (2 * (lo + i) + 3);
  }
  MPI_Reduce(&sum, &total, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("final checksum %016llx after step %lld\n",
           (unsigned long long)total, (long long)step);
  }
  check(sluice_fini(ctx), "fini");
  free(rho);
  free(vel);
  MPI_Finalize();
  return 0;
}
