/* One small checkpoint per aggregation, drained to the second data root,
 * for docs/SCALING.md: the sizes of the drain index and of the commit
 * record, and the file calls on the destination (under strace). A
 * functional run, not a benchmark: nothing is timed.
 *
 *   probe write SHARED UNIQUE AGG...   id 1 of dataset AGG (n_n, n_m or
 *                                      n_1) for each AGG: every rank
 *                                      writes SHARED bytes of the shared
 *                                      element "field" at rank * SHARED
 *                                      and, if UNIQUE > 0, UNIQUE bytes of
 *                                      its own element "own"; the close
 *                                      commits it and the probe waits for
 *                                      its drain (stage_mode immediate)
 *   probe read SHARED UNIQUE AGG...    opens id 1 of each (the first root
 *                                      wiped beforehand, so the drained
 *                                      copy is read) and checks every
 *                                      byte: each rank reads its own part
 *                                      and its own unique element
 *
 * The data roots and the mode come from the environment
 * (SLUICE_DATA_ROOTS, SLUICE_DATASET_MODE); the context is "scale". Every
 * failure ends the job with a message naming the call. Build:
 *   mpicc -O2 -I include -I tests probe.c -o probe -L BUILD -lsluice_mpi -lsluice
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"
#include "sluice/c_mpi.h"
#include "sluice/sluice.h"

static int rank, nranks;

/* The byte at `off` of element `el` (0 shared, 1 + rank unique). */
static unsigned char Byte(int el, uint64_t off) {
  uint64_t x = off * 0x9e3779b97f4a7c15ull + (uint64_t)el * 0x2545f491ull;
  return (unsigned char)(x >> 56);
}

static void Fill(unsigned char* p, size_t n, int el, uint64_t off) {
  for (size_t i = 0; i < n; ++i) p[i] = Byte(el, off + i);
}

static void Verify(const unsigned char* p, size_t n, int el, uint64_t off,
                   const char* what) {
  for (size_t i = 0; i < n; ++i) {
    CHECK(p[i] == Byte(el, off + i), "%s: byte %llu differs", what,
          (unsigned long long)(off + i));
  }
}

static void Write(sluice_context_t* ctx, const char* agg, size_t shared,
                  size_t unique) {
  OK(sluice_config_set(ctx, "aggregation", agg));
  sluice_dataset_t* ds;
  OK(sluice_dataset_open(ctx, agg, 1, SLUICE_DATASET_WRITE, &ds));
  unsigned char* buf = malloc(shared > unique ? shared : unique);
  CHECK(buf != NULL, "out of memory");
  sluice_element_t* el;
  OK(sluice_element_open(ds, "field", SLUICE_ELEMENT_SHARED, &el));
  Fill(buf, shared, 0, (uint64_t)rank * shared);
  OK(sluice_element_write(el, (uint64_t)rank * shared, buf, shared));
  OK(sluice_element_close(el));
  if (unique > 0) {
    OK(sluice_element_open(ds, "own", SLUICE_ELEMENT_UNIQUE, &el));
    Fill(buf, unique, 1 + rank, 0);
    OK(sluice_element_write(el, 0, buf, unique));
    OK(sluice_element_close(el));
  }
  OK(sluice_dataset_close(ds));
  free(buf);
  sluice_drain_state_t st;
  OK(sluice_dataset_drain_wait(ctx, agg, 1, &st));
  CHECK(st.phase == SLUICE_DRAIN_DURABLE, "%s: drain phase %d: %s", agg,
        st.phase, st.message);
  if (rank == 0) {
    printf("%s: %d ranks, drained to root %d\n", agg, nranks, st.root);
  }
}

static void Read(sluice_context_t* ctx, const char* agg, size_t shared,
                 size_t unique) {
  sluice_dataset_t* ds;
  OK(sluice_dataset_open(ctx, agg, 1, SLUICE_DATASET_READ, &ds));
  /* Read from the second data root, the first being wiped. */
  char root[4096];
  OK(sluice_dataset_root(ds, root, sizeof root, NULL));
  const char* roots = getenv("SLUICE_DATA_ROOTS");
  const char* second = roots ? strchr(roots, ',') : NULL;
  CHECK(second && !strcmp(root, second + 1), "%s: read from %s, not %s", agg,
        root, second ? second + 1 : "a second data root");
  unsigned char* buf = malloc(shared > unique ? shared : unique);
  CHECK(buf != NULL, "out of memory");
  sluice_element_t* el;
  size_t got = 0;
  OK(sluice_element_open(ds, "field", SLUICE_ELEMENT_SHARED, &el));
  OK(sluice_element_read(el, (uint64_t)rank * shared, buf, shared, &got));
  CHECK(got == shared, "%s: field: read %zu of %zu", agg, got, shared);
  Verify(buf, shared, 0, (uint64_t)rank * shared, agg);
  OK(sluice_element_close(el));
  if (unique > 0) {
    OK(sluice_element_open_rank(ds, "own", rank, &el));
    OK(sluice_element_read(el, 0, buf, unique, &got));
    CHECK(got == unique, "%s: own: read %zu of %zu", agg, got, unique);
    Verify(buf, unique, 1 + rank, 0, agg);
    OK(sluice_element_close(el));
  }
  OK(sluice_dataset_close(ds));
  free(buf);
  if (rank == 0) {
    printf("%s: %d ranks read every byte back from the drained copy\n", agg,
           nranks);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  CHECK(argc >= 5 && (!strcmp(argv[1], "write") || !strcmp(argv[1], "read")),
        "usage: %s write|read SHARED UNIQUE AGG...", argv[0]);
  const size_t shared = strtoull(argv[2], NULL, 10);
  const size_t unique = strtoull(argv[3], NULL, 10);
  CHECK(shared > 0, "SHARED must be > 0");
  sluice_context_t* ctx;
  OK(sluice_init_mpi(MPI_COMM_WORLD, "scale", NULL, &ctx));
  for (int i = 4; i < argc; ++i) {
    if (!strcmp(argv[1], "write")) {
      Write(ctx, argv[i], shared, unique);
    } else {
      Read(ctx, argv[i], shared, unique);
    }
  }
  OK(sluice_fini(ctx));
  MPI_Finalize();
  return 0;
}
