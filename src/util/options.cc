#include "sluice/options.h"

#include "sluice/fs.h"
#include "util/option_list.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <functional>
#include <sstream>

namespace sluice {

const char* BackendName(BackendKind kind) {
  switch (kind) {
    case BackendKind::kDefault: return "default";
    case BackendKind::kRocksDB: return "rocksdb";
    case BackendKind::kLevelDB: return "leveldb";
  }
  return "unknown";
}

const char* LayoutName(StoreLayout layout) {
  switch (layout) {
    case StoreLayout::kDefault: return "default";
    case StoreLayout::kLsm: return "lsm";
    case StoreLayout::kVlog: return "vlog";
  }
  return "unknown";
}

Status ParseSize(std::string_view text, size_t* out) {
  std::string t(text);
  if (t.empty() || !isdigit(static_cast<unsigned char>(t[0]))) {
    return Status::InvalidArgument("not a size: '" + t + "'");
  }
  errno = 0;
  char* end = nullptr;
  unsigned long long v = strtoull(t.c_str(), &end, 10);
  if (errno != 0) return Status::InvalidArgument("size out of range: " + t);
  unsigned shift = 0;
  std::string suffix(end);
  for (auto& c : suffix) c = static_cast<char>(tolower(c));
  if (suffix == "" || suffix == "b") {
    shift = 0;
  } else if (suffix == "k" || suffix == "kb" || suffix == "kib") {
    shift = 10;
  } else if (suffix == "m" || suffix == "mb" || suffix == "mib") {
    shift = 20;
  } else if (suffix == "g" || suffix == "gb" || suffix == "gib") {
    shift = 30;
  } else {
    return Status::InvalidArgument("bad size suffix in '" + t +
                                   "' (use k, m or g)");
  }
  if (shift && v > (~0ull >> shift)) {
    return Status::InvalidArgument("size out of range: " + t);
  }
  *out = static_cast<size_t>(v << shift);
  return Status::OK();
}

namespace {

Status ParseBool(std::string_view name, std::string_view text, bool* out) {
  std::string t(text);
  for (auto& c : t) c = static_cast<char>(tolower(c));
  if (t == "1" || t == "true" || t == "on" || t == "yes") {
    *out = true;
  } else if (t == "0" || t == "false" || t == "off" || t == "no") {
    *out = false;
  } else {
    return Status::InvalidArgument("option " + std::string(name) +
                                   ": not a boolean: '" + std::string(text) +
                                   "'");
  }
  return Status::OK();
}

Status ParseInt(std::string_view name, std::string_view text, int lo, int hi,
                int* out) {
  std::string t(text);
  char* end = nullptr;
  errno = 0;
  long v = strtol(t.c_str(), &end, 10);
  if (t.empty() || *end != '\0' || errno != 0 || v < lo || v > hi) {
    return Status::InvalidArgument(
        "option " + std::string(name) + ": '" + t + "' is not an integer in [" +
        std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  *out = static_cast<int>(v);
  return Status::OK();
}

Status ParseSizeOption(std::string_view name, std::string_view text,
                       size_t* out) {
  Status s = ParseSize(text, out);
  if (!s.ok()) {
    return Status::InvalidArgument("option " + std::string(name) + ": " +
                                   s.message());
  }
  return s;
}

// One row per option: how to set it by name and how to print it.
struct Field {
  StoreOptions::Info info;
  std::function<Status(StoreOptions*, std::string_view)> set;
  std::function<std::string(const StoreOptions&)> get;
};

#define SLUICE_BOOL(member, help)                                          \
  Field {                                                                  \
    {#member, help},                                                       \
        [](StoreOptions* o, std::string_view v) {                          \
          return ParseBool(#member, v, &o->member);                        \
        },                                                                 \
        [](const StoreOptions& o) { return std::string(o.member ? "1" : "0"); } \
  }
#define SLUICE_SIZE(member, help)                                          \
  Field {                                                                  \
    {#member, help},                                                       \
        [](StoreOptions* o, std::string_view v) {                          \
          return ParseSizeOption(#member, v, &o->member);                  \
        },                                                                 \
        [](const StoreOptions& o) { return std::to_string(o.member); }     \
  }
#define SLUICE_INT(member, lo, hi, help)                                   \
  Field {                                                                  \
    {#member, help},                                                       \
        [](StoreOptions* o, std::string_view v) {                          \
          return ParseInt(#member, v, lo, hi, &o->member);                 \
        },                                                                 \
        [](const StoreOptions& o) { return std::to_string(o.member); }     \
  }

const std::vector<Field>& Fields() {
  static const std::vector<Field> fields = {
      Field{{"backend", "rocksdb | leveldb | default (new: rocksdb)"},
            [](StoreOptions* o, std::string_view v) {
              if (v == "rocksdb") {
                o->backend = BackendKind::kRocksDB;
              } else if (v == "leveldb") {
                o->backend = BackendKind::kLevelDB;
              } else if (v == "default") {
                o->backend = BackendKind::kDefault;
              } else {
                return Status::InvalidArgument(
                    "option backend: unknown backend '" + std::string(v) +
                    "' (rocksdb, leveldb or default)");
              }
              return Status::OK();
            },
            [](const StoreOptions& o) {
              return std::string(BackendName(o.backend));
            }},
      Field{{"layout", "vlog | lsm | default (new: vlog): where values live"},
            [](StoreOptions* o, std::string_view v) {
              if (v == "vlog") {
                o->layout = StoreLayout::kVlog;
              } else if (v == "lsm") {
                o->layout = StoreLayout::kLsm;
              } else if (v == "default") {
                o->layout = StoreLayout::kDefault;
              } else {
                return Status::InvalidArgument(
                    "option layout: unknown layout '" + std::string(v) +
                    "' (vlog, lsm or default)");
              }
              return Status::OK();
            },
            [](const StoreOptions& o) {
              return std::string(LayoutName(o.layout));
            }},
      SLUICE_SIZE(vlog_min_value, "vlog: smallest value kept in the log"),
      SLUICE_SIZE(vlog_file_bytes, "vlog: size at which a new log file starts"),
      SLUICE_BOOL(vlog_direct_io, "vlog: O_DIRECT for the value log"),
      SLUICE_BOOL(vlog_direct_reads,
                  "vlog: O_DIRECT also for reads (false: the page cache)"),
      SLUICE_INT(vlog_write_buffers, 2, 64,
                 "vlog: write buffers (write_buffer_size / 2 each)"),
      SLUICE_BOOL(create_if_missing, "create the store if it does not exist"),
      SLUICE_BOOL(read_only, "open for reading only (shared lock)"),
      SLUICE_BOOL(snapshot_reads,
                  "read_only: open a RocksDB store another process writes, "
                  "as of its last barrier, without a lock"),
      SLUICE_BOOL(wal, "write-ahead log"),
      SLUICE_BOOL(sync_writes, "fsync the log on every update (needs wal)"),
      SLUICE_BOOL(compression, "compress data blocks"),
      Field{{"block_cache_bytes",
             "block cache size, 0 = off, auto = the store's tables "
             "(1..64 MiB; layout lsm: off)"},
            [](StoreOptions* o, std::string_view v) {
              if (v == "auto") {
                o->block_cache_bytes = StoreOptions::kBlockCacheAuto;
                return Status::OK();
              }
              return ParseSizeOption("block_cache_bytes", v,
                                     &o->block_cache_bytes);
            },
            [](const StoreOptions& o) {
              return o.block_cache_bytes == StoreOptions::kBlockCacheAuto
                         ? std::string("auto")
                         : std::to_string(o.block_cache_bytes);
            }},
      SLUICE_INT(bloom_bits, 0, 64,
                 "Bloom filter bits per key in table files, 0 = none"),
      SLUICE_BOOL(auto_compaction, "background compaction"),
      SLUICE_INT(tidy_tables, 0, 1 << 20,
                 "merge this many level-0 tables of little data at close, "
                 "0 = never"),
      SLUICE_BOOL(mmap_reads, "read table files through mmap"),
      SLUICE_BOOL(mmap_writes, "write table files through mmap"),
      SLUICE_SIZE(write_buffer_size, "memtable size"),
      SLUICE_INT(max_write_buffers, 2, 64, "memtables per writer"),
      SLUICE_SIZE(block_size, "data block size"),
      SLUICE_INT(flush_threads, 1, 64, "background flush threads"),
      SLUICE_BOOL(direct_io_flush, "O_DIRECT for flushes"),
      SLUICE_BOOL(direct_io_reads, "O_DIRECT for reads"),
      SLUICE_BOOL(blob_files, "key-value separation into blob files"),
      SLUICE_SIZE(min_blob_size, "smallest value kept in a blob file"),
      SLUICE_SIZE(blob_file_size, "blob file size"),
      SLUICE_SIZE(async_queue_bytes, "bytes queued by asynchronous calls"),
  };
  return fields;
}

}  // namespace

Status StoreOptions::Set(std::string_view name, std::string_view value) {
  const std::vector<Field>& fields = Fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    if (name != fields[i].info.name) continue;
    Status s = fields[i].set(this, value);
    if (s.ok() && i < 64) set_by_name_ |= uint64_t{1} << i;  // 64: a test
    return s;
  }
  return Status::InvalidArgument("unknown store option '" + std::string(name) +
                                 "'");
}

bool StoreOptions::Given(std::string_view name) const {
  const std::vector<Field>& fields = Fields();
  static const StoreOptions defaults;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (name != fields[i].info.name) continue;
    return (i < 64 && (set_by_name_ >> i & 1) != 0) ||
           fields[i].get(*this) != fields[i].get(defaults);
  }
  return false;
}

Status ForEachOption(
    std::string_view list,
    const std::function<Status(std::string_view, std::string_view)>& set) {
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t end = list.find_first_of(",;", pos);
    if (end == std::string_view::npos) end = list.size();
    std::string_view item = list.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return Status::InvalidArgument("option '" + std::string(item) +
                                     "' has no '=value'");
    }
    Status s = set(item.substr(0, eq), item.substr(eq + 1));
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status StoreOptions::SetAll(std::string_view list) {
  return ForEachOption(list, [this](std::string_view n, std::string_view v) {
    return Set(n, v);
  });
}

Status FsOptions::Set(std::string_view name, std::string_view value) {
  if (name != "extent_bytes") return store.Set(name, value);
  size_t n = 0;
  Status s = ParseSize(value, &n);
  if (!s.ok()) return Status::InvalidArgument("option extent_bytes: " + s.message());
  if (n < 4096 || n > (256u << 20)) {
    return Status::InvalidArgument("option extent_bytes: " + std::string(value) +
                                   " is outside [4k, 256m]");
  }
  extent_bytes = n;
  extent_bytes_set_ = true;
  return Status::OK();
}

Status FsOptions::SetAll(std::string_view list) {
  return ForEachOption(list, [this](std::string_view n, std::string_view v) {
    return Set(n, v);
  });
}

bool FsOptions::Given(std::string_view name) const {
  if (name != "extent_bytes") return store.Given(name);
  return extent_bytes_set_ || extent_bytes != FsOptions().extent_bytes;
}

Status StoreOptions::Validate() const {
  if (sync_writes && !wal) {
    return Status::InvalidArgument(
        "option sync_writes=1 needs wal=1 (without a log there is nothing to "
        "fsync per update; use write barriers)");
  }
  if (direct_io_reads && mmap_reads) {
    return Status::InvalidArgument(
        "options direct_io_reads and mmap_reads exclude each other");
  }
  if (direct_io_flush && mmap_writes) {
    return Status::InvalidArgument(
        "options direct_io_flush and mmap_writes exclude each other");
  }
  if (write_buffer_size < (64u << 10)) {
    return Status::InvalidArgument("option write_buffer_size must be >= 64k");
  }
  if (block_size < 1024 || block_size > (256u << 20)) {
    return Status::InvalidArgument("option block_size must be in [1k, 256m]");
  }
  if (vlog_file_bytes < (1u << 20)) {
    return Status::InvalidArgument("option vlog_file_bytes must be >= 1m");
  }
  if (vlog_min_value == 0) {
    return Status::InvalidArgument("option vlog_min_value must be > 0");
  }
  if (async_queue_bytes == 0) {
    return Status::InvalidArgument("option async_queue_bytes must be > 0");
  }
  return Status::OK();
}

std::string StoreOptions::ToString() const {
  std::ostringstream out;
  for (const Field& f : Fields()) {
    out << f.info.name << "=" << f.get(*this) << "\n";
  }
  return out.str();
}

const std::vector<StoreOptions::Info>& StoreOptions::List() {
  static const std::vector<Info> list = [] {
    std::vector<Info> v;
    for (const Field& f : Fields()) v.push_back(f.info);
    return v;
  }();
  return list;
}

}  // namespace sluice
