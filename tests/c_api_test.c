/* The C API, from plain C: every call, its error codes and messages.
 * Usage: c_api_test DIR BACKEND   (DIR must not exist yet). Exit 0 = pass. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dataset_bytes.h"
#include "sluice/sluice.h"

static int failures = 0;

#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "%s:%d: CHECK failed: %s (last error: %s)\n",   \
              __FILE__, __LINE__, #cond, sluice_errmsg());            \
      failures++;                                                     \
    }                                                                 \
  } while (0)
#define CHECK_OK(call) CHECK((call) == SLUICE_OK)

static sluice_store_t* open_store(const char* path, const char* backend) {
  sluice_options_t* o = sluice_options_create();
  sluice_store_t* s = NULL;
  CHECK_OK(sluice_options_set(o, "backend", backend));
  CHECK_OK(sluice_kv_open(path, o, &s));
  CHECK(s != NULL);
  sluice_options_destroy(o);
  return s;
}

/* The headers' version is the library's, and CMake's (SLUICE_TEST_VERSION,
 * from project()). */
static void check_version(void) {
  char parts[64];
  snprintf(parts, sizeof parts, "%d.%d.%d", SLUICE_VERSION_MAJOR,
           SLUICE_VERSION_MINOR, SLUICE_VERSION_PATCH);
  CHECK(strcmp(parts, SLUICE_VERSION) == 0);
  CHECK(strcmp(sluice_version(), SLUICE_VERSION) == 0);
  CHECK(strcmp(sluice_version(), SLUICE_TEST_VERSION) == 0);
  if (strcmp(sluice_version(), SLUICE_VERSION) != 0) {
    fprintf(stderr, "headers %s, library %s\n", SLUICE_VERSION,
            sluice_version());
  }
}

/* The checkpoint calls in one process: one error convention (an int code,
 * the message in sluice_errmsg()), NULL accepted by the calls that free,
 * output lengths. Data under `dir`. */
static void check_checkpoint_calls(const char* dir) {
  setenv("SLUICE_DATA_ROOTS", dir, 1);
  sluice_context_t* ctx = (sluice_context_t*)1;
  CHECK(sluice_init_single("bad name", NULL, &ctx) == SLUICE_INVALID_ARGUMENT);
  CHECK(ctx == NULL && strstr(sluice_errmsg(), "bad name") != NULL);
  CHECK_OK(sluice_init_single("capi", NULL, &ctx));
  if (ctx == NULL) return;

  /* Configuration: a value, its length, a buffer too small, a bad name. */
  char val[64];
  size_t len = 0;
  CHECK_OK(sluice_config_set(ctx, "dataset_mode", "basic"));
  CHECK_OK(sluice_config_get(ctx, "dataset_mode", NULL, val, sizeof val, &len));
  CHECK(strcmp(val, "basic") == 0 && len == 5);
  CHECK(sluice_config_get(ctx, "dataset_mode", NULL, val, 3, &len) ==
        SLUICE_BUFFER_TOO_SMALL);
  CHECK(len == 5 && strcmp(val, "ba") == 0);
  CHECK(strstr(sluice_errmsg(), "dataset_mode") != NULL);
  CHECK_OK(sluice_config_get(ctx, "dataset_mode", NULL, val, sizeof val, NULL));
  CHECK(sluice_config_get(ctx, "dataset_mod", NULL, val, sizeof val, &len) ==
        SLUICE_INVALID_ARGUMENT);
  CHECK(strstr(sluice_errmsg(), "dataset_mode") != NULL); /* closest name */
  CHECK(sluice_config_set(ctx, "no_such_variable", "1") ==
        SLUICE_INVALID_ARGUMENT);
  CHECK(strstr(sluice_errmsg(), "no_such_variable") != NULL);

  /* Write id 5, non-blocking, then read it back as HIGHEST. */
  sluice_dataset_t* ds = NULL;
  sluice_element_t* el = NULL;
  sluice_request_t* req = NULL;
  size_t got = 99;
  CHECK_OK(sluice_dataset_open(ctx, "dump", 5, SLUICE_DATASET_WRITE, &ds));
  CHECK_OK(sluice_element_open(ds, "density", SLUICE_ELEMENT_UNIQUE, &el));
  CHECK_OK(sluice_element_write_nb(el, 0, "0123456789", 10, &req));
  CHECK_OK(sluice_request_wait(&req, &got));
  CHECK(req == NULL && got == 10);
  CHECK_OK(sluice_request_wait(&req, &got)); /* a NULL request is done */
  CHECK(got == 0);
  int done = 0;
  CHECK_OK(sluice_request_test(&req, &done, NULL));
  CHECK(done == 1);
  CHECK_OK(sluice_element_close(el));
  CHECK_OK(sluice_dataset_close(ds));

  /* The list: too small an array is SLUICE_BUFFER_TOO_SMALL and the
   * count; one that fits holds the id. */
  sluice_dataset_id_info_t info[2];
  size_t count = 0;
  CHECK(sluice_dataset_list(ctx, "dump", info, 0, &count) ==
        SLUICE_BUFFER_TOO_SMALL);
  CHECK(count == 1 && strstr(sluice_errmsg(), "dump") != NULL);
  CHECK_OK(sluice_dataset_list(ctx, "dump", info, 2, &count));
  CHECK(count == 1 && info[0].id == 5 && info[0].state == SLUICE_ID_COMMITTED &&
        info[0].bytes == 10);

  int64_t id = -7;
  ds = (sluice_dataset_t*)1;
  CHECK(sluice_dataset_open(ctx, "dump", 6, SLUICE_DATASET_READ, &ds) ==
        SLUICE_NOT_FOUND);
  CHECK(ds == NULL && strstr(sluice_errmsg(), "dump") != NULL);
  CHECK_OK(sluice_dataset_open(ctx, "dump", SLUICE_DATASET_ID_HIGHEST,
                               SLUICE_DATASET_READ, &ds));
  CHECK_OK(sluice_dataset_id(ds, &id));
  CHECK(id == 5);
  CHECK(sluice_dataset_id(NULL, &id) == SLUICE_INVALID_ARGUMENT);
  CHECK(sluice_dataset_id(ds, NULL) == SLUICE_INVALID_ARGUMENT);
  el = (sluice_element_t*)1;
  CHECK(sluice_element_open(ds, "pressure", SLUICE_ELEMENT_UNIQUE, &el) ==
        SLUICE_NOT_FOUND);
  CHECK(el == NULL && strstr(sluice_errmsg(), "pressure") != NULL);
  CHECK(sluice_element_open(ds, "density", 7, &el) == SLUICE_INVALID_ARGUMENT);
  CHECK_OK(sluice_element_open(ds, "density", SLUICE_ELEMENT_UNIQUE, &el));
  CHECK_OK(sluice_element_read(el, 0, val, sizeof val, &got));
  CHECK(got == 10 && memcmp(val, "0123456789", 10) == 0);
  CHECK_OK(sluice_element_close(el));
  CHECK_OK(sluice_dataset_close(ds));

  /* The calls that free accept NULL; the others refuse it with a code. */
  CHECK_OK(sluice_element_close(NULL));
  CHECK_OK(sluice_dataset_close(NULL));
  CHECK(sluice_element_write(NULL, 0, "x", 1) == SLUICE_INVALID_ARGUMENT);
  CHECK(strstr(sluice_errmsg(), "NULL") != NULL);
  CHECK(sluice_dataset_open(NULL, "dump", 1, SLUICE_DATASET_WRITE, &ds) ==
        SLUICE_INVALID_ARGUMENT);
  CHECK(sluice_request_wait(NULL, NULL) == SLUICE_INVALID_ARGUMENT);
  CHECK_OK(sluice_fini(ctx));
  CHECK_OK(sluice_fini(NULL));
  unsetenv("SLUICE_DATA_ROOTS");
}

/* Overwrites every file of more than 64 KiB with 'J's: the stored data of
 * a store (its value log), not its small metadata files. */
static int damaged_files = 0;
static int damage_file(const char* path, const struct stat* st, int type,
                       struct FTW* ftw) {
  (void)ftw;
  if (type != FTW_F || st->st_size <= 65536) return 0;
  int fd = open(path, O_WRONLY);
  if (fd < 0) return 0;
  char junk[4096];
  memset(junk, 'J', sizeof junk);
  for (off_t at = 0; at < st->st_size; at += (off_t)sizeof junk) {
    if (pwrite(fd, junk, sizeof junk, at) < 0) break;
  }
  close(fd);
  damaged_files++;
  return 0;
}

enum { kTierBytes = 600000 };

/* Opens id `which` of dataset "dump" of `ctx` for reading, checks its
 * element "state" byte for byte, and returns in `root` the data root the
 * handle says it reads from. */
static void read_tier_id(sluice_context_t* ctx, int64_t which, char* root,
                         size_t cap) {
  sluice_dataset_t* ds = NULL;
  sluice_element_t* el = NULL;
  root[0] = '\0';
  CHECK_OK(sluice_dataset_open(ctx, "dump", which, SLUICE_DATASET_READ, &ds));
  if (ds == NULL) return;
  size_t len = 0;
  CHECK_OK(sluice_dataset_root(ds, root, cap, &len));
  CHECK(len == strlen(root));
  unsigned char* buf = malloc(kTierBytes);
  size_t got = 0;
  CHECK_OK(sluice_element_open(ds, "state", SLUICE_ELEMENT_SHARED, &el));
  CHECK_OK(sluice_element_read(el, 0, buf, kTierBytes, &got));
  CHECK(got == kTierBytes);
  int wrong = 0;
  for (size_t i = 0; i < got; i++) wrong += buf[i] != DatasetByte(1, 1, i);
  CHECK(wrong == 0);
  free(buf);
  CHECK_OK(sluice_element_close(el));
  CHECK_OK(sluice_dataset_close(ds));
}

/* Two data roots A,B, stage_mode immediate: an id drained to B, its drain
 * state; read back from A's damaged copy (falling back to B's) and, once
 * A's copy is gone, from B, as the handle and the performance variables
 * say. Data under `dir`. */
static void check_tier_calls(const char* dir) {
  char a[4096], b[4096], roots[8200], path[8300], root[4096];
  snprintf(a, sizeof a, "%s/a", dir);
  snprintf(b, sizeof b, "%s/b", dir);
  snprintf(roots, sizeof roots, "%s,%s", a, b);
  setenv("SLUICE_DATA_ROOTS", roots, 1);
  setenv("SLUICE_STAGE_MODE", "immediate", 1);
  sluice_context_t* ctx = NULL;
  CHECK_OK(sluice_init_single("tiers", NULL, &ctx));
  if (ctx == NULL) return;
  unsigned char* data = malloc(kTierBytes);
  for (size_t i = 0; i < kTierBytes; i++) data[i] = DatasetByte(1, 1, i);
  sluice_dataset_t* ds = NULL;
  sluice_element_t* el = NULL;
  CHECK_OK(sluice_dataset_open(ctx, "dump", 1, SLUICE_DATASET_WRITE, &ds));
  CHECK_OK(sluice_element_open(ds, "state", SLUICE_ELEMENT_SHARED, &el));
  CHECK_OK(sluice_element_write(el, 0, data, kTierBytes));
  CHECK_OK(sluice_element_close(el));
  CHECK_OK(sluice_dataset_close(ds));
  free(data);

  sluice_drain_state_t st;
  memset(&st, 0x55, sizeof st);
  CHECK_OK(sluice_dataset_drain_wait(ctx, "dump", 1, &st));
  CHECK(st.phase == SLUICE_DRAIN_DURABLE && st.root == 1);
  CHECK(st.bytes_total >= kTierBytes && st.bytes_done == st.bytes_total);
  CHECK(st.bytes_resumed == 0 && st.error == SLUICE_OK &&
        st.message[0] == '\0');
  memset(&st, 0x55, sizeof st);
  CHECK_OK(sluice_dataset_drain_state(ctx, "dump", 1, &st));
  CHECK(st.phase == SLUICE_DRAIN_DURABLE && st.root == 1);
  /* An id never written: nothing to say, which is no error. */
  memset(&st, 0x55, sizeof st);
  CHECK_OK(sluice_dataset_drain_state(ctx, "dump", 99, &st));
  CHECK(st.phase == SLUICE_DRAIN_NONE && st.bytes_done == 0);
  CHECK(sluice_dataset_drain_state(ctx, "bad name", 1, &st) ==
        SLUICE_INVALID_ARGUMENT);
  CHECK(sluice_dataset_drain_state(ctx, "dump", 1, NULL) ==
        SLUICE_INVALID_ARGUMENT);
  CHECK_OK(sluice_fini(ctx));
  struct stat sb;
  snprintf(path, sizeof path, "%s/tiers/commit/dump.1.index", b);
  CHECK(stat(path, &sb) == 0);

  /* A's copy damaged: the reads fall back to B's, and say so. */
  snprintf(path, sizeof path, "%s/tiers", a);
  damaged_files = 0;
  nftw(path, damage_file, 16, FTW_PHYS);
  CHECK(damaged_files > 0);
  sluice_perf_t perf;
  ctx = NULL;
  CHECK_OK(sluice_init_single("tiers", NULL, &ctx));
  if (ctx == NULL) return;
  read_tier_id(ctx, 1, root, sizeof root);
  CHECK(strcmp(root, a) == 0);
  memset(&perf, 0, sizeof perf);
  CHECK_OK(sluice_perf_get(ctx, "dump", 1, &perf));
  CHECK(perf.fallback_reads > 0 && perf.read.bytes == kTierBytes);
  CHECK_OK(sluice_fini(ctx));

  /* A's copy gone (a lost node-local root): read from B, no fallback. */
  snprintf(path, sizeof path, "rm -rf '%s/tiers'", a);
  CHECK(system(path) == 0);
  ctx = NULL;
  CHECK_OK(sluice_init_single("tiers", NULL, &ctx));
  if (ctx == NULL) return;
  read_tier_id(ctx, SLUICE_DATASET_ID_HIGHEST, root, sizeof root);
  CHECK(strcmp(root, b) == 0);
  memset(&perf, 0x55, sizeof perf);
  CHECK_OK(sluice_perf_get(ctx, "dump", 1, &perf));
  CHECK(perf.fallback_reads == 0 && perf.read.bytes == kTierBytes);
  CHECK_OK(sluice_fini(ctx));
  unsetenv("SLUICE_DATA_ROOTS");
  unsetenv("SLUICE_STAGE_MODE");
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: c_api_test DIR BACKEND\n");
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/store", argv[1]);
  mkdir(argv[1], 0755);
  sluice_store_t* s = open_store(path, argv[2]);

  /* put / get / append / del, with zero bytes inside */
  CHECK_OK(sluice_kv_put(s, "k\0a", 3, "v\0lue", 5, SLUICE_SYNC));
  void* val = NULL;
  size_t vlen = 0;
  CHECK_OK(sluice_kv_get(s, "k\0a", 3, &val, &vlen));
  CHECK(vlen == 5 && memcmp(val, "v\0lue", 5) == 0);
  sluice_free(val);
  CHECK_OK(sluice_kv_append(s, "k\0a", 3, "!!", 2, SLUICE_SYNC));
  char buf[16];
  CHECK_OK(sluice_kv_get_into(s, "k\0a", 3, buf, sizeof buf, &vlen));
  CHECK(vlen == 7 && memcmp(buf, "v\0lue!!", 7) == 0);
  CHECK(sluice_kv_get_into(s, "k\0a", 3, buf, 3, &vlen) ==
        SLUICE_BUFFER_TOO_SMALL);
  CHECK(vlen == 7);
  CHECK_OK(sluice_kv_delete(s, "k\0a", 3, SLUICE_SYNC));
  val = (void*)1;
  CHECK(sluice_kv_get(s, "k\0a", 3, &val, &vlen) == SLUICE_NOT_FOUND);
  CHECK(val == NULL);
  CHECK(strstr(sluice_errmsg(), path) != NULL);
  CHECK(strcmp(sluice_strerror(SLUICE_NOT_FOUND), "NotFound") == 0);

  /* an empty value is a value, not a missing key */
  CHECK_OK(sluice_kv_put(s, "empty", 5, "", 0, SLUICE_SYNC));
  CHECK_OK(sluice_kv_get(s, "empty", 5, &val, &vlen));
  CHECK(val != NULL && vlen == 0);
  sluice_free(val);

  /* asynchronous updates, a batch, a barrier */
  for (int i = 0; i < 100; i++) {
    char key[32];
    int n = snprintf(key, sizeof key, "async%d", i);
    CHECK_OK(sluice_kv_put(s, key, (size_t)n, key, (size_t)n, SLUICE_ASYNC));
  }
  CHECK(sluice_kv_put(s, "x", 1, "y", 1, 42) == SLUICE_INVALID_ARGUMENT);
  CHECK_OK(sluice_kv_start_batch(s));
  CHECK_OK(sluice_kv_put(s, "batched", 7, "yes", 3, SLUICE_SYNC));
  CHECK_OK(sluice_kv_stop_batch(s));
  CHECK(sluice_kv_stop_batch(s) == SLUICE_INVALID_ARGUMENT);
  CHECK_OK(sluice_kv_write_barrier(s));
  /* Nothing left behind by these updates: the barriers gave it back. */
  uint64_t freed = 99;
  CHECK_OK(sluice_kv_reclaim_space(s, &freed));
  CHECK(freed == 0);
  CHECK(sluice_kv_reclaim_space(NULL, &freed) == SLUICE_INVALID_ARGUMENT);

  sluice_op_stats_t st;
  CHECK_OK(sluice_kv_stats(s, SLUICE_OP_PUT, &st));
  CHECK(st.ops == 103 && st.bytes > 0); /* 2 + 100 async + 1 batched */
  CHECK(sluice_kv_stats(s, SLUICE_OP_COUNT, &st) == SLUICE_INVALID_ARGUMENT);
  char line[512];
  size_t len = 0;
  CHECK_OK(sluice_kv_stats_string(s, line, sizeof line, &len));
  CHECK(len == strlen(line) && strstr(line, "put=103 ops") != NULL);
  /* Too small: the length needed, the line cut and terminated. */
  size_t full = len;
  CHECK(sluice_kv_stats_string(s, line, 8, &len) == SLUICE_BUFFER_TOO_SMALL);
  CHECK(len == full && strlen(line) == 7);
  CHECK(strstr(sluice_errmsg(), "counters") != NULL);
  CHECK_OK(sluice_kv_close(s));

  /* reopen: everything is there */
  s = open_store(path, argv[2]);
  CHECK_OK(sluice_kv_get(s, "async99", 7, &val, &vlen));
  CHECK(vlen == 7 && memcmp(val, "async99", 7) == 0);
  sluice_free(val);
  CHECK_OK(sluice_kv_get(s, "batched", 7, &val, &vlen));
  CHECK(vlen == 3 && memcmp(val, "yes", 3) == 0);
  sluice_free(val);

  /* a second open of the same store is refused while it is open */
  sluice_store_t* second = (sluice_store_t*)1;
  CHECK(sluice_kv_open(path, NULL, &second) == SLUICE_BUSY);
  CHECK(second == NULL);
  CHECK(strstr(sluice_errmsg(), path) != NULL);
  CHECK_OK(sluice_kv_close(s));

  /* errors: bad option, not a store, NULLs */
  sluice_options_t* o = sluice_options_create();
  CHECK(sluice_options_set(o, "no_such_option", "1") ==
        SLUICE_INVALID_ARGUMENT);
  CHECK(strstr(sluice_errmsg(), "no_such_option") != NULL);
  /* extent_bytes is checked as FsOptions checks it (4 KiB..256 MiB). */
  CHECK_OK(sluice_options_set(o, "extent_bytes", "1m"));
  CHECK(sluice_options_set(o, "extent_bytes", "1k") ==
        SLUICE_INVALID_ARGUMENT);
  CHECK(strstr(sluice_errmsg(), "extent_bytes") != NULL);
  sluice_options_destroy(o);
  CHECK(sluice_kv_open(argv[1], NULL, &s) == SLUICE_NOT_A_STORE);
  CHECK(strstr(sluice_errmsg(), argv[1]) != NULL);
  CHECK(sluice_kv_put(NULL, "k", 1, "v", 1, SLUICE_SYNC) ==
        SLUICE_INVALID_ARGUMENT);
  CHECK_OK(sluice_kv_close(NULL));

  check_version();
  char ckpt[4096];
  snprintf(ckpt, sizeof ckpt, "%s/ckpt", argv[1]);
  check_checkpoint_calls(ckpt);
  snprintf(ckpt, sizeof ckpt, "%s/tiers", argv[1]);
  check_tier_calls(ckpt);

  if (failures) {
    fprintf(stderr, "c_api_test: %d check(s) failed\n", failures);
    return 1;
  }
  printf("c_api_test: all checks passed (%s)\n", argv[2]);
  return 0;
}
