// The node writer of file_per_node (node_writer.h): the leader's server and
// the other ranks' sink.
#include "dataset/node_writer.h"

#include <errno.h>
#include <stddef.h>
#include <sys/random.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <map>

#include "util/coding.h"

namespace sluice {
namespace dataset {
namespace {

constexpr uint32_t kMagic = 0x574e4c53;  // "SLNW"
constexpr size_t kRequestSize = 40;
constexpr size_t kReplySize = 36;
constexpr uint32_t kMaxPath = 4096;

enum Op : uint32_t {
  kHello = 1,
  kMakeDirs = 2,
  kCreate = 3,
  kWrite = 4,
  kClose = 5,
};

struct Request {
  uint32_t op = 0;
  uint64_t handle = 0;
  uint64_t offset = 0;
  uint32_t path_len = 0;
  uint64_t data_len = 0;
};

struct Reply {
  Status status;
  uint64_t handle = 0;
  FileInfo info;
};

void EncodeRequest(const Request& r, char* out) {
  EncodeFixed32(out, kMagic);
  EncodeFixed32(out + 4, r.op);
  EncodeFixed64(out + 8, r.handle);
  EncodeFixed64(out + 16, r.offset);
  EncodeFixed32(out + 24, r.path_len);
  EncodeFixed32(out + 28, 0);
  EncodeFixed64(out + 32, r.data_len);
}

// Reads exactly n bytes; false at the end of the stream or an error.
bool ReadFull(int fd, char* p, size_t n) {
  while (n > 0) {
    ssize_t r = recv(fd, p, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) errno = 0;  // the end of the stream
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// Sends the pieces whole; errno of the failure otherwise (0 for none).
int SendAll(int fd, struct iovec* iov, int n) {
  while (n > 0) {
    struct msghdr m;
    memset(&m, 0, sizeof m);
    m.msg_iov = iov;
    m.msg_iovlen = static_cast<size_t>(n);
    ssize_t w = sendmsg(fd, &m, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return errno;
    size_t left = static_cast<size_t>(w);
    while (n > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      ++iov;
      --n;
    }
    if (n > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + left;
      iov->iov_len -= left;
    }
  }
  return 0;
}

std::string Hex(const unsigned char* p, size_t n) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += kDigits[p[i] >> 4];
    out += kDigits[p[i] & 15];
  }
  return out;
}

// The abstract socket address of `name` (no file: the leading NUL).
socklen_t AbstractAddress(const std::string& name, struct sockaddr_un* a) {
  memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  const size_t n = std::min(name.size(), sizeof a->sun_path - 1);
  memcpy(a->sun_path + 1, name.data(), n);
  return static_cast<socklen_t>(offsetof(struct sockaddr_un, sun_path) + 1 +
                                n);
}

// ---- the client -------------------------------------------------------------

class Connection {
 public:
  Connection(int fd, int leader) : fd_(fd), leader_(leader) {}
  ~Connection() { close(fd_); }

  // A request whose outcome is the reply.
  Status Call(const Request& r, const std::string& path, const char* data,
              Reply* reply) {
    std::lock_guard<std::mutex> lock(mu_);
    Status s = SendLocked(r, path, data);
    if (!s.ok()) return s;
    char h[kReplySize];
    if (!ReadFull(fd_, h, sizeof h)) return Broken("reading a reply", errno);
    const uint32_t code = DecodeFixed32(h);
    const uint32_t flags = DecodeFixed32(h + 4);
    reply->handle = DecodeFixed64(h + 8);
    reply->info.size = DecodeFixed64(h + 16);
    reply->info.checksum = DecodeFixed64(h + 24);
    reply->info.checksum_valid = flags & 1;
    reply->info.complete = flags & 2;
    const uint32_t len = DecodeFixed32(h + 32);
    if (len > 65536) return Broken("reading a reply (malformed)", 0);
    std::string msg(len, '\0');
    if (!ReadFull(fd_, &msg[0], len)) return Broken("reading a reply", errno);
    reply->status = code == 0 ? Status::OK()
                              : Status(static_cast<Code>(code), msg);
    return Status::OK();
  }

  // A request without a reply (a write).
  Status Send(const Request& r, const std::string& path, const char* data) {
    std::lock_guard<std::mutex> lock(mu_);
    return SendLocked(r, path, data);
  }

 private:
  Status SendLocked(const Request& r, const std::string& path,
                    const char* data) {
    if (!broken_.ok()) return broken_;
    char h[kRequestSize];
    EncodeRequest(r, h);
    struct iovec iov[3] = {{h, sizeof h},
                           {const_cast<char*>(path.data()), path.size()},
                           {const_cast<char*>(data), r.data_len}};
    const int err = SendAll(fd_, iov, 3);
    return err ? Broken("sending a request", err) : Status::OK();
  }

  Status Broken(const char* what, int err) {
    broken_ = Status::IOError(
        "the node writer (rank " + std::to_string(leader_) + ") is gone: " +
        what + ": " + (err ? strerror(err) : "end of stream"));
    return broken_;
  }

  const int fd_;
  const int leader_;
  std::mutex mu_;
  Status broken_;  // GUARDED_BY(mu_): every later request fails with it
};

class NodeFile : public PartFile {
 public:
  NodeFile(std::shared_ptr<Connection> conn, uint64_t handle,
           std::string path)
      : conn_(std::move(conn)), handle_(handle), path_(std::move(path)) {}
  ~NodeFile() override {
    FileInfo info;
    if (open_) Close(&info);
  }

  Status PWrite(const char* buf, size_t n, uint64_t offset) override {
    while (n > 0) {
      Request r;
      r.op = kWrite;
      r.handle = handle_;
      r.offset = offset;
      r.data_len = std::min(n, kMaxNodeWrite);
      Status s = conn_->Send(r, "", buf);
      if (!s.ok()) return s;
      buf += r.data_len;
      offset += r.data_len;
      n -= r.data_len;
    }
    return Status::OK();
  }

  Status Close(FileInfo* info) override {
    if (!open_) return Status::InvalidArgument(path_ + " is closed");
    open_ = false;
    Request r;
    r.op = kClose;
    r.handle = handle_;
    Reply reply;
    Status s = conn_->Call(r, "", nullptr, &reply);
    if (s.ok()) s = reply.status;
    if (s.ok()) *info = reply.info;
    return s;
  }

 private:
  std::shared_ptr<Connection> conn_;
  const uint64_t handle_;
  const std::string path_;
  bool open_ = true;
};

class NodeSink : public PartSink {
 public:
  explicit NodeSink(std::shared_ptr<Connection> conn)
      : conn_(std::move(conn)) {}

  Status MakeDirs(const std::string& path) override {
    return PathCall(kMakeDirs, path, nullptr);
  }

  Status Create(const std::string& path,
                std::unique_ptr<PartFile>* out) override {
    Reply reply;
    Status s = PathCall(kCreate, path, &reply);
    if (s.ok()) out->reset(new NodeFile(conn_, reply.handle, path));
    return s;
  }

 private:
  Status PathCall(uint32_t op, const std::string& path, Reply* out) {
    if (path.size() > kMaxPath) {
      return Status::NameTooLong("path " + path + " is too long");
    }
    Request r;
    r.op = op;
    r.path_len = static_cast<uint32_t>(path.size());
    Reply reply;
    Status s = conn_->Call(r, path, nullptr, &reply);
    if (s.ok()) s = reply.status;
    if (s.ok() && out) *out = std::move(reply);
    return s;
  }

  std::shared_ptr<Connection> conn_;
};

// ---- the server -------------------------------------------------------------

bool SendReply(int fd, const Reply& r) {
  char h[kReplySize];
  const std::string& msg = r.status.message();
  EncodeFixed32(h, static_cast<uint32_t>(r.status.code()));
  EncodeFixed32(h + 4, (r.info.checksum_valid ? 1u : 0u) |
                           (r.info.complete ? 2u : 0u));
  EncodeFixed64(h + 8, r.handle);
  EncodeFixed64(h + 16, r.info.size);
  EncodeFixed64(h + 24, r.info.checksum);
  const size_t len = std::min<size_t>(msg.size(), 65536);
  EncodeFixed32(h + 32, static_cast<uint32_t>(len));
  struct iovec iov[2] = {{h, sizeof h}, {const_cast<char*>(msg.data()), len}};
  return SendAll(fd, iov, 2) == 0;
}

}  // namespace

Status NodeServer::Start(FileSystem* fs, int clients,
                         std::unique_ptr<NodeServer>* out,
                         std::string* address) {
  unsigned char rnd[24];
  if (getrandom(rnd, sizeof rnd, 0) != static_cast<ssize_t>(sizeof rnd)) {
    return Status::IOError(std::string("getrandom: ") + strerror(errno));
  }
  const std::string name =
      "sluice-node-writer." + std::to_string(getpid()) + "." + Hex(rnd, 8);
  const std::string token = Hex(rnd + 8, 16);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IOError(std::string("socket: ") + strerror(errno));
  struct sockaddr_un a;
  const socklen_t len = AbstractAddress(name, &a);
  if (bind(fd, reinterpret_cast<struct sockaddr*>(&a), len) != 0 ||
      listen(fd, 128) != 0) {
    const int err = errno;
    close(fd);
    return Status::IOError("node writer: cannot listen on @" + name + ": " +
                           strerror(err));
  }
  out->reset(new NodeServer(fs, clients, fd, token));
  (*out)->acceptor_ = std::thread([s = out->get()] { s->Accept(); });
  *address = name + " " + token;
  return Status::OK();
}

NodeServer::NodeServer(FileSystem* fs, int clients, int listen_fd,
                       std::string token)
    : fs_(fs),
      clients_(clients),
      listen_fd_(listen_fd),
      token_(std::move(token)) {}

NodeServer::~NodeServer() { Stop(); }

void NodeServer::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    // Wakes the acceptor (Linux: accept fails on a socket shut down) and
    // every connection's reader.
    shutdown(listen_fd_, SHUT_RDWR);
    for (auto& c : conns_) shutdown(c.first, SHUT_RDWR);
  }
  if (acceptor_.joinable()) acceptor_.join();
  close(listen_fd_);
  // No connection is added once the acceptor has ended.
  for (auto& c : conns_) {
    if (c.second.joinable()) c.second.join();
    close(c.first);
  }
  conns_.clear();
}

void NodeServer::Accept() {
  for (;;) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    const int err = errno;
    std::unique_lock<std::mutex> lock(mu_);
    if (stopping_) {
      if (fd >= 0) close(fd);
      return;
    }
    if (fd < 0) {
      if (err == EINTR || err == ECONNABORTED) continue;
      if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
        // Out of descriptors or memory for now: the rank waiting in its
        // hello is served once some are free.
        lock.unlock();
        usleep(10000);
        continue;
      }
      // The socket is unusable: refuse every later connection rather than
      // leave it queued and never answered.
      shutdown(listen_fd_, SHUT_RDWR);
      return;
    }
    // Only this user's processes, and no more than the node's ranks.
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
        cred.uid != geteuid() ||
        static_cast<int>(conns_.size()) >= clients_) {
      close(fd);
      continue;
    }
    try {
      conns_.emplace_back(fd, std::thread([this, fd] { Serve(fd); }));
    } catch (...) {  // no thread to be had: the rank's hello fails
      close(fd);
    }
  }
}

void NodeServer::Serve(int fd) {
  std::unique_ptr<PartSink> sink = NewStoreSink(fs_);
  struct Open {
    std::unique_ptr<PartFile> file;
    Status error;  // the first failed write
  };
  std::map<uint64_t, Open> files;
  uint64_t next = 1;
  std::vector<char> data;  // grown, never shrunk or cleared
  std::string path;
  bool hello = false;
  for (;;) {
    char h[kRequestSize];
    if (!ReadFull(fd, h, sizeof h)) break;
    Request r;
    r.op = DecodeFixed32(h + 4);
    r.handle = DecodeFixed64(h + 8);
    r.offset = DecodeFixed64(h + 16);
    r.path_len = DecodeFixed32(h + 24);
    r.data_len = DecodeFixed64(h + 32);
    // A request that breaks the protocol ends the connection: the client's
    // next request fails, and its id does not commit.
    if (DecodeFixed32(h) != kMagic || r.path_len > kMaxPath ||
        r.data_len > kMaxNodeWrite || (hello != (r.op != kHello)) ||
        (!hello && r.data_len != token_.size())) {
      break;
    }
    path.resize(r.path_len);
    if (data.size() < r.data_len) data.resize(r.data_len);
    if (!ReadFull(fd, &path[0], r.path_len) ||
        !ReadFull(fd, data.data(), r.data_len)) {
      break;
    }
    Reply reply;
    if (r.op == kHello) {
      if (std::string(data.data(), r.data_len) != token_) break;
      hello = true;
    } else if (r.op == kMakeDirs) {
      reply.status = sink->MakeDirs(path);
    } else if (r.op == kCreate) {
      std::unique_ptr<PartFile> f;
      reply.status = sink->Create(path, &f);
      if (reply.status.ok()) {
        reply.handle = next++;
        files[reply.handle].file = std::move(f);
      }
    } else if (r.op == kWrite) {
      auto it = files.find(r.handle);
      if (it == files.end()) break;
      Open& o = it->second;
      if (o.error.ok()) {
        o.error = o.file->PWrite(data.data(), r.data_len, r.offset);
      }
      continue;  // no reply
    } else if (r.op == kClose) {
      auto it = files.find(r.handle);
      if (it == files.end()) break;
      reply.status = it->second.file->Close(&reply.info);
      if (!it->second.error.ok()) reply.status = it->second.error;
      files.erase(it);
    } else {
      break;
    }
    if (!SendReply(fd, reply)) break;
  }
  // The peer's next request fails (Stop closes the descriptor).
  shutdown(fd, SHUT_RDWR);
  // Files a rank left open: closed without a barrier; their id does not
  // commit (the rank's close failed, or the job is ending).
  for (auto& [handle, o] : files) {
    FileInfo info;
    o.file->Close(&info);
  }
}

Status ConnectNodeWriter(const std::string& address, int leader,
                         std::unique_ptr<PartSink>* out) {
  const size_t sp = address.find(' ');
  if (sp == std::string::npos) {
    return Status::InvalidArgument("bad node writer address " + address);
  }
  const std::string name = address.substr(0, sp);
  const std::string token = address.substr(sp + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IOError(std::string("socket: ") + strerror(errno));
  struct sockaddr_un a;
  const socklen_t len = AbstractAddress(name, &a);
  int rc;
  do {
    rc = connect(fd, reinterpret_cast<struct sockaddr*>(&a), len);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    const int err = errno;
    close(fd);
    return Status::IOError(
        "cannot reach the node writer (rank " + std::to_string(leader) +
        ") at @" + name + ": " + strerror(err) +
        " (file_per_node needs the ranks of a node in one network "
        "namespace)");
  }
  // A leader that never answers the hello (it is gone, or stuck) is an
  // error after a minute, not a hang.
  struct timeval tv = {60, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  auto conn = std::make_shared<Connection>(fd, leader);
  Request r;
  r.op = kHello;
  r.data_len = token.size();
  Reply reply;
  Status s = conn->Call(r, "", token.data(), &reply);
  tv = {0, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (s.ok()) s = reply.status;
  if (!s.ok()) return s;
  out->reset(new NodeSink(std::move(conn)));
  return Status::OK();
}

}  // namespace dataset
}  // namespace sluice
