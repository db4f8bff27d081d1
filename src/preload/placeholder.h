// The placeholder (see shim.h): a memfd of kMapBytes, mapped shared by
// every process that holds it: the file offset (an atomic int64) at 0, the
// header at kHeaderAt:
// magic "SLUICEFD" | u32 version | u32 flags | u32 is_dir | u32 pending |
// u32 mode | u32 path length | path | u64 XXH64 of everything before it.
// A pending open (made in a forked child before exec) still carries
// O_CREAT/O_EXCL/O_TRUNC and the mode; the first use performs it. The
// program's descriptor is an O_PATH descriptor of the memfd, so that no
// read, write, mapping, sync or lock can act on it.
#ifndef SLUICE_PRELOAD_PLACEHOLDER_H_
#define SLUICE_PRELOAD_PLACEHOLDER_H_

#include <stddef.h>

#include <string>

#include "preload/shim.h"

namespace sluice {
namespace preload {

constexpr char kMemfdName[] = "sluice-fd";
constexpr size_t kHeaderAt = 64;
constexpr size_t kMapBytes = 8192;  // room for a path of kPathMax bytes

std::string EncodeHeader(const Desc& d);
// False when the page holds no valid header.
bool DecodeHeader(const char* map, Desc* d);
// Maps the placeholder's page from a read-write descriptor of its memfd;
// null on failure.
char* MapPlaceholder(int rw_fd);

}  // namespace preload
}  // namespace sluice

#endif  // SLUICE_PRELOAD_PLACEHOLDER_H_
