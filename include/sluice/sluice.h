/* Sluice C API: checkpoints for C and Fortran codes.
 *
 * Conventions
 *  - Errors. The calls of the K/V stores (sluice_kv_*), the options
 *    (sluice_options_set), the mounts (sluice_mount, sluice_unmount) and
 *    the checkpoints (contexts, configuration, datasets, elements,
 *    requests, performance variables) return an int: SLUICE_OK (0) or one
 *    of the positive codes below. The
 *    file calls on a mount (sluice_open, sluice_read, sluice_stat, ...)
 *    mimic their POSIX namesakes instead: -1 (NULL for sluice_opendir) and
 *    errno. Either way sluice_errmsg() is the calling thread's last error
 *    message, naming the path, key, handle or rank concerned; it stays
 *    valid until that thread's next Sluice call. sluice_strerror names a
 *    code.
 *  - A missing key is SLUICE_NOT_FOUND, distinct from every error.
 *  - Ownership. Handles are opaque; each is made by one call and freed by
 *    one: sluice_options_create/_destroy, sluice_kv_open/_close,
 *    sluice_mount/sluice_unmount, sluice_init_single or sluice_init_mpi /
 *    sluice_fini, sluice_dataset_open/_close, sluice_element_open/_close,
 *    a request by sluice_request_wait (or sluice_request_test once done),
 *    sluice_opendir/sluice_closedir. A freeing call frees the handle even
 *    when it returns an error, and one returning a code accepts NULL
 *    (SLUICE_OK, nothing done). A handle returned through an out-parameter
 *    is NULL after an error. Buffers Sluice allocates (sluice_kv_get) are
 *    freed with sluice_free. Strings passed in are NUL-terminated and are
 *    not kept after the call.
 *  - Lengths. Keys and values are bytes with explicit lengths; they may
 *    hold zero bytes. Every buffer Sluice writes into comes with its
 *    capacity. When the result does not fit, the call returns
 *    SLUICE_BUFFER_TOO_SMALL and sets its length out-parameter to the
 *    length needed; a value is then not written, a string or a list is
 *    written cut short (a string NUL-terminated; its length never counts
 *    the NUL).
 *  - Collective or local. A call marked collective must be made by every
 *    rank of the context (or communicator), in the same order:
 *    sluice_init_mpi, sluice_fini, sluice_dataset_open, _close, _unlink,
 *    _should_checkpoint, and sluice_kv_write_barrier_all. Every other call
 *    is local: it communicates with no other process. The MPI entry
 *    points live in sluice/c_mpi.h, so serial codes never need mpi.h.
 *  - Threads. Any call may be made from several threads at once, on one
 *    handle too, but a handle must not be used during or after the call
 *    that frees it. A descriptor may be closed, or its mount unmounted,
 *    while another thread uses it: the close waits for the calls in
 *    flight, later calls fail with EBADF.
 *  - Version. SLUICE_VERSION (sluice/version.h) is the version of these
 *    headers, sluice_version() that of the library the program runs with.
 */
#ifndef SLUICE_SLUICE_H_
#define SLUICE_SLUICE_H_

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "sluice/export.h"
#include "sluice/version.h"

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
  SLUICE_BUFFER_TOO_SMALL = 100 /* an output buffer: see Lengths above */
};

/* Flags of the K/V calls that change a store. */
#define SLUICE_SYNC 0  /* applied to the store before the call returns */
#define SLUICE_ASYNC 1 /* queued; applied in order by a background thread */

/* Operation types of a K/V store's counters (sluice_kv_stats). */
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

/* The calling thread's last error message. */
SLUICE_EXPORT const char* sluice_errmsg(void);
/* A short name of an error code ("NotFound", ...). */
SLUICE_EXPORT const char* sluice_strerror(int code);
SLUICE_EXPORT void sluice_free(void* ptr);
/* The version of the library ("MAJOR.MINOR.PATCH"), to compare with the
 * headers' SLUICE_VERSION. */
SLUICE_EXPORT const char* sluice_version(void);

/* Options of the stores under a K/V store (sluice_kv_open) or a file
 * system (sluice_mount): see sluice/options.h for every name, its default
 * and trade-off. NULL only when out of memory. */
SLUICE_EXPORT sluice_options_t* sluice_options_create(void);
SLUICE_EXPORT void sluice_options_destroy(sluice_options_t* options);
/* Sets an option by name: sluice_options_set(o, "write_buffer_size", "64m").
 * An unknown name or bad value is SLUICE_INVALID_ARGUMENT. */
SLUICE_EXPORT int sluice_options_set(sluice_options_t* options,
                                     const char* name, const char* value);

/* ---- K/V stores (sluice/kv.h) -------------------------------------------- */

/* Opens or creates the store in directory `path`. `options` may be NULL for
 * the defaults. */
SLUICE_EXPORT int sluice_kv_open(const char* path,
                                 const sluice_options_t* options,
                                 sluice_store_t** store);
/* Waits for queued updates, flushes, releases the store and frees the
 * handle. */
SLUICE_EXPORT int sluice_kv_close(sluice_store_t* store);

SLUICE_EXPORT int sluice_kv_put(sluice_store_t* store, const void* key,
                                size_t klen, const void* val, size_t vlen,
                                int flags);
/* Reads a value into a new buffer (*val, freed with sluice_free; non-NULL
 * even for an empty value) of *vlen bytes. */
SLUICE_EXPORT int sluice_kv_get(sluice_store_t* store, const void* key,
                                size_t klen, void** val, size_t* vlen);
/* Reads a value into buf[0..cap) and sets *vlen to its size; if it does
 * not fit, SLUICE_BUFFER_TOO_SMALL (buf untouched). */
SLUICE_EXPORT int sluice_kv_get_into(sluice_store_t* store, const void* key,
                                     size_t klen, void* buf, size_t cap,
                                     size_t* vlen);
SLUICE_EXPORT int sluice_kv_append(sluice_store_t* store, const void* key,
                                   size_t klen, const void* val, size_t vlen,
                                   int flags);
SLUICE_EXPORT int sluice_kv_delete(sluice_store_t* store, const void* key,
                                   size_t klen, int flags);
/* Makes every update issued before it durable; blocks until on disk. */
SLUICE_EXPORT int sluice_kv_write_barrier(sluice_store_t* store);
/* Gives back the space of every stored value no key points at any more
 * (Store::ReclaimSpace: a barrier first; SLUICE_BUSY while another process
 * reads the store). *bytes_freed, if not NULL: the bytes given back. */
SLUICE_EXPORT int sluice_kv_reclaim_space(sluice_store_t* store,
                                          uint64_t* bytes_freed);
/* The updates between these two are written as one atomic batch. */
SLUICE_EXPORT int sluice_kv_start_batch(sluice_store_t* store);
SLUICE_EXPORT int sluice_kv_stop_batch(sluice_store_t* store);

/* Counters of one operation type (SLUICE_OP_*). */
SLUICE_EXPORT int sluice_kv_stats(sluice_store_t* store, int op,
                                  sluice_op_stats_t* out);
/* The counters as one line of text into buf[0..cap), NUL-terminated;
 * *len (may be NULL): its length. */
SLUICE_EXPORT int sluice_kv_stats_string(sluice_store_t* store, char* buf,
                                         size_t cap, size_t* len);

/* ---- Files (POSIX-like; sluice/fs.h) --------------------------------------
 * sluice_mount opens the Sluice file system in directory `root`, which
 * holds one store per writer, and returns a handle to it. A writer
 * (writer >= 0, e.g. its MPI rank) writes its own store, and reads it
 * merged with what the other writers made durable (close, fsync);
 * SLUICE_READER opens every writer's store read-only and merges them.
 * Unlink, rename, truncate, chmod, utimens and rmdir of a file other
 * writers also hold change every writer's part, or fail with EBUSY
 * (changing none) while another process has one of their stores open.
 * With other writers' stores present, an O_APPEND write lands after every
 * writer's durable end of the file, under a lock, and is durable when it
 * returns: appends of several writers to one log never overlap or get
 * lost. `options` may be NULL; besides the store options it takes
 * "extent_bytes" (write-combining, default 4m).
 *
 * A process may hold several mounts at once: of different roots (read
 * checkpoint N from one while writing N+1 to another), of one root as
 * different writers, or of one root as SLUICE_READER while another mount
 * writes it (with the option snapshot_reads, which sees what the writer
 * last made durable; without it the reader's open is SLUICE_BUSY). Two
 * mounts of one store (one root, one writer) are SLUICE_BUSY, as two
 * processes would be. Libraries in one process each mount their own.
 *
 * The calls that take a path take the handle of the file system the path
 * is in ("/a/b"), as openat takes a directory; a NULL handle is EBADF. The
 * calls that take a descriptor take it alone: a descriptor belongs to the
 * mount that opened it, and its number is unique among the process's open
 * descriptors of every mount. A closed descriptor's number is not given
 * out again for about 2^31 opens, so a stale descriptor fails with EBADF,
 * never reaching another file. These calls behave as POSIX's: they return
 * -1 (NULL for opendir/readdir) and set errno (ENOENT, EEXIST, ENOTDIR,
 * EISDIR, ENOTEMPTY, ENAMETOOLONG, EBADF, EINVAL, EROFS, ENOSPC, EIO for
 * corruption, ...); sluice_errmsg() has the details. Descriptors are
 * Sluice's own, not kernel descriptors.
 *
 * The C++ streams (sluice/stream.h) use a mount of their own, made by
 * sluice::fstream::initialize. */
#define SLUICE_READER (-1)

typedef struct sluice_fs_t sluice_fs_t;
typedef struct sluice_dir_t sluice_dir_t;

/* Mounts the file system in `root` as `writer` (or SLUICE_READER), creating
 * it if needed, into *fs. */
SLUICE_EXPORT int sluice_mount(const char* root, int writer,
                               const sluice_options_t* options,
                               sluice_fs_t** fs);
/* Closes the files still open on the mount, as sluice_close does (writing
 * their data and checksums: they are complete), then the stores, and
 * frees the handle. The first error is returned, naming the file; the rest
 * is closed all the same. The mount's descriptors are then closed: calls
 * on them fail with EBADF. Directory streams (sluice_opendir) are
 * snapshots and stay readable until sluice_closedir. A program that exits
 * with mounts open has them closed the same way, at exit. */
SLUICE_EXPORT int sluice_unmount(sluice_fs_t* fs);

/* Flags: O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_TRUNC, O_APPEND,
 * O_SYNC, O_DSYNC, O_DIRECTORY; others are ignored. With O_SYNC or O_DSYNC
 * each write returns once its data is durable, as if followed by
 * sluice_fsync (a write barrier each: costly). A descriptor is a file's:
 * opening a directory is EISDIR (sluice_opendir reads directories),
 * O_DIRECTORY on a file ENOTDIR, and O_DIRECTORY with O_CREAT EINVAL (as
 * on Linux), each before anything is created or truncated. */
SLUICE_EXPORT int sluice_open(sluice_fs_t* fs, const char* path, int flags,
                              ... /* mode */);
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
SLUICE_EXPORT int sluice_truncate(sluice_fs_t* fs, const char* path,
                                  off_t size);
/* Permission bits, and access and modification times as utimensat's:
 * NULL is now for both, UTIME_NOW and UTIME_OMIT as there. Owners are not
 * kept. */
SLUICE_EXPORT int sluice_chmod(sluice_fs_t* fs, const char* path,
                               mode_t mode);
SLUICE_EXPORT int sluice_utimens(sluice_fs_t* fs, const char* path,
                                 const struct timespec times[2]);
SLUICE_EXPORT int sluice_stat(sluice_fs_t* fs, const char* path,
                              struct stat* st);
SLUICE_EXPORT int sluice_fstat(int fd, struct stat* st);
SLUICE_EXPORT int sluice_unlink(sluice_fs_t* fs, const char* path);
SLUICE_EXPORT int sluice_rename(sluice_fs_t* fs, const char* from,
                                const char* to);
SLUICE_EXPORT int sluice_mkdir(sluice_fs_t* fs, const char* path,
                               mode_t mode);
SLUICE_EXPORT int sluice_rmdir(sluice_fs_t* fs, const char* path);
SLUICE_EXPORT sluice_dir_t* sluice_opendir(sluice_fs_t* fs, const char* path);
/* The next entry (d_name, d_type), valid until the next call; NULL at the
 * end (errno unchanged) or on error (errno set). */
SLUICE_EXPORT struct dirent* sluice_readdir(sluice_dir_t* dir);
SLUICE_EXPORT int sluice_closedir(sluice_dir_t* dir);

/* ---- Checkpoints: contexts, datasets, elements (sluice/dataset.h) -------
 * A context opens this rank's store once and keeps it; a dataset is a name
 * and an integer id >= 0; elements are named data inside one id. Closing
 * an id opened for writing commits it atomically: it exists for readers
 * only once every rank's close succeeded. Every call returns SLUICE_OK or
 * an error code, with sluice_errmsg(). Calls marked collective must be made
 * by every rank of the context, in the same order; sluice_init_mpi is in
 * sluice/c_mpi.h. Several contexts may live in one process. */
typedef struct sluice_context_t sluice_context_t;
typedef struct sluice_dataset_t sluice_dataset_t;
typedef struct sluice_element_t sluice_element_t;
typedef struct sluice_request_t sluice_request_t;

/* Ids to open for reading: the highest committed, the last committed. */
#define SLUICE_DATASET_ID_HIGHEST (-1)
#define SLUICE_DATASET_ID_NEWEST (-2)
/* Dataset open flags (one of). */
#define SLUICE_DATASET_READ 1
#define SLUICE_DATASET_WRITE 2 /* creates the id; a committed one is
                                  SLUICE_ALREADY_EXISTS */
/* Element kinds: one logical element all ranks write parts of at shared
 * offsets, or one element per rank. */
#define SLUICE_ELEMENT_SHARED 0
#define SLUICE_ELEMENT_UNIQUE 1
/* States of sluice_dataset_list. */
#define SLUICE_ID_COMMITTED 0
#define SLUICE_ID_RECLAIMED 1 /* found uncommitted, its data removed */

typedef struct sluice_dataset_id_info_t {
  int64_t id;
  int state;               /* SLUICE_ID_* */
  uint64_t bytes;          /* data of every element */
  int64_t commit_time_ns;  /* CLOCK_REALTIME of the commit (or reclaim) */
  int ranks;               /* ranks that wrote it */
  int writers;             /* stores that hold it: one a rank (basic) or
                              one a node (file_per_node) */
} sluice_dataset_id_info_t;

/* A context of one process (no MPI). `name`: letters, digits, '.', '_',
 * '-'; its data lives in DATA_ROOT/NAME (variable data_roots).
 * `config_file` may be NULL. On error *ctx is NULL. */
SLUICE_EXPORT int sluice_init_single(const char* name, const char* config_file,
                                     sluice_context_t** ctx);
/* Ends the context and frees it, even on error. Collective. */
SLUICE_EXPORT int sluice_fini(sluice_context_t* ctx);
/* Sets a configuration variable (sluice/config.h; docs/CONFIG.md) for what
 * the context does afterwards. The variables its store was opened with
 * (the store options, extent_bytes, data_roots) are fixed: an error. */
SLUICE_EXPORT int sluice_config_set(sluice_context_t* ctx, const char* name,
                                    const char* value);
/* The effective value of a variable for `dataset` (NULL: the context's),
 * into buf[0..cap) NUL-terminated; *len (may be NULL): its length. */
SLUICE_EXPORT int sluice_config_get(sluice_context_t* ctx, const char* name,
                                    const char* dataset, char* buf,
                                    size_t cap, size_t* len);

/* Opens id `id` of dataset `name`: SLUICE_DATASET_WRITE with id >= 0, or
 * SLUICE_DATASET_READ with id >= 0, SLUICE_DATASET_ID_HIGHEST or
 * SLUICE_DATASET_ID_NEWEST. Collective. */
SLUICE_EXPORT int sluice_dataset_open(sluice_context_t* ctx, const char* name,
                                      int64_t id, int flags,
                                      sluice_dataset_t** ds);
/* The id opened (HIGHEST and NEWEST resolved). */
SLUICE_EXPORT int sluice_dataset_id(const sluice_dataset_t* ds, int64_t* id);
/* Writing: waits for this rank's requests, closes its elements, makes its
 * data durable and commits the id if every rank did; otherwise every rank
 * gets the error naming the first failing rank, and the id does not exist.
 * Frees the handle, even on error. Collective. */
SLUICE_EXPORT int sluice_dataset_close(sluice_dataset_t* ds);
/* Removes a committed id (its record first, then every rank's data).
 * Collective. */
SLUICE_EXPORT int sluice_dataset_unlink(sluice_context_t* ctx,
                                        const char* name, int64_t id);
/* The ids of dataset `name`, ascending, into out[0..cap); *count is how
 * many there are (SLUICE_BUFFER_TOO_SMALL when more than cap). Local. */
SLUICE_EXPORT int sluice_dataset_list(sluice_context_t* ctx, const char* name,
                                      sluice_dataset_id_info_t* out,
                                      size_t cap, size_t* count);

/* Whether to write a checkpoint of dataset `name` now (*now = 1): none
 * written yet by this context, the job's end near (job_end_time,
 * job_end_margin), SIGUSR1 arrived, or, with mtbf set, Daly's optimum
 * interval for the measured cost reached (sluice/dataset.h says how).
 * Collective: every rank gets the same answer. */
SLUICE_EXPORT int sluice_dataset_should_checkpoint(sluice_context_t* ctx,
                                                   const char* name,
                                                   int* now);

/* Where the drain of a committed id to the next data root stands
 * (data_roots, stage_mode; docs/CONFIG.md). */
#define SLUICE_DRAIN_NONE 0     /* not drained (one root, disable, unknown) */
#define SLUICE_DRAIN_QUEUED 1   /* waiting for a drain thread or the end */
#define SLUICE_DRAIN_DRAINING 2 /* bytes_done of bytes_total durable there */
#define SLUICE_DRAIN_DURABLE 3  /* complete, verified, committed on `root` */
#define SLUICE_DRAIN_FAILED 4   /* error, message: why; the first copy stays */
#define SLUICE_DRAIN_SKIPPED 5  /* stage_mode auto: a newer id came first */
typedef struct sluice_drain_state_t {
  int phase;             /* SLUICE_DRAIN_* */
  int root;              /* index in data_roots of the destination, or -1 */
  uint64_t bytes_done;   /* this process's share, durable on the root */
  uint64_t bytes_total;
  uint64_t bytes_resumed; /* of bytes_done, found durable from an earlier,
                             interrupted drain (not copied again) */
  int error;             /* SLUICE_FAILED: the error's code */
  char message[256];     /* and its message (truncated), NUL-terminated */
} sluice_drain_state_t;
/* The drain of id `id` of dataset `name` as this process knows it. Local. */
SLUICE_EXPORT int sluice_dataset_drain_state(sluice_context_t* ctx,
                                             const char* name, int64_t id,
                                             sluice_drain_state_t* out);
/* Waits until every rank's share of the id is drained (or failed, or was
 * skipped); the returned code is the first failure's. Collective. */
SLUICE_EXPORT int sluice_dataset_drain_wait(sluice_context_t* ctx,
                                            const char* name, int64_t id,
                                            sluice_drain_state_t* out);

/* Performance variables: bytes and time of each phase. */
typedef struct sluice_phase_t {
  uint64_t calls;
  uint64_t bytes;
  uint64_t nanos;
} sluice_phase_t;
typedef struct sluice_perf_t {
  sluice_phase_t open;   /* dataset open */
  sluice_phase_t write;  /* element writes */
  sluice_phase_t sync;   /* close: every rank's data durable, agreed */
  sluice_phase_t commit; /* close: index gathered, commit record written */
  sluice_phase_t read;   /* element reads */
  sluice_phase_t close;  /* the whole close */
  /* Reading: reads served by a later data root's drained copy because
   * the first copy was missing or damaged. */
  uint64_t fallback_reads;
} sluice_perf_t;
/* The data root id `ds` is written to or read from, into buf[0..cap),
 * NUL-terminated; *len (may be NULL): its length. */
SLUICE_EXPORT int sluice_dataset_root(const sluice_dataset_t* ds, char* buf,
                                      size_t cap, size_t* len);
/* This rank's figures of id `id` of dataset `name`, once closed by this
 * context; with name NULL, the sum over every id it closed. */
SLUICE_EXPORT int sluice_perf_get(sluice_context_t* ctx, const char* name,
                                  int64_t id, sluice_perf_t* out);

/* Opens element `name` of kind SLUICE_ELEMENT_*; writing creates it. */
SLUICE_EXPORT int sluice_element_open(sluice_dataset_t* ds, const char* name,
                                      int kind, sluice_element_t** el);
/* Reading only: rank `rank`'s unique element (after a restart on another
 * number of ranks). */
SLUICE_EXPORT int sluice_element_open_rank(sluice_dataset_t* ds,
                                           const char* name, int rank,
                                           sluice_element_t** el);
/* Waits for the element's requests and frees the handle, even on error. */
SLUICE_EXPORT int sluice_element_close(sluice_element_t* el);
/* Writing: this rank's part so far; reading: the committed size. */
SLUICE_EXPORT int sluice_element_size(sluice_element_t* el, uint64_t* size);
SLUICE_EXPORT int sluice_element_write(sluice_element_t* el, uint64_t offset,
                                       const void* buf, size_t n);
/* `count` blocks of `block` bytes, one after the other in buf, to offsets
 * offset + i * stride (stride >= block). */
SLUICE_EXPORT int sluice_element_write_strided(sluice_element_t* el,
                                               uint64_t offset,
                                               const void* buf, size_t count,
                                               size_t block, uint64_t stride);
/* *got < n only past the element's end; holes read as zeros; bytes two
 * ranks wrote are SLUICE_CORRUPTION. */
SLUICE_EXPORT int sluice_element_read(sluice_element_t* el, uint64_t offset,
                                      void* buf, size_t n, size_t* got);
SLUICE_EXPORT int sluice_element_read_strided(sluice_element_t* el,
                                              uint64_t offset, void* buf,
                                              size_t count, size_t block,
                                              uint64_t stride, size_t* got);
/* Non-blocking forms: the buffer is used in place (not copied) and must
 * stay untouched until the request is done. Requests of one element run in
 * the order issued. */
SLUICE_EXPORT int sluice_element_write_nb(sluice_element_t* el,
                                          uint64_t offset, const void* buf,
                                          size_t n, sluice_request_t** req);
SLUICE_EXPORT int sluice_element_write_strided_nb(
    sluice_element_t* el, uint64_t offset, const void* buf, size_t count,
    size_t block, uint64_t stride, sluice_request_t** req);
SLUICE_EXPORT int sluice_element_read_nb(sluice_element_t* el, uint64_t offset,
                                         void* buf, size_t n,
                                         sluice_request_t** req);
SLUICE_EXPORT int sluice_element_read_strided_nb(
    sluice_element_t* el, uint64_t offset, void* buf, size_t count,
    size_t block, uint64_t stride, sluice_request_t** req);
/* Waits for *req, returns its outcome (*got: bytes moved; may be NULL),
 * frees it and sets *req to NULL. A NULL *req is done at once (SLUICE_OK,
 * *got = 0), as MPI_Wait of MPI_REQUEST_NULL. */
SLUICE_EXPORT int sluice_request_wait(sluice_request_t** req, size_t* got);
/* *done = 1 when finished (or *req NULL): then as sluice_request_wait.
 * Else *done = 0 and SLUICE_OK. */
SLUICE_EXPORT int sluice_request_test(sluice_request_t** req, int* done,
                                      size_t* got);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SLUICE_SLUICE_H_ */
