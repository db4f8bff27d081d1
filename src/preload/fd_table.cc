// The descriptor table: a stored file's descriptor is a placeholder
// (placeholder.h) whose Desc the table holds; opens, closes, dups, and the
// placeholders a program inherits through exec.
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

#include "preload/placeholder.h"
#include "preload/state.h"

namespace sluice {
namespace preload {

int AsideHigh(int fd, rlim_t min_limit) {
  SLUICE_REAL(fcntl);
  SLUICE_REAL(close);
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < min_limit) return fd;
  const int base = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= 2048
                       ? 1024
                       : static_cast<int>(rl.rlim_cur / 2);
  if (fd >= base) return fd;
  const int high = real_fcntl(fd, F_DUPFD_CLOEXEC, base);
  if (high < 0) return fd;
  real_close(fd);
  return high;
}

namespace {

Desc* FindByKey(ino_t key) {
  for (Desc* d : S->descs) {
    if (d->key == key) return d;
  }
  return nullptr;
}

void Register(int fd, Desc* d) {
  if (Desc* stale = g_fds[fd].load()) {
    if (stale != d) DropLocked(fd);
  }
  g_fds[fd].store(d, std::memory_order_release);
}

}  // namespace

// Descriptors inherited through exec: placeholders found in /proc/self/fd.
void AdoptInherited() {
  SLUICE_REAL(opendir);
  SLUICE_REAL(readdir);
  SLUICE_REAL(closedir);
  SLUICE_REAL(readlink);
  SLUICE_REAL(fstat);
  SLUICE_REAL(open);
  SLUICE_REAL(close);
  SLUICE_REAL(munmap);
  DIR* dir = real_opendir("/proc/self/fd");
  if (!dir) return;
  std::vector<int> fds;
  while (struct dirent* e = real_readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    fds.push_back(atoi(e->d_name));
  }
  real_closedir(dir);
  const std::string want = std::string("/memfd:") + kMemfdName;
  for (int fd : fds) {
    if (fd >= kMaxFds) continue;
    char link[64], target[256];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = real_readlink(link, target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = 0;
    if (strncmp(target, want.c_str(), want.size()) != 0) continue;
    struct stat st;
    if (real_fstat(fd, &st) != 0) continue;
    Desc* d = FindByKey(st.st_ino);
    if (!d) {
      // The O_PATH placeholder reopened for reading and writing its page.
      char* map = nullptr;
      int rw = real_open(link, O_RDWR | O_CLOEXEC);
      if (rw >= 0) {
        map = MapPlaceholder(rw);
        real_close(rw);
      }
      Desc found;
      if (!map || !DecodeHeader(map, &found)) {
        if (map) real_munmap(map, kMapBytes);
        continue;
      }
      d = new Desc;
      d->path = found.path;
      d->flags = found.flags;
      d->is_dir = found.is_dir;
      d->pending = found.pending;
      d->mode = found.mode;
      d->key = st.st_ino;
      d->map = map;
      S->descs.push_back(d);
    }
    d->refs++;
    g_fds[fd].store(d, std::memory_order_release);
  }
}

// ---- descriptors -----------------------------------------------------------
int OpenLocked(const std::string& path, int flags, mode_t mode) {
  const int acc = flags & O_ACCMODE;
  const bool write = acc != O_RDONLY || (flags & (O_CREAT | O_TRUNC));
  const bool pending = g_forked_after_use && !(flags & O_DIRECTORY);
  FileSystem* fs = nullptr;
  Status s = pending ? Status::OK() : View(write, &fs);
  std::unique_ptr<File> file;
  bool is_dir = false;
  if (pending) {
    // Recorded for the program this child execs (a shell redirection).
  } else if (s.IsNotFound() && !write && path == "/") {
    is_dir = true;  // the mount root before anything is stored
  } else if (!s.ok()) {
    return Fail(s);
  } else {
    Inside inside;
    FileInfo fi;
    if (flags & O_DIRECTORY) {
      s = fs->Stat(path, &fi);
      if (!s.ok()) return Fail(s);
      if (!fi.is_dir) return FailErrno(ENOTDIR);
      if (acc != O_RDONLY) return FailErrno(EISDIR);
      is_dir = true;
    } else {
      int ff = acc | (flags & (O_CREAT | O_EXCL | O_TRUNC | O_SYNC | O_DSYNC));
      s = fs->OpenFile(path, ff, CreationMode(mode), &file);
      if (s.code() == Code::kIsADirectory && acc == O_RDONLY &&
          !(flags & O_CREAT)) {
        is_dir = true;
      } else if (!s.ok()) {
        return Fail(s);
      }
    }
  }
  SLUICE_REAL(close);
  SLUICE_REAL(open);
  SLUICE_REAL(fstat);
  SLUICE_REAL(ftruncate);
  SLUICE_REAL(munmap);
  Desc* d = new Desc;
  d->path = path;
  d->flags = pending ? flags & ~O_NOCTTY
                     : flags & ~(O_CREAT | O_EXCL | O_TRUNC | O_NOCTTY);
  d->is_dir = is_dir;
  d->pending = pending;
  d->mode = CreationMode(mode);
  const std::string h = EncodeHeader(*d);
  // The memfd, its page mapped, then the program's O_PATH descriptor of it
  // on the lowest free number (as open gives), then the memfd let go.
  int e = 0, pfd = -1;
  int mfd = memfd_create(kMemfdName, MFD_CLOEXEC);
  if (mfd < 0) {
    e = errno;
  } else {
    mfd = AsideHigh(mfd, 64);
    if (real_ftruncate(mfd, kMapBytes) != 0 || !(d->map = MapPlaceholder(mfd))) {
      e = errno;
    } else {
      char link[64];
      snprintf(link, sizeof link, "/proc/self/fd/%d", mfd);
      pfd = real_open(link, O_PATH | (flags & O_CLOEXEC));
      if (pfd < 0) e = errno;
    }
    real_close(mfd);
  }
  struct stat st;
  if (pfd >= 0 && (pfd >= kMaxFds || real_fstat(pfd, &st) != 0)) {
    e = pfd >= kMaxFds ? EMFILE : errno;
    real_close(pfd);
    pfd = -1;
  }
  if (pfd < 0) {
    if (d->map) real_munmap(d->map, kMapBytes);
    if (file) file->Close();
    delete d;
    return FailErrno(e ? e : EIO);
  }
  memcpy(d->map + kHeaderAt, h.data(), h.size());
  d->key = st.st_ino;
  d->file = std::move(file);
  d->refs = 1;
  S->descs.push_back(d);
  Register(pfd, d);
  return pfd;
}

int DropLocked(int fd) {
  Desc* d = g_fds[fd].exchange(nullptr, std::memory_order_acq_rel);
  if (!d) return 0;
  const bool last = --d->refs == 0;
  LocksOnDropLocked(d, last);
  if (!last) return 0;
  Status s = d->error;
  if (d->file) {
    Inside inside;
    Status c = d->file->Close();
    if (s.ok()) s = c;
  }
  S->descs.erase(std::find(S->descs.begin(), S->descs.end(), d));
  SLUICE_REAL(munmap);
  real_munmap(d->map, kMapBytes);
  delete d;
  return s.ok() ? 0 : Fail(s);
}

void DupLocked(int oldfd, int newfd) {
  if (newfd < 0 || newfd >= kMaxFds || oldfd == newfd) return;
  Desc* d = (oldfd >= 0 && oldfd < kMaxFds) ? g_fds[oldfd].load() : nullptr;
  if (g_fds[newfd].load()) DropLocked(newfd);
  if (d) {
    d->refs++;
    g_fds[newfd].store(d, std::memory_order_release);
  }
}

}  // namespace preload
}  // namespace sluice
