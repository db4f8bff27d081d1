/* Checkpoints over MPI through the C API: ids 1..3 of a dataset with shared
 * and unique elements, contiguous and strided, blocking and non-blocking,
 * written by N ranks and read back, every byte verified, by any number of
 * ranks.
 *
 *   dataset_mpi_test write [WRITERS]   ids 1..3 (the data root comes from
 *                                      SLUICE_DATA_ROOTS, the mode from
 *                                      SLUICE_DATASET_MODE); each must be
 *                                      held by WRITERS stores (default:
 *                                      one a rank)
 *   dataset_mpi_test read WHICH ID     opens WHICH (highest, newest or an
 *                                      id) and expects id ID
 *   dataset_mpi_test failclose         id 4 with rank 1 failing its close:
 *                                      every rank's close fails naming
 *                                      rank 1; HIGHEST stays 3
 *   dataset_mpi_test unlink ID         unlinks ID (collective)
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset_bytes.h"
#include "mpi_check.h"
#include "sluice/c_mpi.h"
#include "sluice/sluice.h"

static int rank, nranks;

/* The byte at `off` of element `el` in id `id` (for unique elements, `el`
 * includes the owner rank). */
static void Fill(unsigned char* p, size_t n, int64_t id, int el,
                 uint64_t off) {
  for (size_t i = 0; i < n; ++i) p[i] = DatasetByte(id, el, off + i);
}

static void Verify(const unsigned char* p, size_t n, int64_t id, int el,
                   uint64_t off, const char* what) {
  for (size_t i = 0; i < n; ++i) {
    CHECK(p[i] == DatasetByte(id, el, off + i),
          "%s id %lld: byte %llu is %u, not %u", what, (long long)id,
          (unsigned long long)(off + i), p[i], DatasetByte(id, el, off + i));
  }
}

/* Sizes per id: a contiguous block per rank, a strided block. */
static size_t Block(int64_t id) { return (size_t)(300000 + 4099 * id); }
static size_t SBlock(int64_t id) { return (size_t)(4096 + 7 * id); }
enum { kStrideCount = 37 };
static size_t Unique(int64_t id, int r) {
  return (size_t)(100000 + 1000 * r + 17 * id);
}

enum { EL_FIELD = 1, EL_STRIDED = 2, EL_NB = 3, EL_UNIQUE = 100 };

static void WriteId(sluice_context_t* ctx, int64_t id) {
  sluice_dataset_t* ds;
  OK(sluice_dataset_open(ctx, "restart", id, SLUICE_DATASET_WRITE, &ds));
  int64_t opened = -1;
  OK(sluice_dataset_id(ds, &opened));
  CHECK(opened == id, "id");

  /* Shared, contiguous: rank r's block at r * B. */
  const size_t b = Block(id);
  unsigned char* buf = malloc(b);
  sluice_element_t* el;
  OK(sluice_element_open(ds, "field", SLUICE_ELEMENT_SHARED, &el));
  Fill(buf, b, id, EL_FIELD, (uint64_t)rank * b);
  /* In two writes, the second first: order does not matter. */
  OK(sluice_element_write(el, (uint64_t)rank * b + b / 2, buf + b / 2,
                          b - b / 2));
  OK(sluice_element_write(el, (uint64_t)rank * b, buf, b / 2));
  OK(sluice_element_close(el));

  /* Shared, strided: block i of rank r at (i * nranks + r) * S. */
  const size_t s = SBlock(id);
  unsigned char* sbuf = malloc(s * kStrideCount);
  for (int i = 0; i < kStrideCount; ++i) {
    Fill(sbuf + (size_t)i * s, s, id, EL_STRIDED,
         ((uint64_t)i * nranks + rank) * s);
  }
  OK(sluice_element_open(ds, "strided", SLUICE_ELEMENT_SHARED, &el));
  OK(sluice_element_write_strided(el, (uint64_t)rank * s, sbuf, kStrideCount,
                                  s, (uint64_t)nranks * s));
  OK(sluice_element_close(el));

  /* Shared, non-blocking: a contiguous block and a strided one. */
  unsigned char* nbuf = malloc(b);
  unsigned char* nsbuf = malloc(s * kStrideCount);
  Fill(nbuf, b, id, EL_NB, (uint64_t)rank * b);
  const uint64_t base = (uint64_t)nranks * b;
  for (int i = 0; i < kStrideCount; ++i) {
    Fill(nsbuf + (size_t)i * s, s, id, EL_NB,
         base + ((uint64_t)i * nranks + rank) * s);
  }
  sluice_request_t *r1, *r2;
  OK(sluice_element_open(ds, "nb", SLUICE_ELEMENT_SHARED, &el));
  OK(sluice_element_write_nb(el, (uint64_t)rank * b, nbuf, b, &r1));
  OK(sluice_element_write_strided_nb(el, base + (uint64_t)rank * s, nsbuf,
                                     kStrideCount, s, (uint64_t)nranks * s,
                                     &r2));
  int done = 0;
  size_t got = 0;
  while (!done) OK(sluice_request_test(&r1, &done, &got));
  CHECK(r1 == NULL && got == b, "request test: got %zu", got);
  OK(sluice_request_wait(&r2, &got));
  CHECK(r2 == NULL && got == s * kStrideCount, "request wait: got %zu", got);
  OK(sluice_element_close(el));

  /* Unique: each rank its own, of its own size. */
  const size_t u = Unique(id, rank);
  unsigned char* ubuf = malloc(u);
  Fill(ubuf, u, id, EL_UNIQUE + rank, 0);
  OK(sluice_element_open(ds, "local", SLUICE_ELEMENT_UNIQUE, &el));
  OK(sluice_element_write(el, 0, ubuf, u));
  uint64_t size = 0;
  OK(sluice_element_size(el, &size));
  CHECK(size == u, "unique size %llu", (unsigned long long)size);
  OK(sluice_element_close(el));

  OK(sluice_dataset_close(ds));
  free(buf);
  free(sbuf);
  free(nbuf);
  free(nsbuf);
  free(ubuf);
}

/* Reads [off, off + n) of a shared element and checks it. */
static void ReadShared(sluice_element_t* el, int64_t id, int which,
                       uint64_t off, size_t n, int nb) {
  unsigned char* buf = malloc(n ? n : 1);
  size_t got = 0;
  if (nb) {
    sluice_request_t* r;
    OK(sluice_element_read_nb(el, off, buf, n, &r));
    OK(sluice_request_wait(&r, &got));
  } else {
    OK(sluice_element_read(el, off, buf, n, &got));
  }
  CHECK(got == n, "read %zu of %zu at %llu", got, n, (unsigned long long)off);
  Verify(buf, n, id, which, off, "shared");
  free(buf);
}

static void ReadId(sluice_context_t* ctx, int64_t which, int64_t expect) {
  sluice_dataset_t* ds;
  OK(sluice_dataset_open(ctx, "restart", which, SLUICE_DATASET_READ, &ds));
  int64_t id = -1;
  OK(sluice_dataset_id(ds, &id));
  CHECK(id == expect, "opened id %lld, expected %lld", (long long)id,
        (long long)expect);
  const size_t b = Block(id), s = SBlock(id);

  sluice_element_t* el;
  OK(sluice_element_open(ds, "field", SLUICE_ELEMENT_SHARED, &el));
  uint64_t size = 0;
  OK(sluice_element_size(el, &size));
  CHECK(size % b == 0, "field size %llu", (unsigned long long)size);
  const int writers = (int)(size / b);
  /* This rank's share of the whole element, cut at places no writer's
   * block ends, and one more piece that crosses writers' blocks. */
  const uint64_t lo = size * rank / nranks, hi = size * (rank + 1) / nranks;
  ReadShared(el, id, EL_FIELD, lo, hi - lo, 0);
  ReadShared(el, id, EL_FIELD, size / 3, size / 2, 1);
  /* Past the end: nothing. */
  unsigned char c;
  size_t got = 1;
  OK(sluice_element_read(el, size, &c, 1, &got));
  CHECK(got == 0, "read past the end gave %zu", got);
  OK(sluice_element_close(el));

  OK(sluice_element_open(ds, "strided", SLUICE_ELEMENT_SHARED, &el));
  OK(sluice_element_size(el, &size));
  CHECK(size == (uint64_t)writers * kStrideCount * s, "strided size %llu",
        (unsigned long long)size);
  {
    /* Strided reading: the blocks writer (rank % writers) wrote. */
    const int w = rank % writers;
    unsigned char* buf = malloc(s * kStrideCount);
    OK(sluice_element_read_strided(el, (uint64_t)w * s, buf, kStrideCount, s,
                                   (uint64_t)writers * s, &got));
    CHECK(got == s * kStrideCount, "strided read %zu", got);
    for (int i = 0; i < kStrideCount; ++i) {
      Verify(buf + (size_t)i * s, s, id, EL_STRIDED,
             ((uint64_t)i * writers + w) * s, "strided");
    }
    sluice_request_t* r;
    OK(sluice_element_read_strided_nb(el, (uint64_t)w * s, buf, kStrideCount,
                                      s, (uint64_t)writers * s, &r));
    OK(sluice_request_wait(&r, &got));
    CHECK(got == s * kStrideCount, "strided nb read %zu", got);
    for (int i = 0; i < kStrideCount; ++i) {
      Verify(buf + (size_t)i * s, s, id, EL_STRIDED,
             ((uint64_t)i * writers + w) * s, "strided nb");
    }
    free(buf);
  }
  ReadShared(el, id, EL_STRIDED, 0, size, rank % 2);
  OK(sluice_element_close(el));

  OK(sluice_element_open(ds, "nb", SLUICE_ELEMENT_SHARED, &el));
  OK(sluice_element_size(el, &size));
  CHECK(size == (uint64_t)writers * b + (uint64_t)writers * kStrideCount * s,
        "nb size %llu", (unsigned long long)size);
  ReadShared(el, id, EL_NB, 0, size, 0);
  OK(sluice_element_close(el));

  /* Unique elements: this rank reads those of ranks rank, rank + nranks,
   * ... of the writers. */
  for (int w = rank; w < writers; w += nranks) {
    OK(sluice_element_open_rank(ds, "local", w, &el));
    OK(sluice_element_size(el, &size));
    CHECK(size == Unique(id, w), "unique size of rank %d: %llu", w,
          (unsigned long long)size);
    unsigned char* buf = malloc(size);
    OK(sluice_element_read(el, 0, buf, size, &got));
    CHECK(got == size, "unique read %zu", got);
    Verify(buf, size, id, EL_UNIQUE + w, 0, "unique");
    free(buf);
    OK(sluice_element_close(el));
  }
  /* A rank beyond the writers has no unique element. */
  CHECK(sluice_element_open_rank(ds, "local", writers, &el) ==
            SLUICE_NOT_FOUND,
        "rank %d's unique element exists", writers);
  CHECK(sluice_element_open(ds, "nosuch", SLUICE_ELEMENT_SHARED, &el) ==
            SLUICE_NOT_FOUND,
        "element nosuch exists");
  OK(sluice_dataset_close(ds));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  CHECK(argc >= 2, "usage: %s write|read WHICH ID|failclose|unlink ID",
        argv[0]);
  sluice_context_t* ctx;
  OK(sluice_init_mpi(MPI_COMM_WORLD, "sim", NULL, &ctx));
  if (strcmp(argv[1], "write") == 0) {
    for (int64_t id = 1; id <= 3; ++id) WriteId(ctx, id);
    /* A committed id is not written over. */
    sluice_dataset_t* ds;
    CHECK(sluice_dataset_open(ctx, "restart", 2, SLUICE_DATASET_WRITE, &ds) ==
              SLUICE_ALREADY_EXISTS,
          "id 2 opened for writing again");
    size_t count = 0;
    sluice_dataset_id_info_t ids[8];
    OK(sluice_dataset_list(ctx, "restart", ids, 8, &count));
    CHECK(count == 3, "%zu ids listed", count);
    const int writers = argc >= 3 ? atoi(argv[2]) : nranks;
    for (size_t i = 0; i < count; ++i) {
      CHECK(ids[i].id == (int64_t)i + 1 &&
                ids[i].state == SLUICE_ID_COMMITTED &&
                ids[i].ranks == nranks && ids[i].writers == writers &&
                ids[i].bytes > 0,
            "listed id %lld state %d ranks %d writers %d (expected %d)",
            (long long)ids[i].id, ids[i].state, ids[i].ranks,
            ids[i].writers, writers);
    }
  } else if (strcmp(argv[1], "read") == 0 && argc == 4) {
    const int64_t which = strcmp(argv[2], "highest") == 0
                              ? SLUICE_DATASET_ID_HIGHEST
                          : strcmp(argv[2], "newest") == 0
                              ? SLUICE_DATASET_ID_NEWEST
                              : atoll(argv[2]);
    ReadId(ctx, which, atoll(argv[3]));
  } else if (strcmp(argv[1], "failclose") == 0) {
    CHECK(nranks >= 2, "failclose needs 2 ranks");
    OK(sluice_config_set(ctx, "test_fail_commit_rank", "1"));
    sluice_dataset_t* ds;
    OK(sluice_dataset_open(ctx, "restart", 4, SLUICE_DATASET_WRITE, &ds));
    sluice_element_t* el;
    OK(sluice_element_open(ds, "field", SLUICE_ELEMENT_SHARED, &el));
    char data[4096];
    memset(data, rank, sizeof data);
    OK(sluice_element_write(el, (uint64_t)rank * sizeof data, data,
                            sizeof data));
    OK(sluice_element_close(el));
    const int rc = sluice_dataset_close(ds);
    CHECK(rc != SLUICE_OK, "close of id 4 succeeded");
    CHECK(strstr(sluice_errmsg(), "rank 1") != NULL,
          "message does not name rank 1: %s", sluice_errmsg());
    OK(sluice_config_set(ctx, "test_fail_commit_rank", "-1"));
    OK(sluice_dataset_open(ctx, "restart", SLUICE_DATASET_ID_HIGHEST,
                           SLUICE_DATASET_READ, &ds));
    int64_t highest = -1;
    OK(sluice_dataset_id(ds, &highest));
    CHECK(highest == 3, "HIGHEST is %lld after the failed close",
          (long long)highest);
    OK(sluice_dataset_close(ds));
    CHECK(sluice_dataset_open(ctx, "restart", 4, SLUICE_DATASET_READ, &ds) ==
              SLUICE_NOT_FOUND,
          "id 4 can be opened");
  } else if (strcmp(argv[1], "overlap") == 0) {
    /* Ranks 0 and 1 both write bytes [1000, 5096) of one shared element:
     * the commit succeeds, a read of those bytes is Corruption, a read of
     * bytes only one rank wrote is not. */
    CHECK(nranks >= 2, "overlap needs 2 ranks");
    sluice_dataset_t* ds;
    OK(sluice_dataset_open(ctx, "overlap", 1, SLUICE_DATASET_WRITE, &ds));
    sluice_element_t* el;
    OK(sluice_element_open(ds, "x", SLUICE_ELEMENT_SHARED, &el));
    char data[4096];
    memset(data, 'a' + rank, sizeof data);
    if (rank <= 1) OK(sluice_element_write(el, 1000, data, sizeof data));
    if (rank == 0) OK(sluice_element_write(el, 0, data, 1000));
    OK(sluice_element_close(el));
    OK(sluice_dataset_close(ds));
    OK(sluice_dataset_open(ctx, "overlap", 1, SLUICE_DATASET_READ, &ds));
    OK(sluice_element_open(ds, "x", SLUICE_ELEMENT_SHARED, &el));
    size_t got = 0;
    OK(sluice_element_read(el, 0, data, 1000, &got));
    CHECK(got == 1000 && data[0] == 'a', "the bytes rank 0 alone wrote");
    CHECK(sluice_element_read(el, 900, data, 200, &got) == SLUICE_CORRUPTION,
          "bytes two ranks wrote read without an error");
    OK(sluice_element_close(el));
    OK(sluice_dataset_close(ds));
  } else if (strcmp(argv[1], "unlink") == 0 && argc == 3) {
    OK(sluice_dataset_unlink(ctx, "restart", atoll(argv[2])));
  } else {
    CHECK(0, "bad arguments");
  }
  OK(sluice_fini(ctx));
  MPI_Finalize();
  return 0;
}
