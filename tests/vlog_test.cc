// The value log (layout vlog) through the store API: values of every size
// across buffer and file boundaries, read back before and after a barrier
// and after reopening; damage to the log is reported, never misread; a full
// data root is a clear error that loses nothing barriered before it; the
// space of dropped values is given back once the drop is durable, and not
// while a reader may still read them.
#include <dirent.h>
#include <xxhash.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include <map>
#include <string>
#include <thread>
#include <vector>

#include "sluice/kv.h"
#include "sluice/write_batch.h"
#include "store/write_buffer.h"
#include "test_util.h"

namespace sluice {
namespace {

using test::Pattern;
using test::TempDir;

constexpr uint64_t ValueLogBlock() { return 4096; }

std::vector<std::string> LogFiles(const std::string& store) {
  std::vector<std::string> out;
  DIR* d = opendir((store + "/vlog").c_str());
  if (d == nullptr) return out;
  while (struct dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 5 && n.substr(n.size() - 5) == ".vlog") {
      out.push_back(store + "/vlog/" + n);
    }
  }
  closedir(d);
  return out;
}

// Bytes the value log's files take on the device (not their sizes).
uint64_t LogBlocksBytes(const std::string& store) {
  uint64_t n = 0;
  for (const std::string& f : LogFiles(store)) {
    struct stat st;
    if (stat(f.c_str(), &st) == 0) n += static_cast<uint64_t>(st.st_blocks) * 512;
  }
  return n;
}

// Empty when `dir`'s file system can punch holes, else why not.
std::string CannotPunchHoles(const std::string& dir) {
  const std::string f = dir + "/punch-probe";
  int fd = open(f.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return std::string("cannot create ") + f + ": " + strerror(errno);
  std::string why;
  if (fallocate(fd, 0, 0, 1 << 20) != 0 ||
      fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 1 << 20) != 0) {
    why = std::string("the file system of ") + dir +
          " cannot punch holes: " + strerror(errno);
  }
  close(fd);
  unlink(f.c_str());
  return why;
}

class ValueLogTest : public ::testing::TestWithParam<const char*> {
 protected:
  StoreOptions Options() const {
    StoreOptions o;
    Status s = o.SetAll(GetParam());
    EXPECT_TRUE(s.ok()) << s.ToString();
    // Small buffers and files: values cross both.
    o.write_buffer_size = 2u << 20;
    o.vlog_file_bytes = 3u << 20;
    return o;
  }
  // One file for all the values (its preallocation then stays the same:
  // the space a test sees change is the values').
  StoreOptions OneFile() const {
    StoreOptions o = Options();
    o.vlog_file_bytes = 256u << 20;
    return o;
  }
  static constexpr size_t kValue = 1u << 20;
  // A writer of the store at Path() (OneFile) holding k0..k{n-1}, kValue
  // bytes each, and "small" (inline), all barriered; null, and *why set,
  // where the file system cannot punch holes.
  std::unique_ptr<Store> OpenWithValues(int n, std::string* why) {
    *why = CannotPunchHoles(dir_.Sub(""));
    std::unique_ptr<Store> store;
    if (!why->empty()) return store;
    EXPECT_OK(Store::Open(OneFile(), Path(), &store));
    for (int i = 0; store && i < n; ++i) {
      EXPECT_OK(store->Put("k" + std::to_string(i), Pattern(i, kValue)));
    }
    if (store) EXPECT_OK(store->Put("small", "inline"));
    if (store) EXPECT_OK(store->WriteBarrier());
    return store;
  }
  std::string Path() const { return dir_.Sub("s"); }
  TempDir dir_;
};

TEST_P(ValueLogTest, ValuesCrossBuffersAndFilesAndReadBack) {
  const std::string path = dir_.Sub("s");
  std::unique_ptr<Store> store;
  ASSERT_OK(Store::Open(Options(), path, &store));
  ASSERT_EQ(store->layout(), StoreLayout::kVlog);
  const size_t sizes[] = {0, 1, 4095, 4096, 100000, 1u << 20, 1500000, 2500000};
  std::map<std::string, std::string> want;
  int n = 0;
  for (int round = 0; round < 3; ++round) {
    for (size_t size : sizes) {
      char key[16];
      snprintf(key, sizeof key, "k%04d", n);
      want[key] = Pattern(n, size);
      ASSERT_OK(store->Put(key, want[key]));
      // Read your own write while it is still in a buffer.
      std::string got;
      ASSERT_OK(store->Get(key, &got));
      ASSERT_TRUE(got == want[key]) << key;
      ++n;
    }
  }
  // Overwrites and deletes go through the log as well.
  want["k0005"] = Pattern(999, 300000);
  ASSERT_OK(store->Put("k0005", want["k0005"]));
  ASSERT_OK(store->Delete("k0006"));
  want.erase("k0006");
  ASSERT_OK(store->WriteBarrier());
  auto check = [&](Store* s) {
    for (const auto& [k, v] : want) {
      std::string got;
      Status st = s->Get(k, &got);
      ASSERT_TRUE(st.ok()) << k << ": " << st.ToString();
      ASSERT_TRUE(got == v) << k << ": value differs";
    }
    auto it = s->NewIterator();
    auto w = want.begin();
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++w) {
      ASSERT_NE(w, want.end());
      ASSERT_EQ(it->key(), w->first);
      ASSERT_TRUE(it->value() == w->second) << w->first;
    }
    ASSERT_OK(it->status());
    EXPECT_EQ(w, want.end());
  };
  check(store.get());
  ASSERT_OK(store->Close());
  store.reset();
  // About 19 MiB through 3 MiB files: several files.
  EXPECT_GE(LogFiles(path).size(), 5u);
  StoreOptions ro = Options();
  ro.read_only = true;
  ASSERT_OK(Store::Open(ro, path, &store));
  check(store.get());
  ASSERT_OK(store->Close());
  store.reset();
  // A writer reopening starts a new file and keeps the old values.
  const size_t files = LogFiles(path).size();
  ASSERT_OK(Store::Open(Options(), path, &store));
  want["new"] = Pattern(7, 50000);
  ASSERT_OK(store->Put("new", want["new"]));
  ASSERT_OK(store->Close());
  EXPECT_EQ(LogFiles(path).size(), files + 1);
  // A writer that stores no value in the log leaves no file; a reclaim
  // over many files keeps every value pointed at (checked below).
  ASSERT_OK(Store::Open(Options(), path, &store));
  ASSERT_OK(store->Put("tiny", "x"));
  uint64_t freed = 0;
  ASSERT_OK(store->ReclaimSpace(&freed));
  ASSERT_OK(store->Close());
  EXPECT_EQ(LogFiles(path).size(), files + 1);
  want["tiny"] = "x";
  ASSERT_OK(Store::Open(ro, path, &store));
  check(store.get());
}

TEST_P(ValueLogTest, StoresOpenTogetherAndInTurnKeepTheirOwnBytes) {
  // Closed logs hand their buffers to the next log (reused, not freed): logs
  // open at the same time must each have their own, and a log that takes a
  // used buffer must never write or serve the bytes left in it.
  const int kStores = 3;
  for (int round = 0; round < 3; ++round) {
    std::vector<std::unique_ptr<Store>> stores(kStores);
    for (int i = 0; i < kStores; ++i) {
      ASSERT_OK(Store::Open(Options(), dir_.Sub("s" + std::to_string(i)),
                            &stores[i]));
    }
    for (int k = 0; k < 12; ++k) {  // interleaved, across buffer boundaries
      for (int i = 0; i < kStores; ++i) {
        const int id = (round * kStores + i) * 100 + k;
        ASSERT_OK(stores[i]->Put("k" + std::to_string(100 + k),
                                 Pattern(id, 300000 + 1000 * i)));
      }
    }
    for (auto& st : stores) ASSERT_OK(st->Close());
    // Read back, read-only (read-ahead windows, reused too), all open.
    StoreOptions ro = Options();
    ro.read_only = true;
    for (int i = 0; i < kStores; ++i) {
      ASSERT_OK(Store::Open(ro, dir_.Sub("s" + std::to_string(i)), &stores[i]));
    }
    for (int i = 0; i < kStores; ++i) {
      auto it = stores[i]->NewIterator();
      int k = 0;
      for (it->SeekToFirst(); it->Valid(); it->Next(), ++k) {
        const int id = (round * kStores + i) * 100 + k;
        ASSERT_TRUE(it->value() == Pattern(id, 300000 + 1000 * i))
            << "round " << round << " store " << i << " key " << k;
      }
      ASSERT_OK(it->status());
      EXPECT_EQ(k, 12);
    }
    for (auto& st : stores) ASSERT_OK(st->Close());
  }
}

TEST_P(ValueLogTest, IteratorsOnManyThreadsShareTheReadAhead) {
  // Sequential iterators read the values after theirs ahead, into buffers
  // the log shares between its readers: several at once, each on its own
  // range, in a read-only log and in a writer's finished files, must each
  // get their own bytes.
  const std::string path = dir_.Sub("s");
  const int kValues = 48;
  const size_t kSize = 300000;
  std::unique_ptr<Store> store;
  ASSERT_OK(Store::Open(Options(), path, &store));
  for (int k = 0; k < kValues; ++k) {
    char key[16];
    snprintf(key, sizeof key, "k%03d", k);
    ASSERT_OK(store->Put(key, Pattern(k, kSize)));
  }
  ASSERT_OK(store->Close());
  store.reset();
  auto read_all = [&](Store* st) {
    const int kThreads = 4;
    std::vector<std::thread> threads;
    std::vector<std::string> errors(kThreads);
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int pass = 0; pass < 3; ++pass) {
          // Thread t starts at a different value each pass.
          const int first = (t * 11 + pass * 5) % kValues;
          char key[16];
          snprintf(key, sizeof key, "k%03d", first);
          auto it = st->NewIterator();
          int k = first;
          for (it->Seek(key); it->Valid(); it->Next(), ++k) {
            if (it->value() != Pattern(k, kSize)) {
              errors[t] = "value " + std::to_string(k) + " differs";
              return;
            }
          }
          if (!it->status().ok()) {
            errors[t] = it->status().ToString();
            return;
          }
          if (k != kValues) {
            errors[t] = "stopped at " + std::to_string(k);
            return;
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
  };
  StoreOptions ro = Options();
  ro.read_only = true;
  ASSERT_OK(Store::Open(ro, path, &store));
  read_all(store.get());
  ASSERT_OK(store->Close());
  store.reset();
  ASSERT_OK(Store::Open(Options(), path, &store));  // a writer, files finished
  read_all(store.get());
  ASSERT_OK(store->Close());
}

TEST_P(ValueLogTest, FlippedByteInTheLogIsNamedNeverReturned) {
  const std::string path = dir_.Sub("s");
  std::unique_ptr<Store> store;
  ASSERT_OK(Store::Open(Options(), path, &store));
  ASSERT_OK(store->Put("a", Pattern(1, 65536)));
  ASSERT_OK(store->Put("b", Pattern(2, 65536)));
  ASSERT_OK(store->Close());
  store.reset();
  std::vector<std::string> files = LogFiles(path);
  ASSERT_EQ(files.size(), 1u);
  // "b" starts after the 4 KiB file header and "a".
  {
    FILE* f = fopen(files[0].c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    const long at = 4096 + 65536 + 1234;
    fseek(f, at, SEEK_SET);
    int c = fgetc(f);
    fseek(f, at, SEEK_SET);
    fputc(c ^ 0x10, f);
    fclose(f);
  }
  ASSERT_OK(Store::Open(Options(), path, &store));
  {
    // A sequential read: "b" is read and hashed ahead, on a background
    // thread, while "a" is taken; the damage shows all the same.
    auto seq = store->NewIterator();
    seq->Seek("a");
    ASSERT_TRUE(seq->Valid());
    EXPECT_TRUE(seq->value() == Pattern(1, 65536));
    ASSERT_OK(seq->status());
    seq->Next();
    ASSERT_TRUE(seq->Valid());
    EXPECT_TRUE(seq->value().empty());
    EXPECT_TRUE(seq->status().IsCorruption()) << seq->status().ToString();
  }
  std::string got;
  ASSERT_OK(store->Get("a", &got));
  EXPECT_TRUE(got == Pattern(1, 65536));
  Status s = store->Get("b", &got);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find(files[0]), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("offset 69632"), std::string::npos) << s.ToString();
  auto it = store->NewIterator();
  it->Seek("b");
  ASSERT_TRUE(it->Valid());
  EXPECT_TRUE(it->value().empty());
  EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
}

// A log file whose header is damaged, from a newer format, carries flags
// this version does not know, or names another file is refused when read,
// naming the file and what is wrong with it; a header rewritten alike
// (and its checksum with it) reads as before.
TEST_P(ValueLogTest, ALogFileHeaderThatIsNotThisFilesIsRefused) {
  const std::string path = dir_.Sub("s");
  {
    std::unique_ptr<Store> store;
    ASSERT_OK(Store::Open(Options(), path, &store));
    ASSERT_OK(store->Put("a", Pattern(1, 65536)));
    ASSERT_OK(store->Close());
  }
  std::vector<std::string> files = LogFiles(path);
  ASSERT_EQ(files.size(), 1u);
  std::string original(4096, '\0');
  {
    FILE* f = fopen(files[0].c_str(), "rb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(fread(&original[0], 1, original.size(), f), original.size());
    fclose(f);
  }
  // Sets the 32-bit field at `at` and, when `sum`, the header's checksum.
  auto forge = [&](size_t at, uint32_t value, bool sum) {
    std::string h = original;
    memcpy(&h[at], &value, 4);  // little-endian, as the format
    if (sum) {
      const uint64_t x = XXH64(h.data(), 4088, 0);
      memcpy(&h[4088], &x, 8);
    }
    FILE* f = fopen(files[0].c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(fwrite(h.data(), 1, h.size(), f), h.size());
    fclose(f);
  };
  struct Case {
    size_t at;
    uint32_t value;
    bool sum;
    const char* says;
  } cases[] = {
      {0, 0x44434241, true, "no value-log header"},  // magic
      {20, 1, false, "fails its header checksum"},   // a byte changed
      {8, 2, true, "format version 2"},
      {8, 0, true, "format version 0"},
      {20, 4, true, "header flags 4"},
      {16, 7, true, "says it is file 7"},
      {24, 12345, true, ""},  // the creation time: no harm
  };
  for (const Case& c : cases) {
    forge(c.at, c.value, c.sum);
    std::unique_ptr<Store> store;
    ASSERT_OK(Store::Open(Options(), path, &store));
    std::string got;
    Status s = store->Get("a", &got);
    if (c.says[0] == '\0') {
      EXPECT_OK(s);
      EXPECT_TRUE(got == Pattern(1, 65536));
    } else {
      EXPECT_FALSE(s.ok()) << c.says;
      EXPECT_NE(s.message().find(c.says), std::string::npos) << s.ToString();
      EXPECT_NE(s.message().find(files[0]), std::string::npos) << s.ToString();
    }
    store.reset();
  }
}

TEST_P(ValueLogTest, TruncatedLogIsReportedNotMisread) {
  const std::string path = dir_.Sub("s");
  std::unique_ptr<Store> store;
  ASSERT_OK(Store::Open(Options(), path, &store));
  ASSERT_OK(store->Put("a", Pattern(1, 10000)));
  ASSERT_OK(store->Put("b", Pattern(2, 300000)));
  ASSERT_OK(store->Close());
  store.reset();
  std::vector<std::string> files = LogFiles(path);
  ASSERT_EQ(files.size(), 1u);
  ASSERT_EQ(truncate(files[0].c_str(), 4096 * 10), 0);
  ASSERT_OK(Store::Open(Options(), path, &store));
  std::string got;
  ASSERT_OK(store->Get("a", &got));
  EXPECT_TRUE(got == Pattern(1, 10000));
  Status s = store->Get("b", &got);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("ends at byte 40960"), std::string::npos)
      << s.ToString();
  // A missing log file is named too.
  ASSERT_OK(store->Close());
  store.reset();
  ASSERT_EQ(unlink(files[0].c_str()), 0);
  StoreOptions ro = Options();
  ro.read_only = true;
  ASSERT_OK(Store::Open(ro, path, &store));
  s = store->Get("a", &got);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("missing"), std::string::npos) << s.ToString();
}

// Deleted and overwritten values give their space back at the barrier
// that makes the change durable, not before; what is still pointed at
// reads back, there and after reopening.
TEST_P(ValueLogTest, DroppedValuesGiveTheirSpaceBackOnceDurable) {
  std::string why;
  std::unique_ptr<Store> store = OpenWithValues(6, &why);
  if (!why.empty()) GTEST_SKIP() << why;
  ASSERT_TRUE(store);
  const std::string path = Path();
  const uint64_t full = LogBlocksBytes(path);
  ASSERT_GE(full, 6 * kValue);
  ASSERT_OK(store->Delete("k0"));
  ASSERT_OK(store->Delete("k1"));
  ASSERT_OK(store->Delete("k2"));
  ASSERT_OK(store->Put("k3", Pattern(30, 1000)));  // now inline
  ASSERT_OK(store->Delete("small"));
  // Not durable yet: nothing given back.
  EXPECT_GE(LogBlocksBytes(path), full);
  ASSERT_OK(store->WriteBarrier());
  const uint64_t after = LogBlocksBytes(path);
  // Four values dropped; at most a block at each end of the range kept.
  EXPECT_LE(after, full - 4 * kValue + 2 * ValueLogBlock()) << full;
  std::string got;
  for (int i : {4, 5}) {
    ASSERT_OK(store->Get("k" + std::to_string(i), &got));
    EXPECT_TRUE(got == Pattern(i, kValue)) << i;
  }
  ASSERT_OK(store->Get("k3", &got));
  EXPECT_TRUE(got == Pattern(30, 1000));
  // An overwrite with a value of the log's own gives the old one back.
  ASSERT_OK(store->Put("k4", Pattern(40, kValue)));
  ASSERT_OK(store->WriteBarrier());
  EXPECT_LE(LogBlocksBytes(path), after - kValue + 2 * ValueLogBlock());
  ASSERT_OK(store->Close());
  store.reset();
  StoreOptions ro = Options();
  ro.read_only = true;
  ASSERT_OK(Store::Open(ro, path, &store));
  for (int i : {0, 1, 2}) {
    EXPECT_TRUE(store->Get("k" + std::to_string(i), &got).IsNotFound()) << i;
  }
  ASSERT_OK(store->Get("k4", &got));
  EXPECT_TRUE(got == Pattern(40, kValue));
  ASSERT_OK(store->Get("k5", &got));
  EXPECT_TRUE(got == Pattern(5, kValue));
  ASSERT_OK(store->Close());
}

// A batch may say at most how long the value an update replaces is
// (WriteBuffer::Update). Below the log's threshold the log takes its word
// and does not look the key up: a wrong bound leaves the old value's space
// to ReclaimSpace, and loses nothing. A bound at or above the threshold,
// or a key a batch brought in without one, is looked up as before.
TEST_P(ValueLogTest, AReplacedValuesBoundSparesTheLookUpAndLosesNothing) {
  std::string why;
  std::unique_ptr<Store> store = OpenWithValues(4, &why);
  if (!why.empty()) GTEST_SKIP() << why;
  ASSERT_TRUE(store);
  const size_t threshold = Options().vlog_min_value;
  const std::string path = Path();
  const uint64_t full = LogBlocksBytes(path);
  ASSERT_GE(full, 4 * kValue);
  // Looked up, so their space comes back at the barrier: k0 with a bound
  // at the threshold; k1 deleted, then put with a false bound, in one
  // batch; k2 the same over two batches of one explicit batch (the delete
  // brought the key in, unbounded, both times).
  WriteBatch looked;
  looked.rep().PutReplacing("k0", "inline now", threshold);
  looked.Delete("k1");
  looked.rep().PutReplacing("k1", "inline too", 16);
  ASSERT_OK(store->Write(looked));
  ASSERT_OK(store->StartBatch());
  WriteBatch first, second;
  first.Delete("k2");
  second.rep().PutReplacing("k2", "inline also", 16);
  ASSERT_OK(store->Write(first));
  ASSERT_OK(store->Write(second));
  ASSERT_OK(store->StopBatch());
  ASSERT_OK(store->WriteBarrier());
  const uint64_t after = LogBlocksBytes(path);
  EXPECT_LE(after, full - 3 * kValue + 2 * ValueLogBlock()) << full;
  // k3 with a false bound just below the threshold: taken at its word.
  WriteBatch trusted;
  trusted.rep().PutReplacing("k3", "inline three", threshold - 1);
  ASSERT_OK(store->Write(trusted));
  ASSERT_OK(store->WriteBarrier());
  EXPECT_GE(LogBlocksBytes(path) + ValueLogBlock(), after);
  uint64_t freed = 0;
  ASSERT_OK(store->ReclaimSpace(&freed));
  EXPECT_GE(freed + 2 * ValueLogBlock(), kValue);
  EXPECT_LE(LogBlocksBytes(path), after - kValue + 2 * ValueLogBlock());
  std::string got;
  for (const auto& [key, want] :
       std::map<std::string, std::string>{{"k0", "inline now"},
                                          {"k1", "inline too"},
                                          {"k2", "inline also"},
                                          {"k3", "inline three"},
                                          {"small", "inline"}}) {
    ASSERT_OK(store->Get(key, &got));
    EXPECT_EQ(got, want) << key;
  }
  ASSERT_OK(store->Close());
}

// Without a write-ahead log, batches' updates of the tree are held and
// written to it in groups (in key order). Reads see them at once, and the
// values they replace come back at the barrier, also the values of held
// updates that later batches replaced, or deleted, before the group was
// written; the next open reads the last values.
TEST_P(ValueLogTest, HeldTreeUpdatesAreReadAndWhatTheyReplaceGivenBack) {
  std::string why;
  std::unique_ptr<Store> store = OpenWithValues(4, &why);
  if (!why.empty()) GTEST_SKIP() << why;
  ASSERT_TRUE(store);
  const std::string path = Path();
  const uint64_t full = LogBlocksBytes(path);
  ASSERT_GE(full, 4 * kValue);
  auto value = [](int gen, int i) { return Pattern(10 * gen + i, kValue); };
  std::string got;
  for (int gen = 1; gen <= 3; ++gen) {
    WriteBatch b;
    for (int i = 0; i < 4; ++i) {
      if (gen == 2 && i == 3) {
        b.Delete("k3");  // then put again by gen 3
      } else {
        b.Put("k" + std::to_string(i), value(gen, i));
      }
    }
    ASSERT_OK(store->Write(b));  // no read in between: all held at once
  }
  // Read while held: Get looks at the held updates, an iterator has them
  // written first.
  for (int i = 0; i < 4; ++i) {
    ASSERT_OK(store->Get("k" + std::to_string(i), &got));
    EXPECT_TRUE(got == value(3, i)) << i;
  }
  EXPECT_TRUE(store->Get("k5", &got).IsNotFound());
  WriteBatch del;
  del.Delete("small");
  ASSERT_OK(store->Write(del));
  EXPECT_TRUE(store->Get("small", &got).IsNotFound()) << "a held delete";
  std::unique_ptr<Iterator> it = store->NewIterator("k", "l");
  int seen = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++seen) {
    EXPECT_TRUE(it->value() == value(3, seen)) << it->key();
  }
  ASSERT_OK(it->status());
  EXPECT_EQ(seen, 4);
  it.reset();
  // A single put after a held update of its key comes after it.
  WriteBatch four;
  four.Put("k0", value(4, 0));
  ASSERT_OK(store->Write(four));
  ASSERT_OK(store->Put("k0", value(5, 0)));
  ASSERT_OK(store->Get("k0", &got));
  EXPECT_TRUE(got == value(5, 0));
  // More updates than a group holds, no read between them.
  for (int i = 0; i < 1200; ++i) {
    WriteBatch b;
    b.Put("m" + std::to_string(i), "v" + std::to_string(i));
    ASSERT_OK(store->Write(b));
  }
  for (int i : {0, 511, 512, 1023, 1199}) {
    ASSERT_OK(store->Get("m" + std::to_string(i), &got));
    EXPECT_EQ(got, "v" + std::to_string(i));
  }
  ASSERT_OK(store->WriteBarrier());
  // Of the 17 values written, 4 live: the 4 of the start, 7 held ones and
  // k0's of gens 3 and 4 given back (the log's files are allocated ahead,
  // so the new values take no more room).
  EXPECT_LE(LogBlocksBytes(path), full - 13 * kValue + 2 * ValueLogBlock())
      << full;
  ASSERT_OK(store->Close());
  store.reset();
  ASSERT_OK(Store::Open(Options(), path, &store));
  for (int i = 0; i < 4; ++i) {
    ASSERT_OK(store->Get("k" + std::to_string(i), &got));
    EXPECT_TRUE(got == value(i == 0 ? 5 : 3, i)) << i;
  }
  ASSERT_OK(store->Get("m1199", &got));
  EXPECT_EQ(got, "v1199");
  EXPECT_TRUE(store->Get("small", &got).IsNotFound());
  ASSERT_OK(store->Close());
}

// A snapshot reader, open beside the writer, still reads what the writer
// deleted after it opened: the space waits until the reader is gone (the
// writer's next barrier, or its close).
TEST_P(ValueLogTest, AReaderKeepsDroppedValuesUntilItCloses) {
  if (std::string(GetParam()) == "backend=leveldb") {
    GTEST_SKIP() << "LevelDB stores are not read beside their writer";
  }
  std::string why;
  std::unique_ptr<Store> writer = OpenWithValues(4, &why), reader;
  if (!why.empty()) GTEST_SKIP() << why;
  ASSERT_TRUE(writer);
  const std::string path = Path();
  const uint64_t full = LogBlocksBytes(path);
  StoreOptions snap = OneFile();
  snap.read_only = true;
  snap.snapshot_reads = true;
  ASSERT_OK(Store::Open(snap, path, &reader));
  ASSERT_OK(writer->Delete("k0"));
  ASSERT_OK(writer->Delete("k1"));
  ASSERT_OK(writer->WriteBarrier());
  EXPECT_GE(LogBlocksBytes(path), full);
  std::string got;
  ASSERT_OK(reader->Get("k0", &got));
  EXPECT_TRUE(got == Pattern(0, kValue));
  ASSERT_OK(reader->Close());
  reader.reset();
  ASSERT_OK(writer->WriteBarrier());  // nothing new: the waiting ranges
  const uint64_t after = LogBlocksBytes(path);
  EXPECT_LE(after, full - 2 * kValue + 2 * ValueLogBlock()) << full;
  // Held by a reader at the last barrier, given back at the close.
  ASSERT_OK(Store::Open(snap, path, &reader));
  ASSERT_OK(writer->Delete("k2"));
  ASSERT_OK(writer->WriteBarrier());
  EXPECT_GE(LogBlocksBytes(path), after);
  ASSERT_OK(reader->Get("k2", &got));
  EXPECT_TRUE(got == Pattern(2, kValue));
  ASSERT_OK(reader->Close());
  ASSERT_OK(writer->Close());
  EXPECT_LE(LogBlocksBytes(path), after - kValue + 2 * ValueLogBlock());
  ASSERT_OK(Store::Open(snap, path, &reader));
  ASSERT_OK(reader->Get("k3", &got));
  EXPECT_TRUE(got == Pattern(3, kValue));
}

// Space the barriers could not give back (a reader held it when its writer
// closed; a writer died before its barrier) is found by ReclaimSpace, which
// keeps every value still pointed at; a reader's pin makes it Busy.
TEST_P(ValueLogTest, ReclaimSpaceFindsWhatNoKeyPointsAt) {
  std::string why;
  std::unique_ptr<Store> writer = OpenWithValues(6, &why), reader;
  if (!why.empty()) GTEST_SKIP() << why;
  ASSERT_TRUE(writer);
  const std::string path = Path();
  // A reader's pin (as a snapshot reader takes it) through the writer's
  // close: k1 and k2 are dropped durably and their space left behind.
  const int pin = open((path + "/vlog/READERS").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(pin, 0) << strerror(errno);
  ASSERT_EQ(flock(pin, LOCK_SH), 0) << strerror(errno);
  ASSERT_OK(writer->Delete("k1"));
  ASSERT_OK(writer->Delete("k2"));
  ASSERT_OK(writer->Close());  // cuts the preallocation, not k1 or k2
  EXPECT_GE(LogBlocksBytes(path), 6 * kValue);
  writer.reset();
  ASSERT_OK(Store::Open(OneFile(), path, &writer));
  uint64_t freed = 1;
  Status busy = writer->ReclaimSpace(&freed);
  EXPECT_TRUE(busy.IsBusy()) << busy.ToString();
  EXPECT_EQ(freed, 0u);
  EXPECT_NE(busy.message().find(path), std::string::npos) << busy.ToString();
  EXPECT_GE(LogBlocksBytes(path), 6 * kValue);
  close(pin);
  ASSERT_OK(writer->ReclaimSpace(&freed));
  EXPECT_GE(freed, 2 * kValue - 2 * ValueLogBlock());
  EXPECT_LE(LogBlocksBytes(path), 4 * kValue + 2 * ValueLogBlock());
  // Nothing more the second time; every live value reads back, also after
  // the writer's next values and a reopen.
  ASSERT_OK(writer->ReclaimSpace(&freed));
  EXPECT_EQ(freed, 0u);
  ASSERT_OK(writer->Put("k6", Pattern(6, kValue)));
  ASSERT_OK(writer->Close());
  writer.reset();
  StoreOptions ro = OneFile();
  ro.read_only = true;
  ASSERT_OK(Store::Open(ro, path, &reader));
  std::string got;
  for (int i : {0, 3, 4, 5, 6}) {
    ASSERT_OK(reader->Get("k" + std::to_string(i), &got));
    EXPECT_TRUE(got == Pattern(i, kValue)) << i;
  }
  for (int i : {1, 2}) {
    EXPECT_TRUE(reader->Get("k" + std::to_string(i), &got).IsNotFound()) << i;
  }
  ASSERT_OK(reader->Get("small", &got));
  EXPECT_EQ(got, "inline");
  uint64_t none = 1;
  EXPECT_EQ(reader->ReclaimSpace(&none).code(), Code::kInvalidArgument);
  EXPECT_EQ(none, 0u);
}

// kv_helper CMD (peak or huge) on the store at PATH with OPTIONS and a
// value of BYTES in a fresh process: the KiB it prints, or -1.
long HelperKib(const std::string& cmd, const std::string& path,
               const std::string& options, size_t bytes) {
  std::string out;
  const int rc = test::RunCommand(std::string(KV_HELPER) + " " + cmd + " " +
                                      path + " " + options + " " +
                                      std::to_string(bytes),
                                  &out);
  EXPECT_EQ(rc, 0) << "kv_helper " << cmd << ": " << out;
  return rc == 0 ? atol(out.c_str()) : -1;
}

// The write buffers (16 MiB each) are allocated at the first value, not at
// open: a process that only removes, renames or syncs (rm, mv, sync under
// the interposer) faults none of them in. Peak RSS of a fresh process that
// opens a writer and deletes a key, against one that also stores a value.
TEST_P(ValueLogTest, AWriterThatStoresNoValueAllocatesNoWriteBuffer) {
  auto peak_kib = [&](size_t value_bytes) {
    return HelperKib("peak", Path(), GetParam(), value_bytes);
  };
  ASSERT_GT(peak_kib(65536), 0);  // made the store
  const long none = peak_kib(0), one = peak_kib(65536);
  ASSERT_GT(none, 0);
  ASSERT_GT(one, 0);
  // One buffer is 16 MiB (the default write_buffer_size / 2).
  EXPECT_GE(one - none, 12 * 1024)
      << "peak RSS " << none << " KiB without a value, " << one
      << " KiB with one";
}

// The write buffers are on huge pages where THP is in "madvise" mode (so
// that O_DIRECT sends the device requests of 4 MiB rather than 0.5-1 MiB).
TEST_P(ValueLogTest, WriteBuffersAreOnHugePages) {
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  std::getline(thp, mode);
  if (mode.find("[madvise]") == std::string::npos) {
    GTEST_SKIP() << "transparent huge pages are not in madvise mode here ("
                 << (mode.empty() ? "no THP" : mode) << ")";
  }
  // One buffer is 16 MiB (the default write_buffer_size / 2): 8 huge pages.
  const long kib = HelperKib("huge", Path(), GetParam(), 65536);
  ASSERT_GE(kib, 0);
  EXPECT_GE(kib, 16 * 1024) << "AnonHugePages " << kib << " KiB";
}

// A data root that fills up: NoSpace, naming the log; everything
// barriered before it reads back.
TEST_P(ValueLogTest, FullDataRootIsNoSpaceAndLosesNothingBarriered) {
  const std::string root = dir_.Sub("small");
  test::SmallTmpfs tmpfs(root, "24m");
  if (!tmpfs.error().empty()) GTEST_SKIP() << tmpfs.error();
  const std::string path = root + "/s";
  std::unique_ptr<Store> store;
  ASSERT_OK(Store::Open(Options(), path, &store));
  for (int i = 0; i < 8; ++i) {
    ASSERT_OK(store->Put("kept" + std::to_string(i), Pattern(i, 1u << 20)));
  }
  ASSERT_OK(store->WriteBarrier());
  Status s;
  for (int i = 0; i < 64 && s.ok(); ++i) {
    s = store->Put("more" + std::to_string(i), Pattern(100 + i, 1u << 20));
    if (s.ok() && i % 4 == 3) s = store->WriteBarrier();
  }
  EXPECT_EQ(s.code(), Code::kNoSpace) << s.ToString();
  EXPECT_NE(s.message().find(path), std::string::npos) << s.ToString();
  store->Close();  // reports the same error; the kept data must survive
  store.reset();
  StoreOptions ro = Options();
  ro.read_only = true;
  Status o = Store::Open(ro, path, &store);
  if (!o.ok()) {
    // LevelDB writes a table at every open, read-only included, so a full
    // root must first get room; the error says so.
    EXPECT_EQ(o.code(), Code::kNoSpace) << o.ToString();
    EXPECT_EQ(std::string(GetParam()), "backend=leveldb") << o.ToString();
    ASSERT_TRUE(tmpfs.Resize("64m"));
    ASSERT_OK(Store::Open(ro, path, &store));
  }
  for (int i = 0; i < 8; ++i) {
    std::string got;
    ASSERT_OK(store->Get("kept" + std::to_string(i), &got));
    EXPECT_TRUE(got == Pattern(i, 1u << 20)) << i;
  }
  ASSERT_OK(store->Close());
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, ValueLogTest,
    ::testing::Values("backend=rocksdb", "backend=leveldb",
                      "backend=rocksdb,vlog_direct_io=0",
                      "backend=rocksdb,vlog_direct_reads=0",
                      "backend=rocksdb,vlog_write_buffers=5"),
    test::OptionsParamName());

}  // namespace
}  // namespace sluice
