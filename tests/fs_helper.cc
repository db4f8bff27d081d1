// A second process for the file-layer and tool tests: forged records, and
// a writer that dies.
//   fs_helper dirent ROOT W DIR NAME TARGET
//       adds to directory DIR of writer W's store an entry NAME ("\xHH",
//       "\0" and "\\" decoded) pointing at TARGET's inode, as only a damaged
//       or forged store has it (no process may have the store open)
//   fs_helper died ROOT W OPTIONS
//       as writer W (FsOptions::SetAll OPTIONS, "-" for none): creates
//       /unsynced and writes to it, writes /synced and syncs it (a barrier
//       of the whole store), then exits without closing anything: a writer
//       that died after an fsync
//   fs_helper cut ROOT W OPTIONS
//       as writer W: appends 100000 bytes of 'b' to /f in one call (with
//       extents of 64 KiB, the first reaches the store during the call),
//       then writes /other and syncs it (a barrier of the whole store),
//       then exits without closing anything: a writer that died in the
//       middle of a write
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "fs_craft.h"
#include "sluice/fs.h"
#include "sluice/kv.h"

using sluice::Status;

static int Fail(const Status& s) {
  fprintf(stderr, "fs_helper: %s\n", s.ToString().c_str());
  return 1;
}

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "dirent" && argc == 7) {
    const int writer = atoi(argv[3]);
    std::unique_ptr<sluice::Store> store;
    Status s = sluice::Store::Open(
        sluice::StoreOptions(), sluice::FileSystem::StorePath(argv[2], writer),
        &store);
    if (s.ok()) {
      s = sluice::test::CraftDirent(store.get(), argv[4],
                                    sluice::test::Unescape(argv[5]), argv[6]);
    }
    if (store) {
      Status c = store->Close();
      if (s.ok()) s = c;
    }
    return s.ok() ? 0 : Fail(s);
  }
  if (cmd == "died" && argc == 5) {
    sluice::FsOptions options;
    Status s;
    if (std::string(argv[4]) != "-") s = options.SetAll(argv[4]);
    std::unique_ptr<sluice::FileSystem> fs;
    if (s.ok()) s = sluice::FileSystem::Open(options, argv[2], atoi(argv[3]), &fs);
    std::unique_ptr<sluice::File> unsynced, synced;
    const std::string data(10000, 'x');
    if (s.ok()) {
      s = fs->OpenFile("/unsynced", sluice::kWrite | sluice::kCreate, 0644,
                       &unsynced);
    }
    if (s.ok()) s = unsynced->Write(data.data(), data.size());
    if (s.ok()) {
      s = fs->OpenFile("/synced", sluice::kWrite | sluice::kCreate, 0644,
                       &synced);
    }
    if (s.ok()) s = synced->Write(data.data(), data.size());
    if (s.ok()) s = synced->Sync();
    if (!s.ok()) return Fail(s);
    _exit(0);  // no Close: both files stay as the sync left them
  }
  if (cmd == "cut" && argc == 5) {
    sluice::FsOptions options;
    Status s;
    if (std::string(argv[4]) != "-") s = options.SetAll(argv[4]);
    std::unique_ptr<sluice::FileSystem> fs;
    if (s.ok()) s = sluice::FileSystem::Open(options, argv[2], atoi(argv[3]), &fs);
    std::unique_ptr<sluice::File> f, other;
    const std::string data(100000, 'b');
    if (s.ok()) s = fs->OpenFile("/f", sluice::kWrite | sluice::kAppend, 0, &f);
    if (s.ok()) s = f->Write(data.data(), data.size());
    if (s.ok()) {
      s = fs->OpenFile("/other", sluice::kWrite | sluice::kCreate, 0644, &other);
    }
    if (s.ok()) s = other->Write("other", 5);
    if (s.ok()) s = other->Sync();
    if (!s.ok()) return Fail(s);
    _exit(0);  // no Close: the rest of the append is lost
  }
  fprintf(stderr,
          "usage: fs_helper dirent ROOT W DIR NAME TARGET | "
          "died ROOT W OPTIONS | cut ROOT W OPTIONS\n");
  return 2;
}
