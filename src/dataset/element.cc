// Elements: writes (moving to the next root when theirs fails), reads
// through the commit record's index or a drained copy, strided and
// non-blocking forms, and requests (sluice/dataset.h).
#include <algorithm>
#include <cstring>

#include "dataset/internal.h"

namespace sluice {

using dataset::CheckStrided;
using dataset::ElementRecord;
using dataset::Group;
using dataset::IdText;
using dataset::NowNs;
using dataset::PartRecord;

// ---- ElementImpl ---------------------------------------------------------------

Status ElementImpl::Write(uint64_t offset, const char* buf, size_t n) {
  if (!write) {
    return Status::InvalidArgument("element " + name + " is open for reading");
  }
  for (;;) {
    // Shared with other writes; a move of the parts to another root waits.
    std::shared_lock<std::shared_mutex> sw(ds->switch_mu);
    const int at = ds->root_k;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (closed || closing) {
        return Status::InvalidArgument("element " + name + " is closed");
      }
      if (offset > (1ull << 62) || n > (1ull << 62) - offset) {
        // The data is not stored: the id must not commit as if it were.
        Status s = Status::InvalidArgument("element " + name +
                                           ": write past offset 2^62");
        if (error.ok()) error = s;
        return s;
      }
      if (n == 0) return Status::OK();
      ++inflight;
    }
    const uint64_t t0 = NowNs();
    Status s = file->PWrite(buf, n, offset);
    if (s.ok()) ds->write_c.Add(n, NowNs() - t0);
    std::unique_lock<std::mutex> lock(mu);
    if (--inflight == 0) idle.notify_all();
    if (!s.ok()) {
      if (dataset::RootFailed(s)) {
        // The root is full or failing: the parts move to the next root,
        // and this write is made again there.
        lock.unlock();
        sw.unlock();
        s = ds->FallBack(s, at);
        if (s.ok()) continue;
        lock.lock();
      }
      if (error.ok()) error = s;
      return s;
    }
    uint64_t b = offset, e = offset + n;
    auto it = ranges.upper_bound(b);
    if (it != ranges.begin() && std::prev(it)->second >= b) --it;
    while (it != ranges.end() && it->first <= e) {
      b = std::min(b, it->first);
      e = std::max(e, it->second);
      it = ranges.erase(it);
    }
    ranges[b] = e;
    end = std::max(end, offset + n);
    return Status::OK();
  }
}

Status ElementImpl::Read(uint64_t offset, char* buf, size_t n, size_t* got) {
  *got = 0;
  if (write) {
    return Status::InvalidArgument("element " + name + " is open for writing");
  }
  if (ds->ctx->Finished()) {
    return Status::InvalidArgument("context " + ds->ctx->name + " has ended");
  }
  const uint64_t t0 = NowNs();
  std::lock_guard<std::mutex> lock(mu);
  if (closed) return Status::InvalidArgument("element " + name + " is closed");
  if (offset >= rec_size || n == 0) return Status::OK();
  const size_t len =
      static_cast<size_t>(std::min<uint64_t>(n, rec_size - offset));
  const size_t e = static_cast<size_t>(rec - ds->record.elements.data());
  std::shared_ptr<tier::DrainedId> copy;
  if (ds->from_drained) {
    // The id is read from a later root.
    Status s = ds->DrainedCopy(&copy);
    size_t g = 0;
    if (s.ok()) s = copy->Read(e, offset, buf, len, &g);
    if (!s.ok()) return s;
    *got = g;
    ds->read.Add(g, NowNs() - t0);
    return Status::OK();
  }
  Status s = ReadStores(offset, buf, len);
  if (!s.ok() && (s.IsNotFound() || s.IsCorruption() ||
                  s.code() == Code::kIOError) &&
      ds->DrainedCopy(&copy).ok()) {
    // The first root's copy is missing or damaged: the drained one serves.
    size_t g = 0;
    Status f = copy->Read(e, offset, buf, len, &g);
    if (!f.ok()) {
      return Status(s.code(), s.message() +
                                  "; its drained copy failed too: " +
                                  f.ToString());
    }
    ds->fallback_reads.fetch_add(1);
    s = Status::OK();
  }
  if (!s.ok()) return s;
  *got = len;
  ds->read.Add(len, NowNs() - t0);
  return Status::OK();
}

// Bytes [offset, offset + len) from the stores of the context's root.
Status ElementImpl::ReadStores(uint64_t offset, char* buf, size_t len) {
  // The parts the range meets: only their stores are read.
  std::vector<size_t> meet;
  for (size_t i = 0; i < rec->parts.size(); ++i) {
    const PartRecord& p = rec->parts[i];
    bool meets = false;
    if (p.ranges.empty()) {
      meets = offset < p.size;
    } else {
      for (const auto& [b, e] : p.ranges) {
        if (b < offset + len && offset < e) {
          meets = true;
          break;
        }
      }
    }
    if (meets) meet.push_back(i);
  }
  memset(buf, 0, len);
  if (!meet.empty()) {
    auto& reader = readers[meet];
    if (!reader) {
      std::vector<fs::PeerPart> parts;
      for (size_t i : meet) {
        const PartRecord* pr = &rec->parts[i];
        const std::string path = dataset::PartPath(
            ds->dir, ds->record.mode, kind, name, pr->rank);
        fs::PeerPart part;
        Status s = ds->Store(pr->writer, &part.store);
        if (!s.ok()) return s;
        fs::Inode parent;
        std::string leaf;
        bool exists = false;
        s = part.store->Resolve(path, &parent, &leaf, &part.inode, &exists);
        if (s.ok() && !exists) {
          s = Status::Corruption(part.store->path() + " has no " + path +
                                 ", which the commit record of " +
                                 ds->name + " id " + std::to_string(ds->id) +
                                 " says it holds");
        }
        if (s.ok() &&
            (part.inode.size != pr->size || part.inode.checksum != pr->checksum ||
             (part.inode.flags & (fs::kChecksumStale | fs::kUnclosed)))) {
          s = Status::Corruption(
              part.store->path() + ": " + path + " is not what the commit "
              "record of " + ds->name + " id " + std::to_string(ds->id) +
              " says (size " + std::to_string(part.inode.size) + ", record " +
              std::to_string(pr->size) + "; or its checksum differs)");
        }
        if (!s.ok()) return s;
        parts.push_back(std::move(part));
      }
      reader = fs::NewPartsFile(ds->name + " id " + std::to_string(ds->id) +
                                    " element " + name,
                                std::move(parts));
    }
    size_t g = 0;
    Status s = reader->PRead(buf, len, offset, &g);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status ElementImpl::WriteStrided(uint64_t offset, const char* buf,
                                 size_t count, size_t block, uint64_t stride,
                                 size_t* done) {
  Status s;
  for (size_t i = 0; s.ok() && i < count; ++i) {
    s = Write(offset + i * stride, buf + i * block, block);
    if (s.ok()) *done += block;
  }
  return s;
}

Status ElementImpl::ReadStrided(uint64_t offset, char* buf, size_t count,
                                size_t block, uint64_t stride, size_t* got) {
  Status s;
  for (size_t i = 0; s.ok() && i < count; ++i) {
    size_t g = 0;
    s = Read(offset + i * stride, buf + i * block, block, &g);
    *got += g;
    if (g < block) break;
  }
  return s;
}

Status ElementImpl::Close() {
  std::vector<std::shared_ptr<RequestImpl>> wait;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (closed) return error;
    // No new request or write from here on; those begun are waited for.
    closing = true;
    wait.swap(pending);
  }
  Status s;
  for (auto& r : wait) {
    Status w = r->Wait(nullptr);
    if (s.ok()) s = w;
  }
  // Held to the end: the parts do not move while this one closes.
  std::shared_lock<std::shared_mutex> sw(ds->switch_mu, std::defer_lock);
  if (write) {
    // What the file buffers goes to the store first: a full root shows
    // here, while the bytes can still move to the next one.
    for (;;) {
      sw.lock();
      const int at = ds->root_k;
      Status fl;
      {
        std::unique_lock<std::mutex> lock(mu);
        idle.wait(lock, [this] { return inflight == 0; });
        if (closed) return error;
        if (file) fl = file->Flush();
      }
      if (fl.ok() || !dataset::RootFailed(fl)) {
        if (s.ok()) s = fl;
        break;
      }
      sw.unlock();
      fl = ds->FallBack(fl, at);
      if (!fl.ok()) {
        if (s.ok()) s = fl;
        sw.lock();
        break;
      }
    }
  }
  std::unique_lock<std::mutex> lock(mu);
  idle.wait(lock, [this] { return inflight == 0; });
  if (closed) return error;
  closed = true;
  readers.clear();
  if (write) {
    FileInfo info;
    Status c = file->Close(&info);
    file.reset();
    if (s.ok()) s = c;
    if (s.ok()) {
      Group* g = ds->ctx->group.get();
      part.writer =
          ds->mode == dataset::kModeFilePerNode ? g->node_leader() : g->rank();
      part.rank = g->rank();
      part.size = info.size;
      part.checksum = info.checksum;
      part.ranges.clear();
      if (ranges.size() <= dataset::kMaxRanges) {
        part.ranges.assign(ranges.begin(), ranges.end());
      }
      if (!info.checksum_valid || !info.complete) {
        s = Status::IOError("element " + name + " of " + ds->name +
                            " was not closed whole");
      }
    }
  }
  // Sticky: a later Close, and the dataset's, see it.
  if (error.ok()) error = s;
  return error;
}

Status ElementImpl::Submit(std::function<Status(size_t*)> op,
                           std::unique_ptr<Request>* req) {
  auto r = std::make_shared<RequestImpl>();
  {
    std::lock_guard<std::mutex> lock(mu);
    if (closed || closing) {
      return Status::InvalidArgument("element " + name + " is closed");
    }
    pending.push_back(r);
  }
  const bool queued = ds->ctx->worker.Run([r, op] {
    size_t got = 0;
    Status s = op(&got);
    r->Finish(s, got);
  });
  if (!queued) {
    r->Finish(Status::InvalidArgument("context " + ds->ctx->name +
                                      " has ended"),
              0);
  }
  req->reset(new Request(r));
  return Status::OK();
}

// ---- Element -----------------------------------------------------------------

Element::Element(std::shared_ptr<ElementImpl> impl) : impl_(std::move(impl)) {}
Element::~Element() = default;

const std::string& Element::name() const { return impl_->name; }
ElementKind Element::kind() const { return impl_->kind; }

uint64_t Element::size() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->write ? impl_->end : impl_->rec_size;
}

Status Element::Write(uint64_t offset, const void* buf, size_t n) {
  return impl_->Write(offset, static_cast<const char*>(buf), n);
}

Status Element::WriteStrided(uint64_t offset, const void* buf, size_t count,
                             size_t block, uint64_t stride) {
  Status s = CheckStrided(offset, count, block, stride);
  size_t done = 0;
  return s.ok() ? impl_->WriteStrided(offset, static_cast<const char*>(buf),
                                      count, block, stride, &done)
                : s;
}

Status Element::Read(uint64_t offset, void* buf, size_t n, size_t* got) {
  return impl_->Read(offset, static_cast<char*>(buf), n, got);
}

Status Element::ReadStrided(uint64_t offset, void* buf, size_t count,
                            size_t block, uint64_t stride, size_t* got) {
  *got = 0;
  Status s = CheckStrided(offset, count, block, stride);
  return s.ok() ? impl_->ReadStrided(offset, static_cast<char*>(buf), count,
                                     block, stride, got)
                : s;
}

Status Element::WriteNb(uint64_t offset, const void* buf, size_t n,
                        std::unique_ptr<Request>* req) {
  auto e = impl_;
  return e->Submit(
      [e, offset, buf, n](size_t* got) {
        Status s = e->Write(offset, static_cast<const char*>(buf), n);
        *got = s.ok() ? n : 0;
        return s;
      },
      req);
}

Status Element::WriteStridedNb(uint64_t offset, const void* buf, size_t count,
                               size_t block, uint64_t stride,
                               std::unique_ptr<Request>* req) {
  Status s = CheckStrided(offset, count, block, stride);
  if (!s.ok()) return s;
  auto e = impl_;
  return e->Submit(
      [e, offset, buf, count, block, stride](size_t* got) {
        return e->WriteStrided(offset, static_cast<const char*>(buf), count,
                               block, stride, got);
      },
      req);
}

Status Element::ReadNb(uint64_t offset, void* buf, size_t n,
                       std::unique_ptr<Request>* req) {
  auto e = impl_;
  return e->Submit(
      [e, offset, buf, n](size_t* got) {
        return e->Read(offset, static_cast<char*>(buf), n, got);
      },
      req);
}

Status Element::ReadStridedNb(uint64_t offset, void* buf, size_t count,
                              size_t block, uint64_t stride,
                              std::unique_ptr<Request>* req) {
  Status s = CheckStrided(offset, count, block, stride);
  if (!s.ok()) return s;
  auto e = impl_;
  return e->Submit(
      [e, offset, buf, count, block, stride](size_t* got) {
        return e->ReadStrided(offset, static_cast<char*>(buf), count, block,
                              stride, got);
      },
      req);
}

Status Element::Close() { return impl_->Close(); }

// ---- Request -------------------------------------------------------------------

Request::Request(std::shared_ptr<RequestImpl> impl) : impl_(std::move(impl)) {}
Request::~Request() { impl_->Wait(nullptr); }

Status Request::Wait(size_t* got) { return impl_->Wait(got); }

Status Request::Test(bool* done, size_t* got) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  *done = impl_->done;
  if (!*done) return Status::OK();
  if (got) *got = impl_->got;
  return impl_->status;
}

}  // namespace sluice
