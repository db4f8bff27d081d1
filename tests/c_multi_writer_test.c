/* One logical file written by several writers, each a process of its own
 * with its own store (sluice_mount(root, W)): what a writer that has
 * stores of its own sees of the others' parts, what its namespace calls do
 * to them, and appends of two writers to one log.
 *   c_multi_writer_test ROOT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sluice/sluice.h"

#define MIB (1 << 20)
#define CHECK(c)                                                          \
  do {                                                                    \
    if (!(c)) {                                                           \
      fprintf(stderr, "%s:%d: FAILED: %s (errno %d: %s)\n", __FILE__,     \
              __LINE__, #c, errno, sluice_errmsg());                      \
      exit(1);                                                            \
    }                                                                     \
  } while (0)

static const char* root;
static sluice_fs_t* fs; /* this process's mount */
static int failures = 0;

/* The byte at `off` of the test file: differs per MiB and per offset. */
static unsigned char pattern(long off) {
  return (unsigned char)((off * 131 + off / MIB * 7 + 1) % 251);
}

/* Runs `body` in a child process; returns its exit status. */
static int in_child(void (*body)(long), long arg) {
  pid_t pid = fork();
  if (pid == 0) {
    body(arg);
    exit(0);
  }
  int st;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
}

static void expect(const char* name, int rc) {
  if (rc != 0) {
    fprintf(stderr, "FAIL: %s\n", name);
    failures++;
  } else {
    printf("ok   %s\n", name);
  }
}

/* As writer (arg >> 8), writes MiB number (arg & 0xff) of /f and closes. */
static void write_mib(long arg) {
  const int writer = (int)(arg >> 8);
  const long mib = arg & 0xff;
  CHECK(sluice_mount(root, writer, NULL, &fs) == 0);
  unsigned char* buf = malloc(MIB);
  for (long i = 0; i < MIB; i++) buf[i] = pattern(mib * MIB + i);
  int fd = sluice_open(fs, "/f", O_WRONLY | O_CREAT, 0644);
  CHECK(fd >= 0);
  CHECK(sluice_pwrite(fd, buf, MIB, mib * MIB) == MIB);
  CHECK(sluice_close(fd) == 0);
  CHECK(sluice_unmount(fs) == 0);
  free(buf);
}

/* Checks that `path` holds `size` bytes of the pattern (no zeros where
 * another writer's part is). */
static void check_whole(const char* path, long size) {
  struct stat st;
  CHECK(sluice_stat(fs, path, &st) == 0);
  if (st.st_size != size) {
    fprintf(stderr, "%s: size %ld, want %ld\n", path, (long)st.st_size, size);
    exit(1);
  }
  int fd = sluice_open(fs, path, O_RDONLY);
  CHECK(fd >= 0);
  unsigned char* buf = malloc(size + 1);
  long got = 0;
  for (;;) {
    ssize_t n = sluice_read(fd, buf + got, size + 1 - got);
    CHECK(n >= 0);
    if (n == 0) break;
    got += n;
  }
  CHECK(got == size);
  for (long i = 0; i < size; i++) {
    if (buf[i] != pattern(i)) {
      fprintf(stderr, "%s: byte %ld is %d, want %d\n", path, i, buf[i],
              pattern(i));
      exit(1);
    }
  }
  CHECK(sluice_close(fd) == 0);
  free(buf);
}

/* A writer that has stored a file of its own first (writer arg). */
static void mount_and_write_own(int writer) {
  CHECK(sluice_mount(root, writer, NULL, &fs) == 0);
  int fd = sluice_open(fs, "/own", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  CHECK(sluice_write(fd, "mine\n", 5) == 5);
  CHECK(sluice_close(fd) == 0);
}

static void writer_reads_whole(long writer) {
  mount_and_write_own((int)writer);
  check_whole("/f", 2 * MIB);
  CHECK(sluice_unmount(fs) == 0);
}

/* A fresh reader of the merged view. */
static void reader_sees(long what) {
  CHECK(sluice_mount(root, SLUICE_READER, NULL, &fs) == 0);
  struct stat st;
  switch (what) {
    case 0:  /* /f truncated to 1.5 MiB, in full */
      check_whole("/f", 3 * MIB / 2);
      break;
    case 1:  /* renamed to /g */
      CHECK(sluice_stat(fs, "/f", &st) == -1 && errno == ENOENT);
      check_whole("/g", 3 * MIB / 2);
      CHECK(sluice_stat(fs, "/g", &st) == 0 && (st.st_mode & 07777) == 0600);
      break;
    case 2:  /* removed */
      CHECK(sluice_stat(fs, "/g", &st) == -1 && errno == ENOENT);
      CHECK(sluice_stat(fs, "/f", &st) == -1 && errno == ENOENT);
      break;
  }
  CHECK(sluice_unmount(fs) == 0);
}

static void writer_truncates(long writer) {
  mount_and_write_own((int)writer);
  CHECK(sluice_truncate(fs, "/f", 3 * MIB / 2) == 0);
  /* What this writer sees at once, too. */
  check_whole("/f", 3 * MIB / 2);
  CHECK(sluice_unmount(fs) == 0);
}

static void writer_renames(long writer) {
  mount_and_write_own((int)writer);
  CHECK(sluice_chmod(fs, "/f", 0600) == 0);
  CHECK(sluice_rename(fs, "/f", "/g") == 0);
  struct stat st;
  CHECK(sluice_stat(fs, "/f", &st) == -1 && errno == ENOENT);
  check_whole("/g", 3 * MIB / 2);
  CHECK(sluice_unmount(fs) == 0);
}

static void writer_removes(long writer) {
  mount_and_write_own((int)writer);
  CHECK(sluice_unlink(fs, "/g") == 0);
  struct stat st;
  CHECK(sluice_stat(fs, "/g", &st) == -1 && errno == ENOENT);
  CHECK(sluice_unmount(fs) == 0);
}

/* ---- two writers appending to one log, taking turns --------------------- */
#define RECORDS 40
#define RECORD 64

static void make_record(char* rec, int writer, int seq) {
  memset(rec, '.', RECORD);
  int n = snprintf(rec, RECORD, "writer %d seq %03d sum ", writer, seq);
  unsigned sum = 0;
  for (int i = 0; i < n; i++) sum = sum * 31 + (unsigned char)rec[i];
  snprintf(rec + n, RECORD - n, "%08x", sum);
  rec[strlen(rec)] = '.';
  rec[RECORD - 1] = '\n';
}

/* Writer `writer` appends its records to /log, waiting for its turn on
 * `turn` and handing it over on `next`. Writer 1 keeps the log open and
 * fsyncs each record; writer 2 opens and closes it for each. */
static void appender(int writer, int turn, int next) {
  CHECK(sluice_mount(root, writer, NULL, &fs) == 0);
  int fd = -1;
  for (int seq = 0; seq < RECORDS; seq++) {
    char token;
    CHECK(read(turn, &token, 1) == 1);
    char rec[RECORD];
    make_record(rec, writer, seq);
    if (fd < 0) {
      fd = sluice_open(fs, "/log", O_WRONLY | O_CREAT | O_APPEND, 0644);
    }
    CHECK(fd >= 0);
    CHECK(sluice_write(fd, rec, RECORD) == RECORD);
    if (writer == 1) {
      CHECK(sluice_fsync(fd) == 0);
    } else {
      CHECK(sluice_close(fd) == 0);
      fd = -1;
    }
    CHECK(write(next, "t", 1) == 1);
  }
  if (fd >= 0) CHECK(sluice_close(fd) == 0);
  CHECK(sluice_unmount(fs) == 0);
}

static int appends_alternately(void) {
  int to1[2], to2[2];
  CHECK(pipe(to1) == 0 && pipe(to2) == 0);
  pid_t p1 = fork();
  if (p1 == 0) {
    appender(1, to1[0], to2[1]);
    exit(0);
  }
  pid_t p2 = fork();
  if (p2 == 0) {
    appender(2, to2[0], to1[1]);
    exit(0);
  }
  CHECK(write(to1[1], "t", 1) == 1);  /* writer 1 first */
  int st1, st2;
  waitpid(p1, &st1, 0);
  waitpid(p2, &st2, 0);
  if (!WIFEXITED(st1) || WEXITSTATUS(st1) || !WIFEXITED(st2) ||
      WEXITSTATUS(st2)) {
    fprintf(stderr, "an appender failed\n");
    return 1;
  }
  CHECK(sluice_mount(root, SLUICE_READER, NULL, &fs) == 0);
  int fd = sluice_open(fs, "/log", O_RDONLY);
  if (fd < 0) {
    fprintf(stderr, "open /log: %s\n", sluice_errmsg());
    sluice_unmount(fs);
    return 1;
  }
  static char buf[2 * RECORDS * RECORD + 1];
  long got = 0;
  for (;;) {
    ssize_t n = sluice_read(fd, buf + got, sizeof buf - got);
    if (n < 0) {
      fprintf(stderr, "read /log: %s\n", sluice_errmsg());
      sluice_close(fd);
      sluice_unmount(fs);
      return 1;
    }
    if (n == 0) break;
    got += n;
  }
  sluice_close(fd);
  sluice_unmount(fs);
  if (got != 2 * RECORDS * RECORD) {
    fprintf(stderr, "/log holds %ld bytes, want %d\n", got,
            2 * RECORDS * RECORD);
    return 1;
  }
  /* Taking turns, the records alternate: writer 1's first. */
  for (int i = 0; i < 2 * RECORDS; i++) {
    char want[RECORD];
    make_record(want, 1 + i % 2, i / 2);
    if (memcmp(buf + (long)i * RECORD, want, RECORD) != 0) {
      fprintf(stderr, "/log record %d is '%.*s', want '%.*s'\n", i,
              RECORD - 1, buf + (long)i * RECORD, RECORD - 1, want);
      return 1;
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: c_multi_writer_test ROOT\n");
    return 2;
  }
  root = argv[1];
  CHECK(mkdir(root, 0755) == 0 || errno == EEXIST);
  /* Writers 1 and 2 each store one MiB of /f, in processes of their own. */
  CHECK(in_child(write_mib, (1 << 8) | 0) == 0);
  CHECK(in_child(write_mib, (2 << 8) | 1) == 0);
  expect("a writer of another file reads both parts",
         in_child(writer_reads_whole, 3));
  expect("a writer of one part reads both", in_child(writer_reads_whole, 1));
  expect("truncate by a third writer",
         in_child(writer_truncates, 3) || in_child(reader_sees, 0));
  expect("rename (and chmod) by a third writer",
         in_child(writer_renames, 4) || in_child(reader_sees, 1));
  expect("unlink by a third writer",
         in_child(writer_removes, 3) || in_child(reader_sees, 2));
  expect("two writers append to one log, taking turns",
         appends_alternately());
  return failures ? 1 : 0;
}
