#include "tool_util.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "util/text.h"

namespace sluice {
namespace tool {

std::string Printable(const std::string& s, bool backslash) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : text::Utf8Length(s, i);
    // C0 controls and DEL; C1 controls (U+0080..U+009F, which some
    // terminals obey as 8-bit controls: 0x9b is CSI); and bytes that are
    // not UTF-8.
    const bool control = c < 0x20 || c == 0x7f ||
                         (n == 2 && c == 0xc2 &&
                          static_cast<unsigned char>(s[i + 1]) < 0xa0);
    const bool not_utf8 = n == 0;
    if (not_utf8) n = 1;
    if (control || not_utf8) {
      for (size_t k = 0; k < n; ++k) {
        text::AppendHex("\\x%02x", static_cast<unsigned char>(s[i + k]), &out);
      }
    } else if (c == '\\' && backslash) {
      out += "\\\\";
    } else {
      out.append(s, i, n);
    }
    i += n;
  }
  return out;
}

std::string Json(const std::string& s) { return text::JsonString(s); }

std::string Join(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

std::string TimeString(int64_t ns) {
  time_t t = static_cast<time_t>(ns / 1000000000);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", localtime(&t));
  return buf;
}

int Fail(const char* cmd, const Status& s) {
  fprintf(stderr, "sluice %s: %s\n", cmd,
          Printable(s.ToString(), false).c_str());
  return 1;
}

bool AllZero(const char* p, size_t n) {
  static const char zeros[4096] = {};
  for (size_t i = 0; i < n; i += sizeof zeros) {
    if (memcmp(p + i, zeros, std::min(sizeof zeros, n - i)) != 0) return false;
  }
  return true;
}

Status WriterNumbers(const std::string& root, std::vector<int>* writers) {
  DIR* d = opendir(root.c_str());
  if (d == nullptr) return Status::NotFound(root + ": " + strerror(errno));
  while (struct dirent* e = readdir(d)) {
    if (strncmp(e->d_name, "writer.", 7) == 0) writers->push_back(atoi(e->d_name + 7));
  }
  closedir(d);
  std::sort(writers->begin(), writers->end());
  return Status::OK();
}

Status OpenReader(const std::string& root, std::unique_ptr<FileSystem>* fs) {
  return FileSystem::Open(FsOptions(), root, FileSystem::kReader, fs);
}

namespace {

// As FileSystem::ReadDir promises of the names it lists: one path
// component, which joined to a directory's path names an entry of it and
// nothing else (export builds its output files' names from these).
bool ValidName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.size() <= 255 &&
         name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

}  // namespace

Status Walk(FileSystem* fs, const std::string& path, const WalkFn& fn,
            const WalkErrorFn& on_error, int depth) {
  FileInfo info;
  Status s = fs->Stat(path, &info);
  if (!s.ok()) {
    on_error(path, s);
    return Status::OK();
  }
  s = fn(path, info);
  if (!s.ok() || !info.is_dir) return s;
  if (depth >= kMaxDepth) {
    on_error(path, Status::InvalidArgument(
                       path + ": more than " + std::to_string(kMaxDepth) +
                       " directories deep; not walked further"));
    return Status::OK();
  }
  std::vector<DirEntry> entries;
  s = fs->ReadDir(path, &entries);
  if (!s.ok()) on_error(path + "/", s);  // and on with what it did list
  for (const DirEntry& e : entries) {
    if (!ValidName(e.name)) {
      on_error(path + "/", Status::Corruption(path + ": an entry with a name "
                                              "no path can hold"));
      continue;
    }
    s = Walk(fs, Join(path, e.name), fn, on_error, depth + 1);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

}  // namespace tool
}  // namespace sluice
