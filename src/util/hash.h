// XXH3 and XXH64 from libxxhash. Where the library carries its x86 runtime
// dispatch (Debian's does; CMake checks and defines SLUICE_XXH3_DISPATCH),
// XXH3 calls go to the dispatched entry points, which pick AVX2 or AVX-512
// on CPUs that have them: on this project's 2-vCPU test machine, 4 MiB values
// hash at about 30 GB/s that way against about 9 GB/s through the plain
// (SSE2) build. The results are the same bits on every path (XXH3's output
// does not depend on the vector width), so stores move freely between
// machines and builds.
#ifndef SLUICE_UTIL_HASH_H_
#define SLUICE_UTIL_HASH_H_

#include <xxhash.h>

#if defined(SLUICE_XXH3_DISPATCH)
#include <xxh_x86dispatch.h>  // #defines XXH3_64bits etc. to the _dispatch forms
#endif

#endif  // SLUICE_UTIL_HASH_H_
