// A second process for the file-layer and tool tests: forged records.
//   fs_helper dirent ROOT W DIR NAME TARGET
//       adds to directory DIR of writer W's store an entry NAME ("\xHH",
//       "\0" and "\\" decoded) pointing at TARGET's inode, as only a damaged
//       or forged store has it (no process may have the store open)
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
  fprintf(stderr,
          "usage: fs_helper dirent ROOT W DIR NAME TARGET\n");
  return 2;
}
