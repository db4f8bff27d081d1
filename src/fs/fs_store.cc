#include "fs/fs_store.h"

#include "sluice/iterator.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "store/write_buffer.h"

namespace sluice {
namespace fs {

namespace {
constexpr uint64_t kInoChunk = 1024;  // inode numbers reserved per update
}  // namespace

std::string PrefixEnd(std::string prefix) {
  while (!prefix.empty()) {
    if (static_cast<uint8_t>(prefix.back()) != 0xff) {
      prefix.back() = static_cast<char>(prefix.back() + 1);
      return prefix;
    }
    prefix.pop_back();
  }
  return prefix;  // every key: unbounded
}

std::string QuoteName(std::string_view name) {
  constexpr size_t kShown = 64;
  std::string out = "\"";
  for (size_t i = 0; i < name.size() && i < kShown; ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
  if (name.size() > kShown) {
    out += "... (" + std::to_string(name.size()) + " bytes)";
  }
  return out;
}

int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Status FsStore::Open(const StoreOptions& options, const std::string& path,
                     int writer, std::unique_ptr<FsStore>* out) {
  std::unique_ptr<Store> store;
  Status s = Store::Open(options, path, &store);
  if (!s.ok()) return s;
  std::unique_ptr<FsStore> fs(new FsStore(std::move(store), path, writer));
  std::string value;
  s = fs->store_->Get(SuperKey(), &value);
  Super super;
  if (s.IsNotFound() && !options.read_only) {
    WriteBatch b;
    const int64_t now = NowNanos();
    Inode root;
    root.ino = kRootIno;
    root.type = FileType::kDirectory;
    root.mode = 0755;
    root.atime_ns = root.mtime_ns = root.ctime_ns = now;
    PutInode(&b, root);
    b.Put(SuperKey(), EncodeSuper(super));
    s = fs->store_->Write(b);
    // A new store is a file system from its first moment, even if its
    // process dies before it writes anything else.
    if (s.ok()) s = fs->store_->WriteBarrier();
  } else if (s.IsNotFound()) {
    // A writer killed between creating its store and its first barrier
    // left an empty store: no file system yet (NotFound, which a merged
    // view skips). Keys without a superblock are something else.
    std::unique_ptr<Iterator> it = fs->store_->NewIterator("", "");
    it->SeekToFirst();
    s = it->status();
    if (s.ok()) {
      s = it->Valid() ? Status::NotAStore("store " + path +
                                          " holds no Sluice file system")
                      : Status::NotFound("store " + path +
                                         " holds no file system yet");
    }
  } else if (s.ok()) {
    s = DecodeSuper(value, &super);
    if (!s.ok()) s = Status(s.code(), "store " + path + ": " + s.message());
  }
  if (!s.ok()) return s;
  fs->next_ino_ = fs->reserved_ino_ = super.next_ino;
  *out = std::move(fs);
  return Status::OK();
}

Status FsStore::Write(const WriteBatch& batch) {
  Status s = store_->Write(batch);
  generation_.fetch_add(1);
  return s;
}

Status FsStore::WriteFor(uint64_t ino, const WriteBatch& batch) {
  Status s = store_->Write(batch);
  std::lock_guard<std::mutex> lock(gen_mu_);
  ++ino_generation_[ino];
  return s;
}

uint64_t FsStore::generation(uint64_t ino) {
  std::lock_guard<std::mutex> lock(gen_mu_);
  auto it = ino_generation_.find(ino);
  return generation_.load() + (it == ino_generation_.end() ? 0 : it->second);
}

uint64_t FsStore::AllocateIno(WriteBatch* b) {
  std::lock_guard<std::mutex> lock(ino_mu_);
  if (next_ino_ >= reserved_ino_) {
    reserved_ino_ = next_ino_ + kInoChunk;
    Super super;
    super.next_ino = reserved_ino_;
    b->Put(SuperKey(), EncodeSuper(super));
  }
  return next_ino_++;
}

Status FsStore::GetInode(uint64_t ino, Inode* inode) {
  std::string v;
  Status s = store_->Get(InodeKey(ino), &v);
  if (s.IsNotFound()) {
    return Status::Corruption("store " + path_ + ": inode " +
                              std::to_string(ino) + " is missing");
  }
  if (s.ok()) s = DecodeInode(v, ino, inode);
  return s;
}

Status FsStore::Resolve(const std::string& path, Inode* parent,
                        std::string* name, Inode* inode, bool* exists,
                        std::vector<uint64_t>* ancestors) {
  Inode dir;
  Status s = GetInode(kRootIno, &dir);
  if (!s.ok()) return s;
  *exists = true;
  if (ancestors) ancestors->clear();
  if (path == "/") {
    *parent = dir;
    name->clear();
    *inode = dir;
    return Status::OK();
  }
  std::vector<uint64_t> chain;  // the directories walked through
  size_t pos = 1;
  for (;;) {
    chain.push_back(dir.ino);
    size_t slash = path.find('/', pos);
    const std::string part = path.substr(pos, slash - pos);
    std::string v;
    s = store_->Get(DirentKey(dir.ino, part), &v);
    const bool last = slash == std::string::npos;
    if (s.IsNotFound()) {
      if (!last) return Status::NotFound(path + ": no such directory");
      *parent = dir;
      *name = part;
      *exists = false;
      if (ancestors) ancestors->swap(chain);
      return Status::OK();
    }
    if (!s.ok()) return s;
    uint64_t ino;
    FileType type;
    s = DecodeDirent(v, &ino, &type);
    if (!s.ok()) return Status::Corruption(path + ": " + s.message());
    if (std::find(chain.begin(), chain.end(), ino) != chain.end()) {
      return Status::Corruption(
          path + ": the entry " + QuoteName(part) + " of " +
          (chain.size() == 1 ? std::string("/") : path.substr(0, pos - 1)) +
          " points back at an enclosing directory (a directory cycle; store " +
          path_ + ")");
    }
    Inode child;
    s = GetInode(ino, &child);
    if (!s.ok()) return s;
    if (last) {
      *parent = dir;
      *name = part;
      *inode = child;
      if (ancestors) ancestors->swap(chain);
      return Status::OK();
    }
    if (child.type != FileType::kDirectory) {
      return Status::NotADirectory(path + ": " + path.substr(0, slash) +
                                   " is not a directory");
    }
    dir = child;
    pos = slash + 1;
  }
}

Status FsStore::ListDir(uint64_t ino, const std::vector<uint64_t>& ancestors,
                        const std::string& path,
                        std::vector<DirEntry>* entries) {
  constexpr int kNamed = 8;  // bad entries named in the message, at most
  const std::string prefix = DirentPrefix(ino);
  std::unique_ptr<Iterator> it = PrefixIterator(store_.get(), prefix);
  std::string bad;
  int n_bad = 0;
  for (it->Seek(prefix); it->Valid() && HasPrefix(it->key(), prefix);
       it->Next()) {
    const std::string_view name = it->key().substr(prefix.size());
    uint64_t child;
    FileType type;
    const char* why = nullptr;
    if (!DecodeDirent(it->value(), &child, &type).ok()) {
      why = "fails its checksum";
    } else if (!ValidName(name)) {
      why = "is not a valid name";
    } else if (child == ino || std::find(ancestors.begin(), ancestors.end(),
                                         child) != ancestors.end()) {
      why = "points back at an enclosing directory (a directory cycle)";
    }
    if (why == nullptr) {
      entries->push_back({std::string(name), type == FileType::kDirectory});
    } else if (++n_bad <= kNamed) {
      bad += (n_bad > 1 ? "; " : "") + QuoteName(name) + " " + why;
    }
  }
  if (!it->status().ok()) {
    return Status(it->status().code(),
                  path + ": " + it->status().message());
  }
  if (n_bad > 0) {
    if (n_bad > kNamed) bad += "; and " + std::to_string(n_bad - kNamed) + " more";
    return Status::Corruption("directory " + path + " (store " + path_ +
                              ") holds entries that are left out: " + bad);
  }
  return Status::OK();
}

Status FsStore::DirIsEmpty(uint64_t ino, bool* empty) {
  const std::string prefix = DirentPrefix(ino);
  std::unique_ptr<Iterator> it = PrefixIterator(store_.get(), prefix);
  it->Seek(prefix);
  *empty = !(it->Valid() && HasPrefix(it->key(), prefix));
  return it->status();
}

Status FsStore::ExtentEnd(uint64_t ino, uint64_t* end) {
  const std::string prefix = IndexPrefix(ino);
  std::unique_ptr<Iterator> it = PrefixIterator(store_.get(), prefix);
  it->SeekForPrev(IndexKey(ino, ~0ull));
  *end = 0;
  if (it->Valid() && HasPrefix(it->key(), prefix)) {
    uint64_t len, sum;
    Status s = DecodeIndex(it->value(), &len, &sum);
    if (!s.ok()) return s;
    const uint64_t off = KeyOffset(it->key());
    if (off == kBadKeyOffset || off + len < off) {
      return Status::Corruption("a malformed extent index key of inode " +
                                std::to_string(ino));
    }
    *end = off + len;
  }
  return it->status();
}

void FsStore::PutExtent(uint64_t ino, uint64_t offset, std::string_view data,
                        WriteBatch* b) {
  const uint64_t sum = DataChecksum(ino, offset, data);
  b->Put(ExtentKey(ino, offset), {EncodeExtentHeader(data.size(), sum), data});
  b->Put(IndexKey(ino, offset), EncodeIndex(data.size(), sum));
}

void FsStore::PutExtentValue(uint64_t ino, uint64_t offset, uint64_t sum,
                             std::string* value, WriteBatch* b, bool fresh) {
  const uint64_t length = value->size() - kExtentHeader;
  EncodeExtentHeaderTo(value->data(), length, sum);
  b->rep().PutSwap(ExtentKey(ino, offset), value,
                   fresh ? 0 : WriteBuffer::kUnbounded);
  b->rep().PutReplacing(IndexKey(ino, offset), EncodeIndex(length, sum),
                        kIndexSize);
}

bool FsStore::TakeExtentValue(uint64_t ino, uint64_t offset,
                              std::string* value, WriteBatch* b) {
  return b->rep().TakeValue(ExtentKey(ino, offset), value);
}

Status FsStore::RemoveRange(uint64_t ino, uint64_t from, uint64_t to,
                            const std::string& what, WriteBatch* b,
                            uint64_t* removed) {
  *removed = 0;
  if (from >= to) return Status::OK();
  const std::string prefix = IndexPrefix(ino);
  std::unique_ptr<Iterator> it = PrefixIterator(store_.get(), prefix);
  // The extent starting at or before `from` may straddle it.
  it->SeekForPrev(IndexKey(ino, from));
  if (!(it->Valid() && HasPrefix(it->key(), prefix))) it->Seek(IndexKey(ino, 0));
  for (; it->Valid() && HasPrefix(it->key(), prefix); it->Next()) {
    const uint64_t start = KeyOffset(it->key());
    if (start >= to) break;
    uint64_t len, sum;
    Status s = DecodeIndex(it->value(), &len, &sum);
    if (!s.ok()) return s;
    const uint64_t end = start + len;
    if (end <= from) continue;
    b->Delete(ExtentKey(ino, start));
    b->Delete(IndexKey(ino, start));
    *removed += len;
    if (start < from || end > to) {  // keep the parts outside [from, to)
      std::string v;
      s = store_->Get(ExtentKey(ino, start), &v);
      std::string_view data;
      if (s.ok()) s = DecodeExtent(v, ino, start, what, &data, &sum);
      if (!s.ok()) return s;
      if (start < from) {
        PutExtent(ino, start, data.substr(0, from - start), b);
        *removed -= from - start;
      }
      if (end > to) {
        PutExtent(ino, to, data.substr(to - start), b);
        *removed -= end - to;
      }
    }
  }
  return it->status();
}

Status FsStore::DeleteFile(uint64_t ino) {
  for (const std::string& prefix : {ExtentPrefix(ino), IndexPrefix(ino)}) {
    std::unique_ptr<Iterator> it = PrefixIterator(store_.get(), prefix);
    WriteBatch b;
    // Offset 0, not the bare prefix: see VerifyFile in reader.cc.
    for (it->Seek(prefix + std::string(8, '\0'));
         it->Valid() && HasPrefix(it->key(), prefix); it->Next()) {
      b.Delete(it->key());
      if (b.bytes() > (1u << 20)) {
        Status s = Write(b);
        if (!s.ok()) return s;
        b.Clear();
      }
    }
    if (!it->status().ok()) return it->status();
    Status s = Write(b);
    if (!s.ok()) return s;
  }
  WriteBatch b;
  b.Delete(InodeKey(ino));
  return Write(b);
}

Status FsStore::ComputeChecksum(uint64_t ino, uint64_t size,
                                uint64_t* checksum) {
  const std::string prefix = IndexPrefix(ino);
  std::unique_ptr<Iterator> it = PrefixIterator(store_.get(), prefix);
  FileChecksum sum(size);
  for (it->Seek(IndexKey(ino, 0)); it->Valid() && HasPrefix(it->key(), prefix);
       it->Next()) {
    uint64_t len, data_sum;
    Status s = DecodeIndex(it->value(), &len, &data_sum);
    if (!s.ok()) return s;
    sum.Add(KeyOffset(it->key()), len, data_sum);
  }
  *checksum = sum.Value();
  return it->status();
}

}  // namespace fs
}  // namespace sluice
