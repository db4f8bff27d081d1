/* An LD_PRELOAD library for the tool's tests: the first time the program
 * opens a path whose last component is $SWAP_ON_OPEN, it runs the shell
 * command $SWAP_COMMAND first. That is the change an attacker makes to a
 * tree between a program's look at a file and its open of it, made at the
 * worst moment every time, so that a test of the race is deterministic. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int swapped;

static void MaybeSwap(const char* path) {
  const char* name = getenv("SWAP_ON_OPEN");
  const char* cmd = getenv("SWAP_COMMAND");
  if (swapped || name == NULL || cmd == NULL || path == NULL) return;
  const char* base = strrchr(path, '/');
  base = base ? base + 1 : path;
  if (strcmp(base, name) != 0) return;
  swapped = 1;
  unsetenv("LD_PRELOAD");
  if (system(cmd) != 0) {
    fprintf(stderr, "swap_on_open: '%s' failed\n", cmd);
    abort();
  }
}

static mode_t ModeArg(int flags, va_list ap) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE
             ? (mode_t)va_arg(ap, int)
             : 0;
}

typedef int (*OpenFn)(const char*, int, ...);
typedef int (*OpenAtFn)(int, const char*, int, ...);

#define OPEN(name)                                    \
  int name(const char* path, int flags, ...) {        \
    static OpenFn real;                               \
    if (!real) real = (OpenFn)dlsym(RTLD_NEXT, #name); \
    va_list ap;                                       \
    va_start(ap, flags);                              \
    mode_t mode = ModeArg(flags, ap);                 \
    va_end(ap);                                       \
    MaybeSwap(path);                                  \
    return real(path, flags, mode);                   \
  }
#define OPENAT(name)                                         \
  int name(int dirfd, const char* path, int flags, ...) {    \
    static OpenAtFn real;                                    \
    if (!real) real = (OpenAtFn)dlsym(RTLD_NEXT, #name);     \
    va_list ap;                                              \
    va_start(ap, flags);                                     \
    mode_t mode = ModeArg(flags, ap);                        \
    va_end(ap);                                              \
    MaybeSwap(path);                                         \
    return real(dirfd, path, flags, mode);                   \
  }
OPEN(open)
OPEN(open64)
OPENAT(openat)
OPENAT(openat64)

/* The fortified forms, which take no mode. */
typedef int (*Open2Fn)(const char*, int);
typedef int (*OpenAt2Fn)(int, const char*, int);
#define OPEN2(name)                                     \
  int name(const char* path, int flags) {               \
    static Open2Fn real;                                \
    if (!real) real = (Open2Fn)dlsym(RTLD_NEXT, #name); \
    MaybeSwap(path);                                    \
    return real(path, flags);                           \
  }
#define OPENAT2(name)                                     \
  int name(int dirfd, const char* path, int flags) {      \
    static OpenAt2Fn real;                                \
    if (!real) real = (OpenAt2Fn)dlsym(RTLD_NEXT, #name); \
    MaybeSwap(path);                                      \
    return real(dirfd, path, flags);                      \
  }
OPEN2(__open_2)
OPEN2(__open64_2)
OPENAT2(__openat_2)
OPENAT2(__openat64_2)
