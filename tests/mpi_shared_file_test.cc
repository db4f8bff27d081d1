// N writers, one logical file, under mpiexec: every rank writes interleaved
// 64 KiB blocks of /ckpt (IOR's shared-file layout, several segments) into
// its own store; then each rank reads back the blocks of rank (r + 1) % N
// through the merged view and compares. Then ranks 0 and 1 both write one
// block of /clash, and every reader must get an error for it.
// Usage: mpi_shared_file_test ROOT
#include <mpi.h>

#include <cstdio>
#include <string>

#include "sluice/fs.h"
#include "test_util.h"

using namespace sluice;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, failures = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  auto check = [&](bool ok, const std::string& what) {
    if (!ok) {
      fprintf(stderr, "rank %d: FAILED: %s\n", rank, what.c_str());
      ++failures;
    }
  };
  const std::string root = argv[1];
  const size_t kBlock = 64 << 10;
  const int kSegments = 8;
  FsOptions options;
  {
    std::unique_ptr<FileSystem> fs;
    Status s = FileSystem::Open(options, root, rank, &fs);
    check(s.ok(), "open writer: " + s.ToString());
    std::unique_ptr<File> f;
    if (s.ok()) s = fs->OpenFile("/ckpt", kWrite | kCreate, 0644, &f);
    for (int seg = 0; s.ok() && seg < kSegments; ++seg) {
      const uint64_t off = (uint64_t(seg) * size + rank) * kBlock;
      s = f->PWrite(test::Pattern(seg * 1000 + rank, kBlock).data(), kBlock, off);
    }
    if (s.ok()) s = f->Close();
    std::unique_ptr<File> c;
    if (s.ok() && rank < 2 && size > 1) {  // ranks 0 and 1 overlap here
      s = fs->OpenFile("/clash", kWrite | kCreate, 0644, &c);
      if (s.ok()) s = c->PWrite(test::Pattern(rank, kBlock).data(), kBlock, rank * 100);
      if (s.ok()) s = c->Close();
    }
    if (s.ok()) s = fs->Close();
    check(s.ok(), "write: " + s.ToString());
  }
  MPI_Barrier(MPI_COMM_WORLD);
  {
    std::unique_ptr<FileSystem> fs;
    Status s = FileSystem::Open(options, root, FileSystem::kReader, &fs);
    check(s.ok(), "open reader: " + s.ToString());
    const int peer = (rank + 1) % size;
    std::unique_ptr<File> f;
    if (s.ok()) s = fs->OpenFile("/ckpt", kRead, 0, &f);
    FileInfo info;
    if (s.ok()) s = f->Stat(&info);
    check(s.ok() && info.size == uint64_t(kSegments) * size * kBlock,
          "merged size " + std::to_string(info.size));
    std::string buf(kBlock, '\0');
    for (int seg = 0; s.ok() && seg < kSegments; ++seg) {
      size_t got = 0;
      const uint64_t off = (uint64_t(seg) * size + peer) * kBlock;
      s = f->PRead(&buf[0], kBlock, off, &got);
      check(s.ok() && got == kBlock &&
                buf == test::Pattern(seg * 1000 + peer, kBlock),
            "block " + std::to_string(seg) + " of rank " + std::to_string(peer));
    }
    check(s.ok(), "read: " + s.ToString());
    if (rank == 0) {  // the whole file, sequentially: checksums checked
      s = fs->Verify("/ckpt");
      check(s.ok(), "verify: " + s.ToString());
    }
    if (size > 1) {
      std::unique_ptr<File> c;
      s = fs->OpenFile("/clash", kRead, 0, &c);
      size_t got = 0;
      if (s.ok()) s = c->PRead(&buf[0], kBlock, 0, &got);
      check(s.code() == Code::kCorruption &&
                s.message().find("writers 0 and 1") != std::string::npos,
            "overlap must be an error, got: " + s.ToString());
    }
    fs->Close();
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("mpi_shared_file_test: %d ranks, %d failure(s)\n", size, total);
  MPI_Finalize();
  return total ? 1 : 0;
}
