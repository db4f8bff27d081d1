#include "sluice/stream.h"

#include <algorithm>
#include <cstring>

#include "fs/mount.h"

namespace sluice {

filebuf::filebuf() = default;
filebuf::~filebuf() { close(); }

bool filebuf::Fail(const Status& s) {
  status_ = s;
  return false;
}

filebuf* filebuf::open(const std::string& path, std::ios_base::openmode mode) {
  using std::ios_base;
  if (file_) {
    Fail(Status::InvalidArgument(path + ": stream already open"));
    return nullptr;
  }
  // std::basic_filebuf::open's table (C++17 [filebuf.members]).
  const ios_base::openmode m = mode & ~ios_base::ate & ~ios_base::binary;
  int flags;
  if (m == ios_base::out || m == (ios_base::out | ios_base::trunc)) {
    flags = kWrite | kCreate | kTruncate;
  } else if (m == ios_base::app || m == (ios_base::out | ios_base::app)) {
    flags = kWrite | kCreate | kAppend;
  } else if (m == ios_base::in) {
    flags = kRead;
  } else if (m == (ios_base::in | ios_base::out)) {
    flags = kReadWrite;
  } else if (m == (ios_base::in | ios_base::out | ios_base::trunc)) {
    flags = kReadWrite | kCreate | kTruncate;
  } else if (m == (ios_base::in | ios_base::app) ||
             m == (ios_base::in | ios_base::out | ios_base::app)) {
    flags = kReadWrite | kCreate | kAppend;
  } else {
    Fail(Status::InvalidArgument(path + ": invalid open mode"));
    return nullptr;
  }
  fs_ = fs::Mounted();
  if (!fs_) {
    Fail(Status::InvalidArgument("no Sluice file system is mounted (call "
                                 "sluice::fstream::initialize first)"));
    return nullptr;
  }
  Status s = fs_->OpenFile(path, flags, 0644, &file_);
  if (s.ok() && (mode & ios_base::ate)) {
    uint64_t pos;
    s = file_->Seek(0, SEEK_END, &pos);
  }
  if (!s.ok()) {
    file_.reset();
    fs_.reset();
    Fail(s);
    return nullptr;
  }
  put_.assign(kBufferSize, 0);
  get_.assign(kBufferSize, 0);
  fill_ = kBufferSize;
  setp(nullptr, nullptr);
  setg(nullptr, nullptr, nullptr);
  status_ = Status::OK();
  return this;
}

filebuf* filebuf::close() {
  if (!file_) return nullptr;
  bool ok = FlushPut();
  Status s = file_->Close();
  if (!s.ok()) ok = Fail(s);
  file_.reset();
  fs_.reset();
  setp(nullptr, nullptr);
  setg(nullptr, nullptr, nullptr);
  return ok ? this : nullptr;
}

// Writes the put area; leaves the buffer ready for more.
bool filebuf::FlushPut() {
  if (!file_ || pbase() == nullptr || pptr() == pbase()) return true;
  Status s = file_->Write(pbase(), static_cast<size_t>(pptr() - pbase()));
  setp(put_.data(), put_.data() + put_.size());
  return s.ok() || Fail(s);
}

filebuf::int_type filebuf::overflow(int_type c) {
  if (!file_) return traits_type::eof();
  if (gptr() != nullptr) {  // switch from reading: drop the get area
    uint64_t pos;
    Status s = file_->Seek(-(egptr() - gptr()), SEEK_CUR, &pos);
    setg(nullptr, nullptr, nullptr);
    if (!s.ok()) return Fail(s), traits_type::eof();
  }
  if (pbase() == nullptr) {
    setp(put_.data(), put_.data() + put_.size());
  } else if (!FlushPut()) {
    return traits_type::eof();
  }
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
  }
  return traits_type::not_eof(c);
}

std::streamsize filebuf::xsputn(const char* s, std::streamsize n) {
  if (!file_) return 0;
  if (static_cast<size_t>(n) < put_.size() / 2 && pbase() != nullptr &&
      epptr() - pptr() >= n) {
    memcpy(pptr(), s, static_cast<size_t>(n));
    pbump(static_cast<int>(n));
    return n;
  }
  if (pbase() == nullptr || gptr() != nullptr) {
    if (traits_type::eq_int_type(overflow(traits_type::eof()),
                                 traits_type::eof())) {
      return 0;
    }
  }
  if (!FlushPut()) return 0;
  if (static_cast<size_t>(n) >= put_.size() / 2) {  // large: straight through
    Status st = file_->Write(s, static_cast<size_t>(n));
    return st.ok() ? n : (Fail(st), 0);
  }
  memcpy(pptr(), s, static_cast<size_t>(n));
  pbump(static_cast<int>(n));
  return n;
}

filebuf::int_type filebuf::underflow() {
  if (!file_) return traits_type::eof();
  if (gptr() != nullptr && gptr() < egptr()) {
    return traits_type::to_int_type(*gptr());
  }
  if (pbase() != nullptr) {  // switch from writing
    if (!FlushPut()) return traits_type::eof();
    setp(nullptr, nullptr);
  }
  size_t got = 0;
  Status s = file_->Read(get_.data(), std::min(fill_, get_.size()), &got);
  if (!s.ok()) return Fail(s), traits_type::eof();
  fill_ = std::min(fill_ * 2, get_.size());
  if (got == 0) {
    setg(nullptr, nullptr, nullptr);
    return traits_type::eof();
  }
  setg(get_.data(), get_.data(), get_.data() + got);
  return traits_type::to_int_type(*gptr());
}

std::streamsize filebuf::xsgetn(char* s, std::streamsize n) {
  if (!file_) return 0;
  std::streamsize done = 0;
  if (gptr() != nullptr && gptr() < egptr()) {
    done = std::min<std::streamsize>(n, egptr() - gptr());
    memcpy(s, gptr(), static_cast<size_t>(done));
    gbump(static_cast<int>(done));
  }
  if (done == n) return n;
  // Straight through for a large read, or, after a seek, one as large as
  // the next fill would be: the buffer would only add a copy, or read what
  // a reader at random offsets discards.
  if (static_cast<size_t>(n - done) >= std::min(fill_, get_.size() / 2)) {
    if (pbase() != nullptr) {
      if (!FlushPut()) return done;
      setp(nullptr, nullptr);
    }
    setg(nullptr, nullptr, nullptr);
    size_t got = 0;
    Status st = file_->Read(s + done, static_cast<size_t>(n - done), &got);
    if (!st.ok()) return Fail(st), done;
    return done + static_cast<std::streamsize>(got);
  }
  return done + std::streambuf::xsgetn(s + done, n - done);
}

int filebuf::sync() {
  if (!file_) return -1;
  return FlushPut() ? 0 : -1;
}

filebuf::pos_type filebuf::seekoff(off_type off, std::ios_base::seekdir dir,
                                   std::ios_base::openmode) {
  if (!file_) return pos_type(off_type(-1));
  // The file's offset, corrected by what the buffers hold.
  off_type pending = 0;
  if (gptr() != nullptr) pending = -(egptr() - gptr());
  if (!FlushPut()) return pos_type(off_type(-1));
  uint64_t pos = 0;
  Status s;
  if (dir == std::ios_base::cur && off == 0) {
    // tellg, tellp: where the stream is; what the read buffer holds stays.
    s = file_->Seek(0, SEEK_CUR, &pos);
    if (!s.ok()) {
      Fail(s);
      return pos_type(off_type(-1));
    }
    return pos_type(static_cast<off_type>(pos) + pending);
  }
  fill_ = kSeekFill;
  if (dir == std::ios_base::cur) {
    s = file_->Seek(pending + off, SEEK_CUR, &pos);
  } else {
    s = file_->Seek(off, dir == std::ios_base::beg ? SEEK_SET : SEEK_END, &pos);
  }
  setg(nullptr, nullptr, nullptr);
  if (!s.ok()) {
    Fail(s);
    return pos_type(off_type(-1));
  }
  return pos_type(static_cast<off_type>(pos));
}

filebuf::pos_type filebuf::seekpos(pos_type pos, std::ios_base::openmode w) {
  return seekoff(off_type(pos), std::ios_base::beg, w);
}

// ---- streams -----------------------------------------------------------

Status stream_base::initialize(const std::string& root, int writer,
                               const FsOptions& options) {
  return fs::Mount(options, root, writer);
}

Status stream_base::cleanup() { return fs::Unmount(); }

Status stream_base::write_barrier() {
  std::shared_ptr<FileSystem> fs = fs::Mounted();
  if (!fs) return Status::InvalidArgument("no Sluice file system is mounted");
  return fs->Sync();
}

#define SLUICE_STREAM_OPEN_CLOSE(cls, extra)                          \
  void cls::open(const std::string& path, std::ios_base::openmode m) { \
    if (buf_.open(path, m | (extra)) == nullptr) {                    \
      setstate(std::ios_base::failbit);                               \
    } else {                                                          \
      clear();                                                        \
    }                                                                 \
  }                                                                   \
  void cls::close() {                                                 \
    if (buf_.close() == nullptr) setstate(std::ios_base::failbit);    \
  }

SLUICE_STREAM_OPEN_CLOSE(ifstream, std::ios_base::in)
SLUICE_STREAM_OPEN_CLOSE(ofstream, std::ios_base::out)
SLUICE_STREAM_OPEN_CLOSE(fstream, std::ios_base::openmode())

}  // namespace sluice
