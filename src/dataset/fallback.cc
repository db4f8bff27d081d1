// A data root that fails under a dataset id being written (full, failing):
// this rank's parts of the id move to the next root, read back from the
// failed one (what a failed flush left in memory included), and the id is
// written there from then on; at the commit every rank's parts go to the
// highest root any rank fell back to, so that one root holds the id.
#include <algorithm>
#include <cstdio>

#include "dataset/internal.h"
#include "fs/writer_fs.h"

namespace sluice {

using dataset::Group;
using dataset::IdText;

Status ContextImpl::StoreAt(int k, bool create, FileSystem** out) {
  *out = nullptr;
  if (k == root_index) {
    Status s = OwnStore();
    *out = fs.get();
    return s;
  }
  if (k < 0 || k >= static_cast<int>(roots.size())) {
    return Status::InvalidArgument("no data root " + std::to_string(k));
  }
  std::lock_guard<std::mutex> lock(mu);
  auto it = root_fs.find(k);
  if (it == root_fs.end()) {
    const std::string dir = RootDir(k);
    const std::string path = fs::WriterStorePath(dir, group->rank());
    posix::PathKind kind;
    Status s = posix::Probe(path, &kind);
    if (s.ok() && kind == posix::PathKind::kMissing) {
      if (!create) return Status::NotFound("no store " + path);
      s = posix::CreateDirs(posix::JoinPath(dir, "commit"));
    }
    std::unique_ptr<FileSystem> f;
    if (s.ok()) {
      s = fs::OpenWriterFs(fs_options, path, group->rank(), "", &f);
    }
    if (!s.ok()) return s;
    it = root_fs.emplace(k, std::move(f)).first;
  }
  *out = it->second.get();
  return Status::OK();
}

Status DatasetImpl::MoveParts(int target) {
  ContextImpl* c = ctx.get();
  FileSystem* from = nullptr;
  FileSystem* to = nullptr;
  Status s = c->StoreAt(root_k, false, &from);
  if (s.ok()) s = c->StoreAt(target, true, &to);
  if (!s.ok()) return s;
  auto nsink = dataset::NewStoreSink(to);
  {
    // Data of this id there from a close that failed: not anyone's.
    FileInfo info;
    Status r = to->Stat(dir, &info);
    if (r.ok()) r = dataset::RemoveFsTree(to, dir);
    if (!r.ok() && !r.IsNotFound()) return r;
  }
  s = nsink->MakeDirs(dir);
  if (!s.ok()) return s;
  std::vector<std::shared_ptr<ElementImpl>> els;
  {
    std::lock_guard<std::mutex> lock(mu);
    els = elements;
  }
  std::string buf(4u << 20, '\0');
  for (auto& e : els) {
    if (!e->write) continue;
    std::lock_guard<std::mutex> lock(e->mu);
    std::unique_ptr<dataset::PartFile> nf;
    s = nsink->MakeDirs(e->path.substr(0, e->path.rfind('/')));
    if (s.ok()) s = nsink->Create(e->path, &nf);
    // A closed element is read from the old store, an open one from its
    // file (with what it could not flush).
    std::unique_ptr<File> closed_file;
    if (s.ok() && !e->file) s = from->OpenFile(e->path, kRead, 0, &closed_file);
    for (const auto& [b, end] : e->ranges) {
      for (uint64_t off = b; s.ok() && off < end;) {
        const size_t n =
            static_cast<size_t>(std::min<uint64_t>(buf.size(), end - off));
        if (e->file) {
          s = e->file->ReadBack(&buf[0], n, off);
        } else {
          size_t got = 0;
          s = closed_file->PRead(&buf[0], n, off, &got);
          if (s.ok() && got < n) {
            s = Status::Corruption(e->path + " in " + c->roots[root_k] +
                                   " is shorter than was written to it");
          }
        }
        if (s.ok()) s = nf->PWrite(buf.data(), n, off);
        off += n;
      }
      if (!s.ok()) break;
    }
    if (!s.ok()) return s;
    if (e->file) {
      // Its unflushable buffer goes with it; the bytes are in nf now.
      FileInfo ignored;
      e->file->Close(&ignored);
      e->file = std::move(nf);
    } else {
      FileInfo info;
      s = nf->Close(&info);
      if (s.ok() && (!info.checksum_valid || !info.complete)) {
        s = Status::IOError("element " + e->name + " was not closed whole");
      }
      if (!s.ok()) return s;
      e->part.size = info.size;
      e->part.checksum = info.checksum;
    }
  }
  {
    std::lock_guard<std::mutex> lock(c->mu);
    c->failed_fs.insert(from);
  }
  // The failed root gives this id's space back for later ids.
  {
    FileInfo info;
    Status r = from->Stat(dir, &info);
    if (r.ok()) r = dataset::RemoveFsTree(from, dir);
    if (r.ok()) {
      uint64_t freed = 0;
      static_cast<fs::WriterFs*>(from)->store()->store()->ReclaimSpace(&freed);
    }
  }
  root_k = target;
  moved_sink = std::move(nsink);
  sink = moved_sink.get();
  return Status::OK();
}

Status DatasetImpl::FallBack(const Status& why, int from) {
  ContextImpl* c = ctx.get();
  std::unique_lock<std::shared_mutex> sw(switch_mu);
  if (root_k != from) return Status::OK();  // moved by another thread
  const std::string root = c->roots[static_cast<size_t>(root_k)];
  if (mode != dataset::kModeBasic) {
    return Status(why.code(),
                  "data root " + root + " failed under " + IdText(name, id) +
                      " (" + why.message() +
                      "); file_per_node parts cannot move to the next root "
                      "(their bytes are in the node leader's process)");
  }
  const int target = root_k + 1;
  if (target >= static_cast<int>(c->roots.size())) {
    return Status(why.code(), "data root " + root + " failed under " +
                                  IdText(name, id) + " (" + why.message() +
                                  "), and it is the last of data_roots");
  }
  Status s = MoveParts(target);
  if (!s.ok()) {
    return Status(s.code(),
                  "data root " + root + " failed under " + IdText(name, id) +
                      " (" + why.message() + "); moving rank " +
                      std::to_string(c->group->rank()) + "'s parts to " +
                      c->roots[static_cast<size_t>(target)] + " failed: " +
                      s.message());
  }
  fprintf(stderr,
          "sluice: context %s: data root %s failed under %s (%s); rank %d's "
          "parts moved to data root %s\n",
          c->name.c_str(), root.c_str(), IdText(name, id).c_str(),
          why.ToString().c_str(), c->group->rank(),
          c->roots[static_cast<size_t>(target)].c_str());
  return Status::OK();
}

Status DatasetImpl::OneRoot(int* root) {
  ContextImpl* c = ctx.get();
  Group* g = c->group.get();
  std::vector<std::string> all;
  Status s = g->Gather(std::to_string(root_k), &all, 0);
  std::string top = std::to_string(root_k);
  if (s.ok() && g->rank() == 0) {
    int k = 0;
    for (const auto& a : all) k = std::max(k, atoi(a.c_str()));
    top = std::to_string(k);
  }
  if (s.ok()) s = g->Broadcast(&top, 0);
  if (!s.ok()) return s;
  *root = atoi(top.c_str());
  Status m;
  if (root_k < *root) {
    std::unique_lock<std::shared_mutex> sw(switch_mu);
    m = MoveParts(*root);
    if (!m.ok()) {
      m = Status(m.code(), "moving rank " + std::to_string(g->rank()) +
                               "'s parts of " + IdText(name, id) +
                               " to data root " +
                               c->roots[static_cast<size_t>(*root)] +
                               ", where other ranks' are: " + m.message());
    }
  }
  return g->Agree(m, "gathering " + IdText(name, id) + " on one data root");
}

}  // namespace sluice
