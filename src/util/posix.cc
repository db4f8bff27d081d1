#include "util/posix.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/env.h"

namespace sluice {
namespace posix {

Status Error(const std::string& what, const std::string& path, int err) {
  std::string msg = what + " " + path + ": " + strerror(err);
  switch (err) {
    case ENOSPC:
    case EDQUOT:
      return Status::NoSpace(msg);
    case ENOENT:
      return Status::NotFound(msg);
    default:
      return Status::IOError(msg);
  }
}

Status Probe(const std::string& path, PathKind* kind) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      *kind = PathKind::kMissing;
      return Status::OK();
    }
    return Error("cannot stat", path, errno);
  }
  if (S_ISDIR(st.st_mode)) {
    *kind = PathKind::kDirectory;
  } else if (S_ISREG(st.st_mode)) {
    *kind = PathKind::kFile;
  } else {
    *kind = PathKind::kOther;
  }
  return Status::OK();
}

Status CreateDirs(const std::string& path) {
  if (path.empty()) return Status::InvalidArgument("empty path");
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty() || partial == "/") continue;
    if (Env::Default()->Mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
      return Error("cannot create directory", partial, errno);
    }
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return Error("cannot stat", path, errno);
  if (!S_ISDIR(st.st_mode)) {
    return Status::IOError("cannot create directory " + path +
                           ": a file of that name exists");
  }
  return Status::OK();
}

Status IsEmptyDir(const std::string& path, bool* empty, const char* ignore) {
  DIR* d = opendir(path.c_str());
  if (d == nullptr) return Error("cannot open directory", path, errno);
  *empty = true;
  while (struct dirent* e = readdir(d)) {
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
        (ignore == nullptr || strcmp(e->d_name, ignore) != 0)) {
      *empty = false;
      break;
    }
  }
  closedir(d);
  return Status::OK();
}

Status ListDir(const std::string& path, std::vector<std::string>* names) {
  DIR* d = opendir(path.c_str());
  if (d == nullptr) return Error("cannot open directory", path, errno);
  names->clear();
  errno = 0;
  while (struct dirent* e = readdir(d)) {
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
      names->emplace_back(e->d_name);
    }
  }
  const int err = errno;
  closedir(d);
  if (err != 0) return Error("cannot read directory", path, err);
  return Status::OK();
}

Status RemoveTree(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    return errno == ENOENT ? Status::OK() : Error("cannot stat", path, errno);
  }
  if (!S_ISDIR(st.st_mode)) {
    if (Env::Default()->Unlink(path.c_str()) != 0 && errno != ENOENT) {
      return Error("cannot remove", path, errno);
    }
    return Status::OK();
  }
  std::vector<std::string> names;
  Status s = ListDir(path, &names);
  for (size_t i = 0; s.ok() && i < names.size(); ++i) {
    s = RemoveTree(JoinPath(path, names[i]));
  }
  if (s.ok() && Env::Default()->Rmdir(path.c_str()) != 0 && errno != ENOENT) {
    s = Error("cannot remove directory", path, errno);
  }
  return s;
}

Status ReadFile(const std::string& path, std::string* data) {
  Env* env = Env::Default();
  int fd = env->Open(path.c_str(), O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) return Error("cannot open", path, errno);
  data->clear();
  // Read in steps that grow with what the file turned out to hold, so a
  // large file (a drained id's index) takes few reads.
  size_t step = 64 * 1024;
  Status s;
  for (;;) {
    const size_t at = data->size();
    data->resize(at + step);
    ssize_t n = env->Pread(fd, &(*data)[at], step, static_cast<off_t>(at));
    if (n < 0) {
      data->resize(at);
      s = Error("cannot read", path, errno);
      break;
    }
    data->resize(at + static_cast<size_t>(n));
    if (n == 0) break;
    if (step < (64u << 20)) step *= 2;
  }
  env->Close(fd);
  return s;
}

Status WriteAll(int fd, const void* buf, size_t n, const std::string& path) {
  const char* p = static_cast<const char*>(buf);
  while (n > 0) {
    ssize_t w = Env::Default()->Write(fd, p, n);
    if (w < 0) return Error("cannot write", path, errno);
    p += w;
    n -= static_cast<size_t>(w);
  }
  return Status::OK();
}

Status SyncDir(const std::string& dir) {
  Env* env = Env::Default();
  int fd = env->Open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
  if (fd < 0) return Error("cannot open directory", dir, errno);
  Status s;
  if (env->Fsync(fd) != 0) s = Error("cannot fsync directory", dir, errno);
  env->Close(fd);
  return s;
}

static std::string DirName(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Status WriteFileAtomic(const std::string& path, std::string_view data) {
  const std::string tmp = path + ".tmp";
  Env* env = Env::Default();
  int fd =
      env->Open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Error("cannot create", tmp, errno);
  Status s = WriteAll(fd, data.data(), data.size(), tmp);
  if (s.ok() && env->Fsync(fd) != 0) s = Error("cannot fsync", tmp, errno);
  if (env->Close(fd) != 0 && s.ok()) s = Error("cannot close", tmp, errno);
  if (s.ok() && env->Rename(tmp.c_str(), path.c_str()) != 0) {
    s = Error("cannot rename to " + path + ":", tmp, errno);
  }
  if (s.ok()) s = SyncDir(DirName(path));
  if (!s.ok()) env->Unlink(tmp.c_str());
  return s;
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

}  // namespace posix
}  // namespace sluice
