// stdio and directory streams over stored files.
//
// glibc's stdio calls the kernel from inside libc, where no interposer can
// reach it. So a FILE over a stored file is a cookie stream
// (fopencookie(3)) whose read, write, seek and close are our calls; fread,
// fwrite, fgets, getline, fprintf, fseek, ftell, fflush and fclose (and
// their _unlocked forms) then work on it unchanged. The standard streams
// follow fds 0-2: when one of them is a stored file (a shell redirection
// before exec, or dup2 at run time), stdin/stdout/stderr point to a cookie
// stream over it.
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <glob.h>
#include <wchar.h>

#include <ext/stdio_sync_filebuf.h>

#include <algorithm>
#include <iostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "preload/shim.h"

using sluice::DirEntry;
using sluice::FileInfo;
using sluice::FileSystem;
using sluice::Status;
using namespace sluice::preload;

#define EXPORT extern "C" __attribute__((visibility("default")))

extern "C" void __chk_fail(void) __attribute__((noreturn));

namespace sluice {
namespace preload {
namespace {

constexpr size_t kStreamBuffer = 256 << 10;

struct Cookie {
  int fd;
  bool owns_fd;
  char* buf;
  FILE* file = nullptr;
  // Wide characters (see "wide characters" below): conversion states, a
  // character pushed back by ungetwc, and fwide's orientation.
  mbstate_t in{}, out{};
  wint_t back = WEOF;
  int orient = 0;
};

// Our streams, for the wide-character calls to find their Cookie.
std::mutex g_cookies_mu;
std::unordered_map<FILE*, Cookie*>* g_cookies;  // never destroyed

void NoteCookie(FILE* f, Cookie* k) {
  std::lock_guard<std::mutex> lock(g_cookies_mu);
  if (!g_cookies) g_cookies = new std::unordered_map<FILE*, Cookie*>;
  if (k) {
    (*g_cookies)[f] = k;
  } else {
    g_cookies->erase(f);
  }
}

ssize_t CookieRead(void* c, char* buf, size_t n) {
  Cookie* k = static_cast<Cookie*>(c);
  if (k->fd < 0) return FailErrno(EBADF);
  return read(k->fd, buf, n);
}

ssize_t CookieWrite(void* c, const char* buf, size_t n) {
  Cookie* k = static_cast<Cookie*>(c);
  if (k->fd < 0) return FailErrno(EBADF);
  size_t done = 0;
  while (done < n) {
    ssize_t r = write(k->fd, buf + done, n - done);
    if (r <= 0) return done > 0 ? static_cast<ssize_t>(done) : -1;
    done += static_cast<size_t>(r);
  }
  return static_cast<ssize_t>(done);
}

int CookieSeek(void* c, off64_t* off, int whence) {
  Cookie* k = static_cast<Cookie*>(c);
  if (k->fd < 0) return FailErrno(EBADF);
  off_t r = lseek(k->fd, *off, whence);
  if (r < 0) return -1;
  *off = r;
  return 0;
}

int CookieClose(void* c) {
  Cookie* k = static_cast<Cookie*>(c);
  if (k->file) NoteCookie(k->file, nullptr);
  int r = 0;
  if (k->fd >= 0 && k->owns_fd) r = close(k->fd);
  free(k->buf);
  delete k;
  return r;
}

// "r", "w+", "ab", "re", "wx" -> open flags; -1 for a bad mode.
int ModeFlags(const char* mode) {
  int flags;
  switch (mode[0]) {
    case 'r': flags = O_RDONLY; break;
    case 'w': flags = O_WRONLY | O_CREAT | O_TRUNC; break;
    case 'a': flags = O_WRONLY | O_CREAT | O_APPEND; break;
    default: return -1;
  }
  for (const char* m = mode + 1; *m && *m != ','; m++) {
    if (*m == '+') flags = (flags & ~O_ACCMODE) | O_RDWR;
    if (*m == 'e') flags |= O_CLOEXEC;
    if (*m == 'x') flags |= O_EXCL;
  }
  return flags;
}

// The standard stream variable of fd 0, 1 or 2.
FILE** StdVar(int fd) { return fd == 0 ? &stdin : fd == 1 ? &stdout : &stderr; }
FILE* g_orig_std[3];  // the real stream while a cookie stands in
FILE* g_mine_std[3];
Cookie* g_mine_cookie[3];
std::mutex g_std_mu;

// ---- directory streams -----------------------------------------------------
struct Entry {
  std::string name;
  unsigned char type;
  ino_t ino;
};
struct SDir {
  int fd;
  std::vector<Entry> entries;
  size_t pos = 0;
  struct dirent ent;
  struct dirent64 ent64;
};
constexpr int kMaxDirs = 256;
std::atomic<SDir*> g_dirs[kMaxDirs];
std::atomic<int> g_ndirs{0};

SDir* AsOurs(DIR* d) {
  if (!d || t_inside || g_ndirs.load(std::memory_order_acquire) == 0) {
    return nullptr;
  }
  SDir* s = reinterpret_cast<SDir*>(d);
  for (auto& slot : g_dirs) {
    if (slot.load(std::memory_order_acquire) == s) return s;
  }
  return nullptr;
}

// The listing of a stored directory, with "." and ".." (g_mu held).
Status ListLocked(const std::string& path, std::vector<Entry>* out) {
  FileInfo self;
  Status s = StatLocked(path, &self);
  if (!s.ok()) return s;
  out->push_back({".", DT_DIR, self.ino});
  out->push_back({"..", DT_DIR, path == "/" ? self.ino : 0});
  FileSystem* fs;
  s = View(false, &fs);
  if (s.IsNotFound() && path == "/") return Status::OK();  // nothing stored
  if (!s.ok()) return s;
  Inside inside;
  std::vector<DirEntry> entries;
  s = fs->ReadDir(path, &entries);
  if (!s.ok()) return s;
  const std::string base = path == "/" ? "" : path;
  for (const DirEntry& e : entries) {
    FileInfo fi;
    if (!fs->Stat(base + "/" + e.name, &fi).ok()) continue;
    out->push_back({e.name, static_cast<unsigned char>(e.is_dir ? DT_DIR : DT_REG),
                    static_cast<ino_t>(fi.ino)});
  }
  if (path != "/") {
    FileInfo parent;
    std::string up = path.substr(0, path.rfind('/'));
    if (fs->Stat(up.empty() ? "/" : up, &parent).ok()) {
      (*out)[1].ino = parent.ino;
    }
  }
  return Status::OK();
}

}  // namespace

namespace {
FILE* MakeCookie(int fd, const char* mode, bool owns_fd, Cookie** out) {
  char m[3] = {mode[0], 0, 0};
  if (strchr(mode, '+')) m[1] = '+';
  Cookie* k = new Cookie{fd, owns_fd, nullptr};
  cookie_io_functions_t io = {CookieRead, CookieWrite, CookieSeek, CookieClose};
  FILE* f = fopencookie(k, m, io);
  if (!f) {
    delete k;
    return nullptr;
  }
  f->_fileno = fd;  // fileno() works as on any stream
  k->file = f;
  NoteCookie(f, k);
  k->buf = static_cast<char*>(malloc(kStreamBuffer));
  if (k->buf) setvbuf(f, k->buf, _IOFBF, kStreamBuffer);
  if (out) *out = k;
  return f;
}
}  // namespace


// libstdc++'s standard streams (cout, cerr, clog, cin and the wide ones),
// synchronised with stdio as they are unless the program says otherwise,
// write through the FILE that stdout (stderr, stdin) was when they were
// made: a program that dup2s a stored file onto 1 and writes to cout would
// write past our stream, into the placeholder. They follow the swap here,
// and go back to their own buffer with it. g_std_mu held.
template <typename C>
void RebindCxx(std::basic_ios<C>& s, FILE* from, FILE* to,
               std::basic_streambuf<C>** saved) {
  using Sync = __gnu_cxx::stdio_sync_filebuf<C>;
  if (*saved == nullptr) {
    auto* b = dynamic_cast<Sync*>(s.rdbuf());
    if (b == nullptr || b->file() != from) return;  // not synchronised
    *saved = b;
    s.rdbuf(new Sync(to));
  } else if (auto* mine = dynamic_cast<Sync*>(s.rdbuf());
             mine != nullptr && mine != *saved && mine->file() == from) {
    s.rdbuf(*saved);  // back to the one libstdc++ made
    *saved = nullptr;
    delete mine;
  }
}

void RebindCxxStreams(int fd, FILE* from, FILE* to) {
  static std::ios_base::Init init;  // the streams exist before we look
  static std::streambuf* saved[4];
  static std::wstreambuf* wsaved[4];
  switch (fd) {
    case 0:
      RebindCxx(std::cin, from, to, &saved[0]);
      RebindCxx(std::wcin, from, to, &wsaved[0]);
      break;
    case 1:
      RebindCxx(std::cout, from, to, &saved[1]);
      RebindCxx(std::wcout, from, to, &wsaved[1]);
      break;
    case 2:
      RebindCxx(std::cerr, from, to, &saved[2]);
      RebindCxx(std::clog, from, to, &saved[3]);
      RebindCxx(std::wcerr, from, to, &wsaved[2]);
      RebindCxx(std::wclog, from, to, &wsaved[3]);
      break;
  }
}

void SyncStdStream(int fd) {
  if (fd < 0 || fd > 2 || t_inside) return;
  const bool ours = Lookup(fd) != nullptr;
  std::lock_guard<std::mutex> lock(g_std_mu);
  FILE** var = StdVar(fd);
  if (ours && !g_mine_std[fd]) {
    Cookie* k;
    FILE* f = MakeCookie(fd, fd == 0 ? "r" : "w", true, &k);
    if (!f) return;
    if (fd == 2) setvbuf(f, nullptr, _IONBF, 0);
    g_mine_cookie[fd] = k;
    g_orig_std[fd] = *var;
    g_mine_std[fd] = f;
    *var = f;
    RebindCxxStreams(fd, g_orig_std[fd], f);
  } else if (!ours && g_mine_std[fd]) {
    FILE* f = g_mine_std[fd];
    if (*var == f) *var = g_orig_std[fd];
    RebindCxxStreams(fd, f, g_orig_std[fd]);
    g_mine_std[fd] = nullptr;
    // Its fd now names something else (it was flushed before the change):
    // the stream is freed without closing that fd.
    g_mine_cookie[fd]->fd = -1;
    g_mine_cookie[fd] = nullptr;
    fclose(f);
  }
}

void FlushStdStream(int fd) {
  if (fd < 0 || fd > 2 || t_inside) return;
  fflush(*StdVar(fd));
}

DIR* OpenDirStream(int fd) {
  std::vector<Entry> entries;
  {
    Session session;
    Desc* d = g_fds[fd].load();
    if (!d) return FailErrno(EBADF), nullptr;
    if (!d->is_dir) return FailErrno(ENOTDIR), nullptr;
    Status s = ListLocked(d->path, &entries);
    if (!s.ok()) return Fail(s), nullptr;
  }
  SDir* sd = new SDir;
  sd->fd = fd;
  sd->entries = std::move(entries);
  for (auto& slot : g_dirs) {
    SDir* expected = nullptr;
    if (slot.compare_exchange_strong(expected, sd)) {
      g_ndirs.fetch_add(1);
      return reinterpret_cast<DIR*>(sd);
    }
  }
  delete sd;
  errno = EMFILE;
  return nullptr;
}


}  // namespace preload
}  // namespace sluice

// ---- stdio -----------------------------------------------------------------
EXPORT FILE* fopen(const char* path, const char* mode) {
  SLUICE_REAL(fopen);
  std::string p;
  if (!Resolve(path, &p)) return real_fopen(path, mode);
  int flags = ModeFlags(mode);
  if (flags < 0) return FailErrno(EINVAL), nullptr;
  int fd;
  {
    Session session;
    fd = OpenLocked(p, flags, 0666);
  }
  if (fd < 0) return nullptr;
  FILE* f = MakeCookie(fd, mode, true, nullptr);
  if (!f) {
    int e = errno;
    close(fd);
    errno = e;
  }
  return f;
}
EXPORT FILE* fopen64(const char* path, const char* mode) {
  return fopen(path, mode);
}
EXPORT FILE* fdopen(int fd, const char* mode) {
  SLUICE_REAL(fdopen);
  if (t_inside || !Lookup(fd)) return real_fdopen(fd, mode);
  if (ModeFlags(mode) < 0) return FailErrno(EINVAL), nullptr;
  return MakeCookie(fd, mode, true, nullptr);
}
EXPORT FILE* freopen(const char* path, const char* mode, FILE* stream) {
  SLUICE_REAL(freopen);
  std::string p;
  if (!path) {
    // A mode change of a stream over a stored file: nothing to reopen.
    if (!t_inside && stream && Lookup(fileno(stream))) {
      return ModeFlags(mode) < 0 ? (FailErrno(EINVAL), nullptr) : stream;
    }
    return real_freopen(path, mode, stream);
  }
  if (!Resolve(path, &p)) return real_freopen(path, mode, stream);
  int target = -1;
  for (int i = 0; i <= 2; i++) {
    if (stream == *StdVar(i)) target = i;
  }
  if (target < 0) {
    // Another stream: closed, and a new one opened in its place.
    fclose(stream);
    return fopen(path, mode);
  }
  fflush(stream);
  int flags = ModeFlags(mode);
  if (flags < 0) return FailErrno(EINVAL), nullptr;
  int fd;
  {
    Session session;
    fd = OpenLocked(p, flags & ~O_CLOEXEC, 0666);
  }
  if (fd < 0) return nullptr;
  int r = dup2(fd, target);  // swaps the standard stream to a cookie
  int e = errno;
  close(fd);
  if (r < 0) return FailErrno(e), nullptr;
  return *StdVar(target);
}
EXPORT FILE* freopen64(const char* path, const char* mode, FILE* stream) {
  return freopen(path, mode, stream);
}

// ---- directories -----------------------------------------------------------
EXPORT DIR* opendir(const char* path) {
  SLUICE_REAL(opendir);
  std::string p;
  if (!Resolve(path, &p)) return real_opendir(path);
  int fd;
  {
    Session session;
    fd = OpenLocked(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
  }
  if (fd < 0) return nullptr;
  DIR* d = OpenDirStream(fd);
  if (!d) {
    int e = errno;
    close(fd);
    errno = e;
  }
  return d;
}
EXPORT DIR* fdopendir(int fd) {
  SLUICE_REAL(fdopendir);
  if (t_inside || !Lookup(fd)) return real_fdopendir(fd);
  return OpenDirStream(fd);
}
EXPORT struct dirent* readdir(DIR* dir) {
  SLUICE_REAL(readdir);
  SDir* sd = AsOurs(dir);
  if (!sd) return real_readdir(dir);
  if (sd->pos >= sd->entries.size()) return nullptr;  // end: errno unchanged
  const Entry& e = sd->entries[sd->pos++];
  memset(&sd->ent, 0, sizeof sd->ent);
  sd->ent.d_ino = e.ino;
  sd->ent.d_off = static_cast<off_t>(sd->pos);
  sd->ent.d_reclen = sizeof sd->ent;
  sd->ent.d_type = e.type;
  snprintf(sd->ent.d_name, sizeof sd->ent.d_name, "%s", e.name.c_str());
  return &sd->ent;
}
EXPORT struct dirent64* readdir64(DIR* dir) {
  SLUICE_REAL(readdir64);
  SDir* sd = AsOurs(dir);
  if (!sd) return real_readdir64(dir);
  struct dirent* e = readdir(dir);
  if (!e) return nullptr;
  memset(&sd->ent64, 0, sizeof sd->ent64);
  sd->ent64.d_ino = e->d_ino;
  sd->ent64.d_off = e->d_off;
  sd->ent64.d_reclen = sizeof sd->ent64;
  sd->ent64.d_type = e->d_type;
  memcpy(sd->ent64.d_name, e->d_name, sizeof sd->ent64.d_name);
  return &sd->ent64;
}
EXPORT int closedir(DIR* dir) {
  SLUICE_REAL(closedir);
  SDir* sd = AsOurs(dir);
  if (!sd) return real_closedir(dir);
  for (auto& slot : g_dirs) {
    SDir* expected = sd;
    if (slot.compare_exchange_strong(expected, nullptr)) {
      g_ndirs.fetch_sub(1);
      break;
    }
  }
  int r = close(sd->fd);
  delete sd;
  return r;
}
EXPORT int dirfd(DIR* dir) {
  SLUICE_REAL(dirfd);
  SDir* sd = AsOurs(dir);
  return sd ? sd->fd : real_dirfd(dir);
}
EXPORT void rewinddir(DIR* dir) {
  SLUICE_REAL(rewinddir);
  SDir* sd = AsOurs(dir);
  if (!sd) return real_rewinddir(dir);
  sd->pos = 0;
}
EXPORT long telldir(DIR* dir) {
  SLUICE_REAL(telldir);
  SDir* sd = AsOurs(dir);
  return sd ? static_cast<long>(sd->pos) : real_telldir(dir);
}
EXPORT void seekdir(DIR* dir, long loc) {
  SLUICE_REAL(seekdir);
  SDir* sd = AsOurs(dir);
  if (!sd) return real_seekdir(dir, loc);
  sd->pos = loc < 0 ? 0 : static_cast<size_t>(loc);
}

// ---- scandir and glob: libc walks the directory with its internal calls ----
namespace {

// scandir over our directory stream when `dir` (relative to dirfd) is
// under the mount; else libc's (`real`).
template <class Dirent, class Readdir, class Real>
int ScanThrough(int dirfd, const char* dir, Dirent*** list,
                int (*filter)(const Dirent*),
                int (*compar)(const Dirent**, const Dirent**), Readdir next,
                Real real) {
  std::string p;
  if (!Resolve(dirfd, dir, &p)) return real();
  int fd = openat(dirfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -1;
  DIR* d = fdopendir(fd);
  if (!d) {
    const int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  std::vector<Dirent*> v;
  bool failed = false;
  errno = 0;
  while (Dirent* e = next(d)) {
    if (filter && !filter(e)) continue;
    auto* copy = static_cast<Dirent*>(malloc(sizeof(Dirent)));
    if (!copy) {
      failed = true;
      break;
    }
    memcpy(copy, e, sizeof(Dirent));
    v.push_back(copy);
  }
  const int e = failed ? ENOMEM : errno;
  closedir(d);
  Dirent** out = failed ? nullptr
                        : static_cast<Dirent**>(malloc(
                              std::max<size_t>(v.size(), 1) * sizeof(Dirent*)));
  if (!out || e != 0) {
    for (Dirent* x : v) free(x);
    free(out);
    errno = out ? e : ENOMEM;
    return -1;
  }
  if (compar) {
    std::sort(v.begin(), v.end(), [compar](const Dirent* a, const Dirent* b) {
      return compar(const_cast<const Dirent**>(&a),
                    const_cast<const Dirent**>(&b)) < 0;
    });
  }
  std::copy(v.begin(), v.end(), out);
  *list = out;
  return static_cast<int>(v.size());
}

}  // namespace

EXPORT int scandirat(int dirfd, const char* dir, struct dirent*** list,
                     int (*filter)(const struct dirent*),
                     int (*compar)(const struct dirent**,
                                   const struct dirent**)) {
  SLUICE_REAL(scandirat);
  return ScanThrough(dirfd, dir, list, filter, compar, readdir, [&] {
    return real_scandirat(dirfd, dir, list, filter, compar);
  });
}
EXPORT int scandir(const char* dir, struct dirent*** list,
                   int (*filter)(const struct dirent*),
                   int (*compar)(const struct dirent**, const struct dirent**)) {
  SLUICE_REAL(scandir);
  return ScanThrough(AT_FDCWD, dir, list, filter, compar, readdir,
                     [&] { return real_scandir(dir, list, filter, compar); });
}
EXPORT int scandirat64(int dirfd, const char* dir, struct dirent64*** list,
                       int (*filter)(const struct dirent64*),
                       int (*compar)(const struct dirent64**,
                                     const struct dirent64**)) {
  SLUICE_REAL(scandirat64);
  return ScanThrough(dirfd, dir, list, filter, compar, readdir64, [&] {
    return real_scandirat64(dirfd, dir, list, filter, compar);
  });
}
EXPORT int scandir64(const char* dir, struct dirent64*** list,
                     int (*filter)(const struct dirent64*),
                     int (*compar)(const struct dirent64**,
                                   const struct dirent64**)) {
  SLUICE_REAL(scandir64);
  return ScanThrough(AT_FDCWD, dir, list, filter, compar, readdir64,
                     [&] { return real_scandir64(dir, list, filter, compar); });
}

// glob: a pattern under the mount is expanded by libc's glob through our
// directory calls (GLOB_ALTDIRFUNC); others go to libc as they are.
namespace {
template <class Glob, class Dirent, class Stat, Dirent* (*Readdir)(DIR*),
          int (*StatF)(const char*, Stat*), int (*LstatF)(const char*, Stat*),
          class Real>
int GlobThrough(Real real, const char* pattern, int flags,
                int (*errfunc)(const char*, int), Glob* g) {
  std::string p;
  if (!pattern || !Resolve(pattern, &p) || (flags & GLOB_ALTDIRFUNC)) {
    return real(pattern, flags, errfunc, g);
  }
  g->gl_opendir = [](const char* path) -> void* { return opendir(path); };
  g->gl_readdir = [](void* d) { return Readdir(static_cast<DIR*>(d)); };
  g->gl_closedir = [](void* d) { closedir(static_cast<DIR*>(d)); };
  g->gl_stat = StatF;
  g->gl_lstat = LstatF;
  const int r = real(pattern, flags | GLOB_ALTDIRFUNC, errfunc, g);
  g->gl_flags &= ~GLOB_ALTDIRFUNC;
  return r;
}
}  // namespace
EXPORT int glob(const char* pattern, int flags,
                int (*errfunc)(const char*, int), glob_t* g) {
  SLUICE_REAL(glob);
  return GlobThrough<glob_t, struct dirent, struct stat, readdir, stat, lstat>(
      real_glob, pattern, flags, errfunc, g);
}
EXPORT int glob64(const char* pattern, int flags,
                  int (*errfunc)(const char*, int), glob64_t* g) {
  SLUICE_REAL(glob64);
  return GlobThrough<glob64_t, struct dirent64, struct stat64, readdir64,
                     stat64, lstat64>(real_glob64, pattern, flags, errfunc, g);
}

// ---- wide characters -------------------------------------------------------
// glibc gives a cookie stream no wide-character buffers (it marks it so that
// a wide call on it crashes "predictably"): fgetws on a stored file, as in
// rev, was a segmentation fault. On our streams the wide calls are done
// here, on the byte stream, converting with mbrtowc/wcrtomb in the
// current locale; other streams go to libc. The wscanf family goes
// through libc's byte scanf (ScanW).
namespace sluice {
namespace preload {
namespace {

// The Cookie of one of our streams, or null. Streams that have wide
// buffers are not ours, and are not looked up.
Cookie* WideCookie(FILE* f) {
  if (f == nullptr || t_inside ||
      f->_wide_data != reinterpret_cast<struct _IO_wide_data*>(-1L)) {
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(g_cookies_mu);
  if (!g_cookies) return nullptr;
  auto it = g_cookies->find(f);
  return it == g_cookies->end() ? nullptr : it->second;
}

void Orient(Cookie* k) {
  if (k->orient == 0) k->orient = 1;
}

wint_t GetWc(FILE* f, Cookie* k) {
  Orient(k);
  if (k->back != WEOF) {
    wint_t c = k->back;
    k->back = WEOF;
    return c;
  }
  for (;;) {
    const int c = getc_unlocked(f);
    if (c == EOF) {
      if (!mbsinit(&k->in)) {  // the file ends inside a character
        k->in = mbstate_t{};
        errno = EILSEQ;
      }
      return WEOF;
    }
    const char b = static_cast<char>(c);
    wchar_t wc;
    const size_t r = mbrtowc(&wc, &b, 1, &k->in);
    if (r == static_cast<size_t>(-2)) continue;  // more bytes to come
    if (r == static_cast<size_t>(-1)) {
      k->in = mbstate_t{};
      f->_flags |= _IO_ERR_SEEN;  // ferror(), as glibc's conversion sets it
      errno = EILSEQ;
      return WEOF;
    }
    return static_cast<wint_t>(wc);
  }
}

wint_t PutWc(wchar_t wc, FILE* f, Cookie* k) {
  Orient(k);
  char b[MB_LEN_MAX];
  const size_t n = wcrtomb(b, wc, &k->out);
  if (n == static_cast<size_t>(-1)) {
    errno = EILSEQ;
    return WEOF;
  }
  return fwrite_unlocked(b, 1, n, f) == n ? static_cast<wint_t>(wc) : WEOF;
}

wchar_t* GetWs(wchar_t* ws, int n, FILE* f, Cookie* k) {
  if (n <= 0) {
    errno = EINVAL;
    return nullptr;
  }
  // As glibc's fgetws: an error met in this call (not an earlier one)
  // makes it return null, even after some characters.
  const int old_error = f->_flags & _IO_ERR_SEEN;
  f->_flags &= ~_IO_ERR_SEEN;
  int i = 0;
  while (i < n - 1) {
    const wint_t c = GetWc(f, k);
    if (c == WEOF) break;
    ws[i++] = static_cast<wchar_t>(c);
    if (c == L'\n') break;
  }
  wchar_t* result = ws;
  if ((i == 0 && n > 1) || ((f->_flags & _IO_ERR_SEEN) && errno != EAGAIN)) {
    result = nullptr;
  } else {
    ws[i] = L'\0';
  }
  f->_flags |= old_error;
  return result;
}

int PutWs(const wchar_t* ws, FILE* f, Cookie* k) {
  for (; *ws; ++ws) {
    if (PutWc(*ws, f, k) == WEOF) return -1;
  }
  return 1;
}

// vfwprintf: formatted with vswprintf into a buffer that grows until the
// text fits, then written.
int PrintW(FILE* f, Cookie* k, const wchar_t* fmt, va_list ap) {
  std::vector<wchar_t> buf(512);
  for (;;) {
    va_list aq;
    va_copy(aq, ap);
    const int n = vswprintf(buf.data(), buf.size(), fmt, aq);
    va_end(aq);
    if (n >= 0) {
      flockfile(f);
      const int r = PutWs(buf.data(), f, k) < 0 ? -1 : n;
      funlockfile(f);
      return r;
    }
    if (buf.size() >= (size_t{1} << 26)) {  // an encoding error, not length
      errno = EILSEQ;
      return -1;
    }
    buf.resize(buf.size() * 4);
  }
}

// Locked: as the plain calls are; the _unlocked forms skip the lock.
template <class F>
auto Locked(FILE* f, F&& fn) {
  flockfile(f);
  auto r = fn();
  funlockfile(f);
  return r;
}

// The wscanf family on our stream: the wide format converted to a
// multibyte one and scanned by libc's byte scanf on the byte stream (a
// wide character pushed back with ungetwc goes back as its bytes first).
// The results are those of glibc's wscanf for the input, except that field
// widths count bytes and white space is isspace's: the same for ASCII.
int ScanW(FILE* f, Cookie* k, const wchar_t* fmt, va_list ap, bool c99) {
  Orient(k);
  mbstate_t st{};
  const wchar_t* src = fmt;
  const size_t n = wcsrtombs(nullptr, &src, 0, &st);
  if (n == static_cast<size_t>(-1)) {
    errno = EILSEQ;
    return EOF;
  }
  std::string mb(n + 1, '\0');
  src = fmt;
  st = mbstate_t{};
  wcsrtombs(&mb[0], &src, n + 1, &st);
  if (k->back != WEOF) {
    char b[MB_LEN_MAX];
    mbstate_t o{};
    const size_t m = wcrtomb(b, static_cast<wchar_t>(k->back), &o);
    k->back = WEOF;
    if (m != static_cast<size_t>(-1)) {
      for (size_t i = m; i-- > 0;) ungetc(static_cast<unsigned char>(b[i]), f);
    }
  }
  using VfscanfFn = int (*)(FILE*, const char*, va_list);
  static const auto gnu = reinterpret_cast<VfscanfFn>(RealSym("vfscanf"));
  static const auto iso = reinterpret_cast<VfscanfFn>(RealSym("__isoc99_vfscanf"));
  return (c99 ? iso : gnu)(f, mb.c_str(), ap);
}

}  // namespace
}  // namespace preload
}  // namespace sluice

EXPORT wint_t fgetwc(FILE* f) {
  SLUICE_REAL(fgetwc);
  Cookie* k = WideCookie(f);
  if (!k) return real_fgetwc(f);
  return Locked(f, [&] { return GetWc(f, k); });
}
EXPORT wint_t getwc(FILE* f) { return fgetwc(f); }
EXPORT wint_t getwchar(void) { return fgetwc(stdin); }
EXPORT wint_t fgetwc_unlocked(FILE* f) {
  SLUICE_REAL(fgetwc_unlocked);
  Cookie* k = WideCookie(f);
  return k ? GetWc(f, k) : real_fgetwc_unlocked(f);
}
EXPORT wint_t getwc_unlocked(FILE* f) { return fgetwc_unlocked(f); }
EXPORT wint_t getwchar_unlocked(void) { return fgetwc_unlocked(stdin); }
EXPORT wchar_t* fgetws(wchar_t* ws, int n, FILE* f) {
  SLUICE_REAL(fgetws);
  Cookie* k = WideCookie(f);
  if (!k) return real_fgetws(ws, n, f);
  return Locked(f, [&] { return GetWs(ws, n, f, k); });
}
EXPORT wchar_t* fgetws_unlocked(wchar_t* ws, int n, FILE* f) {
  SLUICE_REAL(fgetws_unlocked);
  Cookie* k = WideCookie(f);
  return k ? GetWs(ws, n, f, k) : real_fgetws_unlocked(ws, n, f);
}
EXPORT wchar_t* __fgetws_chk(wchar_t* ws, size_t size, int n, FILE* f) {
  if (n > 0 && static_cast<size_t>(n) > size) __chk_fail();
  return fgetws(ws, n, f);
}
EXPORT wchar_t* __fgetws_unlocked_chk(wchar_t* ws, size_t size, int n,
                                      FILE* f) {
  if (n > 0 && static_cast<size_t>(n) > size) __chk_fail();
  return fgetws_unlocked(ws, n, f);
}
EXPORT wint_t ungetwc(wint_t wc, FILE* f) {
  SLUICE_REAL(ungetwc);
  Cookie* k = WideCookie(f);
  if (!k) return real_ungetwc(wc, f);
  if (wc == WEOF) return WEOF;
  return Locked(f, [&] {
    k->back = wc;
    return wc;
  });
}
EXPORT wint_t fputwc(wchar_t wc, FILE* f) {
  SLUICE_REAL(fputwc);
  Cookie* k = WideCookie(f);
  if (!k) return real_fputwc(wc, f);
  return Locked(f, [&] { return PutWc(wc, f, k); });
}
EXPORT wint_t putwc(wchar_t wc, FILE* f) { return fputwc(wc, f); }
EXPORT wint_t putwchar(wchar_t wc) { return fputwc(wc, stdout); }
EXPORT wint_t fputwc_unlocked(wchar_t wc, FILE* f) {
  SLUICE_REAL(fputwc_unlocked);
  Cookie* k = WideCookie(f);
  return k ? PutWc(wc, f, k) : real_fputwc_unlocked(wc, f);
}
EXPORT wint_t putwc_unlocked(wchar_t wc, FILE* f) {
  return fputwc_unlocked(wc, f);
}
EXPORT wint_t putwchar_unlocked(wchar_t wc) {
  return fputwc_unlocked(wc, stdout);
}
EXPORT int fputws(const wchar_t* ws, FILE* f) {
  SLUICE_REAL(fputws);
  Cookie* k = WideCookie(f);
  if (!k) return real_fputws(ws, f);
  return Locked(f, [&] { return PutWs(ws, f, k); });
}
EXPORT int fputws_unlocked(const wchar_t* ws, FILE* f) {
  SLUICE_REAL(fputws_unlocked);
  Cookie* k = WideCookie(f);
  return k ? PutWs(ws, f, k) : real_fputws_unlocked(ws, f);
}
EXPORT int fwide(FILE* f, int mode) {
  SLUICE_REAL(fwide);
  Cookie* k = WideCookie(f);
  if (!k) return real_fwide(f, mode);
  return Locked(f, [&] {
    if (k->orient == 0 && mode != 0) k->orient = mode > 0 ? 1 : -1;
    return k->orient;
  });
}
EXPORT int vfwprintf(FILE* f, const wchar_t* fmt, va_list ap) {
  SLUICE_REAL(vfwprintf);
  Cookie* k = WideCookie(f);
  return k ? PrintW(f, k, fmt, ap) : real_vfwprintf(f, fmt, ap);
}
EXPORT int fwprintf(FILE* f, const wchar_t* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const int r = vfwprintf(f, fmt, ap);
  va_end(ap);
  return r;
}
EXPORT int vwprintf(const wchar_t* fmt, va_list ap) {
  return vfwprintf(stdout, fmt, ap);
}
EXPORT int wprintf(const wchar_t* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const int r = vfwprintf(stdout, fmt, ap);
  va_end(ap);
  return r;
}
// The wscanf family under both of glibc's names: the GNU ones (wscanf) and
// the C99 ones (__isoc99_wscanf, which <wchar.h> makes of the same calls in
// C99 and C++11 code, this file's too: hence the explicit symbol names).
namespace sluice {
namespace preload {
namespace {

using VfwscanfFn = int (*)(FILE*, const wchar_t*, va_list);

int VfwscanfAs(bool c99, FILE* f, const wchar_t* fmt, va_list ap) {
  static const auto real_gnu = reinterpret_cast<VfwscanfFn>(RealSym("vfwscanf"));
  static const auto real_c99 =
      reinterpret_cast<VfwscanfFn>(RealSym("__isoc99_vfwscanf"));
  Cookie* k = WideCookie(f);
  if (!k) return (c99 ? real_c99 : real_gnu)(f, fmt, ap);
  return Locked(f, [&] { return ScanW(f, k, fmt, ap, c99); });
}

}  // namespace
}  // namespace preload
}  // namespace sluice

#define SLUICE_WSCANF_FAMILY(c99, vf, f, v, plain)                        \
  extern "C" int SluiceScan_##vf(FILE*, const wchar_t*, va_list)         \
      __asm__(#vf);                                                        \
  extern "C" int SluiceScan_##f(FILE*, const wchar_t*, ...) __asm__(#f); \
  extern "C" int SluiceScan_##v(const wchar_t*, va_list) __asm__(#v);    \
  extern "C" int SluiceScan_##plain(const wchar_t*, ...) __asm__(#plain); \
  EXPORT int SluiceScan_##vf(FILE* s, const wchar_t* fmt, va_list ap) {  \
    return sluice::preload::VfwscanfAs(c99, s, fmt, ap);                   \
  }                                                                        \
  EXPORT int SluiceScan_##f(FILE* s, const wchar_t* fmt, ...) {          \
    va_list ap;                                                            \
    va_start(ap, fmt);                                                     \
    const int r = sluice::preload::VfwscanfAs(c99, s, fmt, ap);            \
    va_end(ap);                                                            \
    return r;                                                              \
  }                                                                        \
  EXPORT int SluiceScan_##v(const wchar_t* fmt, va_list ap) {             \
    return sluice::preload::VfwscanfAs(c99, stdin, fmt, ap);               \
  }                                                                        \
  EXPORT int SluiceScan_##plain(const wchar_t* fmt, ...) {                \
    va_list ap;                                                            \
    va_start(ap, fmt);                                                     \
    const int r = sluice::preload::VfwscanfAs(c99, stdin, fmt, ap);        \
    va_end(ap);                                                            \
    return r;                                                              \
  }
SLUICE_WSCANF_FAMILY(false, vfwscanf, fwscanf, vwscanf, wscanf)
SLUICE_WSCANF_FAMILY(true, __isoc99_vfwscanf, __isoc99_fwscanf,
                     __isoc99_vwscanf, __isoc99_wscanf)
#undef SLUICE_WSCANF_FAMILY

// The fortified forms (_FORTIFY_SOURCE): the flag only asks for checks of
// %n, which these formats pass to vswprintf as they are.
EXPORT int __vfwprintf_chk(FILE* f, int, const wchar_t* fmt, va_list ap) {
  return vfwprintf(f, fmt, ap);
}
EXPORT int __fwprintf_chk(FILE* f, int, const wchar_t* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const int r = vfwprintf(f, fmt, ap);
  va_end(ap);
  return r;
}
EXPORT int __vwprintf_chk(int, const wchar_t* fmt, va_list ap) {
  return vfwprintf(stdout, fmt, ap);
}
EXPORT int __wprintf_chk(int, const wchar_t* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const int r = vfwprintf(stdout, fmt, ap);
  va_end(ap);
  return r;
}
