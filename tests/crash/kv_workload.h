// The K/V crash driver's workload: one endless, deterministic sequence of
// updates and barriers, a function of (seed, index) alone, so a writer can
// resume it at any index and a checker can rebuild the state after any
// prefix of it.
#ifndef SLUICE_TESTS_CRASH_KV_WORKLOAD_H_
#define SLUICE_TESTS_CRASH_KV_WORKLOAD_H_

#include <cstdint>
#include <map>
#include <string>

namespace sluice {
namespace crash {

inline uint64_t Mix(uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

struct Op {
  enum Kind { kPut, kAppend, kDelete, kBarrier } kind;
  int key = 0;       // index into the key set
  size_t size = 0;   // bytes of the value (put, append)
  bool async = false;
};

constexpr int kKeys = 48;

inline std::string KeyName(int k) { return "key/" + std::to_string(k); }

// Op `i` of the sequence of `seed`. The sizes straddle the value log's
// threshold (4 KiB) and its buffers: small values stay in the tree, large
// ones go to the log. Every other phase of 512 ops writes small values
// only: they fill the tree's write buffer, so that it flushes on its own
// while the large values written before the phase still wait in the log's
// memory (no barrier, append or large value in such a phase, and only
// half of the keys: the other half keep the values written before it).
inline Op MakeOp(uint64_t seed, uint64_t i) {
  const uint64_t r = Mix(seed * 0x100000001b3ull + i);
  Op op;
  op.key = static_cast<int>((r >> 8) % kKeys);
  op.async = ((r >> 20) & 3) == 0;
  const unsigned kind = r % 100;
  const uint64_t z = r >> 32;
  const bool small_phase = (i >> 9) & 1;
  if (small_phase) {  // small puts and deletes only: nothing for the log
    op.key = kKeys / 2 + op.key % (kKeys / 2);  // the others keep their values
    op.kind = kind < 10 ? Op::kDelete : Op::kPut;
    op.size = 1 + z % 3000;
  } else if (kind < 2) {
    op.kind = Op::kBarrier;
  } else if (kind < 10) {
    op.kind = Op::kDelete;
  } else if (kind < 18) {
    op.kind = Op::kAppend;
    op.size = 1 + z % 6000;
  } else {
    op.kind = Op::kPut;
    const unsigned band = z % 20;
    if (band < 11) {
      op.size = 1 + (z >> 8) % 3000;  // in the tree
    } else if (band < 19) {
      op.size = 4096 + (z >> 8) % 60000;  // in the log
    } else {
      op.size = 256 * 1024 + (z >> 8) % (768 * 1024);  // large
    }
  }
  return op;
}

// The bytes op `i` writes.
inline std::string OpValue(uint64_t seed, uint64_t i, size_t size) {
  std::string v(size, '\0');
  uint64_t x = Mix(seed ^ (i * 0xd6e8feb86659fd93ull));
  for (size_t j = 0; j < size; j += 8) {
    x = Mix(x);
    for (size_t b = 0; b < 8 && j + b < size; ++b) {
      v[j + b] = static_cast<char>(x >> (8 * b));
    }
  }
  return v;
}

// Applies op `i` to a model of the store.
inline void ApplyOp(uint64_t seed, uint64_t i, std::map<int, std::string>* m) {
  const Op op = MakeOp(seed, i);
  switch (op.kind) {
    case Op::kPut:
      (*m)[op.key] = OpValue(seed, i, op.size);
      break;
    case Op::kAppend:
      (*m)[op.key] += OpValue(seed, i, op.size);
      break;
    case Op::kDelete:
      m->erase(op.key);
      break;
    case Op::kBarrier:
      break;
  }
}

}  // namespace crash
}  // namespace sluice

#endif  // SLUICE_TESTS_CRASH_KV_WORKLOAD_H_
