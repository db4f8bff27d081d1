/* Calls on stored files for preload_calls_test.sh, through the interposer
 * or a FUSE mount.
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
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

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
  if (argc == 4 && !strcmp(argv[1], "hold")) return hold(argv[2], argv[3]);
  if (argc == 4 && !strcmp(argv[1], "try")) return try_lock(argv[2], argv[3], 0);
  if (argc == 4 && !strcmp(argv[1], "wait")) return try_lock(argv[2], argv[3], 1);
  if (argc == 3 && !strcmp(argv[1], "owner")) return owner(argv[2]);
  fprintf(stderr, "usage: see the top of preload_calls_helper.c\n");
  return 2;
}
