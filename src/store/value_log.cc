#include "store/value_log.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "util/coding.h"
#include "util/env.h"
#include "util/hash.h"
#include "util/posix.h"

namespace sluice {
namespace {

constexpr size_t kHeaderBytes = ValueLog::kAlign;
// Reads through a bounce buffer go in pieces of at most this many bytes.
constexpr size_t kBounceBytes = 8u << 20;
// The file is allocated ahead of the writes by at least this much.
constexpr uint64_t kPreallocBytes = 64u << 20;
constexpr uint64_t kReserveStep = 64u << 10;

uint64_t AlignDown(uint64_t v) { return v & ~uint64_t{ValueLog::kAlign - 1}; }
uint64_t AlignUp(uint64_t v) { return AlignDown(v + ValueLog::kAlign - 1); }

// The numbers of the log files (NNNNNNNN.vlog) in `dir`, ascending.
Status ListLogFiles(const std::string& dir, std::vector<uint32_t>* out) {
  out->clear();
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return posix::Error("cannot list", dir, errno);
  while (struct dirent* e = readdir(d)) {
    unsigned n = 0;
    char tail[8] = {0};
    if (sscanf(e->d_name, "%8u.%5s", &n, tail) == 2 &&
        strcmp(tail, "vlog") == 0) {
      out->push_back(n);
    }
  }
  closedir(d);
  std::sort(out->begin(), out->end());
  return Status::OK();
}

// Buffers of 2 MiB or more are aligned to 2 MiB and asked for huge pages
// (THP "madvise" mode, Debian's default). O_DIRECT builds its requests from
// the buffer's pages, at most max_segments (254 on virtio) per request: from
// 4 KiB pages a 16 MiB write went to the device as requests of 0.5-1 MiB,
// from 2 MiB pages as requests of max_sectors_kb (4 MiB), as the kernel's
// own writeback sends them. A refused madvise leaves small pages.
constexpr size_t kHugePage = 2u << 20;
char* AllocAligned(size_t n) {
  void* p = nullptr;
  const size_t align = n >= kHugePage ? kHugePage : ValueLog::kAlign;
  if (posix_memalign(&p, align, n) != 0) return nullptr;
  if (n >= kHugePage) madvise(p, n & ~(kHugePage - 1), MADV_HUGEPAGE);
  return static_cast<char*>(p);
}

// The big buffers (write buffers, read-ahead windows) outlive the logs that
// use them: a process that writes a checkpoint every few minutes opens a
// store each time, and faulting tens of MiB of fresh pages in at every open
// costs more than the open itself (on a VM that hands freed memory back to
// its host, several times more). Closed logs return their buffers here; up
// to kPoolBytes stay, faulted in, for the next log of the same size.
constexpr size_t kPoolBytes = 64u << 20;
std::mutex pool_mu;
std::vector<std::pair<char*, size_t>>* pool = nullptr;  // GUARDED_BY(pool_mu)
size_t pool_bytes = 0;                                  // GUARDED_BY(pool_mu)

// A buffer of n aligned bytes with its pages faulted in, or nullptr.
char* TakeBuffer(size_t n) {
  {
    std::lock_guard<std::mutex> lock(pool_mu);
    if (pool != nullptr) {
      for (size_t i = 0; i < pool->size(); ++i) {
        if ((*pool)[i].second != n) continue;
        char* p = (*pool)[i].first;
        (*pool)[i] = pool->back();
        pool->pop_back();
        pool_bytes -= n;
        return p;
      }
    }
  }
  char* p = AllocAligned(n);
  if (p != nullptr) memset(p, 0, n);  // fault the pages in once, reuse
  return p;
}

void GiveBuffer(char* p, size_t n) {
  if (p == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(pool_mu);
    if (pool_bytes + n <= kPoolBytes) {
      if (pool == nullptr) pool = new std::vector<std::pair<char*, size_t>>;
      pool->emplace_back(p, n);
      pool_bytes += n;
      return;
    }
  }
  free(p);
}

// Reads up to `n` bytes at `offset`, stopping early only at the end of the
// file; *got says how many. Returns 0 or the errno of a failed read.
int ReadUpTo(int fd, char* buf, size_t n, uint64_t offset, size_t* got) {
  return Env::Default()->ReadFull(fd, buf, n, static_cast<off_t>(offset), got);
}

// Opens with O_DIRECT when asked and possible; *direct says which it got.
int OpenMaybeDirect(const std::string& path, int flags, bool want_direct,
                    bool* direct) {
  if (want_direct) {
    int fd =
        Env::Default()->Open(path.c_str(), flags | O_DIRECT | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EINVAL) {
      *direct = fd >= 0;
      return fd;
    }
  }
  *direct = false;
  return Env::Default()->Open(path.c_str(), flags | O_CLOEXEC, 0644);
}

}  // namespace

Status ValueLog::Open(const Options& options, const std::string& dir,
                      std::unique_ptr<ValueLog>* out) {
  out->reset();
  std::unique_ptr<ValueLog> log(new ValueLog(options, dir));
  log->buf_bytes_ = std::max<size_t>(AlignUp(options.buffer_bytes), 1u << 20);
  if (options.read_only) {
    log->direct_ = options.direct_io;  // per file, at first read
    *out = std::move(log);
    return Status::OK();
  }
  Status s = posix::CreateDirs(dir);
  if (!s.ok()) return s;
  std::vector<uint32_t> files;
  s = ListLogFiles(dir, &files);
  if (!s.ok()) return s;
  const uint32_t last = files.empty() ? 0 : files.back();
  // Each buffer is allocated when first needed (the first at the first
  // value): a writer that stores no value (an rm, a sync, a mkdir) faults
  // in none of their pages, which cost it more than the rest of its open.
  log->buffers_.resize(static_cast<size_t>(std::max(options.write_buffers, 2)));
  {
    // The file is made at the first Append: a writer that stores no value
    // (an rm, a mkdir) leaves no empty file behind, and pays no sync for it.
    std::lock_guard<std::mutex> lock(log->mu_);
    log->file_ = last + 1;
    log->writing_file_.store(last + 1);
  }
  // Without it, Reclaim cannot tell whether readers are about: it then
  // gives nothing back.
  log->readers_fd_ =
      Env::Default()->Open(posix::JoinPath(dir, kReadersFileName).c_str(),
                           O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
  log->writer_ = std::thread([l = log.get()] { l->WriterLoop(); });
  *out = std::move(log);
  return Status::OK();
}

ValueLog::~ValueLog() {
  Close();
  for (Buffer& b : buffers_) GiveBuffer(b.data, buf_bytes_);
  for (Window& w : windows_) GiveBuffer(w.data, buf_bytes_);
  for (Slot& sl : slots_) ReleaseBuffer(&sl.buf);
  for (char* p : spare_) free(p);
}

std::string ValueLog::FileName(uint32_t file) const {
  char name[32];
  snprintf(name, sizeof name, "%08u.vlog", file);
  return posix::JoinPath(dir_, name);
}

Status ValueLog::StartFile(uint32_t file) {
  const std::string path = FileName(file);
  bool direct = false;
  int fd = OpenMaybeDirect(path, O_WRONLY | O_CREAT | O_EXCL, options_.direct_io,
                           &direct);
  if (fd < 0) return posix::Error("cannot create value log", path, errno);
  // The header goes out through the fill buffer, aligned like all writes.
  Status s = NeedBufferLocked(fill_);
  if (!s.ok()) {
    Env::Default()->Close(fd);
    Env::Default()->Unlink(path.c_str());
    return s;
  }
  const std::string header = EncodeValueLogHeader(file);
  char* b = buffers_[fill_].data;
  memcpy(b, header.data(), header.size());
  ssize_t w = Env::Default()->Pwrite(fd, b, kHeaderBytes, 0);
  if (w != static_cast<ssize_t>(kHeaderBytes)) {
    int err = w < 0 ? errno : ENOSPC;
    Env::Default()->Close(fd);
    Env::Default()->Unlink(path.c_str());
    return posix::Error("cannot write the header of value log", path, err);
  }
  s = posix::SyncDir(dir_);
  if (!s.ok()) {
    Env::Default()->Close(fd);
    return s;
  }
  direct_ = direct;
  fd_ = fd;
  file_ = file;
  fill_off_ = kHeaderBytes;
  fill_used_ = 0;
  allocated_ = 0;
  ahead_ = 0;
  dirty_ = true;
  written_end_.store(kHeaderBytes);
  writing_file_.store(file);
  return Status::OK();
}

Status ValueLog::Append(std::string_view value, ValuePointer* p) {
  if (value.size() > UINT32_MAX) {
    return Status::InvalidArgument("value of " + std::to_string(value.size()) +
                                   " bytes is too large for the value log");
  }
  const uint64_t data_sum = XXH3_64bits(value.data(), value.size());
  std::lock_guard<std::mutex> appending(append_mu_);
  std::unique_lock<std::mutex> lock(mu_);
  if (closed_ || options_.read_only) {
    return Status::InvalidArgument("value log " + dir_ +
                                   " is closed or read-only");
  }
  if (!error_.ok()) return error_;
  Status s;
  if (fd_ < 0) {
    s = StartFile(file_);
    if (!s.ok()) {
      error_ = s;
      return s;
    }
  }
  if (fill_off_ + fill_used_ > kHeaderBytes &&
      fill_off_ + fill_used_ + value.size() > options_.file_bytes) {
    s = FinishFileLocked(&lock);
    if (s.ok()) s = StartFile(file_ + 1);
    if (!s.ok()) {
      if (error_.ok()) error_ = s;
      return s;
    }
  }
  // Room for the value (and the padding of the block it ends in) is
  // allocated before the value is taken: a full file system refuses it
  // here, with nothing taken and nothing lost, rather than fail a
  // background write of values already accepted.
  s = ReserveLocked(AlignUp(fill_off_ + fill_used_ + value.size()));
  if (!s.ok()) return s;
  p->file = file_;
  p->offset = fill_off_ + fill_used_;
  p->length = static_cast<uint32_t>(value.size());
  p->checksum = data_sum ^ ValueLocationMix(p->file, p->offset);
  const char* src = value.data();
  size_t n = value.size();
  while (n > 0) {
    const size_t take = std::min(n, buf_bytes_ - fill_used_);
    memcpy(buffers_[fill_].data + fill_used_, src, take);
    fill_used_ += take;
    src += take;
    n -= take;
    if (fill_used_ == buf_bytes_) {
      s = SubmitFillLocked(&lock);
      if (!s.ok()) return s;
    }
  }
  dirty_ = true;
  return Status::OK();
}

// Keeps the file's allocated size ahead of the writes, so the writes
// overwrite allocated space rather than extend the file (ext4 serialises
// extending direct writes and updates its journal for each). The file is
// cut back to its data at Close.
void ValueLog::PreallocateLocked(uint64_t end) {
  if (end <= ahead_ || allocated_ == UINT64_MAX) return;
  const uint64_t want = std::max<uint64_t>(end, ahead_ + kPreallocBytes);
  ahead_ = want;  // a full file system is not asked again before this
  if (want <= allocated_) return;
  if (Env::Default()->Fallocate(fd_, 0, static_cast<off_t>(allocated_),
                                static_cast<off_t>(want - allocated_)) == 0) {
    allocated_ = want;
  } else if (errno != ENOSPC && errno != EDQUOT) {
    allocated_ = UINT64_MAX;  // unsupported: plain (extending) writes
  }
  // Full: ReserveLocked allocates what each value needs, or refuses it.
}

Status ValueLog::ReserveLocked(uint64_t end) {
  if (end <= allocated_) return Status::OK();  // UINT64_MAX: no fallocate
  // A little ahead (a process killed leaves no more than that allocated
  // past its data), or, when that does not fit, just what is needed;
  // PreallocateLocked keeps the file further ahead as buffers go out.
  const uint64_t step = AlignUp(end) + kReserveStep;
  for (uint64_t upto : {step, end}) {
    if (Env::Default()->Fallocate(fd_, 0, static_cast<off_t>(allocated_),
                                  static_cast<off_t>(upto - allocated_)) == 0) {
      allocated_ = upto;
      return Status::OK();
    }
    const int err = errno;
    if (err != ENOSPC && err != EDQUOT) {
      allocated_ = UINT64_MAX;  // unsupported: plain (extending) writes
      return Status::OK();
    }
  }
  return posix::Error("cannot allocate room in value log", FileName(file_),
                      ENOSPC);
}

Status ValueLog::NeedBufferLocked(int i) {
  Buffer& b = buffers_[static_cast<size_t>(i)];
  if (b.data == nullptr) b.data = TakeBuffer(buf_bytes_);
  if (b.data != nullptr) return Status::OK();
  return Status::NoSpace("cannot allocate the value log's write buffer (" +
                         std::to_string(buf_bytes_) + " bytes) in " + dir_);
}

Status ValueLog::SubmitFillLocked(std::unique_lock<std::mutex>* lock) {
  int other = (fill_ + 1) % static_cast<int>(buffers_.size());
  Status s = NeedBufferLocked(other);
  if (!s.ok()) {
    // The first write to run this far ahead: one more buffer. Without
    // memory for it, the ring stops at the buffers it has, but it needs
    // two: with one, the caller would fill the buffer being written.
    if (other < 2) return s;
    buffers_.resize(static_cast<size_t>(other));
    other = 0;
  }
  cv_.wait(*lock, [&] { return !buffers_[other].busy || !error_.ok(); });
  if (!error_.ok()) return error_;
  PreallocateLocked(fill_off_ + buf_bytes_);
  buffers_[fill_].busy = true;
  jobs_.push_back(Job{fill_, fd_, fill_off_, buf_bytes_, fill_off_ + buf_bytes_});
  ++in_flight_;
  cv_.notify_all();
  fill_ = other;
  fill_off_ += buf_bytes_;
  fill_used_ = 0;
  return Status::OK();
}

Status ValueLog::WaitIdleLocked(std::unique_lock<std::mutex>* lock) {
  cv_.wait(*lock, [&] { return in_flight_ == 0; });
  return error_;
}

Status ValueLog::WriteTailLocked(std::unique_lock<std::mutex>* lock) {
  Status s = WaitIdleLocked(lock);
  if (!s.ok() || fill_used_ == 0) return s;
  char* b = buffers_[fill_].data;
  const size_t padded = AlignUp(fill_used_);
  memset(b + fill_used_, 0, padded - fill_used_);
  s = WriteJob(Job{fill_, fd_, fill_off_, padded, fill_off_ + fill_used_});
  if (!s.ok()) {
    error_ = s;
    return s;
  }
  written_end_.store(fill_off_ + fill_used_);
  // Keep the partial last block at the buffer's start: it is written again,
  // completed, with the next buffer.
  const size_t full = AlignDown(fill_used_);
  if (full > 0) {
    memmove(b, b + full, fill_used_ - full);
    fill_off_ += full;
    fill_used_ -= full;
  }
  return Status::OK();
}

Status ValueLog::TrimLocked() {
  if (allocated_ == 0 || fd_ < 0) return Status::OK();
  if (Env::Default()->Ftruncate(
          fd_, static_cast<off_t>(AlignUp(written_end_.load()))) != 0) {
    return posix::Error("cannot trim value log", FileName(file_), errno);
  }
  return Status::OK();
}

Status ValueLog::FinishFileLocked(std::unique_lock<std::mutex>* lock) {
  Status s = WriteTailLocked(lock);
  if (s.ok()) s = TrimLocked();
  if (s.ok() && Env::Default()->Fdatasync(fd_) != 0) {
    s = posix::Error("cannot sync value log", FileName(file_), errno);
  }
  Env::Default()->Close(fd_);
  fd_ = -1;
  if (s.ok()) dirty_ = false;
  return s;
}

Status ValueLog::Sync() {
  std::lock_guard<std::mutex> appending(append_mu_);
  std::unique_lock<std::mutex> lock(mu_);
  if (options_.read_only) return Status::OK();
  // Closed: everything appended was synced then, unless that failed (a
  // tree flushing after it must not take its locations for durable).
  if (closed_) return error_.ok() ? close_error_ : error_;
  if (!dirty_) return error_;
  Status s = WriteTailLocked(&lock);
  if (s.ok() && Env::Default()->Fdatasync(fd_) != 0) {
    s = posix::Error("cannot sync value log", FileName(file_), errno);
    error_ = s;
  }
  if (s.ok()) dirty_ = false;
  return s;
}

void ValueLog::WriterLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stop_ and nothing left
    Job job = jobs_.front();
    jobs_.pop_front();
    lock.unlock();
    Status s = WriteJob(job);
    lock.lock();
    buffers_[job.buffer].busy = false;
    --in_flight_;
    if (!s.ok() && error_.ok()) error_ = s;
    if (s.ok() && job.valid_end > written_end_.load()) {
      written_end_.store(job.valid_end);
    }
    cv_.notify_all();
  }
}

Status ValueLog::WriteJob(const Job& job) {
  const char* p = buffers_[job.buffer].data;
  size_t done = 0;
  while (done < job.length) {
    ssize_t w = Env::Default()->Pwrite(job.fd, p + done, job.length - done,
                                       job.offset + done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      return posix::Error("cannot write value log", FileName(file_),
                          w < 0 ? errno : ENOSPC);
    }
    done += static_cast<size_t>(w);
  }
  return Status::OK();
}

Status ValueLog::GetReadFile(uint32_t file, ReadFile* rf) {
  std::lock_guard<std::mutex> lock(files_mu_);
  auto it = files_.find(file);
  if (it != files_.end()) {
    *rf = it->second;
    return Status::OK();
  }
  const std::string path = FileName(file);
  ReadFile f;
  f.fd = OpenMaybeDirect(path, O_RDONLY,
                         options_.direct_io && options_.direct_reads, &f.direct);
  if (f.fd < 0) {
    if (errno == ENOENT) {
      return Status::Corruption("value log " + path +
                                " is missing: the store is damaged");
    }
    return posix::Error("cannot open value log", path, errno);
  }
  char* h = AllocAligned(kHeaderBytes);
  ssize_t r = h ? Env::Default()->Pread(f.fd, h, kHeaderBytes, 0) : -1;
  Status s = r < 0 ? posix::Error("cannot read value log", path, errno)
                   : CheckValueLogHeader(h, static_cast<size_t>(r), file, path);
  free(h);
  if (!s.ok()) {
    Env::Default()->Close(f.fd);
    return s;
  }
  files_[file] = f;
  *rf = f;
  return Status::OK();
}

Status ValueLog::ShortRead(uint32_t file, uint64_t at, uint64_t offset,
                           size_t n) const {
  return Status::Corruption(
      "value log " + FileName(file) + " is truncated: it ends at byte " +
      std::to_string(at) + ", inside the value at offset " +
      std::to_string(offset) + " (length " + std::to_string(n) +
      "): its write was not synced before the store was left, or the file "
      "was cut short");
}

Status ValueLog::PRead(const ReadFile& rf, uint32_t file, uint64_t offset,
                       size_t n, char* out) {
  auto short_read = [&](uint64_t at) { return ShortRead(file, at, offset, n); };
  // Through the read-ahead windows: any file of a read-only log, and a
  // writer's files before the one it writes (finished, so they no longer
  // change under a window).
  if (rf.direct && (options_.read_only || file < writing_file_.load())) {
    Status s;
    if (ReadAhead(rf, file, offset, n, out, &s)) return s;
  }
  if (!rf.direct) {
    size_t got = 0;
    if (int err = ReadUpTo(rf.fd, out, n, offset, &got)) {
      return posix::Error("cannot read value log", FileName(file), err);
    }
    return got < n ? short_read(offset + got) : Status::OK();
  }
  char* bounce = nullptr;
  {
    std::lock_guard<std::mutex> lock(files_mu_);
    if (!spare_.empty()) {
      bounce = spare_.back();
      spare_.pop_back();
    }
  }
  if (bounce == nullptr) bounce = AllocAligned(kBounceBytes);
  if (bounce == nullptr) return Status::NoSpace("cannot allocate a read buffer");
  Status s;
  size_t done = 0;
  while (s.ok() && done < n) {
    const uint64_t at = offset + done;
    const uint64_t a0 = AlignDown(at);
    const size_t want = static_cast<size_t>(
        std::min<uint64_t>(AlignUp(offset + n) - a0, kBounceBytes));
    size_t got = 0;
    if (int err = ReadUpTo(rf.fd, bounce, want, a0, &got)) {
      s = posix::Error("cannot read value log", FileName(file), err);
      break;
    }
    const size_t skip = static_cast<size_t>(at - a0);
    if (got <= skip) {
      s = short_read(a0 + got);
      break;
    }
    const size_t take = std::min(n - done, got - skip);
    memcpy(out + done, bounce + skip, take);
    done += take;
    if (got < want && done < n) s = short_read(a0 + got);
  }
  {
    std::lock_guard<std::mutex> lock(files_mu_);
    spare_.push_back(bounce);
  }
  return s;
}

// Serves [offset, offset + n) from the windows, piece by piece (a value may
// straddle two), loading a window on this thread on a miss, and starts
// loading the window after each one used. False when a window cannot be
// had (the caller then reads directly, and reports any error).
bool ValueLog::ReadAhead(const ReadFile& rf, uint32_t file, uint64_t offset,
                         size_t n, char* out, Status* s) {
  std::unique_lock<std::mutex> lock(ra_mu_);
  if (!loader_.joinable()) {
    for (Window& w : windows_) {
      if (w.data == nullptr) w.data = TakeBuffer(buf_bytes_);
      if (w.data == nullptr) return false;
    }
    loader_ = std::thread([this] { LoaderLoop(); });
  }
  // A read that does not go on from the last one is served from a window
  // that holds it, but loads none.
  const bool follows = file == ra_next_file_ && offset == ra_next_;
  ra_next_file_ = file;
  ra_next_ = offset + n;
  // A window holds `at` (or will, once loaded).
  auto holds = [&](const Window& w, uint64_t at) {
    return w.file == file && w.offset <= at &&
           at < w.offset + (w.loading ? buf_bytes_ : w.length);
  };
  size_t done = 0;
  while (done < n) {
    const uint64_t at = offset + done;
    int hit = -1;
    for (int i = 0; i < 2; ++i) {
      if (holds(windows_[i], at)) hit = i;
    }
    if (hit >= 0 && windows_[hit].loading) {
      ra_cv_.wait(lock, [&] { return !windows_[hit].loading; });
      if (!holds(windows_[hit], at)) hit = -1;  // the file ended before
    }
    if (hit < 0 && !follows && done == 0) return false;  // read directly
    if (hit < 0) {
      hit = windows_[0].used <= windows_[1].used ? 0 : 1;
      if (windows_[hit].loading) {
        ra_cv_.wait(lock, [&] { return !windows_[hit].loading; });
      }
      Window& w = windows_[hit];
      w.file = file;
      w.offset = AlignDown(at);
      w.length = 0;
      size_t got = 0;
      ReadUpTo(rf.fd, w.data, buf_bytes_, w.offset, &got);  // errors: below
      w.length = got;
      if (!holds(w, at)) {
        w.length = 0;
        return false;  // an error or the end: the direct path says which
      }
    }
    Window& w = windows_[hit];
    w.used = ++ra_clock_;
    const size_t take =
        std::min<uint64_t>(n - done, w.offset + w.length - at);
    memcpy(out + done, w.data + (at - w.offset), take);
    done += take;
    // Start the next window unless it is there or coming.
    Window& next = windows_[hit ^ 1];
    const uint64_t next_off = w.offset + w.length;
    if (w.length == buf_bytes_ && ra_request_ < 0 && !next.loading &&
        !(next.file == file && next.offset == next_off)) {
      next.file = file;
      next.offset = next_off;
      next.length = 0;
      next.loading = true;
      ra_request_ = hit ^ 1;
      ra_fd_ = rf.fd;
      ra_cv_.notify_all();
    }
  }
  *s = Status::OK();
  return true;
}

void ValueLog::LoaderLoop() {
  std::unique_lock<std::mutex> lock(ra_mu_);
  for (;;) {
    ra_cv_.wait(lock, [&] { return ra_stop_ || ra_request_ >= 0; });
    if (ra_stop_) return;
    Window& w = windows_[ra_request_];
    const int fd = ra_fd_;
    const uint64_t off = w.offset;
    char* data = w.data;
    ra_request_ = -1;
    lock.unlock();
    size_t got = 0;
    ReadUpTo(fd, data, buf_bytes_, off, &got);
    lock.lock();
    w.length = got;  // a failed load leaves a short window: readers miss
    w.loading = false;
    ra_cv_.notify_all();
  }
}

Status ValueLog::CheckExtent(const ValuePointer& p) {
  if (p.offset > UINT64_MAX - p.length) {
    return Status::Corruption("value log " + dir_ + ": bad value pointer (offset " +
                              std::to_string(p.offset) + ")");
  }
  const uint64_t end = p.offset + p.length;
  if (!options_.read_only && p.file == writing_file_.load()) {
    if (end <= written_end_.load()) return Status::OK();  // written
    // What the writer appended, in flight or still in its buffers.
    std::lock_guard<std::mutex> lock(mu_);
    if (p.file == file_ && end <= fill_off_ + fill_used_) return Status::OK();
  }
  ReadFile rf;
  Status s = GetReadFile(p.file, &rf);
  if (!s.ok()) return s;
  const bool fixed = CanReadAhead(p.file);
  if (fixed && end <= rf.known_size) return Status::OK();
  struct stat st;
  if (fstat(rf.fd, &st) != 0) {
    return posix::Error("cannot read value log", FileName(p.file), errno);
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (fixed) {
    std::lock_guard<std::mutex> lock(files_mu_);
    auto it = files_.find(p.file);
    if (it != files_.end() && it->second.fd == rf.fd) {
      it->second.known_size = size;
    }
  }
  if (end > size) return ShortRead(p.file, size, p.offset, p.length);
  return Status::OK();
}

Status ValueLog::Read(const ValuePointer& p, char* out) {
  if (p.file == 0 || p.offset < kHeaderBytes) {
    return Status::Corruption("value log " + dir_ + ": bad value pointer (file " +
                              std::to_string(p.file) + ", offset " +
                              std::to_string(p.offset) + ")");
  }
  ReadFile rf;
  Status s = GetReadFile(p.file, &rf);
  if (!s.ok()) return s;
  const uint64_t end = p.offset + p.length;
  size_t from_file = p.length;
  if (!options_.read_only && p.file == writing_file_.load() &&
      end > written_end_.load()) {
    // Recent: wait for the writes under way; what is still in the fill
    // buffer is copied from memory.
    std::unique_lock<std::mutex> lock(mu_);
    s = WaitIdleLocked(&lock);
    if (!s.ok()) return s;
    if (p.file == file_ && end > fill_off_) {
      const uint64_t start = std::max<uint64_t>(p.offset, fill_off_);
      if (end > fill_off_ + fill_used_) {
        return Status::Corruption("value log " + FileName(p.file) +
                                  ": a pointer past the end of the log");
      }
      memcpy(out + (start - p.offset), buffers_[fill_].data + (start - fill_off_),
             end - start);
      from_file = static_cast<size_t>(start - p.offset);
    }
  }
  if (from_file > 0) s = PRead(rf, p.file, p.offset, from_file, out);
  if (!s.ok()) return s;
  return CheckValue(p, out);
}

Status ValueLog::CheckValue(const ValuePointer& p, const char* data) const {
  return CheckValueHash(p, XXH3_64bits(data, p.length));
}

Status ValueLog::CheckValueHash(const ValuePointer& p, uint64_t hash) const {
  // ValueChecksum, from the hash of the bytes.
  if ((hash ^ ValueLocationMix(p.file, p.offset)) != p.checksum) {
    return Status::Corruption("value log " + FileName(p.file) +
                              ": the value at offset " +
                              std::to_string(p.offset) + " (length " +
                              std::to_string(p.length) +
                              ") fails its checksum");
  }
  return Status::OK();
}

namespace {
// Read buffers come in whole 64 KiB, so that buffers of values of about
// one size are interchangeable (and the pool keeps them), and a 1 MiB
// extent (1 MiB and its header, aligned) does not take 2 MiB.
size_t ReadBufferBytes(size_t n) {
  constexpr size_t kUnit = 64u << 10;
  return (n + kUnit - 1) / kUnit * kUnit;
}
}  // namespace

void ValueLog::ReleaseBuffer(ReadBuffer* b) {
  GiveBuffer(b->data, b->cap);
  b->data = nullptr;
  b->cap = 0;
}

Status ValueLog::ReadView(const ValuePointer& p, ReadBuffer* b,
                          std::string_view* out) {
  *out = {};
  if (p.file == 0 || p.offset < kHeaderBytes) return Read(p, nullptr);
  ReadFile rf;
  Status s = GetReadFile(p.file, &rf);
  if (!s.ok()) return s;
  const uint64_t begin = AlignDown(p.offset);
  const size_t length = static_cast<size_t>(AlignUp(p.offset + p.length) - begin);
  // Through a slot: the value's aligned range read whole, maybe ahead.
  const bool slot = !rf.direct && CanReadAhead(p.file) && p.length >= kSlotMinBytes;
  const size_t need = slot ? length : p.length;
  if (b->cap < need) {
    s = CheckExtent(p);  // before a buffer is sized by it
    if (!s.ok()) return s;
    ReleaseBuffer(b);
    const size_t cap = ReadBufferBytes(need);
    b->data = TakeBuffer(cap);
    if (b->data == nullptr) return Status::NoSpace("cannot allocate a read buffer");
    b->cap = cap;
  }
  if (!slot) {
    s = Read(p, b->data);
    if (s.ok()) *out = std::string_view(b->data, p.length);
    return s;
  }
  bool have = false;
  bool hashed = false;
  uint64_t hash = 0;
  {
    std::unique_lock<std::mutex> lock(pf_mu_);
    for (Slot& sl : slots_) {
      if (sl.state == Slot::kFree || sl.file != p.file || sl.begin != begin ||
          sl.length != length) {
        continue;
      }
      // Another reader may free and reuse the slot meanwhile: it is ours
      // only while its queue number stays.
      const uint64_t seq = sl.seq;
      // Another reader of the same log may also free it unread (below):
      // wake then too, and read the value here.
      pf_cv_.wait(lock, [&] {
        return sl.seq != seq || sl.state == Slot::kReady || sl.state == Slot::kFree;
      });
      if (sl.seq != seq || sl.state != Slot::kReady) break;
      if (sl.got == length && sl.buf.cap >= b->cap) {
        std::swap(b->data, sl.buf.data);
        std::swap(b->cap, sl.buf.cap);
        have = true;
        hashed = sl.hashed && sl.value_offset == p.offset &&
                 sl.value_length == p.length;
        hash = sl.value_hash;
      }
      sl.state = Slot::kFree;
      break;
    }
    // Values read ahead that the reader went past will not be wanted.
    bool freed = false;
    for (Slot& sl : slots_) {
      if (sl.state == Slot::kReady && sl.file == p.file && sl.begin < begin) {
        sl.state = Slot::kFree;
        freed = true;
      }
    }
    if (freed) pf_cv_.notify_all();  // a reader may be waiting for one of them
    // Going on in the log's order: from where this reader's last value
    // ended, or a value or two further (two readers taking turns, as a
    // file's reader and its read-ahead do).
    const bool onward = b->last_file == p.file && p.offset >= b->last_end &&
                        p.offset - b->last_end <= 2 * uint64_t{p.length};
    if (have || onward) {
      QueueAheadLocked(rf, p.file, p.offset + p.length, p.length);
    }
  }
  b->last_file = p.file;
  b->last_end = p.offset + p.length;
  if (!have) {
    size_t got = 0;
    if (int err = ReadUpTo(rf.fd, b->data, length, begin, &got)) {
      return posix::Error("cannot read value log", FileName(p.file), err);
    }
    if (got < p.offset - begin + p.length) {
      return ShortRead(p.file, begin + got, p.offset, p.length);
    }
  }
  const char* data = b->data + (p.offset - begin);
  s = hashed ? CheckValueHash(p, hash) : CheckValue(p, data);
  if (s.ok()) *out = std::string_view(data, p.length);
  return s;
}

// Queues reads of the values assumed to follow, from `offset`, each
// `length` bytes, into the free slots.
void ValueLog::QueueAheadLocked(const ReadFile& rf, uint32_t file,
                                uint64_t offset, size_t length) {
  if (pf_stop_ || length == 0) return;
  const uint64_t first_seq = pf_seq_;  // slots queued before this call
  const int ahead = AheadFor(length);
  for (int k = 0; k < ahead; ++k, offset += length) {
    const uint64_t begin = AlignDown(offset);
    const size_t alen = static_cast<size_t>(AlignUp(offset + length) - begin);
    bool queued = false;
    Slot* free_slot = nullptr;
    for (Slot& sl : slots_) {
      if (sl.state != Slot::kFree && sl.file == file && sl.begin == begin &&
          sl.length == alen) {
        queued = true;
      }
      if (sl.state == Slot::kFree && free_slot == nullptr) free_slot = &sl;
    }
    if (queued) continue;
    if (free_slot == nullptr) {
      // Reuse the oldest value read ahead and not taken (another file's, or
      // another reader's), but never one this call has just queued.
      for (Slot& sl : slots_) {
        if (sl.state == Slot::kReady && sl.seq <= first_seq &&
            (free_slot == nullptr || sl.seq < free_slot->seq)) {
          free_slot = &sl;
        }
      }
      if (free_slot == nullptr) return;
    }
    Slot& sl = *free_slot;
    sl.state = Slot::kQueued;
    sl.file = file;
    sl.fd = rf.fd;
    sl.begin = begin;
    sl.length = alen;
    sl.got = 0;
    sl.seq = ++pf_seq_;
    sl.value_offset = offset;
    sl.value_length = length;
    sl.hashed = false;
    if (prefetchers_.empty()) {
      for (int i = 0; i < kPrefetchThreads; ++i) {
        prefetchers_.emplace_back([this] { PrefetchLoop(); });
      }
    }
    pf_cv_.notify_all();
  }
}

void ValueLog::PrefetchLoop() {
  std::unique_lock<std::mutex> lock(pf_mu_);
  for (;;) {
    Slot* job = nullptr;
    pf_cv_.wait(lock, [&] {
      for (Slot& sl : slots_) {
        if (sl.state == Slot::kQueued && (job == nullptr || sl.seq < job->seq)) {
          job = &sl;
        }
      }
      return pf_stop_ || job != nullptr;
    });
    if (pf_stop_) return;
    job->state = Slot::kLoading;
    if (job->buf.cap < job->length) {
      ReleaseBuffer(&job->buf);
      const size_t cap = ReadBufferBytes(job->length);
      job->buf.data = TakeBuffer(cap);
      job->buf.cap = job->buf.data ? cap : 0;
    }
    const int fd = job->fd;
    const uint64_t begin = job->begin;
    const size_t length = job->buf.data ? job->length : 0;
    char* data = job->buf.data;
    const uint64_t voff = job->value_offset;
    const size_t vlen = job->value_length;
    lock.unlock();
    size_t got = 0;
    if (length > 0 && ReadUpTo(fd, data, length, begin, &got) != 0) got = 0;
    // The checksum of the value assumed there, while this thread has it in
    // cache; the reader compares it if the value is the one it wants.
    const bool hashed = got == length && voff - begin + vlen <= got;
    const uint64_t hash = hashed ? XXH3_64bits(data + (voff - begin), vlen) : 0;
    lock.lock();
    job->got = got;  // short or failed: the reader reads it again itself
    job->hashed = hashed;
    job->value_hash = hash;
    job->state = Slot::kReady;
    pf_cv_.notify_all();
  }
}

Status ValueLog::Close() {
  Status s;
  {
    std::lock_guard<std::mutex> appending(append_mu_);
    std::unique_lock<std::mutex> lock(mu_);
    if (closed_) return Status::OK();
    if (!options_.read_only) {
      s = dirty_ || allocated_ != 0 ? FinishFileLocked(&lock) : error_;
    }
    close_error_ = s;
    closed_ = true;
    stop_ = true;
    cv_.notify_all();
  }
  if (writer_.joinable()) writer_.join();
  {
    std::unique_lock<std::mutex> lock(ra_mu_);
    ra_cv_.wait(lock, [&] {
      return !windows_[0].loading && !windows_[1].loading;
    });
    ra_stop_ = true;
    ra_cv_.notify_all();
  }
  if (loader_.joinable()) loader_.join();
  {
    std::lock_guard<std::mutex> lock(pf_mu_);
    pf_stop_ = true;
    pf_cv_.notify_all();
  }
  for (std::thread& t : prefetchers_) t.join();
  prefetchers_.clear();
  if (fd_ >= 0) Env::Default()->Close(fd_);
  fd_ = -1;
  {
    std::lock_guard<std::mutex> lock(reclaim_mu_);
    if (readers_fd_ >= 0) Env::Default()->Close(readers_fd_);
    readers_fd_ = -1;
  }
  std::lock_guard<std::mutex> lock(files_mu_);
  for (auto& [n, f] : files_) Env::Default()->Close(f.fd);
  files_.clear();
  return s;
}

int ValueLog::PinForReading(const std::string& dir) {
  const std::string path = posix::JoinPath(dir, kReadersFileName);
  // Created if need be: a writer that starts later must see the pin.
  int fd =
      Env::Default()->Open(path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    fd = Env::Default()->Open(path.c_str(), O_RDONLY | O_CLOEXEC,
                              0);  // read-only fs
  if (fd < 0) return -1;
  while (Env::Default()->Flock(fd, LOCK_SH) != 0) {
    if (errno == EINTR) continue;
    // No flock here: a writer cannot take its exclusive lock either, and
    // then gives nothing back.
    break;
  }
  return fd;
}

void ValueLog::PunchLocked(uint32_t file, uint64_t begin, uint64_t end,
                           int* fd, uint32_t* fd_file, uint64_t* freed) {
  begin = std::max<uint64_t>(AlignUp(begin), kHeaderBytes);
  end = AlignDown(end);
  if (reclaim_unsupported_ || begin >= end) return;
  if (*fd < 0 || *fd_file != file) {
    if (*fd >= 0) Env::Default()->Close(*fd);
    *fd = Env::Default()->Open(FileName(file).c_str(), O_WRONLY | O_CLOEXEC, 0);
    *fd_file = file;
    if (*fd < 0) return;
  }
  // Counted by the blocks the file loses: a range punched before (or never
  // allocated) frees nothing.
  struct stat before, after;
  const bool counted = fstat(*fd, &before) == 0;
  if (Env::Default()->Fallocate(*fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                                static_cast<off_t>(begin),
                                static_cast<off_t>(end - begin)) == 0) {
    if (counted && fstat(*fd, &after) == 0 && after.st_blocks < before.st_blocks) {
      *freed += static_cast<uint64_t>(before.st_blocks - after.st_blocks) * 512;
    }
  } else if (errno == EOPNOTSUPP || errno == ENOSYS) {
    reclaim_unsupported_ = true;
  }
}

namespace {

void SortByPlace(std::vector<ValuePointer>* v) {
  std::sort(v->begin(), v->end(), [](const ValuePointer& a, const ValuePointer& b) {
    return a.file != b.file ? a.file < b.file : a.offset < b.offset;
  });
}

}  // namespace

uint64_t ValueLog::Reclaim(std::vector<ValuePointer>* dead) {
  if (dead->empty() || options_.read_only) return 0;
  std::lock_guard<std::mutex> lock(reclaim_mu_);
  if (reclaim_unsupported_ || readers_fd_ < 0) {
    dead->clear();
    return 0;
  }
  if (Env::Default()->Flock(readers_fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) dead->clear();  // no flock
    return 0;  // pinned: later
  }
  SortByPlace(dead);
  uint64_t freed = 0;
  int fd = -1;
  uint32_t fd_file = 0;
  // Values appended one after another are adjacent: merged, the blocks
  // they share are punched too.
  uint32_t file = 0;
  uint64_t begin = 0, end = 0;
  bool open_range = false;
  for (const ValuePointer& p : *dead) {
    if (open_range && p.file == file && p.offset <= end) {
      end = std::max<uint64_t>(end, p.offset + p.length);
      continue;
    }
    if (open_range) PunchLocked(file, begin, end, &fd, &fd_file, &freed);
    file = p.file, begin = p.offset, end = p.offset + p.length;
    open_range = true;
  }
  if (open_range) PunchLocked(file, begin, end, &fd, &fd_file, &freed);
  if (fd >= 0) Env::Default()->Close(fd);
  Env::Default()->Flock(readers_fd_, LOCK_UN);
  dead->clear();
  return freed;
}

Status ValueLog::ReclaimAllBut(
    const std::function<Status(std::vector<ValuePointer>*)>& live,
    uint64_t* bytes) {
  *bytes = 0;
  if (options_.read_only) {
    return Status::InvalidArgument("value log " + dir_ + " is read-only");
  }
  std::lock_guard<std::mutex> lock(reclaim_mu_);
  if (readers_fd_ < 0) {
    return Status::NotSupported("value log " + dir_ + ": no " +
                                kReadersFileName + " file to lock readers out");
  }
  if (Env::Default()->Flock(readers_fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return Status::Busy("value log " + dir_ +
                          ": a reader has the store open; try again after it ends");
    }
    return posix::Error("cannot lock the readers out of", dir_, errno);
  }
  std::vector<ValuePointer> keep;
  Status s = live(&keep);
  // Each file's end: what a writer wrote of its current file; the size of
  // every other file.
  std::map<uint32_t, uint64_t> ends;
  std::vector<uint32_t> files;
  if (s.ok()) s = ListLogFiles(dir_, &files);
  for (size_t f = 0; s.ok() && f < files.size(); ++f) {
    const uint32_t n = files[f];
    struct stat st;
    if (stat(FileName(n).c_str(), &st) != 0) continue;
    uint64_t end = static_cast<uint64_t>(st.st_size);
    if (n == writing_file_.load()) end = std::min(end, written_end_.load());
    ends[n] = end;
  }
  if (s.ok()) {
    SortByPlace(&keep);
    size_t i = 0;
    int fd = -1;
    uint32_t fd_file = 0;
    for (const auto& [file, end] : ends) {
      while (i < keep.size() && keep[i].file < file) ++i;
      uint64_t at = kHeaderBytes;  // the first byte not known to be live
      for (; i < keep.size() && keep[i].file == file; ++i) {
        const ValuePointer& p = keep[i];
        // The gap before it; a block it shares with the gap stays.
        if (p.offset > at) PunchLocked(file, at, p.offset, &fd, &fd_file, bytes);
        at = std::max<uint64_t>(at, p.offset + p.length);
      }
      if (end > at) PunchLocked(file, at, end, &fd, &fd_file, bytes);
    }
    if (fd >= 0) Env::Default()->Close(fd);
  }
  Env::Default()->Flock(readers_fd_, LOCK_UN);
  return s;
}

}  // namespace sluice
