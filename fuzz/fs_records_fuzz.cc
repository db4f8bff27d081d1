// The file layer's records (src/fs/format.h): superblock, inode,
// directory entry, extent and index values and the offsets of keys. Any
// bytes decode to an error or to a record whose encoding decodes to the
// same record (a decoder may ignore bytes it does not need).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fs/format.h"

using namespace sluice::fs;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 6) {
    case 0: {
      Super s, t;
      if (DecodeSuper(in, &s).ok() &&
          (!DecodeSuper(EncodeSuper(s), &t).ok() || t.next_ino != s.next_ino)) {
        abort();
      }
      break;
    }
    case 1: {
      Inode i, j;
      if (DecodeInode(in, 7, &i).ok() &&
          (!DecodeInode(EncodeInode(i), 7, &j).ok() || j.size != i.size ||
           j.flags != i.flags || j.checksum != i.checksum || j.mode != i.mode ||
           j.type != i.type)) {
        abort();
      }
      break;
    }
    case 2: {
      uint64_t ino, ino2;
      FileType type, type2;
      if (DecodeDirent(in, &ino, &type).ok() &&
          (!DecodeDirent(EncodeDirent(ino, type), &ino2, &type2).ok() ||
           ino2 != ino || type2 != type)) {
        abort();
      }
      break;
    }
    case 3: {
      std::string_view payload;
      uint64_t sum = 0;
      if (DecodeExtent(in, 7, 4096, "fuzz", &payload, &sum).ok() &&
          sum != DataChecksum(7, 4096, payload)) {
        abort();
      }
      break;
    }
    case 4: {
      uint64_t length, sum, length2, sum2;
      if (DecodeIndex(in, &length, &sum).ok() &&
          (!DecodeIndex(EncodeIndex(length, sum), &length2, &sum2).ok() ||
           length2 != length || sum2 != sum)) {
        abort();
      }
      break;
    }
    case 5:
      (void)KeyOffset(in);
      break;
  }
  return 0;
}
