// StoreOptions: how a Sluice store (one LSM-tree per writer) is tuned.
//
// The defaults follow the LSMIO paper's tuning for write-once checkpoint data:
// no write-ahead log, no compression, no automatic compaction; the block
// cache, which LSMIO turns off, is sized to the tree's tables. Every option can also be set by name from a string
// (StoreOptions::Set, sluice_options_set in C), which is how configuration
// files, SLUICE_* environment variables and command-line tools reach them;
// an unknown name or a malformed value is an error, never ignored.
//
// Sizes accept the suffixes k, m, g (powers of 1024); booleans accept
// 1/0, true/false, on/off, yes/no.
//
// Thread-safety: a StoreOptions is a plain value; a store copies it at open.
#ifndef SLUICE_OPTIONS_H_
#define SLUICE_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/export.h"
#include "sluice/status.h"

namespace sluice {

enum class BackendKind : int {
  // For a new store: RocksDB. For an existing store: whatever it was created
  // with (recorded in its header).
  kDefault = 0,
  kRocksDB = 1,
  kLevelDB = 2,
};

SLUICE_EXPORT const char* BackendName(BackendKind kind);

// Where a store keeps its values.
enum class StoreLayout : int {
  // For a new store: kVlog. For an existing store: whatever it was created
  // with (recorded in its header).
  kDefault = 0,
  // Values inside the LSM-tree, as LSMIO keeps them: every value is copied
  // into the memtable and again into a table file at flush.
  kLsm = 1,
  // Values of at least vlog_min_value bytes appended to a value log (the
  // WiscKey design) through reused, aligned buffers with O_DIRECT; the tree
  // holds their locations. See docs/BENCHMARKS.md for what each costs.
  kVlog = 2,
};

SLUICE_EXPORT const char* LayoutName(StoreLayout layout);

struct SLUICE_EXPORT StoreOptions {
  // Which LSM-tree implementation holds the data. Opening an existing store
  // with an explicit backend other than the one it was created with is an
  // error.
  // Default: kDefault.
  BackendKind backend = BackendKind::kDefault;

  // Where values live (see StoreLayout). Opening an existing store with an
  // explicit layout other than the one it was created with is an error.
  // Default: kDefault.
  StoreLayout layout = StoreLayout::kDefault;

  // Layout vlog: values smaller than this stay in the tree.
  // Default: 4 KiB.
  size_t vlog_min_value = 4u << 10;

  // Layout vlog: a new value-log file is started at this size.
  // Default: 1 GiB.
  size_t vlog_file_bytes = 1u << 30;

  // Layout vlog: write and read the value log with O_DIRECT where the file
  // system supports it (tmpfs does not; the log then uses the page cache).
  // Default: true.
  bool vlog_direct_io = true;

  // Layout vlog, with vlog_direct_io: also read the value log with
  // O_DIRECT (read ahead by Sluice's own threads). False reads through the
  // page cache and the kernel's readahead, as unmodified programs expect
  // (the LD_PRELOAD interposer's default): repeated reads are then served
  // from memory. Writes stay O_DIRECT either way.
  // Default: true.
  bool vlog_direct_reads = true;

  // Layout vlog: write buffers of the value log, each write_buffer_size / 2
  // bytes. One fills while the others wait for, or are in, the background
  // writer, so a writer can run this many buffers minus one ahead of the
  // device. Each is allocated only when a write first needs it (none for a
  // store that only reads, renames or removes; the third and later for a
  // big file), and kept until the store closes. The LD_PRELOAD
  // interposer uses 8: a `cp` that alternates between reading its source
  // and writing its copy then keeps the device busy through its reads, as
  // the page cache's write-behind does for a plain file.
  // Default: 2 (2..64).
  int vlog_write_buffers = 2;

  // Create the store (and missing parent directories) when the path does not
  // exist or is an empty directory. When false, a missing store is NotFound.
  // Default: true.
  bool create_if_missing = true;

  // Open for reading only: takes a shared lock, so any number of readers may
  // open a store at once, but not while a writer has it open.
  // Default: false.
  bool read_only = false;

  // With read_only, on a RocksDB store: open it even while a writer has it
  // open, and take no lock (so the writer does not wait for this reader
  // either). The reader sees the store as the writer had last made it
  // durable (its last barrier or close) when the reader opened it; what
  // the writer does later is not seen. For tools that read finished files
  // while another process writes others (a shell pipeline); a restart that
  // must see complete checkpoints keeps this off and waits for the writers.
  // LevelDB stores lock as without it (LevelDB cannot be read while written).
  // Default: false.
  bool snapshot_reads = false;

  // Write-ahead log. Off, an update lives only in memory until the next
  // write barrier; a crash before it loses the updates since the last
  // barrier (the checkpoint is then incomplete, never half-read). On, every
  // update is also appended to a log: safer between barriers, and about half
  // the write bandwidth. LevelDB cannot turn its log off: with wal=false,
  // Sluice buffers LevelDB's updates in a write batch and writes the batch
  // at the barrier (or when it reaches write_buffer_size), as LSMIO does,
  // holding LevelDB's log records in memory until then (per log, up to
  // an eighth of write_buffer_size, at least 64 KiB; at most three logs).
  // Default: false.
  bool wal = false;

  // Each write is durable when the call returns (the log is fsync'ed).
  // Requires wal=true. Costly: one fsync per update.
  // Default: false.
  bool sync_writes = false;

  // Compress data blocks (RocksDB: LZ4, LevelDB: Snappy). Checkpoint data
  // of floating-point fields rarely compresses; it costs CPU on the write
  // path.
  // Default: false.
  bool compression = false;

  // Bytes of block cache for reads; 0 turns the cache off.
  // kBlockCacheAuto ("auto") sizes it, at each open, to the store's table
  // files (at least 1 MiB, at most 64 MiB) for layout vlog, where the tree
  // holds keys and value-log locations: about 0.5 % of the data at 16 KiB
  // values. A file read in an order other than its keys' (random reads,
  // a restart on another rank count) looks each extent up in a block of
  // its own; without a cache every look-up reads and checks a whole data
  // block (block_size) again. Memory is taken only as blocks are read.
  // Layout lsm, whose tables hold the data itself, read once: no cache.
  // Default: kBlockCacheAuto.
  static constexpr size_t kBlockCacheAuto = ~size_t{0};
  size_t block_cache_bytes = kBlockCacheAuto;

  // Bits per key of the Bloom filter in each table file; 0 writes none.
  // A lookup of a key that is not there then skips the table without
  // reading it. Without a block cache and with compaction off, every
  // level-0 table overlaps every other, and each lookup that misses would
  // otherwise read and check one data block from every table: the value log
  // looks up each key it replaces, so a writer looks up every new key.
  // Default: 10 (about 1% false positives).
  int bloom_bits = 10;

  // Background compaction. Checkpoint data is written once and read once;
  // compaction rewrites it for no gain. Off, write stalls on the number of
  // level-0 files are also turned off (RocksDB). LevelDB always compacts.
  // Default: false.
  bool auto_compaction = false;

  // With auto_compaction off (RocksDB): a writer that closes a store with
  // at least this many level-0 table files, all tables together no larger
  // than write_buffer_size, merges them into one. Each flush (each barrier,
  // each writer process) adds a table that overlaps every other; without
  // this, a store written by many short processes opens and merges ever
  // more of them. 0 = never.
  // Default: 16.
  int tidy_tables = 16;

  // Read table files through mmap (RocksDB). LevelDB always mmaps up to
  // 1000 table files and ignores this option.
  // Default: false.
  bool mmap_reads = false;

  // Write table files through mmap (RocksDB only).
  // Default: false.
  bool mmap_writes = false;

  // Size of the in-memory write buffer (the memtable): updates collect here
  // and reach the disk as one sorted table file when it fills. Larger means
  // larger sequential writes and more memory: a writer holds up to
  // max_write_buffers of them. With layout vlog it is also the value log's
  // buffer memory: two halves, one filling while the other is written.
  // Default: 32 MiB.
  size_t write_buffer_size = 32u << 20;

  // Number of write buffers a writer may hold (one filling, the others
  // being flushed in the background). RocksDB only; at least 2.
  // Default: 2.
  int max_write_buffers = 2;

  // Target size of a data block in table files. Values larger than a block
  // occupy one block of their own; small keys benefit from larger blocks
  // through a smaller index.
  // Default: 64 KiB.
  size_t block_size = 64u << 10;

  // Background threads that flush full write buffers to disk (RocksDB; the
  // pool is process-wide, so the largest value asked for wins). LevelDB has
  // one background thread and accepts only 1.
  // Default: 1.
  int flush_threads = 1;

  // Write table files with O_DIRECT (RocksDB), bypassing the page cache so
  // checkpoint data does not evict the application's memory.
  // Default: false.
  bool direct_io_flush = false;

  // Read table files with O_DIRECT (RocksDB). Excludes mmap_reads.
  // Default: false.
  bool direct_io_reads = false;

  // Key-value separation (RocksDB's integrated BlobDB, the WiscKey design):
  // values of at least min_blob_size go to append-only blob files and the
  // tree holds only their locations, so flushes copy less.
  // Default: false.
  bool blob_files = false;

  // Smallest value kept in a blob file when blob_files is on.
  // Default: 4 KiB.
  size_t min_blob_size = 4u << 10;

  // Size at which a blob file is closed and a new one started.
  // Default: 256 MiB.
  size_t blob_file_size = 256u << 20;

  // Bytes of asynchronous updates that may wait in the queue before an
  // asynchronous call blocks (bounds memory; the values are copied).
  // Default: 64 MiB.
  size_t async_queue_bytes = 64u << 20;

  // Whether Store::Open (and FileSystem::Open) complete these options from
  // the configuration (docs/CONFIG.md): each option the caller did not give
  // (see Given) takes the value of its SLUICE_<NAME> environment variable,
  // else of the configuration file SLUICE_CONFIG_FILE names ([global]
  // lines), else its default. A given option is never changed, and an
  // error in the environment or the file fails the open, naming the
  // variable. false: the options are used exactly as they are.
  // Default: true. The trade-off: a job can retune a program without
  // changing it (SLUICE_WRITE_BUFFER_SIZE=64m), and a stray SLUICE_*
  // setting can retune a program that did not expect it; a program that
  // must not be retuned sets its options by name or turns this off.
  bool use_configuration = true;

  // Sets one option by name, e.g. Set("write_buffer_size", "64m"), and
  // records it as given. Unknown names and malformed values are
  // InvalidArgument, and change nothing.
  Status Set(std::string_view name, std::string_view value);

  // Whether option `name` is given by the caller, so that the
  // configuration leaves it alone: set by name (Set, SetAll,
  // sluice_options_set), or holding a value other than its default. An
  // option assigned its default value directly cannot be told from one
  // never set: set it by name (or clear use_configuration) to keep it.
  bool Given(std::string_view name) const;

  // Sets options from "name=value" pairs separated by ',' or ';'.
  Status SetAll(std::string_view list);

  // Checks combinations (e.g. sync_writes without wal) before open.
  Status Validate() const;

  // Every option by name, with its current value, as "name=value" lines.
  std::string ToString() const;

  struct Info {
    const char* name;
    const char* help;
  };
  // Every settable option, in declaration order.
  static const std::vector<Info>& List();

 private:
  uint64_t set_by_name_ = 0;  // bit i: List()[i] was set by name
};

// Parses "64k", "32m", "1g", "4096" (powers of 1024). Used by every tool.
SLUICE_EXPORT Status ParseSize(std::string_view text, size_t* out);

}  // namespace sluice

#endif  // SLUICE_OPTIONS_H_
