// FileSystem over per-writer stores: what every file system shares, and
// opening the writer side (writer_fs.h: one store, POSIX semantics,
// write-combining) or the reader side (reader.h: every writer's store,
// merged, overlaps reported).
#include <sys/stat.h>
#include <time.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fs/peers.h"
#include "fs/reader.h"
#include "util/configure.h"
#include "util/posix.h"

namespace sluice {

File::~File() = default;
Status File::MarkOpen() { return Status::OK(); }

Status File::Append(const void* buf, size_t n, uint64_t* at) {
  FileInfo info;
  Status s = Stat(&info);
  if (!s.ok()) return s;
  *at = info.size;
  return PWrite(buf, n, *at);
}
FileSystem::~FileSystem() = default;

Status NormalizePath(const std::string& path, std::string* out) {
  std::vector<std::string> parts;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string::npos) slash = path.size();
    std::string part = path.substr(pos, slash - pos);
    pos = slash + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (parts.empty()) {
        return Status::InvalidArgument("path " + path +
                                       " climbs above the file system root");
      }
      parts.pop_back();
      continue;
    }
    parts.push_back(part);
  }
  out->clear();
  for (const auto& p : parts) *out += "/" + p;
  if (out->empty()) *out = "/";
  return Status::OK();
}

void FileInfoToStat(const FileInfo& i, struct stat* st) {
  memset(st, 0, sizeof *st);
  st->st_ino = i.ino;
  st->st_mode = (i.is_dir ? S_IFDIR : S_IFREG) | (i.mode & 07777);
  st->st_nlink = i.is_dir ? 2 : 1;
  st->st_size = static_cast<off_t>(i.size);
  st->st_blocks = static_cast<blkcnt_t>((i.allocated + 511) / 512);
  st->st_atim.tv_sec = i.atime_ns / 1000000000;
  st->st_atim.tv_nsec = i.atime_ns % 1000000000;
  st->st_mtim.tv_sec = i.mtime_ns / 1000000000;
  st->st_mtim.tv_nsec = i.mtime_ns % 1000000000;
  st->st_ctim.tv_sec = i.ctime_ns / 1000000000;
  st->st_ctim.tv_nsec = i.ctime_ns % 1000000000;
}

SetAttrs ModeAttrs(uint32_t mode) {
  SetAttrs a;
  a.set_mode = true;
  a.mode = mode & 07777;
  return a;
}

SetAttrs TimeAttrs(const struct timespec* times) {
  SetAttrs a;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  for (int i = 0; i < 2; ++i) {
    if (times && times[i].tv_nsec == UTIME_OMIT) continue;
    const struct timespec& t =
        !times || times[i].tv_nsec == UTIME_NOW ? now : times[i];
    (i == 0 ? a.set_atime : a.set_mtime) = true;
    (i == 0 ? a.atime_ns : a.mtime_ns) = t.tv_sec * 1000000000LL + t.tv_nsec;
  }
  return a;
}

Status FileSystem::Open(const FsOptions& given, const std::string& root,
                        int writer, std::unique_ptr<FileSystem>* out) {
  out->reset();
  FsOptions options;
  Status configured = ConfigureFsOptions(given, &options);
  if (!configured.ok()) return configured;
  if (options.extent_bytes < 4096 || options.extent_bytes > (256u << 20)) {
    return Status::InvalidArgument("extent_bytes must be in [4k, 256m]");
  }
  if (writer >= 0) {
    Status s = posix::CreateDirs(root);
    if (!s.ok()) return s;
    return fs::OpenWriterFs(options, fs::WriterStorePath(root, writer), writer,
                            root, out);
  }
  return fs::OpenReaderFs(options, root, out);
}

std::string FileSystem::StorePath(const std::string& root, int writer) {
  return fs::WriterStorePath(root, writer);
}

}  // namespace sluice
