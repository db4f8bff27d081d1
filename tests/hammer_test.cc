// Eight threads on one store and on one file system at once: puts, gets,
// overwrites, deletes, barriers and scans of the same keys; writes,
// rewrites, syncs and reads of the same files. Every value and every file
// names its own version, so any read of a torn, stale-but-never-written or
// punched range is caught. Built for ThreadSanitizer too (scripts/
// sanitize.sh), where it is the test that shared state is guarded.
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "sluice/fs.h"
#include "sluice/iterator.h"
#include "sluice/kv.h"
#include "test_util.h"

namespace sluice {
namespace {

constexpr int kThreads = 8;

// `size` bytes that name (key, version) in their first 16 and repeat a
// byte derived from both: a value is whole or it is caught.
std::string Versioned(uint64_t key, uint64_t version, size_t size) {
  std::string v(size, static_cast<char>((key * 31 + version) % 251));
  if (size >= 16) {
    memcpy(&v[0], &key, 8);
    memcpy(&v[8], &version, 8);
  }
  return v;
}

bool Whole(const std::string& v, uint64_t key) {
  if (v.size() < 16) return false;
  uint64_t k, version;
  memcpy(&k, v.data(), 8);
  memcpy(&version, v.data() + 8, 8);
  return k == key && v == Versioned(key, version, v.size());
}

size_t SizeOf(uint64_t r) {
  switch (r % 3) {
    case 0: return 16 + r % 1000;            // in the tree
    case 1: return 4096 + r % 60000;         // in the value log
    default: return 200000 + r % 400000;     // across its buffers
  }
}

class HammerTest : public ::testing::TestWithParam<const char*> {};

TEST_P(HammerTest, OneStoreFromEightThreads) {
  test::TempDir dir;
  StoreOptions o;
  ASSERT_OK(o.SetAll(std::string(GetParam()) + ",write_buffer_size=1m"));
  std::unique_ptr<Store> store;
  ASSERT_OK(Store::Open(o, dir.path() + "/s", &store));
  constexpr uint64_t kKeys = 16;
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      uint64_t r = 0x9e3779b97f4a7c15ull * (t + 1);
      for (int i = 0; i < 300; ++i) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        const uint64_t key = r % kKeys;
        const std::string name = "k" + std::to_string(key);
        Status s;
        std::string v;
        switch ((r >> 8) % 10) {
          case 0: case 1: case 2:
            s = store->Put(name, Versioned(key, r, SizeOf(r >> 16)),
                           (r >> 12) & 1 ? WriteMode::kAsync : WriteMode::kSync);
            break;
          case 3:
            s = store->Delete(name);
            break;
          case 4:
            s = store->WriteBarrier();
            break;
          case 5: {
            std::unique_ptr<Iterator> it = store->NewIterator("", "");
            for (it->SeekToFirst(); it->Valid(); it->Next()) {
              const std::string value(it->value());
              if (!it->Valid()) break;
              const uint64_t k = std::stoull(std::string(it->key().substr(1)));
              if (!Whole(value, k)) ++errors;
            }
            s = it->status();
            break;
          }
          default:
            s = store->Get(name, &v);
            if (s.ok() && !Whole(v, key)) {
              ADD_FAILURE() << name << ": a value that was never written ("
                            << v.size() << " bytes)";
              ++errors;
            }
            if (s.IsNotFound()) s = Status::OK();
            break;
        }
        if (!s.ok()) {
          ADD_FAILURE() << "thread " << t << ": " << s.ToString();
          ++errors;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  ASSERT_OK(store->Close());
}

TEST_P(HammerTest, OneFileSystemFromEightThreads) {
  test::TempDir dir;
  FsOptions o;
  ASSERT_OK(o.SetAll(GetParam()));
  std::unique_ptr<FileSystem> fs;
  ASSERT_OK(FileSystem::Open(o, dir.path(), 0, &fs));
  // Each file has one writing thread (its number), which rewrites it
  // whole; every thread reads every file. (Two threads truncating and
  // writing one file at once may leave a mix of both, as on any file
  // system.)
  constexpr uint64_t kFiles = kThreads;
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      uint64_t r = 0xd1b54a32d192ed03ull * (t + 1);
      for (int i = 0; i < 60; ++i) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        const bool write = (r >> 8) % 2 == 0;
        const uint64_t key = write ? t : r % kFiles;
        const std::string path = "/f" + std::to_string(key);
        std::unique_ptr<File> f;
        Status s;
        if (write) {  // rewrite the whole file, then sync
          const std::string data = Versioned(key, r, SizeOf(r >> 16));
          s = fs->OpenFile(path, kWrite | kCreate | kTruncate, 0644, &f);
          if (s.ok()) s = f->PWrite(data.data(), data.size(), 0);
          if (s.ok() && (r >> 12) % 2) s = f->Sync();
          if (s.ok()) s = f->Close();
        } else {  // read it whole; a file being rewritten may be short
          s = fs->OpenFile(path, kRead, 0, &f);
          if (s.IsNotFound()) continue;
          FileInfo info;
          if (s.ok()) s = f->Stat(&info);
          std::string data(info.size, '\0');
          size_t got = 0;
          if (s.ok()) s = f->PRead(&data[0], data.size(), 0, &got);
          data.resize(got);
          if (s.ok() && got >= 16) {
            uint64_t k, version;
            memcpy(&k, data.data(), 8);
            memcpy(&version, data.data() + 8, 8);
            const std::string want = Versioned(key, version, SizeOf(version >> 16));
            if (k != key || want.compare(0, got, data) != 0) {
              ADD_FAILURE() << path << ": " << got << " bytes never written";
              ++errors;
            }
          }
          if (s.ok()) s = f->Close();
        }
        if (!s.ok()) {
          ADD_FAILURE() << "thread " << t << " " << path << ": " << s.ToString();
          ++errors;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  ASSERT_OK(fs->Close());
}

INSTANTIATE_TEST_SUITE_P(Configs, HammerTest,
                         ::testing::Values("backend=rocksdb", "backend=leveldb",
                                           "backend=rocksdb,layout=lsm"),
                         test::OptionsParamName());

}  // namespace
}  // namespace sluice
