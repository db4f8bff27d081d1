#include "ior/params.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "sluice/options.h"

namespace sluice {
namespace bench {

namespace {
// FIO-SYNC's name until it was found not to be the device's limit: accepted,
// with a note, so that older scripts keep running.
const char kFioLimitAlias[] = "FIO-LIMIT";
}  // namespace

const std::vector<std::string>& KnownApis() {
  static const std::vector<std::string> apis = {
      "POSIX",          "MPIIO",        "HDF5",      "ADIOS2",
      "ADIOS2-BB",      "SLUICE-KV",    "SLUICE-STREAM",
      "SLUICE-DATASET", "SLUICE-POSIX", "SLUICE-ADIOS2", "DEVICE-LIMIT",
      "FIO-SYNC",       "FIO-OVERWRITE"};
  return apis;
}

bool IsFioMeasurement(const std::string& api) {
  return api == "DEVICE-LIMIT" || api == "FIO-SYNC" || api == "FIO-OVERWRITE";
}

std::string HumanSize(uint64_t b) {
  char buf[64];
  if (b >= (1ull << 30) && b % (1ull << 30) == 0) {
    snprintf(buf, sizeof buf, "%llu GiB", (unsigned long long)(b >> 30));
  } else if (b >= (1ull << 20) && b % (1ull << 20) == 0) {
    snprintf(buf, sizeof buf, "%llu MiB", (unsigned long long)(b >> 20));
  } else if (b >= 1024 && b % 1024 == 0) {
    snprintf(buf, sizeof buf, "%llu KiB", (unsigned long long)(b >> 10));
  } else {
    snprintf(buf, sizeof buf, "%llu bytes", (unsigned long long)b);
  }
  return buf;
}

std::string Usage() {
  std::string apis;
  for (const auto& a : KnownApis()) apis += (apis.empty() ? "" : ", ") + a;
  return "usage: mpiexec -n N sluice-bench [flags]\n"
         "An IOR-style benchmark of checkpoint I/O. Flags keep IOR's meanings:\n"
         "  -a API[,API...]  " + apis + "\n"
         "                   (a list runs each in turn. DEVICE-LIMIT is the\n"
         "                   device's physical limit: fio on rank 0, libaio,\n"
         "                   iodepth=32, O_DIRECT, 4 MiB blocks (or -t when\n"
         "                   larger), one job moving the run's bytes, write\n"
         "                   then read, a new file each repetition (skipped,\n"
         "                   saying why, without fio or its libaio engine).\n"
         "                   FIO-SYNC is fio with one synchronous job per\n"
         "                   rank at the transfer size (O_DIRECT, psync), new\n"
         "                   files each repetition, as the APIs write; its\n"
         "                   old name FIO-LIMIT is still accepted, with a\n"
         "                   note. With either in the list, every result is\n"
         "                   also shown as a fraction of it. FIO-OVERWRITE is\n"
         "                   FIO-SYNC's job overwriting files laid out before\n"
         "                   it, its best case. SLUICE-POSIX\n"
         "                   is POSIX under the LD_PRELOAD interposer:\n"
         "                   sluice-bench re-executes itself with\n"
         "                   libsluice_preload.so (SLUICE_PRELOAD_LIB), files\n"
         "                   under SLUICE_MOUNT (default <-o>.mnt), stores in\n"
         "                   SLUICE_ROOT (default <-o>.sluiceposix);\n"
         "                   SLUICE-ADIOS2 is ADIOS2 (as -a ADIOS2 calls it)\n"
         "                   with Sluice's plugin engine, libsluice_adios2,\n"
         "                   stores in <-o>.sluiceadios2;\n"
         "                   ADIOS2-BB is ADIOS2's BP4 engine writing to the\n"
         "                   fast root (BurstBufferPath) and draining to the\n"
         "                   slow one: it needs --fast-root and --slow-root)\n"
         "  -b SIZE   block size: contiguous bytes per rank per segment (1m)\n"
         "  -t SIZE   transfer size: bytes per I/O call (256k)\n"
         "  -s N      segment count (1)\n"
         "  -F        file per process (default: one shared file)\n"
         "  -c        collective I/O (MPIIO, HDF5)\n"
         "  -e        fsync after write\n"
         "  -w / -r   write / read (neither: both)\n"
         "  -C        reorder tasks for the read: rank r reads the data of\n"
         "            rank (r + Q) % N, so no rank reads back its own\n"
         "  -Q N      task shift for -C (1)\n"
         "  -z        random offsets within each block\n"
         "  -i N      repetitions (1)\n"
         "  -o PATH   test file name (testFile)\n"
         "  -k        keep the files\n"
         "  -W        check write: read back and verify after each write\n"
         "  -R        check read: verify every byte read\n"
         "  -G N      data signature seed (0)\n"
         "  -v        verbose\n"
         "  -O summaryFormat=JSON [-O summaryFile=PATH]  the summary as JSON\n"
         "                       (to PATH, or to stdout after the text),\n"
         "                       with IOR's key names too (\"summary\",\n"
         "                       \"bwMeanMIB\", \"Results\", ...) so that\n"
         "                       scripts reading IOR's JSON read it\n"
         "                       (docs/BENCHMARKS.md, \"The JSON summary\")\n"
         "  -O latencyFile=PATH   every transfer's duration, CSV\n"
         "  -O dropCaches=1       drop the page cache before every read\n"
         "  -O direct=1           O_DIRECT for POSIX\n"
         "  -O warmMemory=1       fault in and free as much memory as a phase\n"
         "                       moves before it, so every API starts alike\n"
         "  -O sluice.NAME=VALUE  store option for SLUICE-* APIs\n"
         "  --fast-root DIR --slow-root DIR  two tiers, both or neither (e.g.\n"
         "            a node-local tmpfs and the parallel file system;\n"
         "            existing directories). Every API's files then go under\n"
         "            the slow root (-o is a file name there) and -e is\n"
         "            required. Each write repetition also reports waited_s\n"
         "            (open until its close or commit returned: what the\n"
         "            application waited) and durable_s (open until the data\n"
         "            is durable on the slow root), with the bandwidths they\n"
         "            imply. ADIOS2-BB writes to the fast root and drains to\n"
         "            the slow one; SLUICE-DATASET gets data_roots=FAST,SLOW\n"
         "            and stage_mode=immediate; every other API writes\n"
         "            straight to the slow root with fsync, so for it\n"
         "            waited == durable\n"
         "  -h, --help  this text\n"
         "SIZE takes k, m, g suffixes (powers of 1024). Bad flags exit 2; a\n"
         "failed data check or I/O error exits 1.\n";
}

namespace {

bool TakeSize(const std::string& flag, const std::string& text, uint64_t* out,
              std::string* message) {
  size_t v = 0;
  Status s = ParseSize(text, &v);
  if (!s.ok() || v == 0) {
    *message = flag + ": " + (s.ok() ? "must be > 0" : s.message());
    return false;
  }
  *out = v;
  return true;
}

bool TakeInt(const std::string& flag, const std::string& text, long lo,
             long hi, long* out, std::string* message) {
  char* end = nullptr;
  long v = strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < lo || v > hi) {
    *message = flag + ": '" + text + "' is not an integer in [" +
               std::to_string(lo) + ", " + std::to_string(hi) + "]";
    return false;
  }
  *out = v;
  return true;
}

bool TakeBool(const std::string& key, const std::string& v, bool* out,
              std::string* message) {
  if (v == "1" || v == "true" || v == "on") {
    *out = true;
  } else if (v == "0" || v == "false" || v == "off") {
    *out = false;
  } else {
    *message = "-O " + key + ": not a boolean: '" + v + "'";
    return false;
  }
  return true;
}

bool TakeOption(const std::string& kv, Params* p, std::string* message) {
  size_t eq = kv.find('=');
  if (eq == std::string::npos) {
    *message = "-O " + kv + ": expected key=value";
    return false;
  }
  const std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
  if (key == "summaryFormat") {
    std::string v = value;
    std::transform(v.begin(), v.end(), v.begin(), ::tolower);
    if (v != "json" && v != "text") {
      *message = "-O summaryFormat: '" + value + "' (JSON or text)";
      return false;
    }
    p->summary_format = v;
  } else if (key == "summaryFile") {
    p->summary_file = value;
  } else if (key == "latencyFile") {
    p->latency_file = value;
  } else if (key == "dropCaches") {
    return TakeBool(key, value, &p->drop_caches, message);
  } else if (key == "warmMemory") {
    return TakeBool(key, value, &p->warm_memory, message);
  } else if (key == "direct") {
    return TakeBool(key, value, &p->direct, message);
  } else if (key.rfind("sluice.", 0) == 0) {
    StoreOptions probe;  // refuse unknown store options now, not mid-run
    Status s = probe.Set(key.substr(7), value);
    if (!s.ok()) {
      *message = "-O " + key + ": " + s.message();
      return false;
    }
    p->store_options.emplace_back(key.substr(7), value);
  } else {
    *message = "-O " + key + ": unknown option";
    return false;
  }
  return true;
}

// --fast-root DIR or --fast-root=DIR (and --slow-root). Returns 0 when
// args[*i] is not one of them, 1 when taken (*i moves past the value), 2 on
// a missing value.
int TakeRoot(const std::vector<std::string>& args, size_t* i, Params* p,
             std::string* message) {
  const std::string& a = args[*i];
  const std::pair<std::string, std::string*> flags[] = {
      {"--fast-root", &p->fast_root}, {"--slow-root", &p->slow_root}};
  for (const auto& [f, out] : flags) {
    if (a == f) {
      if (*i + 1 >= args.size() || args[*i + 1].empty()) {
        *message = f + ": missing directory";
        return 2;
      }
      *out = args[++*i];
      return 1;
    }
    if (a.rfind(f + "=", 0) == 0) {
      *out = a.substr(f.size() + 1);
      if (out->empty()) {
        *message = f + ": missing directory";
        return 2;
      }
      return 1;
    }
  }
  return 0;
}

// The absolute, resolved name of the existing directory `dir`, or false.
bool ResolveRoot(const std::string& flag, const std::string& dir,
                 std::string* out, std::string* message) {
  char real[PATH_MAX];
  struct stat st;
  if (realpath(dir.c_str(), real) == nullptr) {
    *message = flag + " " + dir + ": " + strerror(errno);
    return false;
  }
  if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
    *message = flag + " " + dir + ": not a directory";
    return false;
  }
  *out = real;
  return true;
}

// Checks the two roots and moves the test file under the slow one.
bool TakeTiers(Params* p, std::string* message) {
  const bool bb = std::find(p->apis.begin(), p->apis.end(), "ADIOS2-BB") !=
                  p->apis.end();
  if (p->fast_root.empty() != p->slow_root.empty()) {
    const bool slow = p->fast_root.empty();  // only the slow one given
    *message = std::string(slow ? "--slow-root" : "--fast-root") +
               " without " + (slow ? "--fast-root" : "--slow-root") +
               ": give both tiers, or neither";
    return false;
  }
  if (p->fast_root.empty()) {
    if (bb) {
      *message = "-a ADIOS2-BB needs --fast-root and --slow-root (its burst "
                 "buffer and its destination)";
      return false;
    }
    return true;
  }
  if (!ResolveRoot("--fast-root", p->fast_root, &p->fast_root, message) ||
      !ResolveRoot("--slow-root", p->slow_root, &p->slow_root, message)) {
    return false;
  }
  // ADIOS2 2.12's BP4 lowercases every parameter's value (BPBase::Init),
  // so BurstBufferPath=/X would write to /x, a directory of its own.
  const auto upper = [](char c) { return c >= 'A' && c <= 'Z'; };
  if (bb && std::any_of(p->fast_root.begin(), p->fast_root.end(), upper)) {
    *message = "-a ADIOS2-BB: ADIOS2's BP4 engine lowercases its parameters, "
               "so its burst buffer would go to a lowercased copy of "
               "--fast-root " + p->fast_root + ": use a fast root without "
               "capital letters";
    return false;
  }
  if (p->fast_root == p->slow_root) {
    *message = "--fast-root and --slow-root are the same directory (" +
               p->fast_root + "): the tiers must differ";
    return false;
  }
  if (!p->fsync) {
    *message = "--fast-root/--slow-root time durability: add -e (fsync after "
               "write), or the APIs that write straight to the slow root would "
               "report data still in the page cache as durable";
    return false;
  }
  if (p->path.empty() || p->path.find('/') != std::string::npos ||
      p->path == "." || p->path == "..") {
    *message = "-o '" + p->path + "': with --slow-root, -o is a file name " +
               "under the slow root, not a path";
    return false;
  }
  p->path = p->slow_root + "/" + p->path;
  return true;
}

}  // namespace

int ParseArgs(const std::vector<std::string>& args, Params* p,
              std::string* message) {
  *p = Params();
  for (const auto& a : args) p->command_line += (p->command_line.empty() ? "" : " ") + a;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help") {
      *message = Usage();
      return 1;
    }
    const int root = TakeRoot(args, &i, p, message);
    if (root == 2) return 2;
    if (root == 1) continue;
    if (a.size() != 2 || a[0] != '-') {
      *message = "unexpected argument '" + a + "'";
      return 2;
    }
    const char f = a[1];
    const bool takes_value = std::string("abtsQioOG").find(f) != std::string::npos;
    std::string v;
    if (takes_value) {
      if (i + 1 >= args.size()) {
        *message = a + ": missing value";
        return 2;
      }
      v = args[++i];
    }
    long n = 0;
    switch (f) {
      case 'a': {
        size_t pos = 0;
        while (pos <= v.size()) {
          size_t end = v.find(',', pos);
          if (end == std::string::npos) end = v.size();
          std::string api = v.substr(pos, end - pos);
          std::string upper = api;
          std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
          if (upper == kFioLimitAlias) {  // its old name, still in scripts
            upper = "FIO-SYNC";
            p->notes.push_back(
                "-a FIO-LIMIT is deprecated, it is now FIO-SYNC (fio, one "
                "synchronous job per rank at the transfer size)");
          }
          const auto& known = KnownApis();
          if (std::find(known.begin(), known.end(), upper) == known.end()) {
            std::string list;
            for (const auto& k : known) list += " " + k;
            *message = "-a: unknown API '" + api + "' (known:" + list + ")";
            return 2;
          }
          p->apis.push_back(upper);
          pos = end + 1;
        }
        break;
      }
      case 'b': if (!TakeSize(a, v, &p->block, message)) return 2; break;
      case 't': if (!TakeSize(a, v, &p->transfer, message)) return 2; break;
      case 's':
        if (!TakeInt(a, v, 1, 1L << 40, &n, message)) return 2;
        p->segments = static_cast<uint64_t>(n);
        break;
      case 'Q':
        if (!TakeInt(a, v, 1, 1 << 20, &n, message)) return 2;
        p->reorder_shift = static_cast<int>(n);
        break;
      case 'i':
        if (!TakeInt(a, v, 1, 100000, &n, message)) return 2;
        p->reps = static_cast<int>(n);
        break;
      case 'G':
        if (!TakeInt(a, v, 0, 1L << 62, &n, message)) return 2;
        p->seed = static_cast<uint64_t>(n);
        break;
      case 'o': p->path = v; break;
      case 'O': if (!TakeOption(v, p, message)) return 2; break;
      case 'F': p->file_per_proc = true; break;
      case 'c': p->collective = true; break;
      case 'e': p->fsync = true; break;
      case 'w': p->write = true; break;
      case 'r': p->read = true; break;
      case 'C': p->reorder = true; break;
      case 'z': p->random = true; break;
      case 'k': p->keep = true; break;
      case 'W': p->check_write = true; break;
      case 'R': p->check_read = true; break;
      case 'v': p->verbose = true; break;
      case 'h': *message = Usage(); return 1;
      default:
        *message = "unknown flag " + a + " (-h for help)";
        return 2;
    }
  }
  if (p->apis.empty()) p->apis.push_back("POSIX");
  if (!p->write && !p->read) p->write = p->read = true;
  if (p->transfer > p->block) {
    *message = "transfer size (-t " + HumanSize(p->transfer) +
               ") is larger than block size (-b " + HumanSize(p->block) + ")";
    return 2;
  }
  if (p->block % p->transfer != 0) {
    *message = "block size (-b " + HumanSize(p->block) +
               ") is not a multiple of transfer size (-t " +
               HumanSize(p->transfer) + ")";
    return 2;
  }
  if (p->transfer % 8 != 0) {
    *message = "transfer size (-t " + HumanSize(p->transfer) +
               ") must be a multiple of 8 bytes";
    return 2;
  }
  if (!TakeTiers(p, message)) return 2;
  return 0;
}

}  // namespace bench
}  // namespace sluice
