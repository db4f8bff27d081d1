// ValueLog: the append-only value log of a store with layout "vlog" (the
// WiscKey design): large values are appended here, and the LSM-tree keeps
// only their locations (ValuePointer), so a flush of the tree copies a few
// bytes per value instead of the value.
//
// Writes go through aligned, reused, pre-faulted buffers (a ring of at least
// two: one fills while the others are written in order by a background
// thread) and reach the file with O_DIRECT where the file system allows it
// (tmpfs does not: the log then writes through the page cache and
// fdatasyncs at Sync). Sync
// writes the partial tail, waits for every write and fdatasyncs, so a
// barrier waits only for what is left.
//
// Files: DIR/NNNNNNNN.vlog, numbered from 1; a writer starts a new file at
// its first value after every open and when a file reaches file_bytes.
//
// Space: values are never moved. The space of values no key points at any
// more (overwritten or deleted, the change durable) is given back to the
// file system by punching holes over the whole 4 KiB blocks they cover
// (Reclaim). A reader that opens the tree without the store lock (a
// snapshot reader) may still read such values, so it pins the log first
// (PinForReading: a shared flock on DIR/READERS), and Reclaim does nothing
// while any pin is held; the ranges wait for a later call. Ranges still
// waiting when the writer closes, or dropped by a process that died before
// its next barrier, stay allocated until ReclaimAllBut (a file system
// whose fallocate cannot punch holes keeps everything).
//
// File format: value_log_format.h.
//
// Thread-safety: every method may be called concurrently, except Close.
#ifndef SLUICE_STORE_VALUE_LOG_H_
#define SLUICE_STORE_VALUE_LOG_H_

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "sluice/status.h"
#include "store/value_log_format.h"

namespace sluice {

class ValueLog {
 public:
  struct Options {
    bool read_only = false;
    // Try O_DIRECT (falls back to buffered I/O where unsupported).
    bool direct_io = true;
    // With direct_io: read with O_DIRECT too (else through the page cache).
    bool direct_reads = true;
    // Bytes of each write buffer (rounded up to 4 KiB); also the read-ahead
    // window for reads of finished files.
    size_t buffer_bytes = 16u << 20;
    // Write buffers, at least 2: one fills while the others are queued for
    // or in the background writer. Each is allocated when first needed (none
    // by a writer that stores no value).
    int write_buffers = 2;
    // A new file is started when one reaches this size.
    uint64_t file_bytes = 1ull << 30;
  };
  static constexpr size_t kAlign = kValueLogHeaderBytes;
  static constexpr uint32_t kFormatVersion = kValueLogFormatVersion;

  // `dir` holds the log files (created when writable).
  static Status Open(const Options& options, const std::string& dir,
                     std::unique_ptr<ValueLog>* out);
  ~ValueLog();

  // Copies `value` into the log; *p says where it went.
  Status Append(std::string_view value, ValuePointer* p);
  // Makes every appended value durable; blocks until it is on disk.
  Status Sync();
  // Reads the value `p` points at into `out` (resized to p.length) and
  // checks it. A mismatch or a missing range is Corruption naming the file
  // and offset.
  Status Read(const ValuePointer& p, char* out);
  // Corruption when `p` reaches past what the log holds (a damaged or
  // crafted pointer): for a reader to call before it sizes a buffer by it.
  Status CheckExtent(const ValuePointer& p);
  // An aligned buffer a reader keeps for ReadView (and gives back with
  // ReleaseBuffer). ReadView may exchange it for one it read ahead.
  struct ReadBuffer {
    char* data = nullptr;
    size_t cap = 0;
    // Where the reader's last value ended: a reader whose next value
    // starts there (or a value or two further) goes on in the log's
    // order, and is read ahead.
    uint32_t last_file = 0;
    uint64_t last_end = 0;
  };
  static void ReleaseBuffer(ReadBuffer* b);
  // Reads and checks the value `p` points at, like Read, into `b`; *out is
  // the value, valid while `b` is unchanged. Read with O_DIRECT, every
  // value goes as Read reads it: through the read-ahead windows, large
  // requests that hold many values, for a reader going on in the log's
  // order (one O_DIRECT read per value, even two in flight, reads a disk
  // at a fraction of what one large request does). Through the page cache,
  // where the file can be read ahead (a read-only log, or a writer's
  // finished file), a value of kSlotMinBytes or more is read straight into
  // the buffer (a smaller one as Read reads it, through the windows); once
  // the reader goes on in the log's order
  // (this value starts where its last ended, as a scan of a file written
  // sequentially does), the values that follow (assumed back to back with
  // `p`) are read and hashed ahead on background threads, and a hit swaps
  // buffers, no copy. A reader that jumps about (a file written or read at
  // random offsets) reads each value alone.
  Status ReadView(const ValuePointer& p, ReadBuffer* b, std::string_view* out);
  // Syncs and releases the files. Idempotent.
  Status Close();

  // Gives back the space of the values in *dead, which no key points at
  // any more and whose dropping is durable: holes are punched over the
  // whole blocks they cover (neighbouring values, adjacent in the file,
  // are merged first). Returns the bytes freed, and empties *dead; while
  // a reader pins the log it does nothing and leaves *dead as it is.
  uint64_t Reclaim(std::vector<ValuePointer>* dead);
  // Gives back every range of the log that no pointer `live` returns refers
  // to: the space of values dropped by a process that died before its
  // barrier, or held by a reader when their writer closed. `live` lists the
  // pointers of the whole tree; it runs while the log is locked against
  // readers, and no value may be appended meanwhile. Busy (and nothing
  // done) while a reader pins the log. *bytes: the bytes freed.
  Status ReclaimAllBut(
      const std::function<Status(std::vector<ValuePointer>*)>& live,
      uint64_t* bytes);
  // Pins the log in `dir` against Reclaim until the returned descriptor is
  // closed (-1: nothing to pin, as when `dir` does not exist). Taken by a
  // read-only opener before it opens the tree.
  static int PinForReading(const std::string& dir);
  static constexpr char kReadersFileName[] = "READERS";

  const std::string& dir() const { return dir_; }
  bool direct_io() const { return direct_; }

 private:
  struct Buffer {
    char* data = nullptr;
    bool busy = false;  // being written by the writer thread
  };
  struct Job {
    int buffer;
    int fd;
    uint64_t offset;  // aligned
    size_t length;    // aligned (padded) bytes to write
    uint64_t valid_end;  // file offset up to which the data is real
  };
  struct ReadFile {
    int fd = -1;
    bool direct = false;
    // The size CheckExtent found, for a file that no longer changes
    // (CanReadAhead): a pointer inside it needs no second fstat.
    uint64_t known_size = 0;
  };

  ValueLog(const Options& options, std::string dir)
      : options_(options), dir_(std::move(dir)) {}
  std::string FileName(uint32_t file) const;
  // Write buffer i, allocated at its first use; NoSpace if it cannot be.
  Status NeedBufferLocked(int i);
  Status StartFile(uint32_t file);  // requires mu_
  Status SubmitFillLocked(std::unique_lock<std::mutex>* lock);
  Status WaitIdleLocked(std::unique_lock<std::mutex>* lock);
  Status WriteTailLocked(std::unique_lock<std::mutex>* lock);
  Status FinishFileLocked(std::unique_lock<std::mutex>* lock);
  // Allocates the file up to `end` (fallocate), so that the background
  // writes of what is taken cannot find the file system full; NoSpace,
  // with nothing changed, when it is.
  Status ReserveLocked(uint64_t end);
  void PreallocateLocked(uint64_t end);
  Status TrimLocked();
  // Punches [begin, end) of `file`, shrunk to whole blocks past the header;
  // *fd caches the file open for it (*fd_file its number). reclaim_mu_ held.
  void PunchLocked(uint32_t file, uint64_t begin, uint64_t end, int* fd,
                   uint32_t* fd_file, uint64_t* freed);
  void WriterLoop();
  Status WriteJob(const Job& job);
  Status GetReadFile(uint32_t file, ReadFile* rf);
  // Corruption: the file ends at `at`, inside the value [offset, offset + n).
  Status ShortRead(uint32_t file, uint64_t at, uint64_t offset, size_t n) const;
  Status PRead(const ReadFile& rf, uint32_t file, uint64_t offset, size_t n,
               char* out);

  // Read-ahead for sequential reads with O_DIRECT of a read-only log, or of
  // a writer's finished files: two aligned windows; a read served from one
  // starts the load of the window after it on a background thread, so the
  // device works while the caller copies and checks.
  struct Window {
    uint32_t file = 0;
    uint64_t offset = 0;
    size_t length = 0;  // bytes valid
    char* data = nullptr;
    bool loading = false;
    uint64_t used = 0;  // for replacement: higher is more recent
  };
  bool ReadAhead(const ReadFile& rf, uint32_t file, uint64_t offset, size_t n,
                 char* out, Status* s);
  void LoaderLoop();
  // ReadView's read-ahead (slots, below) needs only a file that no longer
  // changes: any file of a read-only log, a writer's finished ones. It is
  // for reads through the page cache (the interposer's): the prefetch
  // threads' preads copy from the cache, and the copy and the hash leave
  // the reader's thread (cat and cp out of the store ran 1.6x and 1.2x
  // longer without). O_DIRECT reads go through the windows instead.
  bool CanReadAhead(uint32_t file) const {
    return options_.read_only || file < writing_file_.load();
  }
  Status CheckValue(const ValuePointer& p, const char* data) const;
  // The same check, given the XXH3 of the value's bytes.
  Status CheckValueHash(const ValuePointer& p, uint64_t hash) const;

  // ReadView's read-ahead: whole values (their aligned ranges), each read
  // into a buffer of its own by the prefetch thread.
  struct Slot {
    enum State { kFree, kQueued, kLoading, kReady };
    State state = kFree;
    uint32_t file = 0;
    int fd = -1;
    uint64_t begin = 0;  // aligned range [begin, begin + length)
    size_t length = 0;
    size_t got = 0;  // bytes read (short: the end of the file, or an error)
    uint64_t seq = 0;  // queue order
    // The value assumed to be there, and the XXH3 of its bytes as read
    // (hashed by the prefetch thread: ReadView then only compares).
    uint64_t value_offset = 0;
    size_t value_length = 0;
    bool hashed = false;
    uint64_t value_hash = 0;
    ReadBuffer buf;
  };
  // Reads ahead: kMinAhead values, or more while they fit in kAheadBytes
  // (up to kSlots), kPrefetchThreads at a time (the device is faster with
  // more than one read in flight). Small values get the deeper lead: a
  // caller that writes what it reads (cp out of the store) stalls in its
  // writes now and then, and four 1 MiB values did not cover the stall.
  static constexpr int kSlots = 8;
  // Smaller values are read through the read-ahead windows (PRead), one
  // large read for many of them, rather than a slot, one read each: read
  // ahead one by one, 16 KiB values kept the device at a few thousand
  // reads a second.
  static constexpr size_t kSlotMinBytes = 256u << 10;
  static constexpr int kMinAhead = 4;
  static constexpr size_t kAheadBytes = 8u << 20;
  static constexpr int kPrefetchThreads = 2;
  static int AheadFor(size_t length) {
    const size_t fit = length > 0 ? (kAheadBytes + length - 1) / length : kSlots;
    return static_cast<int>(
        std::min<size_t>(kSlots, std::max<size_t>(kMinAhead, fit)));
  }
  void QueueAheadLocked(const ReadFile& rf, uint32_t file, uint64_t offset,
                        size_t length);
  void PrefetchLoop();
  std::mutex pf_mu_;
  std::condition_variable pf_cv_;
  Slot slots_[kSlots];    // GUARDED_BY(pf_mu_)
  uint64_t pf_seq_ = 0;   // GUARDED_BY(pf_mu_)
  bool pf_stop_ = false;  // GUARDED_BY(pf_mu_)
  std::vector<std::thread> prefetchers_;

  const Options options_;
  const std::string dir_;

  std::mutex ra_mu_;
  std::condition_variable ra_cv_;
  Window windows_[2];            // GUARDED_BY(ra_mu_)
  uint64_t ra_clock_ = 0;        // GUARDED_BY(ra_mu_)
  int ra_request_ = -1;          // GUARDED_BY(ra_mu_): window to load
  int ra_fd_ = -1;               // GUARDED_BY(ra_mu_): its file
  // Where the last read through the windows ended: only a read that goes
  // on from it loads a window (a random reader would discard the rest).
  uint32_t ra_next_file_ = 0;    // GUARDED_BY(ra_mu_)
  uint64_t ra_next_ = 0;         // GUARDED_BY(ra_mu_)
  bool ra_stop_ = false;         // GUARDED_BY(ra_mu_)
  std::thread loader_;
  bool direct_ = false;
  size_t buf_bytes_ = 0;

  // Held by whatever changes where the log writes (Append, Sync, Close)
  // for its whole call, outside mu_: Append waits for a free buffer with
  // mu_ released, and a Sync (a barrier, or the tree's own flush) that ran
  // meanwhile moved the fill buffer under it, so that the value's rest
  // went to the wrong offset and an old buffer was written over the next
  // one. Readers take only mu_.
  std::mutex append_mu_;
  std::mutex mu_;
  Status close_error_;  // GUARDED_BY(mu_): how Close ended
  std::condition_variable cv_;
  std::vector<Buffer> buffers_;  // GUARDED_BY(mu_): a ring
  int fill_ = 0;                 // GUARDED_BY(mu_): buffer being filled
  size_t fill_used_ = 0;         // GUARDED_BY(mu_)
  uint64_t fill_off_ = 0;        // GUARDED_BY(mu_): file offset of fill start
  uint32_t file_ = 0;            // GUARDED_BY(mu_): file being written
  int fd_ = -1;                  // GUARDED_BY(mu_)
  uint64_t ahead_ = 0;           // GUARDED_BY(mu_): PreallocateLocked's mark
  uint64_t allocated_ = 0;       // GUARDED_BY(mu_): preallocated up to
  std::deque<Job> jobs_;         // GUARDED_BY(mu_)
  int in_flight_ = 0;            // GUARDED_BY(mu_)
  Status error_;                 // GUARDED_BY(mu_): sticky write error
  bool stop_ = false;            // GUARDED_BY(mu_)
  bool closed_ = false;          // GUARDED_BY(mu_)
  bool dirty_ = false;           // GUARDED_BY(mu_): written since last sync
  // Bytes of the current file below which the data is in the file.
  std::atomic<uint64_t> written_end_{0};
  std::atomic<uint32_t> writing_file_{0};
  std::thread writer_;
  // DIR/READERS (a writer's), locked exclusively while Reclaim punches.
  int readers_fd_ = -1;
  std::mutex reclaim_mu_;
  bool reclaim_unsupported_ = false;  // GUARDED_BY(reclaim_mu_)

  std::mutex files_mu_;
  std::map<uint32_t, ReadFile> files_;  // GUARDED_BY(files_mu_)
  std::vector<char*> spare_;            // GUARDED_BY(files_mu_): read buffers
};

}  // namespace sluice

#endif  // SLUICE_STORE_VALUE_LOG_H_
