// The stream API: C++ iostreams over files in Sluice (LSMIO's FStream).
//
//   sluice::fstream::initialize("/scratch/ckpt", rank);   // once
//   sluice::ofstream out("/step42/field.dat");
//   out.write(data, n);                   // or out << ...; std::copy(...)
//   out.close();
//   sluice::fstream::write_barrier();     // durable
//   sluice::fstream::cleanup();
//
// sluice::filebuf is a std::streambuf over a sluice::File, so formatted I/O,
// iterators, seekp/seekg, tellp/tellg, flush, rdbuf, good/fail/eof all work
// as with std::fstream. Streams use the file system the statics below
// mount for the whole process (a mount of its own, apart from the handles
// sluice_mount gives in C); paths are inside it.
//
// Thread-safety: as std::fstream: one stream per thread; the statics are
// thread-safe.
#ifndef SLUICE_STREAM_H_
#define SLUICE_STREAM_H_

#include <ios>
#include <istream>
#include <memory>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

#include "sluice/export.h"
#include "sluice/fs.h"

namespace sluice {

class SLUICE_EXPORT filebuf : public std::streambuf {
 public:
  // Bytes buffered between the stream and the file.
  static constexpr size_t kBufferSize = 64u << 10;
  // What the first fill of the read buffer after a seek reads: a reader at
  // random offsets would discard the rest (each further fill doubles, up
  // to kBufferSize, while the reads go on from there).
  static constexpr size_t kSeekFill = 4u << 10;

  filebuf();
  ~filebuf() override;
  filebuf(const filebuf&) = delete;
  filebuf& operator=(const filebuf&) = delete;

  // Opens `path` with std::fstream's mode rules; null on failure (the
  // reason is in status()).
  filebuf* open(const std::string& path, std::ios_base::openmode mode);
  bool is_open() const { return file_ != nullptr; }
  // Writes buffered data; null on failure.
  filebuf* close();
  // The last error of this buffer (OK if none).
  const Status& status() const { return status_; }

 protected:
  int_type overflow(int_type c) override;
  int_type underflow() override;
  int sync() override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  std::streamsize xsgetn(char* s, std::streamsize n) override;
  pos_type seekoff(off_type off, std::ios_base::seekdir dir,
                   std::ios_base::openmode which) override;
  pos_type seekpos(pos_type pos, std::ios_base::openmode which) override;

 private:
  bool FlushPut();
  bool Fail(const Status& s);

  std::shared_ptr<FileSystem> fs_;
  std::unique_ptr<File> file_;
  std::vector<char> put_, get_;
  size_t fill_ = kBufferSize;  // the next fill of get_
  Status status_;
};

// The statics of LSMIO's FStream: they mount and unmount the streams' file
// system, one per process, and make it durable.
class SLUICE_EXPORT stream_base {
 public:
  // Mounts the file system in directory `root` as `writer` (its MPI rank,
  // or 0; FileSystem::kReader to read every writer's files).
  static Status initialize(const std::string& root, int writer = 0,
                           const FsOptions& options = FsOptions());
  // Writes and closes everything, unmounts.
  static Status cleanup();
  // Makes everything written so far durable.
  static Status write_barrier();
};

class SLUICE_EXPORT ifstream : public std::istream, public stream_base {
 public:
  ifstream() : std::istream(&buf_) {}
  explicit ifstream(const std::string& path,
                    std::ios_base::openmode mode = std::ios_base::in)
      : std::istream(&buf_) {
    open(path, mode);
  }
  void open(const std::string& path,
            std::ios_base::openmode mode = std::ios_base::in);
  bool is_open() const { return buf_.is_open(); }
  void close();
  filebuf* rdbuf() const { return const_cast<filebuf*>(&buf_); }

 private:
  filebuf buf_;
};

class SLUICE_EXPORT ofstream : public std::ostream, public stream_base {
 public:
  ofstream() : std::ostream(&buf_) {}
  explicit ofstream(const std::string& path,
                    std::ios_base::openmode mode = std::ios_base::out)
      : std::ostream(&buf_) {
    open(path, mode);
  }
  void open(const std::string& path,
            std::ios_base::openmode mode = std::ios_base::out);
  bool is_open() const { return buf_.is_open(); }
  void close();
  filebuf* rdbuf() const { return const_cast<filebuf*>(&buf_); }

 private:
  filebuf buf_;
};

class SLUICE_EXPORT fstream : public std::iostream, public stream_base {
 public:
  fstream() : std::iostream(&buf_) {}
  explicit fstream(const std::string& path,
                   std::ios_base::openmode mode = std::ios_base::in |
                                                  std::ios_base::out)
      : std::iostream(&buf_) {
    open(path, mode);
  }
  void open(const std::string& path,
            std::ios_base::openmode mode = std::ios_base::in |
                                           std::ios_base::out);
  bool is_open() const { return buf_.is_open(); }
  void close();
  filebuf* rdbuf() const { return const_cast<filebuf*>(&buf_); }

 private:
  filebuf buf_;
};

}  // namespace sluice

#endif  // SLUICE_STREAM_H_
