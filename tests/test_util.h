// Helpers shared by the tests: status assertions, temporary directories,
// deterministic data, running a helper process.
#ifndef SLUICE_TESTS_TEST_UTIL_H_
#define SLUICE_TESTS_TEST_UTIL_H_

#include <ftw.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>

#include "sluice/options.h"
#include "sluice/status.h"

#define ASSERT_OK(expr)                                       \
  do {                                                        \
    ::sluice::Status _s = (expr);                             \
    ASSERT_TRUE(_s.ok()) << #expr << " -> " << _s.ToString(); \
  } while (0)
#define EXPECT_OK(expr)                                       \
  do {                                                        \
    ::sluice::Status _s = (expr);                             \
    EXPECT_TRUE(_s.ok()) << #expr << " -> " << _s.ToString(); \
  } while (0)

namespace sluice {
namespace test {

// A small tmpfs mounted on a new directory for the scope, to fill a data
// root: error() is empty when mounted, else why not (mounting needs root).
class SmallTmpfs {
 public:
  SmallTmpfs(const std::string& dir, const std::string& size) : dir_(dir) {
    if (mkdir(dir.c_str(), 0755) != 0 ||
        mount("tmpfs", dir.c_str(), "tmpfs", 0, ("size=" + size).c_str()) != 0) {
      error_ = "cannot mount a small tmpfs here (" +
               std::string(strerror(errno)) + "); needs root";
    }
  }
  ~SmallTmpfs() {
    if (error_.empty()) umount2(dir_.c_str(), MNT_DETACH);
  }
  SmallTmpfs(const SmallTmpfs&) = delete;
  SmallTmpfs& operator=(const SmallTmpfs&) = delete;
  const std::string& error() const { return error_; }
  // Gives it room: a new size.
  bool Resize(const std::string& size) {
    return mount("tmpfs", dir_.c_str(), "tmpfs", MS_REMOUNT,
                 ("size=" + size).c_str()) == 0;
  }

 private:
  std::string dir_;
  std::string error_;
};

// The name of a test instantiated over option lists ("backend=rocksdb,
// wal=1"): the list with every byte that is not a letter or digit as '_'.
struct OptionsParamName {
  template <class Param>
  std::string operator()(const ::testing::TestParamInfo<Param>& info) const {
    std::string n = info.param;
    for (char& c : n) {
      if (!isalnum(static_cast<unsigned char>(c))) c = '_';
    }
    return n;
  }
};

// An environ-style array over `vars` ("NAME=value"), null-terminated.
class Environ {
 public:
  Environ(std::initializer_list<std::string> vars) : vars_(vars) {
    for (const std::string& v : vars_) ptrs_.push_back(v.c_str());
    ptrs_.push_back(nullptr);
  }
  const char* const* get() const { return ptrs_.data(); }

 private:
  std::vector<std::string> vars_;
  std::vector<const char*> ptrs_;
};

// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
class TempDir {
 public:
  TempDir() {
    const char* base = getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") +
                       "/sluice-test-XXXXXX";
    char* p = mkdtemp(&tmpl[0]);
    if (p == nullptr) abort();
    path_ = tmpl;
  }
  ~TempDir() {
    nftw(path_.c_str(),
         [](const char* p, const struct stat*, int, struct FTW*) {
           return remove(p);
         },
         16, FTW_DEPTH | FTW_PHYS);
  }
  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// The KiB of FIELD ("VmHWM:") in the /proc file PATH, or -1 without it.
inline long ProcKib(const char* path, const std::string& field) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field, 0) == 0) return atol(line.c_str() + field.size());
  }
  fprintf(stderr, "no %s in %s\n", field.c_str(), path);
  return -1;
}

// Deterministic bytes: the same (seed, size) always gives the same string,
// and different seeds give different strings.
inline std::string Pattern(uint64_t seed, size_t size) {
  std::string out(size, '\0');
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 0x1234567;
  for (size_t i = 0; i < size; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    out[i] = static_cast<char>(x);
  }
  return out;
}

// Applies a test parameter "BACKEND" or "BACKEND_lsm" (the backend, with
// the value-log layout unless "_lsm" asks for LSMIO's).
// The same as an options string, for a helper process's command line.
inline std::string BackendParamOptions(const std::string& param) {
  std::string options = "backend=" + param.substr(0, param.find('_'));
  if (param.find("_lsm") != std::string::npos) options += ",layout=lsm";
  return options;
}
inline Status ApplyBackendParam(const std::string& param, StoreOptions* o) {
  return o->SetAll(BackendParamOptions(param));
}

// Runs a shell command, returns its exit status and combined output.
inline int RunCommand(const std::string& cmd, std::string* output) {
  FILE* f = popen((cmd + " 2>&1").c_str(), "r");
  if (f == nullptr) return -1;
  char buf[4096];
  output->clear();
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) output->append(buf, n);
  int rc = pclose(f);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// A child process running `argv` with pipes to its stdin and stdout.
// fork() is followed at once by execv(), so it is safe in threaded tests.
class Child {
 public:
  explicit Child(const std::vector<std::string>& argv) {
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) abort();
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      close(in[0]); close(in[1]); close(out[0]); close(out[1]);
      execv(args[0], args.data());
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    to_child_ = in[1];
    from_child_ = out[0];
  }
  ~Child() { Wait(); }
  // Reads one line of the child's output.
  std::string ReadLine() {
    std::string line;
    char c;
    while (read(from_child_, &c, 1) == 1 && c != '\n') line += c;
    return line;
  }
  // Closes the child's stdin and waits; returns its exit code.
  int Wait() {
    if (pid_ <= 0) return exit_code_;
    close(to_child_);
    close(from_child_);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return exit_code_;
  }

 private:
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1, exit_code_ = -1;
};

}  // namespace test
}  // namespace sluice

#endif  // SLUICE_TESTS_TEST_UTIL_H_
