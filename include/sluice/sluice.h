/* Sluice C API: a checkpoint store for C and Fortran codes.
 *
 * Conventions
 *  - Every fallible function returns an int: SLUICE_OK (0) or an error code
 *    below. The message of the calling thread's last error, which names the
 *    path or key concerned, is sluice_errmsg(); it stays valid until that
 *    thread's next Sluice call.
 *  - A missing key is SLUICE_NOT_FOUND, distinct from every error.
 *  - Handles are opaque. Whoever creates a handle destroys it:
 *    sluice_options_destroy, sluice_kv_close. Buffers returned by sluice_get are
 *    allocated by Sluice and freed with sluice_free.
 *  - Keys and values are byte strings with explicit lengths; they may hold
 *    zero bytes. Every output buffer is passed with its capacity.
 *  - Every function is local (no MPI communication) unless its comment says
 *    collective; the collective ones live in sluice/c_mpi.h.
 *  - Two families: K/V stores (sluice_kv_open, sluice_put, ...) returning
 *    error codes, and files (sluice_mount, sluice_open, sluice_read, ...)
 *    behaving like their POSIX namesakes: -1 (or NULL) and errno on error.
 *  - Thread-safe: any function may be called from several threads at once,
 *    on the same store handle too (but not after sluice_close).
 */
#ifndef SLUICE_SLUICE_H_
#define SLUICE_SLUICE_H_

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "sluice/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes (the same numbers as sluice::Code). */
enum {
  SLUICE_OK = 0,
  SLUICE_NOT_FOUND = 1,
  SLUICE_CORRUPTION = 2,
  SLUICE_NOT_SUPPORTED = 3,
  SLUICE_INVALID_ARGUMENT = 4,
  SLUICE_IO_ERROR = 5,
  SLUICE_BUSY = 6,
  SLUICE_NOT_A_STORE = 7,
  SLUICE_VERSION_TOO_NEW = 8,
  SLUICE_NO_SPACE = 9,
  SLUICE_INCOMPLETE = 10,
  SLUICE_ALREADY_EXISTS = 11,
  SLUICE_NOT_A_DIRECTORY = 12,
  SLUICE_IS_A_DIRECTORY = 13,
  SLUICE_NOT_EMPTY = 14,
  SLUICE_NAME_TOO_LONG = 15,
  SLUICE_BUFFER_TOO_SMALL = 100 /* sluice_get_into: *vlen has the size */
};

/* Flags of mutating calls. */
#define SLUICE_SYNC 0  /* applied to the store before the call returns */
#define SLUICE_ASYNC 1 /* queued; applied in order by a background thread */

/* Operation types of the performance counters. */
enum {
  SLUICE_OP_PUT = 0,
  SLUICE_OP_GET = 1,
  SLUICE_OP_APPEND = 2,
  SLUICE_OP_DELETE = 3,
  SLUICE_OP_BARRIER = 4,
  SLUICE_OP_BATCH = 5,
  SLUICE_OP_COUNT = 6
};

typedef struct sluice_options_t sluice_options_t;
typedef struct sluice_store_t sluice_store_t;

typedef struct sluice_op_stats_t {
  uint64_t ops;
  uint64_t bytes;
  uint64_t nanos;
} sluice_op_stats_t;

/* The calling thread's last error message ("" if none). */
SLUICE_EXPORT const char* sluice_errmsg(void);
/* A short name of an error code ("NotFound", ...). */
SLUICE_EXPORT const char* sluice_strerror(int code);
SLUICE_EXPORT void sluice_free(void* ptr);

/* Options (see sluice/options.h for every name, its default and trade-off). */
SLUICE_EXPORT sluice_options_t* sluice_options_create(void);
SLUICE_EXPORT void sluice_options_destroy(sluice_options_t* options);
/* Sets an option by name: sluice_options_set(o, "write_buffer_size", "64m").
 * An unknown name or bad value is SLUICE_INVALID_ARGUMENT. */
SLUICE_EXPORT int sluice_options_set(sluice_options_t* options,
                                     const char* name, const char* value);

/* ---- K/V stores ---------------------------------------------------------- */

/* Opens or creates the store in directory `path`. `options` may be NULL for
 * the defaults. On error *store is NULL. */
SLUICE_EXPORT int sluice_kv_open(const char* path,
                                 const sluice_options_t* options,
                                 sluice_store_t** store);
/* Waits for queued updates, flushes, releases the store and frees the
 * handle, even when it returns an error. NULL is accepted. */
SLUICE_EXPORT int sluice_kv_close(sluice_store_t* store);

SLUICE_EXPORT int sluice_put(sluice_store_t* store, const void* key,
                             size_t klen, const void* val, size_t vlen,
                             int flags);
/* Reads a value into a new buffer (*val, freed with sluice_free; non-NULL
 * even for an empty value) of *vlen bytes. */
SLUICE_EXPORT int sluice_get(sluice_store_t* store, const void* key,
                             size_t klen, void** val, size_t* vlen);
/* Reads a value into buf[0..cap). If it does not fit, returns
 * SLUICE_BUFFER_TOO_SMALL and sets *vlen to the size needed. */
SLUICE_EXPORT int sluice_get_into(sluice_store_t* store, const void* key,
                                  size_t klen, void* buf, size_t cap,
                                  size_t* vlen);
SLUICE_EXPORT int sluice_append(sluice_store_t* store, const void* key,
                                size_t klen, const void* val, size_t vlen,
                                int flags);
SLUICE_EXPORT int sluice_del(sluice_store_t* store, const void* key,
                             size_t klen, int flags);
/* Makes every update issued before it durable; blocks until on disk. */
SLUICE_EXPORT int sluice_write_barrier(sluice_store_t* store);
/* Gives back the space of every stored value no key points at any more
 * (Store::ReclaimSpace: a barrier first; SLUICE_BUSY while another process
 * reads the store). *bytes_freed, if not NULL: the bytes given back. */
SLUICE_EXPORT int sluice_reclaim_space(sluice_store_t* store,
                                       uint64_t* bytes_freed);
SLUICE_EXPORT int sluice_start_batch(sluice_store_t* store);
SLUICE_EXPORT int sluice_stop_batch(sluice_store_t* store);

/* Counters of one operation type (SLUICE_OP_*). */
SLUICE_EXPORT int sluice_stats(sluice_store_t* store, int op,
                               sluice_op_stats_t* out);
/* The counters as one line of text, truncated to cap-1 bytes and
 * NUL-terminated; returns the full length. */
SLUICE_EXPORT size_t sluice_stats_string(sluice_store_t* store, char* buf,
                                         size_t cap);

/* ---- Files (POSIX-like) --------------------------------------------------- */
/* A process mounts one Sluice file system (sluice/fs.h) at a time: the
 * directory `root` holds one store per writer. A writer (writer >= 0, e.g.
 * its MPI rank) writes its own store, and reads it merged with what the
 * other writers made durable (close, fsync); SLUICE_READER opens every
 * writer's store read-only and merges them. Unlink, rename, truncate,
 * chmod, utimens and rmdir of a file other writers also hold change every
 * writer's part, or fail with EBUSY (changing none) while another process
 * has one of their stores open. With other writers' stores present, an
 * O_APPEND write lands after every writer's durable end of the file, under
 * a lock, and is durable when it returns: appends of several writers to
 * one log never overlap or get lost. `options` may be NULL; besides
 * the store options it takes "extent_bytes" (write-combining, default 4m).
 * Then the calls below take paths inside the file system ("/a/b") and
 * behave as POSIX's: they return -1 (NULL for opendir/readdir) and set
 * errno (ENOENT, EEXIST, ENOTDIR, EISDIR, ENOTEMPTY, ENAMETOOLONG, EBADF,
 * EINVAL, EROFS, ENOSPC, EIO for corruption, ...); sluice_errmsg() has the
 * details.
 * Descriptors are Sluice's own, not kernel descriptors. */
#define SLUICE_READER (-1)

typedef struct sluice_dir_t sluice_dir_t;

SLUICE_EXPORT int sluice_mount(const char* root, int writer,
                               const sluice_options_t* options);
/* Closes open files (writing their data and checksums) and the stores. */
SLUICE_EXPORT int sluice_unmount(void);

/* Flags: O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_TRUNC, O_APPEND,
 * O_SYNC, O_DSYNC, O_DIRECTORY; others are ignored. With O_SYNC or O_DSYNC
 * each write returns once its data is durable, as if followed by
 * sluice_fsync (a write barrier each: costly). A descriptor is a file's:
 * opening a directory is EISDIR (sluice_opendir reads directories),
 * O_DIRECTORY on a file ENOTDIR, and O_DIRECTORY with O_CREAT EINVAL (as
 * on Linux), each before anything is created or truncated. */
SLUICE_EXPORT int sluice_open(const char* path, int flags, ... /* mode */);
SLUICE_EXPORT int sluice_close(int fd);
SLUICE_EXPORT ssize_t sluice_read(int fd, void* buf, size_t n);
SLUICE_EXPORT ssize_t sluice_write(int fd, const void* buf, size_t n);
SLUICE_EXPORT ssize_t sluice_pread(int fd, void* buf, size_t n, off_t offset);
SLUICE_EXPORT ssize_t sluice_pwrite(int fd, const void* buf, size_t n,
                                    off_t offset);
SLUICE_EXPORT off_t sluice_lseek(int fd, off_t offset, int whence);
/* Writes the file's buffered data and checksum, then a write barrier. On
 * any descriptor of the file, read-only ones too. */
SLUICE_EXPORT int sluice_fsync(int fd);
/* A negative size is EINVAL and changes nothing. */
SLUICE_EXPORT int sluice_ftruncate(int fd, off_t size);
SLUICE_EXPORT int sluice_truncate(const char* path, off_t size);
/* Permission bits, and access and modification times as utimensat's:
 * NULL is now for both, UTIME_NOW and UTIME_OMIT as there. Owners are not
 * kept. */
SLUICE_EXPORT int sluice_chmod(const char* path, mode_t mode);
SLUICE_EXPORT int sluice_utimens(const char* path,
                                 const struct timespec times[2]);
SLUICE_EXPORT int sluice_stat(const char* path, struct stat* st);
SLUICE_EXPORT int sluice_fstat(int fd, struct stat* st);
SLUICE_EXPORT int sluice_unlink(const char* path);
SLUICE_EXPORT int sluice_rename(const char* from, const char* to);
SLUICE_EXPORT int sluice_mkdir(const char* path, mode_t mode);
SLUICE_EXPORT int sluice_rmdir(const char* path);
SLUICE_EXPORT sluice_dir_t* sluice_opendir(const char* path);
/* The next entry (d_name, d_type), valid until the next call; NULL at the
 * end (errno unchanged) or on error (errno set). */
SLUICE_EXPORT struct dirent* sluice_readdir(sluice_dir_t* dir);
SLUICE_EXPORT int sluice_closedir(sluice_dir_t* dir);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SLUICE_SLUICE_H_ */
