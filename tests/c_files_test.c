/* The POSIX-like file API from plain C: calls, errno, durability across a
 * SIGKILL, and the C streams of a reader over two writers.
 * Usage: c_files_test DIR   Exit 0 = pass. */
#define _GNU_SOURCE /* memmem */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "c_check.h"
#include "sluice/sluice.h"


/* The file system the calls below use. */
static sluice_fs_t* fs = NULL;

/* Mounts `root` into `fs`; returns a SLUICE_* code. */
static int mount_with(const char* root, int writer, const char* backend) {
  sluice_options_t* o = sluice_options_create();
  int rc = sluice_options_set(o, "backend", backend);
  if (rc == SLUICE_OK) rc = sluice_mount(root, writer, o, &fs);
  sluice_options_destroy(o);
  return rc;
}

/* In a child: writes that must be durable when they return, then SIGKILL
 * (no close, no unmount): each O_SYNC or O_DSYNC write, and a write on one
 * descriptor made durable by fsync on another, read-only one. The exit
 * code says which step failed. */
static void durable_writes_then_die(const char* root, const char* backend) {
  if (mount_with(root, 0, backend) != SLUICE_OK) _exit(10);
  int fd = sluice_open(fs, "/sync", O_WRONLY | O_CREAT | O_SYNC, 0644);
  if (fd < 0 || sluice_write(fd, "written with O_SYNC", 19) != 19 ||
      sluice_pwrite(fd, "+later", 6, 100) != 6) {
    _exit(11);
  }
  fd = sluice_open(fs, "/dsync", O_RDWR | O_CREAT | O_DSYNC, 0644);
  if (fd < 0 || sluice_write(fd, "written with O_DSYNC", 20) != 20) _exit(12);
  int w = sluice_open(fs, "/rofsync", O_WRONLY | O_CREAT, 0644);
  int r = sluice_open(fs, "/rofsync", O_RDONLY);
  if (w < 0 || r < 0 || sluice_write(w, "synced by a read-only fd", 24) != 24 ||
      sluice_fsync(r) != 0) {
    _exit(13);
  }
  kill(getpid(), SIGKILL);
  _exit(14);
}

/* Bytes [off, off + len) of `path` are `want`. */
static int holds(const char* path, off_t off, const char* want) {
  char got[64];
  size_t len = strlen(want);
  int fd = sluice_open(fs, path, O_RDONLY);
  int ok = fd >= 0 && sluice_pread(fd, got, len, off) == (ssize_t)len &&
           memcmp(got, want, len) == 0;
  if (fd >= 0) sluice_close(fd);
  return ok;
}

/* Before the first mount of this process: a child forked after a store was
 * open would inherit none of its engine's threads. */
static void durability_after_sigkill(const char* root) {
  const char* backends[] = {"rocksdb", "leveldb"};
  char dirs[2][4096];
  for (int i = 0; i < 2; i++) {
    snprintf(dirs[i], sizeof dirs[i], "%s/sync-%s", root, backends[i]);
    pid_t pid = fork();
    if (pid == 0) durable_writes_then_die(dirs[i], backends[i]);
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
      fprintf(stderr, "%s: the child exited %d before its SIGKILL\n",
              backends[i], WIFEXITED(status) ? WEXITSTATUS(status) : -1);
      failures++;
    }
  }
  for (int i = 0; i < 2; i++) {
    struct stat st;
    CHECK(mount_with(dirs[i], SLUICE_READER, backends[i]) == 0);
    CHECK(sluice_stat(fs, "/sync", &st) == 0 && st.st_size == 106);
    CHECK(holds("/sync", 0, "written with O_SYNC"));
    CHECK(holds("/sync", 100, "+later"));
    CHECK(holds("/dsync", 0, "written with O_DSYNC"));
    CHECK(holds("/rofsync", 0, "synced by a read-only fd"));
    CHECK(sluice_unmount(fs) == 0);
  }
}

/* Flips one byte of the value-log file of writer 0 under `root` that holds
 * `marker`, inside it; returns the file's path (static) or NULL. */
static const char* flip_in_value_log(const char* root, const char* marker) {
  static char path[4096];
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/writer.00000000/vlog", root);
  DIR* d = opendir(dir);
  if (d == NULL) return NULL;
  const char* found = NULL;
  struct dirent* e;
  while (!found && (e = readdir(d)) != NULL) {
    if (strstr(e->d_name, ".vlog") == NULL) continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    FILE* f = fopen(path, "r+b");
    if (f == NULL) continue;
    static char bytes[1 << 20];
    size_t n = fread(bytes, 1, sizeof bytes, f);
    char* at = memmem(bytes, n, marker, strlen(marker));
    if (at != NULL) {
      fseek(f, (long)(at - bytes) + 3, SEEK_SET);
      fputc(at[3] ^ 0x01, f);
      found = path;
    }
    fclose(f);
  }
  closedir(d);
  return found;
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const char* root = argv[1];
  char buf[64];

  /* No file system: EBADF, as openat's with a bad directory. */
  CHECK(sluice_open(NULL, "/x", O_RDONLY) == -1 && errno == EBADF);
  CHECK(sluice_stat(NULL, "/x", NULL) == -1 && errno == EBADF);
  CHECK(sluice_mkdir(NULL, "/x", 0755) == -1 && errno == EBADF);
  CHECK(sluice_opendir(NULL, "/") == NULL && errno == EBADF);
  durability_after_sigkill(root);
  fs = (sluice_fs_t*)1;
  CHECK(sluice_mount(NULL, 0, NULL, &fs) == SLUICE_INVALID_ARGUMENT);
  CHECK(fs == NULL && strstr(sluice_errmsg(), "root") != NULL);
  CHECK(sluice_mount(root, 0, NULL, NULL) == SLUICE_INVALID_ARGUMENT);
  CHECK(sluice_mount(root, 0, NULL, &fs) == SLUICE_OK);
  CHECK(sluice_open(fs, NULL, O_RDONLY) == -1 && errno == EFAULT);
  CHECK(sluice_unlink(fs, NULL) == -1 && errno == EFAULT);
  CHECK(sluice_rename(fs, "/x", NULL) == -1 && errno == EFAULT);
  int fd = sluice_open(fs, "/a.txt", O_WRONLY | O_CREAT | O_EXCL, 0600);
  CHECK(fd >= 0);
  CHECK(sluice_write(fd, "hello, ", 7) == 7);
  CHECK(sluice_pwrite(fd, "world", 5, 7) == 5);
  CHECK(sluice_lseek(fd, 0, SEEK_END) == 12);
  CHECK(sluice_read(fd, buf, 5) == -1 && errno == EBADF); /* write-only */
  CHECK(sluice_fsync(fd) == 0);
  struct stat st;
  CHECK(sluice_fstat(fd, &st) == 0 && st.st_size == 12 && S_ISREG(st.st_mode));
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(sluice_close(fd) == 0);
  CHECK(sluice_close(fd) == -1 && errno == EBADF);
  CHECK(sluice_open(fs, "/a.txt", O_WRONLY | O_CREAT | O_EXCL, 0600) == -1 &&
        errno == EEXIST);
  CHECK(sluice_open(fs, "/missing", O_RDONLY) == -1 && errno == ENOENT);

  fd = sluice_open(fs, "/a.txt", O_RDWR);
  CHECK(sluice_pread(fd, buf, sizeof buf, 0) == 12);
  CHECK(memcmp(buf, "hello, world", 12) == 0);
  CHECK(sluice_ftruncate(fd, 5) == 0);
  CHECK(sluice_read(fd, buf, sizeof buf) == 5);
  CHECK(sluice_read(fd, buf, sizeof buf) == 0); /* end of file */
  CHECK(sluice_close(fd) == 0);

  CHECK(sluice_mkdir(fs, "/d", 0755) == 0);
  CHECK(sluice_mkdir(fs, "/d", 0755) == -1 && errno == EEXIST);
  CHECK(sluice_rename(fs, "/a.txt", "/d/b.txt") == 0);
  CHECK(sluice_stat(fs, "/a.txt", &st) == -1 && errno == ENOENT);
  CHECK(sluice_stat(fs, "/d/b.txt", &st) == 0 && st.st_size == 5);
  CHECK(sluice_stat(fs, "/d", &st) == 0 && S_ISDIR(st.st_mode));
  CHECK(sluice_rmdir(fs, "/d") == -1 && errno == ENOTEMPTY);
  CHECK(sluice_open(fs, "/d", O_RDONLY) == -1 && errno == EISDIR);
  sluice_dir_t* dir = sluice_opendir(fs, "/d");
  CHECK(dir != NULL);
  int names = 0, found = 0;
  struct dirent* e;
  while (dir && (e = sluice_readdir(dir)) != NULL) {
    names++;
    if (strcmp(e->d_name, "b.txt") == 0 && e->d_type == DT_REG) found = 1;
  }
  CHECK(names == 3 && found); /* ., .., b.txt */
  CHECK(sluice_closedir(dir) == 0);
  CHECK(sluice_opendir(fs, "/d/b.txt") == NULL && errno == ENOTDIR);
  CHECK(sluice_truncate(fs, "/d/b.txt", 100) == 0);
  CHECK(sluice_stat(fs, "/d/b.txt", &st) == 0 && st.st_size == 100);
  CHECK(sluice_chmod(fs, "/d/b.txt", 0604) == 0);
  struct timespec times[2] = {{5, 0}, {1000000000, 7}};
  CHECK(sluice_utimens(fs, "/d/b.txt", times) == 0);
  CHECK(sluice_stat(fs, "/d/b.txt", &st) == 0 && (st.st_mode & 07777) == 0604 &&
        st.st_mtim.tv_sec == 1000000000 && st.st_mtim.tv_nsec == 7 &&
        st.st_atim.tv_sec == 5);
  times[1].tv_nsec = UTIME_OMIT;
  times[0].tv_sec = 6;
  CHECK(sluice_utimens(fs, "/d/b.txt", times) == 0);
  CHECK(sluice_stat(fs, "/d/b.txt", &st) == 0 &&
        st.st_mtim.tv_sec == 1000000000 && st.st_atim.tv_sec == 6);
  CHECK(sluice_chmod(fs, "/d/none", 0600) == -1 && errno == ENOENT);
  /* A negative size is EINVAL and changes nothing. */
  CHECK(sluice_truncate(fs, "/d/b.txt", -1) == -1 && errno == EINVAL);
  CHECK(sluice_stat(fs, "/d/b.txt", &st) == 0 && st.st_size == 100);
  fd = sluice_open(fs, "/d/b.txt", O_RDWR);
  CHECK(sluice_ftruncate(fd, -1) == -1 && errno == EINVAL);
  CHECK(sluice_fstat(fd, &st) == 0 && st.st_size == 100);
  CHECK(sluice_pread(fd, buf, 5, 0) == 5 && memcmp(buf, "hello", 5) == 0);
  CHECK(sluice_close(fd) == 0);
  CHECK(sluice_stat(fs, "/d/b.txt", &st) == 0 && st.st_size == 100);
  /* O_DIRECTORY: with O_CREAT EINVAL, making nothing; on a file ENOTDIR
   * (and its O_TRUNC truncates nothing); a directory is no descriptor. */
  CHECK(sluice_open(fs, "/nd", O_RDONLY | O_DIRECTORY | O_CREAT, 0755) == -1 &&
        errno == EINVAL);
  CHECK(sluice_open(fs, "/nd", O_WRONLY | O_DIRECTORY | O_CREAT | O_EXCL,
                    0644) == -1 &&
        errno == EINVAL);
  CHECK(sluice_stat(fs, "/nd", &st) == -1 && errno == ENOENT);
  CHECK(sluice_open(fs, "/d/b.txt", O_RDWR | O_DIRECTORY | O_CREAT, 0644) ==
            -1 &&
        errno == EINVAL);
  CHECK(sluice_open(fs, "/d/b.txt", O_RDONLY | O_DIRECTORY) == -1 &&
        errno == ENOTDIR);
  CHECK(sluice_open(fs, "/d/b.txt", O_RDWR | O_DIRECTORY | O_TRUNC) == -1 &&
        errno == ENOTDIR);
  CHECK(sluice_stat(fs, "/d/b.txt", &st) == 0 && S_ISREG(st.st_mode) &&
        st.st_size == 100);
  CHECK(sluice_open(fs, "/d", O_RDONLY | O_DIRECTORY) == -1 && errno == EISDIR);
  CHECK(sluice_open(fs, "/none", O_RDONLY | O_DIRECTORY) == -1 &&
        errno == ENOENT);
  CHECK(sluice_unlink(fs, "/d/b.txt") == 0);
  CHECK(sluice_rmdir(fs, "/d") == 0);

  /* A name over NAME_MAX (255) or a path of PATH_MAX (4096) bytes or more
   * is ENAMETOOLONG wherever a name is made, and nothing is made. */
  {
    char name[258] = "/", path[4200] = "";
    memset(name + 1, 'n', 256);
    name[257] = 0; /* "/" and 256 bytes */
    CHECK(sluice_open(fs, name, O_WRONLY | O_CREAT, 0644) == -1 &&
          errno == ENAMETOOLONG);
    CHECK(sluice_mkdir(fs, name, 0755) == -1 && errno == ENAMETOOLONG);
    fd = sluice_open(fs, "/keep", O_WRONLY | O_CREAT, 0644);
    CHECK(sluice_write(fd, "kept", 4) == 4);
    CHECK(sluice_close(fd) == 0);
    CHECK(sluice_rename(fs, "/keep", name) == -1 && errno == ENAMETOOLONG);
    CHECK(strstr(sluice_errmsg(), "255") != NULL);
    CHECK(sluice_stat(fs, name, &st) == -1 && errno == ENOENT);
    CHECK(sluice_stat(fs, "/keep", &st) == 0 && st.st_size == 4);
    name[256] = 0; /* 255 bytes: a name */
    CHECK(sluice_mkdir(fs, name, 0755) == 0);
    CHECK(sluice_rmdir(fs, name) == 0);
    /* 15 levels of 255 bytes, then a last name of 255: 4096 bytes. */
    for (int i = 0; i < 15; i++) {
      strcat(path, name);
      CHECK(sluice_mkdir(fs, path, 0755) == 0);
    }
    strcat(path, name);
    CHECK(strlen(path) == 4096);
    CHECK(sluice_open(fs, path, O_WRONLY | O_CREAT, 0644) == -1 &&
          errno == ENAMETOOLONG);
    CHECK(sluice_mkdir(fs, path, 0755) == -1 && errno == ENAMETOOLONG);
    CHECK(sluice_rename(fs, "/keep", path) == -1 && errno == ENAMETOOLONG);
    CHECK(sluice_stat(fs, path, &st) == -1 && errno == ENOENT);
    path[4095] = 0; /* 4095 bytes: a path */
    fd = sluice_open(fs, path, O_WRONLY | O_CREAT, 0644);
    CHECK(fd >= 0);
    CHECK(sluice_close(fd) == 0);
    CHECK(sluice_unlink(fs, path) == 0);
    for (int i = 15; i > 0; i--) {
      path[i * 256] = 0;
      CHECK(sluice_rmdir(fs, path) == 0);
    }
    CHECK(sluice_unlink(fs, "/keep") == 0);
  }

  /* Two writers of one file, then a reader merging them. */
  fd = sluice_open(fs, "/shared", O_WRONLY | O_CREAT, 0644);
  CHECK(sluice_pwrite(fd, "AAAA", 4, 0) == 4);
  CHECK(sluice_close(fd) == 0);
  {
    /* One store, two mounts: refused, as two processes would be. */
    sluice_fs_t* again = (sluice_fs_t*)1;
    CHECK(sluice_mount(root, 0, NULL, &again) == SLUICE_BUSY);
    CHECK(again == NULL && strstr(sluice_errmsg(), root) != NULL);
  }
  CHECK(sluice_unmount(fs) == 0);
  CHECK(sluice_mount(root, 1, NULL, &fs) == 0);
  fd = sluice_open(fs, "/shared", O_WRONLY | O_CREAT, 0644);
  CHECK(sluice_pwrite(fd, "BBBB", 4, 4) == 4);
  CHECK(sluice_unmount(fs) == 0); /* closes fd too */
  CHECK(sluice_mount(root, SLUICE_READER, NULL, &fs) == 0);
  fd = sluice_open(fs, "/shared", O_RDONLY);
  CHECK(sluice_read(fd, buf, sizeof buf) == 8 &&
        memcmp(buf, "AAAABBBB", 8) == 0);
  CHECK(sluice_open(fs, "/new", O_WRONLY | O_CREAT, 0644) == -1 &&
        errno == EROFS);
  CHECK(sluice_open(fs, "/new", O_RDONLY | O_DIRECTORY | O_CREAT, 0755) == -1 &&
        errno == EINVAL);
  CHECK(sluice_open(fs, "/shared", O_RDONLY | O_DIRECTORY) == -1 &&
        errno == ENOTDIR);
  CHECK(sluice_mkdir(fs, "/nd", 0755) == -1 && errno == EROFS);
  CHECK(sluice_chmod(fs, "/shared", 0600) == -1 && errno == EROFS);
  CHECK(sluice_close(fd) == 0);
  CHECK(sluice_unmount(fs) == 0);

  /* A flipped byte in the value log under a file: the read fails with EIO,
   * and the message says the value fails its checksum, naming the log file
   * (not that the extent is truncated). */
  {
    static char big[100000];
    for (size_t i = 0; i < sizeof big; i++) big[i] = (char)('a' + i % 26);
    memcpy(big + 50000, "FLIP-ME-HERE", 12);
    CHECK(sluice_mount(root, 0, NULL, &fs) == 0);
    fd = sluice_open(fs, "/damaged", O_WRONLY | O_CREAT, 0644);
    CHECK(sluice_write(fd, big, sizeof big) == (ssize_t)sizeof big);
    CHECK(sluice_close(fd) == 0);
    CHECK(sluice_unmount(fs) == 0);
    const char* log = flip_in_value_log(root, "FLIP-ME-HERE");
    CHECK(log != NULL);
    CHECK(sluice_mount(root, SLUICE_READER, NULL, &fs) == 0);
    fd = sluice_open(fs, "/damaged", O_RDONLY);
    CHECK(fd >= 0);
    errno = 0;
    CHECK(sluice_read(fd, big, sizeof big) == -1 && errno == EIO);
    CHECK(strstr(sluice_errmsg(), "fails its checksum") != NULL);
    CHECK(strstr(sluice_errmsg(), "truncated") == NULL);
    CHECK(log != NULL && strstr(sluice_errmsg(), log) != NULL);
    CHECK(sluice_close(fd) == 0);
    CHECK(sluice_unmount(fs) == 0);
  }

  if (failures) {
    fprintf(stderr, "c_files_test: %d check(s) failed\n", failures);
    return 1;
  }
  printf("c_files_test: all checks passed\n");
  return 0;
}
