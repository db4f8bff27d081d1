/* Tiers over MPI through the C API, for the cluster test bed
 * (tests/cluster/cluster_tier_test.sh): ids of dataset "ckpt" of context
 * "sim" written by N ranks to the data roots SLUICE_DATA_ROOTS names (the
 * stage mode, aggregation, dataset mode from the environment too), and
 * read back, every byte verified, by any number of ranks.
 *
 * Each id holds a shared element "field" (rank r's block at r * B(id))
 * and a unique element "mine" per rank, their bytes distinct per id,
 * element and rank (tests/dataset_bytes.h).
 *
 *   tier_mpi_test write ids=LIST [block=N] [root=PREFIX] [wait=PHASE]
 *                 [wait@ID=PHASE ...] [set@ID=VAR=VALUE ...] [hold=FLAG]
 *       writes the ids of LIST (1-3, 1,4, ...) in order; root: the data
 *       root each id is written to (sluice_dataset_root) must start with
 *       PREFIX; wait: after each close, sluice_dataset_drain_wait must end
 *       in PHASE (durable, skipped, none, or durable|skipped), wait@ID
 *       for id ID alone; set@ID:
 *       sluice_config_set(VAR, VALUE) before id ID is written; hold: once
 *       written, rank 0 creates FLAG and every rank sleeps (for a kill),
 *       else sluice_fini (which waits for the drains).
 *   tier_mpi_test read [ids=LIST] [highest=ID|none] [block=N]
 *                 [root=PREFIX] [incomplete=ID]
 *       opens HIGHEST (expects id ID, or none: no id at all), then every
 *       id of LIST, and verifies every byte of every writer; root: the
 *       root each is read from must start with PREFIX; incomplete: opening
 *       id ID must fail with SLUICE_NOT_FOUND and a message that says the
 *       id is incomplete.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dataset_bytes.h"
#include "mpi_check.h"
#include "sluice/c_mpi.h"
#include "sluice/sluice.h"

static int rank, nranks;

enum { EL_FIELD = 1, EL_UNIQUE = 100 };
enum { kMaxIds = 64, kChunk = 8 << 20 };

static const char* kDataset = "ckpt";

/* Sizes: each id and each rank's unique element a different size. */
static size_t block = 300000;
static size_t Block(int64_t id) { return block + (size_t)(4099 * id); }
static size_t Unique(int64_t id, int r) {
  return block / 4 + (size_t)(1000 * r + 17 * id);
}

static void Fill(unsigned char* p, size_t n, int64_t id, int el,
                 uint64_t off) {
  for (size_t i = 0; i < n; ++i) p[i] = DatasetByte(id, el, off + i);
}

static void Verify(const unsigned char* p, size_t n, int64_t id, int el,
                   uint64_t off, const char* what) {
  for (size_t i = 0; i < n; ++i) {
    CHECK(p[i] == DatasetByte(id, el, off + i),
          "%s of id %lld: byte %llu is %u, not %u", what, (long long)id,
          (unsigned long long)(off + i), p[i], DatasetByte(id, el, off + i));
  }
}

/* "1-3,5" into ids[0..*n). */
static void ParseIds(const char* s, int64_t* ids, int* n) {
  *n = 0;
  while (*s) {
    char* end;
    long long a = strtoll(s, &end, 10), b = a;
    CHECK(end != s, "bad id list at '%s'", s);
    if (*end == '-') {
      s = end + 1;
      b = strtoll(s, &end, 10);
      CHECK(end != s && b >= a, "bad id range at '%s'", s);
    }
    for (long long i = a; i <= b; ++i) {
      CHECK(*n < kMaxIds, "too many ids");
      ids[(*n)++] = i;
    }
    s = *end == ',' ? end + 1 : end;
    CHECK(*end == ',' || *end == 0, "bad id list at '%s'", end);
  }
}

static void CheckRoot(const sluice_dataset_t* ds, int64_t id,
                      const char* prefix, const char* what) {
  char root[4096];
  OK(sluice_dataset_root(ds, root, sizeof root, NULL));
  if (prefix) {
    CHECK(strncmp(root, prefix, strlen(prefix)) == 0,
          "id %lld %s data root %s, not under %s", (long long)id, what, root,
          prefix);
  }
  if (rank == 0) printf("id %lld %s %s\n", (long long)id, what, root);
}

static const char* PhaseName(int p) {
  static const char* names[] = {"none",    "queued", "draining",
                                "durable", "failed", "skipped"};
  return p >= 0 && p <= 5 ? names[p] : "?";
}

static void WriteId(sluice_context_t* ctx, int64_t id, const char* root,
                    const char* wait) {
  sluice_dataset_t* ds;
  OK(sluice_dataset_open(ctx, kDataset, id, SLUICE_DATASET_WRITE, &ds));
  const size_t b = Block(id);
  const size_t chunk = b < kChunk ? b : kChunk;
  unsigned char* buf = malloc(chunk);
  CHECK(buf, "out of memory");
  sluice_element_t* el;
  OK(sluice_element_open(ds, "field", SLUICE_ELEMENT_SHARED, &el));
  for (size_t done = 0; done < b; done += chunk) {
    const size_t n = b - done < chunk ? b - done : chunk;
    const uint64_t off = (uint64_t)rank * b + done;
    Fill(buf, n, id, EL_FIELD, off);
    OK(sluice_element_write(el, off, buf, n));
  }
  OK(sluice_element_close(el));
  const size_t u = Unique(id, rank);
  OK(sluice_element_open(ds, "mine", SLUICE_ELEMENT_UNIQUE, &el));
  for (size_t done = 0; done < u; done += chunk) {
    const size_t n = u - done < chunk ? u - done : chunk;
    Fill(buf, n, id, EL_UNIQUE + rank, done);
    OK(sluice_element_write(el, done, buf, n));
  }
  OK(sluice_element_close(el));
  free(buf);
  CheckRoot(ds, id, root, "written to");
  OK(sluice_dataset_close(ds));
  if (wait) {
    sluice_drain_state_t st;
    OK(sluice_dataset_drain_wait(ctx, kDataset, id, &st));
    const char* got = PhaseName(st.phase);
    CHECK(strstr(wait, got) != NULL,
          "drain of id %lld ended %s (%s), expected %s", (long long)id, got,
          st.message, wait);
    if (rank == 0) printf("id %lld drain %s\n", (long long)id, got);
  }
}

/* Verifies every byte of the id open in `ds`, shared among the readers. */
static void ReadId(sluice_dataset_t* ds, int64_t id) {
  const size_t b = Block(id);
  sluice_element_t* el;
  OK(sluice_element_open(ds, "field", SLUICE_ELEMENT_SHARED, &el));
  uint64_t size = 0;
  OK(sluice_element_size(el, &size));
  CHECK(size > 0 && size % b == 0, "id %lld: field size %llu",
        (long long)id, (unsigned long long)size);
  const int writers = (int)(size / b);
  unsigned char* buf = malloc(kChunk);
  CHECK(buf, "out of memory");
  const uint64_t lo = size * rank / nranks, hi = size * (rank + 1) / nranks;
  for (uint64_t off = lo; off < hi; off += kChunk) {
    const size_t n = hi - off < kChunk ? (size_t)(hi - off) : kChunk;
    size_t got = 0;
    OK(sluice_element_read(el, off, buf, n, &got));
    CHECK(got == n, "id %lld: read %zu of %zu at %llu", (long long)id, got,
          n, (unsigned long long)off);
    Verify(buf, n, id, EL_FIELD, off, "field");
  }
  OK(sluice_element_close(el));
  for (int w = rank; w < writers; w += nranks) {
    OK(sluice_element_open_rank(ds, "mine", w, &el));
    OK(sluice_element_size(el, &size));
    CHECK(size == Unique(id, w), "id %lld: rank %d's element has %llu bytes",
          (long long)id, w, (unsigned long long)size);
    for (uint64_t off = 0; off < size; off += kChunk) {
      const size_t n = size - off < kChunk ? (size_t)(size - off) : kChunk;
      size_t got = 0;
      OK(sluice_element_read(el, off, buf, n, &got));
      CHECK(got == n, "id %lld: unique read %zu of %zu", (long long)id, got,
            n);
      Verify(buf, n, id, EL_UNIQUE + w, off, "unique element");
    }
    OK(sluice_element_close(el));
  }
  CHECK(sluice_element_open_rank(ds, "mine", writers, &el) ==
            SLUICE_NOT_FOUND,
        "id %lld: rank %d (of %d writers) has a unique element",
        (long long)id, writers, writers);
  free(buf);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  CHECK(argc >= 2 && (strcmp(argv[1], "write") == 0 ||
                      strcmp(argv[1], "read") == 0),
        "usage: %s write|read KEY=VALUE...", argv[0]);
  const int writing = strcmp(argv[1], "write") == 0;
  int64_t ids[kMaxIds];
  int nids = 0;
  const char *root = NULL, *wait = NULL, *hold = NULL, *highest = NULL;
  int64_t incomplete = -1;
  for (int i = 2; i < argc; ++i) {
    const char* a = argv[i];
    if (strncmp(a, "ids=", 4) == 0) {
      ParseIds(a + 4, ids, &nids);
    } else if (strncmp(a, "block=", 6) == 0) {
      block = (size_t)strtoull(a + 6, NULL, 10);
    } else if (strncmp(a, "root=", 5) == 0) {
      root = a + 5;
    } else if (writing && strncmp(a, "wait=", 5) == 0) {
      wait = a + 5;
    } else if (writing && strncmp(a, "hold=", 5) == 0) {
      hold = a + 5;
    } else if (writing && (strncmp(a, "set@", 4) == 0 ||
                           strncmp(a, "wait@", 5) == 0)) {
      /* Handled before each id is written. */
    } else if (!writing && strncmp(a, "highest=", 8) == 0) {
      highest = a + 8;
    } else if (!writing && strncmp(a, "incomplete=", 11) == 0) {
      incomplete = atoll(a + 11);
    } else {
      CHECK(0, "unknown argument '%s'", a);
    }
  }
  CHECK(block > 0, "block=0");
  sluice_context_t* ctx;
  OK(sluice_init_mpi(MPI_COMM_WORLD, "sim", NULL, &ctx));
  if (writing) {
    CHECK(nids > 0, "write: no ids=");
    for (int k = 0; k < nids; ++k) {
      const char* wait_id = wait;
      for (int i = 2; i < argc; ++i) {
        char* end;
        if (strncmp(argv[i], "wait@", 5) == 0 &&
            strtoll(argv[i] + 5, &end, 10) == ids[k] && *end == '=') {
          wait_id = end + 1;
        }
        if (strncmp(argv[i], "set@", 4) != 0 ||
            strtoll(argv[i] + 4, &end, 10) != ids[k] || *end != '=') {
          continue;
        }
        char var[256];
        const char* eq = strchr(end + 1, '=');
        CHECK(eq && (size_t)(eq - end - 1) < sizeof var, "bad %s", argv[i]);
        memcpy(var, end + 1, (size_t)(eq - end - 1));
        var[eq - end - 1] = 0;
        OK(sluice_config_set(ctx, var, eq + 1));
      }
      WriteId(ctx, ids[k], root, wait_id);
    }
    if (hold) {
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == 0) {
        FILE* f = fopen(hold, "w");
        CHECK(f && fclose(f) == 0, "cannot create %s", hold);
        printf("holding\n");
      }
      fflush(stdout);
      sleep(600);
      CHECK(0, "held for 600 s and nobody killed the job");
    }
  } else {
    sluice_dataset_t* ds;
    if (highest) {
      const int rc = sluice_dataset_open(ctx, kDataset,
                                         SLUICE_DATASET_ID_HIGHEST,
                                         SLUICE_DATASET_READ, &ds);
      if (strcmp(highest, "none") == 0) {
        CHECK(rc == SLUICE_NOT_FOUND, "HIGHEST opened (%s): %s",
              sluice_strerror(rc), sluice_errmsg());
        if (rank == 0) printf("no id: %s\n", sluice_errmsg());
      } else {
        OK(rc);
        int64_t id = -1;
        OK(sluice_dataset_id(ds, &id));
        CHECK(id == atoll(highest), "HIGHEST is id %lld, not %s",
              (long long)id, highest);
        CheckRoot(ds, id, root, "(HIGHEST) read from");
        ReadId(ds, id);
        OK(sluice_dataset_close(ds));
      }
    }
    for (int k = 0; k < nids; ++k) {
      OK(sluice_dataset_open(ctx, kDataset, ids[k], SLUICE_DATASET_READ,
                             &ds));
      CheckRoot(ds, ids[k], root, "read from");
      ReadId(ds, ids[k]);
      OK(sluice_dataset_close(ds));
      if (rank == 0) {
        printf("id %lld: every byte verified\n", (long long)ids[k]);
      }
    }
    if (incomplete >= 0) {
      const int rc = sluice_dataset_open(ctx, kDataset, incomplete,
                                         SLUICE_DATASET_READ, &ds);
      char want[64];
      snprintf(want, sizeof want, "%lld", (long long)incomplete);
      CHECK(rc == SLUICE_NOT_FOUND && strstr(sluice_errmsg(), "incomplete") &&
                strstr(sluice_errmsg(), want),
            "opening id %lld: %s (%s), not an error saying it is incomplete",
            (long long)incomplete, sluice_strerror(rc), sluice_errmsg());
      if (rank == 0) {
        printf("id %lld: %s\n", (long long)incomplete, sluice_errmsg());
      }
    }
  }
  fflush(stdout);
  OK(sluice_fini(ctx));
  MPI_Finalize();
  return 0;
}
