// Raw records of the file layer (src/fs/format.h) written straight into a
// writer's store: directory entries that no file-system call makes (bad
// names, cycles), so that tests see how readers take a damaged or forged
// store. Built with src/fs/format.cc compiled in (its symbols are hidden in
// libsluice).
#ifndef SLUICE_TESTS_FS_CRAFT_H_
#define SLUICE_TESTS_FS_CRAFT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "fs/format.h"
#include "sluice/kv.h"

namespace sluice {
namespace test {

// The inode number and type of `path` ("/a/b") in one writer's store.
inline Status CraftLookup(Store* store, const std::string& path, uint64_t* ino,
                          fs::FileType* type) {
  *ino = fs::kRootIno;
  *type = fs::FileType::kDirectory;
  size_t pos = 1;
  while (pos < path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string::npos) slash = path.size();
    std::string v;
    Status s = store->Get(fs::DirentKey(*ino, path.substr(pos, slash - pos)), &v);
    if (s.ok()) s = fs::DecodeDirent(v, ino, type);
    if (!s.ok()) return Status(s.code(), path + ": " + s.message());
    pos = slash + 1;
  }
  return Status::OK();
}

// Adds to directory `dir` the entry `name` (any bytes), pointing at the
// inode of `target` with its type.
inline Status CraftDirent(Store* store, const std::string& dir,
                          std::string_view name, const std::string& target) {
  uint64_t parent, ino;
  fs::FileType parent_type, type;
  Status s = CraftLookup(store, dir, &parent, &parent_type);
  if (s.ok()) s = CraftLookup(store, target, &ino, &type);
  if (s.ok()) s = store->Put(fs::DirentKey(parent, name), fs::EncodeDirent(ino, type));
  return s;
}

// Decodes "\xHH", "\0", "\\" in `in`, so that names holding NUL or
// control bytes can be given on a command line.
inline std::string Unescape(const std::string& in) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '\\' && i + 1 < in.size()) {
      if (in[i + 1] == 'x' && i + 3 < in.size()) {
        out += static_cast<char>(std::stoi(in.substr(i + 2, 2), nullptr, 16));
        i += 3;
        continue;
      }
      if (in[i + 1] == '0') {
        out += '\0';
        ++i;
        continue;
      }
      if (in[i + 1] == '\\') {
        out += '\\';
        ++i;
        continue;
      }
    }
    out += in[i];
  }
  return out;
}

}  // namespace test
}  // namespace sluice

#endif  // SLUICE_TESTS_FS_CRAFT_H_
