/* Several file systems mounted in one process through the C API: a
 * checkpoint N read from one root while N+1 is written to another, a
 * reader and a writer of one root, descriptors that name their mount and
 * no other, unmount with files open, and descriptors closed under
 * threads that use them.
 * Usage: c_mounts_test DIR   (DIR must not exist yet). Exit 0 = pass. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "c_check.h"
#include "sluice/sluice.h"


enum { kFiles = 3, kSize = 300000 };

/* Byte `i` of file `f` of checkpoint `n`. */
static unsigned char byte_of(int n, int f, size_t i) {
  return (unsigned char)(n * 31 + f * 7 + i * 13 + i / 4096);
}

static void path_of(char* out, size_t cap, int n, int f) {
  snprintf(out, cap, "/ckpt.%d/rank%d.dat", n, f);
}

/* Writes checkpoint n's files into `fs`. */
static void write_checkpoint(sluice_fs_t* fs, int n) {
  static unsigned char buf[kSize];
  char dir[64], path[64];
  snprintf(dir, sizeof dir, "/ckpt.%d", n);
  CHECK(sluice_mkdir(fs, dir, 0755) == 0);
  for (int f = 0; f < kFiles; f++) {
    for (size_t i = 0; i < kSize; i++) buf[i] = byte_of(n, f, i);
    path_of(path, sizeof path, n, f);
    int fd = sluice_open(fs, path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    CHECK(fd >= 0);
    CHECK(sluice_write(fd, buf, kSize) == kSize);
    CHECK(sluice_close(fd) == 0);
  }
}

/* Checkpoint n's files in `fs` hold their bytes, every one of them. */
static int holds_checkpoint(sluice_fs_t* fs, int n) {
  static unsigned char buf[kSize + 1];
  char path[64];
  int ok = 1;
  for (int f = 0; f < kFiles; f++) {
    path_of(path, sizeof path, n, f);
    int fd = sluice_open(fs, path, O_RDONLY);
    ssize_t got = fd >= 0 ? sluice_pread(fd, buf, sizeof buf, 0) : -1;
    if (got != kSize) {
      fprintf(stderr, "%s: %zd bytes (%s)\n", path, got, sluice_errmsg());
      ok = 0;
    }
    for (ssize_t i = 0; i < got && ok; i++) {
      if (buf[i] != byte_of(n, f, (size_t)i)) {
        fprintf(stderr, "%s: byte %zd differs\n", path, i);
        ok = 0;
      }
    }
    if (fd >= 0) CHECK(sluice_close(fd) == 0);
  }
  return ok;
}

/* Reads checkpoint N from one root while writing N+1 to another, the
 * calls of the two interleaved; then each root holds its own checkpoint
 * and nothing of the other's. */
static void read_n_write_n1(const char* dir) {
  char a[4096], b[4096];
  snprintf(a, sizeof a, "%s/a", dir);
  snprintf(b, sizeof b, "%s/b", dir);
  sluice_fs_t *fa = NULL, *fb = NULL;
  CHECK(sluice_mount(a, 0, NULL, &fa) == SLUICE_OK);
  write_checkpoint(fa, 7);
  CHECK(sluice_unmount(fa) == SLUICE_OK);

  sluice_fs_t *reader = NULL, *writer = NULL;
  CHECK(sluice_mount(a, SLUICE_READER, NULL, &reader) == SLUICE_OK);
  CHECK(sluice_mount(b, 0, NULL, &writer) == SLUICE_OK);
  CHECK(reader != NULL && writer != NULL && reader != writer);
  if (!reader || !writer) return;
  /* Chunk by chunk: read N's file f from one, write N+1's file f to the
   * other, with both descriptors open at once. */
  CHECK(sluice_mkdir(writer, "/ckpt.8", 0755) == 0);
  static unsigned char in[kSize], out[kSize];
  char pin[64], pout[64];
  for (int f = 0; f < kFiles; f++) {
    path_of(pin, sizeof pin, 7, f);
    path_of(pout, sizeof pout, 8, f);
    int r = sluice_open(reader, pin, O_RDONLY);
    int w = sluice_open(writer, pout, O_WRONLY | O_CREAT | O_EXCL, 0644);
    CHECK(r >= 0 && w >= 0 && r != w);
    for (size_t off = 0; off < kSize; off += 65536) {
      size_t n = kSize - off < 65536 ? kSize - off : 65536;
      CHECK(sluice_read(r, in + off, n) == (ssize_t)n);
      for (size_t i = 0; i < n; i++) out[off + i] = byte_of(8, f, off + i);
      CHECK(sluice_write(w, out + off, n) == (ssize_t)n);
    }
    for (size_t i = 0; i < kSize; i++) {
      if (in[i] != byte_of(7, f, i)) {
        fprintf(stderr, "%s: byte %zu differs while N+1 is written\n", pin, i);
        failures++;
        break;
      }
    }
    /* A descriptor works only as what its mount opened it: the reader's
     * is read-only (EBADF to write, as POSIX's), and the paths of one
     * root do not exist in the other. */
    CHECK(sluice_write(r, "x", 1) == -1 && errno == EBADF);
    struct stat st;
    CHECK(sluice_stat(reader, pout, &st) == -1 && errno == ENOENT);
    CHECK(sluice_stat(writer, pin, &st) == -1 && errno == ENOENT);
    CHECK(sluice_close(r) == 0 && sluice_close(w) == 0);
  }
  /* The reader cannot write its root. */
  CHECK(sluice_mkdir(reader, "/ckpt.9", 0755) == -1 && errno == EROFS);
  CHECK(holds_checkpoint(reader, 7));
  CHECK(holds_checkpoint(writer, 8));
  CHECK(sluice_unmount(reader) == SLUICE_OK);
  CHECK(sluice_unmount(writer) == SLUICE_OK);

  /* Both, read back apart. */
  CHECK(sluice_mount(b, SLUICE_READER, NULL, &fb) == SLUICE_OK);
  CHECK(sluice_mount(a, SLUICE_READER, NULL, &fa) == SLUICE_OK);
  CHECK(holds_checkpoint(fb, 8));
  CHECK(holds_checkpoint(fa, 7));
  struct stat st;
  CHECK(sluice_stat(fa, "/ckpt.8", &st) == -1 && errno == ENOENT);
  CHECK(sluice_stat(fb, "/ckpt.7", &st) == -1 && errno == ENOENT);
  CHECK(sluice_unmount(fa) == SLUICE_OK);
  CHECK(sluice_unmount(fb) == SLUICE_OK);
}

/* One root, a writer mount and a reader mount: with snapshot_reads the
 * reader sees what the writer made durable; without, the reader's mount
 * is SLUICE_BUSY, and so is a second mount of the writer's store. */
static void reader_beside_writer(const char* dir) {
  char root[4096];
  snprintf(root, sizeof root, "%s/c", dir);
  sluice_fs_t *w = NULL, *r = (sluice_fs_t*)1;
  CHECK(sluice_mount(root, 0, NULL, &w) == SLUICE_OK);
  if (!w) return;
  write_checkpoint(w, 3);
  CHECK(sluice_mount(root, 0, NULL, &r) == SLUICE_BUSY);
  CHECK(r == NULL && strstr(sluice_errmsg(), root) != NULL);
  CHECK(sluice_mount(root, SLUICE_READER, NULL, &r) == SLUICE_BUSY);
  CHECK(r == NULL);
  sluice_options_t* o = sluice_options_create();
  CHECK(sluice_options_set(o, "snapshot_reads", "true") == SLUICE_OK);
  CHECK(sluice_mount(root, SLUICE_READER, o, &r) == SLUICE_OK);
  sluice_options_destroy(o);
  if (r) {
    CHECK(holds_checkpoint(r, 3));
    /* The writer goes on; the reader still reads checkpoint 3 whole. */
    write_checkpoint(w, 4);
    CHECK(holds_checkpoint(r, 3));
    CHECK(sluice_unmount(r) == SLUICE_OK);
  }
  CHECK(holds_checkpoint(w, 4));
  CHECK(sluice_unmount(w) == SLUICE_OK);
}

/* Descriptors of a mount that is unmounted, or of a file that is closed,
 * fail with EBADF, and their numbers are not given out again; the files
 * left open at unmount are closed, whole. */
static void stale_descriptors(const char* dir) {
  char root[4096];
  snprintf(root, sizeof root, "%s/d", dir);
  sluice_fs_t *fs = NULL, *other = NULL;
  CHECK(sluice_mount(root, 0, NULL, &fs) == SLUICE_OK);
  char other_root[4096];
  snprintf(other_root, sizeof other_root, "%s/e", dir);
  CHECK(sluice_mount(other_root, 0, NULL, &other) == SLUICE_OK);
  if (!fs || !other) return;
  int open_at_unmount = sluice_open(fs, "/left-open", O_RDWR | O_CREAT, 0644);
  int closed = sluice_open(fs, "/closed", O_WRONLY | O_CREAT, 0644);
  int kept = sluice_open(other, "/kept", O_RDWR | O_CREAT, 0644);
  CHECK(open_at_unmount >= 0 && closed >= 0 && kept >= 0);
  CHECK(sluice_write(open_at_unmount, "written, never closed", 21) == 21);
  CHECK(sluice_write(kept, "other mount", 11) == 11);
  CHECK(sluice_close(closed) == 0);
  char buf[32];
  CHECK(sluice_write(closed, "x", 1) == -1 && errno == EBADF);
  CHECK(sluice_close(closed) == -1 && errno == EBADF);
  CHECK(strstr(sluice_errmsg(), "is not open") != NULL);

  CHECK(sluice_unmount(fs) == SLUICE_OK); /* closes /left-open */
  CHECK(sluice_read(open_at_unmount, buf, sizeof buf) == -1 && errno == EBADF);
  CHECK(sluice_pwrite(open_at_unmount, "x", 1, 0) == -1 && errno == EBADF);
  CHECK(sluice_fsync(open_at_unmount) == -1 && errno == EBADF);
  struct stat st;
  CHECK(sluice_fstat(open_at_unmount, &st) == -1 && errno == EBADF);
  CHECK(sluice_lseek(open_at_unmount, 0, SEEK_SET) == -1 && errno == EBADF);
  CHECK(sluice_close(open_at_unmount) == -1 && errno == EBADF);
  /* The other mount's descriptor is untouched. */
  CHECK(sluice_pread(kept, buf, 11, 0) == 11 &&
        memcmp(buf, "other mount", 11) == 0);

  /* New descriptors, of this mount or another, never reuse the numbers
   * of the stale ones. */
  for (int i = 0; i < 50; i++) {
    int fd = sluice_open(other, "/kept", O_RDONLY);
    CHECK(fd >= 0 && fd != open_at_unmount && fd != closed && fd != kept);
    CHECK(sluice_close(fd) == 0);
  }
  CHECK(sluice_close(kept) == 0);
  CHECK(sluice_unmount(other) == SLUICE_OK);
  CHECK(sluice_unmount(NULL) == SLUICE_OK);

  /* The file left open at unmount is there, whole and complete. */
  CHECK(sluice_mount(root, SLUICE_READER, NULL, &fs) == SLUICE_OK);
  if (!fs) return;
  CHECK(sluice_stat(fs, "/left-open", &st) == 0 && st.st_size == 21);
  int fd = sluice_open(fs, "/left-open", O_RDONLY);
  CHECK(sluice_read(fd, buf, sizeof buf) == 21 &&
        memcmp(buf, "written, never closed", 21) == 0);
  CHECK(sluice_close(fd) == 0);
  CHECK(sluice_unmount(fs) == SLUICE_OK);
}

/* Threads write through descriptors while the main thread unmounts their
 * file system: each write either lands or fails with EBADF, never a crash
 * or another error, and what landed is in the file. Small writes, so that
 * the threads spend their time in the calls' own bookkeeping. */
enum { kThreads = 4, kRounds = 20 };

struct writer_arg {
  int fd;
  long written;   /* bytes of the writes that succeeded */
  int last_errno; /* of the write that failed */
};

static void* keep_writing(void* p) {
  struct writer_arg* a = p;
  for (;;) {
    ssize_t n = sluice_write(a->fd, "w", 1);
    if (n < 0) {
      a->last_errno = errno;
      return NULL;
    }
    a->written += n;
  }
}

static void unmount_under_writers(const char* dir) {
  char root[4096];
  for (int round = 0; round < kRounds; round++) {
    snprintf(root, sizeof root, "%s/t%d", dir, round);
    sluice_fs_t* fs = NULL;
    CHECK(sluice_mount(root, 0, NULL, &fs) == SLUICE_OK);
    if (!fs) return;
    struct writer_arg args[kThreads];
    pthread_t threads[kThreads];
    char path[64];
    for (int t = 0; t < kThreads; t++) {
      snprintf(path, sizeof path, "/busy%d", t);
      args[t].fd = sluice_open(fs, path, O_WRONLY | O_CREAT, 0644);
      args[t].written = 0;
      args[t].last_errno = 0;
      CHECK(args[t].fd >= 0);
      CHECK(pthread_create(&threads[t], NULL, keep_writing, &args[t]) == 0);
    }
    usleep(5000 + 1000 * round);
    CHECK(sluice_unmount(fs) == SLUICE_OK);
    for (int t = 0; t < kThreads; t++) pthread_join(threads[t], NULL);
    CHECK(sluice_mount(root, SLUICE_READER, NULL, &fs) == SLUICE_OK);
    for (int t = 0; t < kThreads && fs; t++) {
      struct stat st;
      snprintf(path, sizeof path, "/busy%d", t);
      CHECK(args[t].last_errno == EBADF);
      CHECK(sluice_stat(fs, path, &st) == 0 && st.st_size == args[t].written);
    }
    if (fs) CHECK(sluice_unmount(fs) == SLUICE_OK);
  }
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: c_mounts_test DIR\n");
    return 2;
  }
  mkdir(argv[1], 0755);
  read_n_write_n1(argv[1]);
  reader_beside_writer(argv[1]);
  stale_descriptors(argv[1]);
  unmount_under_writers(argv[1]);
  if (failures) {
    fprintf(stderr, "c_mounts_test: %d check(s) failed\n", failures);
    return 1;
  }
  printf("c_mounts_test: all checks passed\n");
  return 0;
}
