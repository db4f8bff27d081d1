// What the crash drivers (kv_crash.cc, files_crash.cc) share: settings
// read from the environment.
#ifndef SLUICE_TESTS_CRASH_CRASH_UTIL_H_
#define SLUICE_TESTS_CRASH_CRASH_UTIL_H_

#include <dirent.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace sluice {
namespace crash {

// The number in environment variable `name`, or `fallback` when it is
// unset or empty; anything else ends the driver with a message.
inline uint64_t EnvNumber(const char* name, uint64_t fallback) {
  const char* v = getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const unsigned long long n = strtoull(v, &end, 10);
  if (*end != '\0') {
    fprintf(stderr, "crash driver: %s=%s is not a number\n", name, v);
    exit(2);
  }
  return n;
}

// A line on stdout after every tenth of a long run (100 trials or more).
inline void ReportProgress(const char* driver, uint64_t done, uint64_t trials,
                     uint64_t failures) {
  if (trials < 100 || done % (trials / 10) != 0) return;
  printf("%s: %llu of %llu trials, %llu failed\n", driver,
         static_cast<unsigned long long>(done),
         static_cast<unsigned long long>(trials),
         static_cast<unsigned long long>(failures));
  fflush(stdout);
}

// Whether `root` holds a writer's store (writer.*): a writer killed before
// its first write leaves none, and then no file system at all.
inline bool HasWriterStores(const std::string& root) {
  DIR* d = opendir(root.c_str());
  if (d == nullptr) return false;
  bool found = false;
  while (struct dirent* e = readdir(d)) {
    found |= strncmp(e->d_name, "writer.", 7) == 0;
  }
  closedir(d);
  return found;
}

}  // namespace crash
}  // namespace sluice

#endif  // SLUICE_TESTS_CRASH_CRASH_UTIL_H_
