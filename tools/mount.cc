// `sluice mount`: a FUSE 3 view of a Sluice file system, for programs the
// LD_PRELOAD interposer cannot reach (static binaries, setuid programs, Go).
//
// The daemon opens the file system once, as one writer (read-write: it sees
// that writer's store, as the interposer's writer does) or as the reader
// (-r: read-only, merged over every writer), and serves the kernel's
// requests on several threads through libfuse's path-based API. Each open
// file is a sluice::File; the kernel's offsets go to PRead/PWrite. The
// mount ends with `fusermount3 -u DIR` (or SIGINT/SIGTERM to the daemon),
// after which the daemon closes every file and the store, so everything
// written through the mount is in the store when the daemon exits.
#define FUSE_USE_VERSION 31
#include <fuse.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sluice/fs.h"
#include "tool.h"

namespace sluice {
namespace tool {
namespace {

struct Mount {
  std::unique_ptr<FileSystem> fs;
  std::string root;
  bool read_only = false;
  uid_t uid = 0;
  gid_t gid = 0;
};

struct Handle {
  std::unique_ptr<File> file;  // opened with open's O_SYNC/O_DSYNC
  bool append = false;
  bool writable = false;
};

Mount* Ctx() { return static_cast<Mount*>(fuse_get_context()->private_data); }
Handle* H(const fuse_file_info* fi) {
  return reinterpret_cast<Handle*>(static_cast<uintptr_t>(fi->fh));
}

// The errno of a failed call, negated as FUSE wants it.
int Err(const Status& s) {
  const int e = ErrnoOf(s);
  return -(e ? e : EIO);
}

void Fill(const FileInfo& fi, struct stat* st) {
  FileInfoToStat(fi, st);
  st->st_uid = Ctx()->uid;
  st->st_gid = Ctx()->gid;
  st->st_blksize = 1 << 20;
}

int GetAttr(const char* path, struct stat* st, fuse_file_info* fi) {
  FileInfo info;
  Status s = fi && fi->fh ? H(fi)->file->Stat(&info) : Ctx()->fs->Stat(path, &info);
  if (!s.ok()) return Err(s);
  memset(st, 0, sizeof *st);
  Fill(info, st);
  return 0;
}

int ReadDir(const char* path, void* buf, fuse_fill_dir_t filler, off_t,
            fuse_file_info*, fuse_readdir_flags) {
  if (!path) return -ENOENT;  // a directory removed while open
  std::vector<DirEntry> entries;
  Status s = Ctx()->fs->ReadDir(path, &entries);
  if (!s.ok()) return Err(s);
  struct stat st;
  memset(&st, 0, sizeof st);
  st.st_mode = S_IFDIR;
  filler(buf, ".", &st, 0, static_cast<fuse_fill_dir_flags>(0));
  filler(buf, "..", &st, 0, static_cast<fuse_fill_dir_flags>(0));
  for (const DirEntry& e : entries) {
    st.st_mode = e.is_dir ? S_IFDIR : S_IFREG;
    if (filler(buf, e.name.c_str(), &st, 0, static_cast<fuse_fill_dir_flags>(0))) {
      break;
    }
  }
  return 0;
}

int OpenWith(const char* path, int flags, mode_t mode, fuse_file_info* fi) {
  if (Ctx()->read_only && ((flags & O_ACCMODE) != O_RDONLY ||
                           (flags & (O_CREAT | O_TRUNC)))) {
    return -EROFS;
  }
  auto h = std::make_unique<Handle>();
  // O_SYNC, O_DSYNC (given at open, not to write): the file layer makes
  // each write durable before it returns (the kernel's fsync after such a
  // write comes on top).
  const int keep =
      O_ACCMODE | O_CREAT | O_EXCL | O_TRUNC | O_APPEND | O_SYNC | O_DSYNC;
  Status s = Ctx()->fs->OpenFile(path, flags & keep, mode & 07777, &h->file);
  if (!s.ok()) return Err(s);
  h->append = flags & O_APPEND;
  h->writable = (flags & O_ACCMODE) != O_RDONLY;
  fi->fh = reinterpret_cast<uintptr_t>(h.release());
  return 0;
}

int Open(const char* path, fuse_file_info* fi) {
  return OpenWith(path, fi->flags, 0, fi);
}

int Create(const char* path, mode_t mode, fuse_file_info* fi) {
  return OpenWith(path, fi->flags | O_CREAT, mode, fi);
}

int Read(const char*, char* buf, size_t n, off_t off, fuse_file_info* fi) {
  size_t got = 0;
  Status s = H(fi)->file->PRead(buf, n, static_cast<uint64_t>(off), &got);
  if (!s.ok()) return Err(s);
  return static_cast<int>(got);
}

int Write(const char*, const char* buf, size_t n, off_t off, fuse_file_info* fi) {
  Handle* h = H(fi);
  // O_APPEND: the file layer appends at its own end of file, which the
  // kernel's idea of the size may lag behind.
  Status s = h->append ? h->file->Write(buf, n)
                       : h->file->PWrite(buf, n, static_cast<uint64_t>(off));
  if (!s.ok()) return Err(s);
  return static_cast<int>(n);
}

int Fsync(const char*, int, fuse_file_info* fi) {
  Status s = H(fi)->file->Sync();
  return s.ok() ? 0 : Err(s);
}

// A rename, unlink or create is durable once its directory is synced, as
// on a local file system (and the space of what it removed is given back).
int FsyncDir(const char*, int, fuse_file_info*) {
  if (Ctx()->read_only) return 0;
  Status s = Ctx()->fs->Sync();
  return s.ok() ? 0 : Err(s);
}

// Every close(2) of a descriptor (and each of its dups) comes here first,
// and its result is close's: the release that follows the last one comes
// after close has returned, and its errors reach no one. So a handle that
// may have written makes its data durable here, as fsync does; the
// release then only marks the file complete.
int Flush(const char*, fuse_file_info* fi) {
  Handle* h = H(fi);
  if (!h->writable) return 0;
  Status s = h->file->Sync();
  return s.ok() ? 0 : Err(s);
}

int Release(const char*, fuse_file_info* fi) {
  std::unique_ptr<Handle> h(H(fi));
  Status s = h->file->Close();
  if (!s.ok()) {
    fprintf(stderr, "sluice mount: closing %s: %s\n", h->file->path().c_str(),
            s.ToString().c_str());
  }
  return s.ok() ? 0 : Err(s);
}

int Truncate(const char* path, off_t size, fuse_file_info* fi) {
  if (size < 0) return -EINVAL;
  Status s = fi && fi->fh ? H(fi)->file->Truncate(static_cast<uint64_t>(size))
                          : Ctx()->fs->Truncate(path, static_cast<uint64_t>(size));
  return s.ok() ? 0 : Err(s);
}

int Mkdir(const char* path, mode_t mode) {
  Status s = Ctx()->fs->Mkdir(path, mode & 07777);
  return s.ok() ? 0 : Err(s);
}
int Rmdir(const char* path) {
  Status s = Ctx()->fs->Rmdir(path);
  return s.ok() ? 0 : Err(s);
}
int Unlink(const char* path) {
  Status s = Ctx()->fs->Unlink(path);
  return s.ok() ? 0 : Err(s);
}
int Rename(const char* from, const char* to, unsigned int flags) {
  if (flags) return -EINVAL;  // RENAME_NOREPLACE / RENAME_EXCHANGE
  Status s = Ctx()->fs->Rename(from, to);
  return s.ok() ? 0 : Err(s);
}

// Owners are not kept: chown to the owner getattr reports (or -1) succeeds
// on an existing path, to any other fails with EPERM. Modes and times are
// the file layer's. Extended attributes are not kept either: with no
// xattr operations, the kernel answers EOPNOTSUPP. Locks (flock, fcntl)
// are the kernel's own on the mount (no lock operations either): they
// exclude the processes that use this mount.
int SetAttrOf(const char* path, fuse_file_info* fi, const SetAttrs& a) {
  if (Ctx()->read_only) return -EROFS;
  const std::string p = path ? path : fi && fi->fh ? H(fi)->file->path() : "";
  Status s = Ctx()->fs->SetAttr(p, a);
  return s.ok() ? 0 : Err(s);
}
int Chmod(const char* path, mode_t mode, fuse_file_info* fi) {
  return SetAttrOf(path, fi, ModeAttrs(mode));
}
int Chown(const char* path, uid_t uid, gid_t gid, fuse_file_info* fi) {
  struct stat st;
  const int r = GetAttr(path, &st, fi);
  if (r != 0) return r;
  const bool same = (uid == static_cast<uid_t>(-1) || uid == Ctx()->uid) &&
                    (gid == static_cast<gid_t>(-1) || gid == Ctx()->gid);
  return same ? 0 : -EPERM;
}
int Utimens(const char* path, const timespec t[2], fuse_file_info* fi) {
  return SetAttrOf(path, fi, TimeAttrs(t));
}

int StatFs(const char*, struct statvfs* st) {
  return statvfs(Ctx()->root.c_str(), st) == 0 ? 0 : -errno;
}

void* Init(fuse_conn_info*, fuse_config* cfg) {
  // Inode numbers are libfuse's (directory entries carry none here).
  cfg->hard_remove = 1;  // the file layer keeps unlinked open files itself
  return Ctx();
}

fuse_operations Operations() {
  fuse_operations ops;
  memset(&ops, 0, sizeof ops);
  ops.init = Init;
  ops.getattr = GetAttr;
  ops.readdir = ReadDir;
  ops.open = Open;
  ops.create = Create;
  ops.read = Read;
  ops.write = Write;
  ops.fsync = Fsync;
  ops.fsyncdir = FsyncDir;
  ops.flush = Flush;
  ops.release = Release;
  ops.truncate = Truncate;
  ops.mkdir = Mkdir;
  ops.rmdir = Rmdir;
  ops.unlink = Unlink;
  ops.rename = Rename;
  ops.chmod = Chmod;
  ops.chown = Chown;
  ops.utimens = Utimens;
  ops.statfs = StatFs;
  return ops;
}

// Opens the store and mounts. On failure, says why in *why.
struct fuse* Start(Mount* m, int writer, const FsOptions& options,
                   const std::string& dir, std::string* why) {
  Status s = FileSystem::Open(options, m->root,
                              m->read_only ? FileSystem::kReader : writer, &m->fs);
  if (!s.ok()) {
    *why = s.ToString();
    return nullptr;
  }
  const std::string fsname = "fsname=sluice:" + m->root + ",subtype=sluice" +
                             (m->read_only ? ",ro" : "");
  std::vector<const char*> argv = {"sluice", "-o", fsname.c_str()};
  fuse_args args = FUSE_ARGS_INIT(static_cast<int>(argv.size()),
                                  const_cast<char**>(argv.data()));
  const fuse_operations ops = Operations();
  struct fuse* f = fuse_new(&args, &ops, sizeof ops, m);
  if (!f) {
    *why = "fuse_new failed (see the message above)";
    return nullptr;
  }
  if (fuse_mount(f, dir.c_str()) != 0) {
    *why = "cannot mount on " + dir +
           " (is it an existing directory? is /dev/fuse there and usable? "
           "see the message above)";
    fuse_destroy(f);
    return nullptr;
  }
  return f;
}

int Serve(struct fuse* f, Mount* m) {
  fuse_session* se = fuse_get_session(f);
  fuse_set_signal_handlers(se);
  const int rc = fuse_loop_mt(f, 0);
  fuse_remove_signal_handlers(se);
  fuse_unmount(f);
  fuse_destroy(f);
  Status s = m->fs->Close();
  if (!s.ok()) {
    fprintf(stderr, "sluice mount: closing the store: %s\n", s.ToString().c_str());
    return 1;
  }
  return rc == 0 ? 0 : 1;
}

}  // namespace

int MountMain(const std::string& root, const std::string& dir, int writer,
              bool read_only, bool foreground, const FsOptions& options) {
  Mount m;
  m.root = root;
  m.read_only = read_only;
  m.uid = getuid();
  m.gid = getgid();
  std::string why;
  if (foreground) {
    struct fuse* f = Start(&m, writer, options, dir, &why);
    if (!f) {
      fprintf(stderr, "sluice mount: %s\n", why.c_str());
      return 1;
    }
    return Serve(f, &m);
  }
  // Detach: the child opens the store (the engine's threads do not survive
  // fork, so nothing is opened before it) and mounts, then tells the parent
  // the outcome, which is the command's exit status.
  int p[2];
  if (pipe(p) != 0) {
    perror("sluice mount: pipe");
    return 1;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    perror("sluice mount: fork");
    return 1;
  }
  if (pid > 0) {
    close(p[1]);
    std::string msg;
    char buf[512];
    ssize_t n;
    while ((n = read(p[0], buf, sizeof buf)) > 0) msg.append(buf, static_cast<size_t>(n));
    if (msg != "ok") {
      fprintf(stderr, "sluice mount: %s\n",
              msg.empty() ? "the daemon died while mounting" : msg.c_str());
      return 1;
    }
    return 0;
  }
  close(p[0]);
  setsid();
  struct fuse* f = Start(&m, writer, options, dir, &why);
  const std::string msg = f ? "ok" : why;
  (void)!write(p[1], msg.data(), msg.size());
  close(p[1]);
  if (!f) _exit(1);
  if (chdir("/") != 0) {
  }
  const int null = open("/dev/null", O_RDWR);
  if (null >= 0) {
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    if (null > 2) close(null);
  }
  _exit(Serve(f, &m));
}

}  // namespace tool
}  // namespace sluice
