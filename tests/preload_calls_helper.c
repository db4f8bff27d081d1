/* Calls on stored files for preload_calls_test.sh, through the interposer
 * or a FUSE mount. Built twice: with -D_FILE_OFFSET_BITS=64 (preadv is
 * then glibc's preadv64, preadv2 its preadv64v2) and without.
 *   io FILE              the vector calls, AIO, raw system calls on the
 *                        placeholder; "ok NAME" or "FAIL NAME: ..." each
 *   pattern N            N bytes of the test pattern on stdout
 *   syncwrite FILE MODE N  writes N pattern bytes (MODE sync: O_SYNC,
 *                        dsync: O_DSYNC, rofsync: a plain write, then fsync
 *                        of a second, read-only descriptor), says "ready"
 *                        on stdout and waits to be killed
 *   hold FILE KIND       KIND flock, posix, ofd or lockf: reads commands
 *                        "lock" and "unlock" from stdin, answers "locked"
 *                        (exclusive, once it has it) or "unlocked"
 *   try FILE KIND        one non-blocking attempt: "got" (exit 0) or
 *                        "busy ERRNO" (exit 1); posix also says who holds
 *                        it ("held by PID", F_GETLK)
 *   wait FILE KIND       a blocking lock: "got" once it has it
 *   owner FILE           fchown, chown, xattrs: the errno of each
 */
#define _GNU_SOURCE
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>

static int failed = 0;

static void check(int ok, const char* name, const char* what) {
  if (ok) {
    printf("ok %s\n", name);
  } else {
    printf("FAIL %s: %s\n", name, what);
    failed = 1;
  }
}

static void check_bytes(const char* name, const char* got, size_t n,
                        const char* want) {
  char msg[256];
  snprintf(msg, sizeof msg, "got '%.*s' (%zu bytes), want '%s'", (int)n,
           got, n, want);
  check(n == strlen(want) && memcmp(got, want, n) == 0, name, msg);
}

static void check_errno(const char* name, long r, int want) {
  char msg[256];
  snprintf(msg, sizeof msg, "returned %ld, errno %s; want -1, errno %s", r,
           r < 0 ? strerror(errno) : "-", strerror(want));
  check(r == -1 && errno == want, name, msg);
}

static int io(const char* path) {
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    perror(path);
    return 1;
  }
  const char* base = "0123456789abcdefghij";
  if (write(fd, base, 20) != 20) {
    perror("write");
    return 1;
  }
  char a[16], b[16];
  struct iovec v[2] = {{a, 3}, {b, 4}};
  ssize_t n = preadv(fd, v, 2, 5);
  memcpy(a + 3, b, 4);
  check_bytes("preadv", a, n < 0 ? 0 : (size_t)n, "56789ab");
  struct iovec w = {(void*)"XY", 2};
  check(pwritev(fd, &w, 1, 1) == 2, "pwritev", "did not write 2 bytes");
  struct iovec r6 = {a, 6};
  n = preadv2(fd, &r6, 1, 0, 0);
  check_bytes("preadv2", a, n < 0 ? 0 : (size_t)n, "0XY345");
  /* Offset -1: the file offset, 20 after the write above. */
  struct iovec z = {(void*)"Z", 1};
  check(pwritev2(fd, &z, 1, -1, 0) == 1 && lseek(fd, 0, SEEK_CUR) == 21,
        "pwritev2 at the file offset", "did not write at 20 and move to 21");
  struct iovec q = {(void*)"Q", 1};
  check(pwritev2(fd, &q, 1, 0, RWF_DSYNC) == 1, "pwritev2 RWF_DSYNC",
        "did not write 1 byte");
  memset(a, 0, sizeof a);
  struct iovec r4 = {a, 4};
  n = preadv64(fd, &r4, 1, 17);
  check_bytes("preadv64", a, n < 0 ? 0 : (size_t)n, "hijZ");
  n = preadv64v2(fd, &r4, 1, 0, 0);
  check_bytes("preadv64v2", a, n < 0 ? 0 : (size_t)n, "QXY3");
  check(pwritev64(fd, &w, 1, 10) == 2, "pwritev64", "did not write 2 bytes");
  check(pwritev64v2(fd, &w, 1, 12, 0) == 2, "pwritev64v2",
        "did not write 2 bytes");

  /* POSIX AIO is refused on a stored file, and changes nothing. */
  struct aiocb cb;
  memset(&cb, 0, sizeof cb);
  cb.aio_fildes = fd;
  cb.aio_buf = a;
  cb.aio_nbytes = 8;
  check_errno("aio_read", aio_read(&cb), ENOTSUP);
  cb.aio_buf = (void*)"junkjunk";
  check_errno("aio_write", aio_write(&cb), ENOTSUP);
  check_errno("aio_fsync", aio_fsync(O_SYNC, &cb), ENOTSUP);
  cb.aio_lio_opcode = LIO_WRITE;
  struct aiocb* list[1] = {&cb};
  check_errno("lio_listio", lio_listio(LIO_WAIT, list, 1, NULL), ENOTSUP);

  /* A call nobody wraps (here the raw system calls) fails on the
   * placeholder instead of acting on it. */
  lseek(fd, 0, SEEK_SET);
  check_errno("raw read", syscall(SYS_read, fd, a, 8), EBADF);
  check_errno("raw write", syscall(SYS_write, fd, "junk", 4), EBADF);
  check_errno("raw pread64", syscall(SYS_pread64, fd, a, 8, 0), EBADF);
  check_errno("raw fsync", syscall(SYS_fsync, fd), EBADF);
  check_errno("raw ftruncate", syscall(SYS_ftruncate, fd, 0), EBADF);
  check_errno("raw mmap", syscall(SYS_mmap, 0, 4096, PROT_READ, MAP_SHARED, fd, 0),
              EBADF);
  check_errno("raw flock", syscall(SYS_flock, fd, LOCK_EX | LOCK_NB), EBADF);
  /* ... while what must work on it still does. */
  struct stat st;
  check(syscall(SYS_fstat, fd, &st) == 0, "raw fstat", strerror(errno));
  check((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR, "F_GETFL", "not O_RDWR");
  check(fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 && fcntl(fd, F_GETFD) == FD_CLOEXEC,
        "F_SETFD", strerror(errno));
  int d = dup(fd);
  check(d >= 0 && lseek(fd, 4, SEEK_SET) == 4 && read(d, a, 2) == 2 &&
            memcmp(a, "45", 2) == 0 && lseek(fd, 0, SEEK_CUR) == 6,
        "dup shares the offset", "the duplicate read elsewhere");
  check(close(d) == 0, "close of the duplicate", strerror(errno));

  check(readahead(fd, 0, 4096) == 0, "readahead", strerror(errno));
  check(sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) == 0,
        "sync_file_range", strerror(errno));
  check(syncfs(fd) == 0, "syncfs", strerror(errno));

  memset(a, 0, sizeof a);
  char all[32];
  n = pread(fd, all, sizeof all, 0);
  check_bytes("content", all, n < 0 ? 0 : (size_t)n, "QXY3456789XYXYefghijZ");
  check(close(fd) == 0, "close", strerror(errno));
  return failed;
}

static char pattern_byte(size_t i) { return (char)('a' + (i * 7 + i / 251) % 26); }

static int pattern(size_t n) {
  for (size_t i = 0; i < n; i++) putchar(pattern_byte(i));
  return 0;
}

static int syncwrite(const char* path, const char* mode, size_t n) {
  int flags = O_WRONLY | O_CREAT | O_TRUNC;
  if (!strcmp(mode, "sync")) flags |= O_SYNC;
  else if (!strcmp(mode, "dsync")) flags |= O_DSYNC;
  else if (strcmp(mode, "rofsync") != 0) return 2;
  int fd = open(path, flags, 0644);
  if (fd < 0) {
    perror(path);
    return 1;
  }
  char* buf = malloc(n);
  for (size_t i = 0; i < n; i++) buf[i] = pattern_byte(i);
  /* Two writes: the second continues the first. */
  size_t half = n / 2;
  if (write(fd, buf, half) != (ssize_t)half ||
      write(fd, buf + half, n - half) != (ssize_t)(n - half)) {
    perror("write");
    return 1;
  }
  if (!strcmp(mode, "rofsync")) {
    int ro = open(path, O_RDONLY);
    if (ro < 0 || fsync(ro) != 0) {
      perror("fsync of a read-only descriptor");
      return 1;
    }
  }
  printf("ready\n");
  fflush(stdout);
  for (;;) pause();  /* killed here, before any close */
}

static int lock(int fd, const char* kind, int type, int wait) {
  if (!strcmp(kind, "flock")) {
    return flock(fd, (type == F_UNLCK ? LOCK_UN : LOCK_EX) | (wait ? 0 : LOCK_NB));
  }
  if (!strcmp(kind, "lockf")) {
    return lockf(fd, type == F_UNLCK ? F_ULOCK : wait ? F_LOCK : F_TLOCK, 0);
  }
  struct flock fl;
  memset(&fl, 0, sizeof fl);
  fl.l_type = (short)type;
  fl.l_whence = SEEK_SET;
  if (!strcmp(kind, "posix")) return fcntl(fd, wait ? F_SETLKW : F_SETLK, &fl);
  if (!strcmp(kind, "ofd")) return fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl);
  errno = EINVAL;
  return -1;
}

static int open_rw(const char* path) {
  int fd = open(path, O_RDWR | O_CREAT, 0644);
  if (fd < 0) {
    perror(path);
    exit(2);
  }
  return fd;
}

static int hold(const char* path, const char* kind) {
  int fd = open_rw(path);
  char line[64];
  setvbuf(stdout, NULL, _IOLBF, 0);
  while (fgets(line, sizeof line, stdin)) {
    int unlock = !strncmp(line, "unlock", 6);
    if (lock(fd, kind, unlock ? F_UNLCK : F_WRLCK, !unlock) != 0) {
      printf("error %s\n", strerror(errno));
    } else {
      printf("%s\n", unlock ? "unlocked" : "locked");
    }
  }
  return 0;
}

static int try_lock(const char* path, const char* kind, int wait) {
  int fd = open_rw(path);
  if (!strcmp(kind, "posix") && !wait) {
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    if (fcntl(fd, F_GETLK, &fl) != 0) {
      printf("F_GETLK: %s\n", strerror(errno));
      return 2;
    }
    if (fl.l_type != F_UNLCK) printf("held by %d\n", (int)fl.l_pid);
  }
  if (lock(fd, kind, F_WRLCK, wait) == 0) {
    printf("got\n");
    return 0;
  }
  printf("busy %s\n", errno == EWOULDBLOCK ? "EWOULDBLOCK"
                      : errno == EACCES  ? "EACCES"
                                         : strerror(errno));
  return 1;
}

static void errno_of(const char* name, long r) {
  printf("%s %s\n", name, r == 0 ? "ok" : strerror(errno));
}

static int owner(const char* path) {
  int fd = open_rw(path);
  errno_of("fchown-same", fchown(fd, geteuid(), getegid()));
  errno_of("fchown-none", fchown(fd, (uid_t)-1, (gid_t)-1));
  errno_of("fchown-other", fchown(fd, geteuid() + 1, (gid_t)-1));
  errno_of("fchown-group", fchown(fd, (uid_t)-1, getegid() + 1));
  errno_of("chown-other", chown(path, geteuid() + 1, (gid_t)-1));
  errno_of("lchown-other", lchown(path, geteuid() + 1, (gid_t)-1));
  errno_of("fchownat-other", fchownat(AT_FDCWD, path, geteuid() + 1, (gid_t)-1, 0));
  errno_of("fsetxattr", fsetxattr(fd, "user.k", "v", 1, 0));
  errno_of("setxattr", setxattr(path, "user.k", "v", 1, 0));
  errno_of("lsetxattr", lsetxattr(path, "user.k", "v", 1, 0));
  char v[16];
  errno_of("fgetxattr", fgetxattr(fd, "user.k", v, sizeof v) < 0 ? -1 : 0);
  errno_of("fremovexattr", fremovexattr(fd, "user.k"));
  errno_of("removexattr", removexattr(path, "user.k"));
  struct stat st;
  if (fstat(fd, &st) != 0) return 1;
  printf("owner unchanged %s\n",
         st.st_uid == geteuid() && st.st_gid == getegid() ? "yes" : "no");
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 3 && !strcmp(argv[1], "io")) return io(argv[2]);
  if (argc == 3 && !strcmp(argv[1], "pattern")) return pattern(strtoul(argv[2], 0, 10));
  if (argc == 5 && !strcmp(argv[1], "syncwrite")) {
    return syncwrite(argv[2], argv[3], strtoul(argv[4], 0, 10));
  }
  if (argc == 4 && !strcmp(argv[1], "hold")) return hold(argv[2], argv[3]);
  if (argc == 4 && !strcmp(argv[1], "try")) return try_lock(argv[2], argv[3], 0);
  if (argc == 4 && !strcmp(argv[1], "wait")) return try_lock(argv[2], argv[3], 1);
  if (argc == 3 && !strcmp(argv[1], "owner")) return owner(argv[2]);
  fprintf(stderr, "usage: see the top of preload_calls_helper.c\n");
  return 2;
}
