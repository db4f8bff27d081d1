/* A program that returns from main without sluice_unmount must end
 * cleanly (exit 0, no signal) and keep every file whose sluice_close
 * returned 0, on each of its mounts; so must a program that writes under
 * an interposer's mount with plain POSIX calls and exits.
 *
 *   exit_test capi DIR RUNS BACKEND
 *       RUNS times: a child (this program, exec'd) mounts two roots under
 *       DIR, writes and closes files on each, leaves one open on each,
 *       returns from main; then a second process reads every file back
 *       from both, the ones left open too (closed at exit).
 *   exit_test posix DIR RUNS LIBSLUICE_PRELOAD_SO
 *       the same with plain open/write/close under the interposer
 *       (SLUICE_MOUNT=DIR/mnt, SLUICE_ROOT=DIR/root), no Sluice call.
 * Exit 0 = pass. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sluice/sluice.h"

enum { kFiles = 4 };

/* File `i` of run `run`: its size and its bytes, from both numbers. */
static size_t file_size(int run, int i) {
  static const size_t sizes[kFiles] = {100, 5000, 70000, 1300000};
  return sizes[i] + (size_t)run;
}
static void fill(char* buf, size_t n, int run, int i) {
  unsigned x = 2654435761u * (unsigned)(run * kFiles + i + 1);
  for (size_t k = 0; k < n; k++) {
    x = x * 1103515245u + 12345u;
    buf[k] = (char)(x >> 16);
  }
}

/* The operations of one side: the C API's (on the mount `cur_fs`), or
 * libc's (the interposer's). */
static int use_capi;
static sluice_fs_t* cur_fs;
static int do_open(const char* p, int flags, int mode) {
  return use_capi ? sluice_open(cur_fs, p, flags, mode) : open(p, flags, mode);
}
static ssize_t do_write(int fd, const void* b, size_t n) {
  return use_capi ? sluice_write(fd, b, n) : write(fd, b, n);
}
static ssize_t do_read(int fd, void* b, size_t n) {
  return use_capi ? sluice_read(fd, b, n) : read(fd, b, n);
}
static int do_close(int fd) { return use_capi ? sluice_close(fd) : close(fd); }

static void file_path(char* out, size_t n, const char* base, int run, int i) {
  snprintf(out, n, "%s/run%03d.f%d", base, run, i);
}

/* Writes run `run`'s files under `base` and closes them, leaving one more
 * open; the caller then returns from main. */
static int write_run(const char* base, int run) {
  char path[4096];
  for (int i = 0; i < kFiles; i++) {
    const size_t n = file_size(run, i);
    char* buf = malloc(n);
    fill(buf, n, run, i);
    file_path(path, sizeof path, base, run, i);
    int fd = do_open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    size_t done = 0;
    while (fd >= 0 && done < n) {  /* in pieces, as programs write */
      size_t piece = n - done < 65536 ? n - done : 65536;
      ssize_t w = do_write(fd, buf + done, piece);
      if (w <= 0) break;
      done += (size_t)w;
    }
    free(buf);
    if (fd < 0 || done != n || do_close(fd) != 0) {
      fprintf(stderr, "writer %d: %s: %s\n", run, path, strerror(errno));
      return 1;
    }
  }
  /* One file left open: the exit must neither crash on it nor lose the
   * others. */
  snprintf(path, sizeof path, "%s/run%03d.open", base, run);
  int fd = do_open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || do_write(fd, "left open", 9) != 9) {
    fprintf(stderr, "writer %d: %s: %s\n", run, path, strerror(errno));
    return 1;
  }
  return 0;
}

/* Reads every closed file of runs [0, runs) back; returns the number of
 * files that are missing or differ. */
static int check_runs(const char* base, int runs) {
  int bad = 0;
  char path[4096];
  for (int run = 0; run < runs; run++) {
    for (int i = 0; i < kFiles; i++) {
      const size_t n = file_size(run, i);
      char* want = malloc(n);
      char* got = malloc(n + 1);
      fill(want, n, run, i);
      file_path(path, sizeof path, base, run, i);
      int fd = do_open(path, O_RDONLY, 0);
      size_t have = 0;
      while (fd >= 0 && have <= n) {
        ssize_t r = do_read(fd, got + have, n + 1 - have);
        if (r <= 0) break;
        have += (size_t)r;
      }
      if (fd < 0) {
        fprintf(stderr, "checker: %s: %s\n", path, strerror(errno));
        bad++;
      } else if (have != n || memcmp(got, want, n) != 0) {
        fprintf(stderr, "checker: %s: %zu bytes, want %zu%s\n", path, have, n,
                have == n ? " (content differs)" : "");
        bad++;
      }
      if (fd >= 0) do_close(fd);
      free(want);
      free(got);
    }
    /* The C API closes, at exit, what the program left open: complete. */
    if (use_capi) {
      char left[16] = "";
      snprintf(path, sizeof path, "%s/run%03d.open", base, run);
      int fd = do_open(path, O_RDONLY, 0);
      if (fd < 0 || do_read(fd, left, sizeof left) != 9 ||
          memcmp(left, "left open", 9) != 0) {
        fprintf(stderr, "checker: %s: not closed at exit: %s\n", path,
                sluice_errmsg());
        bad++;
      }
      if (fd >= 0) do_close(fd);
    }
  }
  return bad;
}

static int mount_capi(const char* root, const char* backend, int writer,
                      sluice_fs_t** fs) {
  sluice_options_t* o = sluice_options_create();
  int rc = sluice_options_set(o, "backend", backend);
  if (rc == SLUICE_OK) rc = sluice_mount(root, writer, o, fs);
  sluice_options_destroy(o);
  if (rc != SLUICE_OK) fprintf(stderr, "mount %s: %s\n", root, sluice_errmsg());
  return rc;
}

/* Runs this program with `args`; returns 0 when it exited 0. */
static int run_child(char* const args[], int preload_run, const char* lib) {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    if (preload_run) setenv("LD_PRELOAD", lib, 1);
    execv("/proc/self/exe", args);
    _exit(127);
  }
  int st;
  if (waitpid(pid, &st, 0) != pid) return -1;
  if (WIFSIGNALED(st)) {
    fprintf(stderr, "%s %s run %s: killed by signal %d (%s)\n", args[1],
            args[2], args[3], WTERMSIG(st), strsignal(WTERMSIG(st)));
    return 1;
  }
  if (WEXITSTATUS(st) != 0) {
    fprintf(stderr, "%s %s run %s: exit %d\n", args[1], args[2], args[3],
            WEXITSTATUS(st));
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: exit_test capi|posix DIR RUNS BACKEND|LIB\n");
    return 2;
  }
  const char* mode = argv[1];
  const char* dir = argv[2];
  const int capi = strcmp(mode, "capi") == 0 || strcmp(mode, "capi-write") == 0 ||
                   strcmp(mode, "capi-check") == 0;
  char root[4096], root2[4096], mnt[4096];
  snprintf(root, sizeof root, "%s/root", dir);
  snprintf(root2, sizeof root2, "%s/root2", dir);
  snprintf(mnt, sizeof mnt, "%s/mnt", dir);

  /* The child sides. */
  if (strcmp(mode, "capi-write") == 0) {
    use_capi = 1;
    sluice_fs_t *fs1, *fs2;
    if (mount_capi(root, argv[4], 0, &fs1) != 0 ||
        mount_capi(root2, argv[4], 0, &fs2) != 0) {
      return 1;
    }
    cur_fs = fs1;
    if (write_run("", atoi(argv[3])) != 0) return 1;
    cur_fs = fs2;
    return write_run("", atoi(argv[3]));  /* no sluice_unmount */
  }
  if (strcmp(mode, "capi-check") == 0) {
    use_capi = 1;
    int bad = 0;
    const char* roots[2] = {root, root2};
    for (int i = 0; i < 2; i++) {
      if (mount_capi(roots[i], argv[4], 0, &cur_fs) != 0) return 1;
      bad += check_runs("", atoi(argv[3]));
      if (sluice_unmount(cur_fs) != 0) {
        fprintf(stderr, "unmount %s: %s\n", roots[i], sluice_errmsg());
        return 1;
      }
    }
    return bad == 0 ? 0 : 1;
  }
  if (strcmp(mode, "posix-write") == 0) return write_run(mnt, atoi(argv[3]));
  if (strcmp(mode, "posix-check") == 0) {
    return check_runs(mnt, atoi(argv[3])) == 0 ? 0 : 1;
  }
  if (!capi && strcmp(mode, "posix") != 0) {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }

  /* The driver. */
  const int runs = atoi(argv[3]);
  char cmd[16600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s' '%s' '%s'", dir, root,
           root2, mnt);
  if (system(cmd) != 0) return 2;
  if (!capi) {
    setenv("SLUICE_MOUNT", mnt, 1);
    setenv("SLUICE_ROOT", root, 1);
  }
  int failed = 0;
  char run_s[16];
  char child_mode[32];
  for (int run = 0; run < runs; run++) {
    snprintf(run_s, sizeof run_s, "%d", run);
    snprintf(child_mode, sizeof child_mode, "%s-write", mode);
    char* args[] = {argv[0], child_mode, (char*)dir, run_s, argv[4], NULL};
    if (run_child(args, !capi, argv[4]) != 0) failed++;
  }
  snprintf(run_s, sizeof run_s, "%d", runs);
  snprintf(child_mode, sizeof child_mode, "%s-check", mode);
  char* args[] = {argv[0], child_mode, (char*)dir, run_s, argv[4], NULL};
  const int check = run_child(args, !capi, argv[4]);
  printf("%s: %d of %d writers failed; the check of their %d closed files %s\n",
         mode, failed, runs, runs * kFiles * (capi ? 2 : 1),
         check == 0 ? "passed" : "failed");
  return failed == 0 && check == 0 ? 0 : 1;
}
