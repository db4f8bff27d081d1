// FIO-SYNC: fio, one synchronous job per rank at the transfer size, in the
// same directory and run as the other tests: sequential write then read
// with O_DIRECT and psync (queue depth 1 per job), block size = the
// transfer size, each job moving a rank's bytes. What the device gives a
// program doing what IOR's POSIX does, without the page cache; not the
// device's limit (that is DEVICE-LIMIT: buffered APIs beat FIO-SYNC). Until
// it was renamed it was called FIO-LIMIT, a name still accepted. New files
// every repetition, as every API writes; with overwrite (FIO-OVERWRITE),
// the files are laid out once, untimed, and each repetition overwrites
// them: the best case of the same job, shown for reference.
#ifndef SLUICE_BENCH_IOR_FIO_LIMIT_H_
#define SLUICE_BENCH_IOR_FIO_LIMIT_H_

#include "ior/params.h"
#include "ior/report.h"

namespace sluice {
namespace bench {

// Collective. Appends one write and one read IterResult per repetition to
// *test, or sets test->skipped.
void RunFioSync(const Params& params, int tasks, bool overwrite,
                TestResult* test);

}  // namespace bench
}  // namespace sluice

#endif  // SLUICE_BENCH_IOR_FIO_LIMIT_H_
