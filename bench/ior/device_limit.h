// DEVICE-LIMIT: the device's physical limit, measured by fio on rank 0 in
// the same directory and run as the other tests, with what a device needs
// to reach its peak: asynchronous I/O (libaio) with a deep queue (32),
// O_DIRECT and large blocks (4 MiB, or the transfer size rounded up to
// 4 KiB when larger; a run smaller than that is one block of its size
// rounded down to 4 KiB), sequential write then read, moving the whole
// run's bytes (every rank's blocks, rounded up to a whole block).
//
// One job, one file: 32 requests of 4 MiB in flight (128 MiB) keep a
// virtio disk's queue full, which is how this project's disk was measured
// at about 2.3 GiB/s writing; more jobs would write more files at once and
// measure the file system's allocation as much as the device. New file
// every repetition (as every API writes; see FIO-SYNC), removed after.
//
// fio's buffers are in huge pages: in 4 KiB pages the block layer splits
// each request at the device's segment limit (254 segments, about 1 MiB,
// on this project's virtio disk), and fio measured 1.0-1.3 GiB/s where the
// device reads and writes 2.0-2.8 (as the value log does, whose buffers
// are huge pages). As root, the huge pages missing are added to
// vm.nr_hugepages for the run and given back after; otherwise fio uses
// ordinary pages and the note says so.
//
// A fio built without libaio cannot measure this: the test is then
// skipped, with that reason.
#ifndef SLUICE_BENCH_IOR_DEVICE_LIMIT_H_
#define SLUICE_BENCH_IOR_DEVICE_LIMIT_H_

#include "ior/params.h"
#include "ior/report.h"

namespace sluice {
namespace bench {

// Collective. Appends one write and one read IterResult per repetition to
// *test, or sets test->skipped.
void RunDeviceLimit(const Params& params, int tasks, TestResult* test);

}  // namespace bench
}  // namespace sluice

#endif  // SLUICE_BENCH_IOR_DEVICE_LIMIT_H_
