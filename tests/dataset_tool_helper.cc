// The job side of tool_dataset_test.sh: writes a context's dataset ids as
// an application would, over MPI, and prints the bytes it wrote.
//
//   dataset_tool_helper ROOT CTX write DATASET ID...  commits each id
//   dataset_tool_helper ROOT CTX torn DATASET ID      writes the id, then
//       ends the context without closing it: its data is in the stores
//       with no commit record (as after a failed close)
//   dataset_tool_helper ROOT CTX hold DATASET ID      commits the id, prints
//       "ready", and keeps the context (its stores) open until the file
//       ROOT/CTX.stop appears
//   dataset_tool_helper ROOT CTX open                 opens and ends the
//       context (which reclaims torn ids)
//   dataset_tool_helper expect ID ELEMENT RANKS [RANK]  writes to stdout
//       the bytes of element ELEMENT of an id written by RANKS ranks
//       (RANK: whose, for the unique element "local")
//
// Each id holds the shared element "field" (every rank writes a block),
// the unique element "local" (each rank its own) and the shared element
// "sparse" (rank 0 writes 16 bytes at 3 MiB: a hole before them).
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "dataset_bytes.h"
#include "sluice/dataset.h"
#include "sluice/mpi.h"

namespace {

int rank = 0, nranks = 1;

void Ok(const sluice::Status& s, const std::string& what) {
  if (s.ok()) return;
  fprintf(stderr, "rank %d: %s: %s\n", rank, what.c_str(),
          s.ToString().c_str());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

size_t Block(int64_t id) { return 40000 + 1000 * id; }
size_t Unique(int64_t id, int r) { return 5000 + 100 * r + id; }
constexpr uint64_t kSparseAt = 3u << 20;

// The bytes of `element` of id `id` written by `ranks` ranks.
std::vector<unsigned char> Expected(int64_t id, const std::string& element,
                                    int ranks, int r) {
  std::vector<unsigned char> v;
  if (element == "field") {
    v.resize(ranks * Block(id));
    for (size_t i = 0; i < v.size(); ++i) v[i] = DatasetByte(id, 1, i);
  } else if (element == "local") {
    v.resize(Unique(id, r));
    for (size_t i = 0; i < v.size(); ++i) v[i] = DatasetByte(id, 100 + r, i);
  } else if (element == "sparse") {
    v.resize(kSparseAt + 16);
    for (size_t i = 0; i < 16; ++i) v[kSparseAt + i] = DatasetByte(id, 2, i);
  }
  return v;
}

// Writes this rank's share of every element of id `id`.
std::unique_ptr<sluice::Dataset> Write(sluice::Context* ctx,
                                       const std::string& name, int64_t id) {
  std::unique_ptr<sluice::Dataset> ds;
  Ok(ctx->OpenDataset(name, id, sluice::kDatasetWrite, &ds), "open");
  std::unique_ptr<sluice::Element> el;
  const std::vector<unsigned char> field = Expected(id, "field", nranks, 0);
  const size_t b = Block(id);
  Ok(ds->OpenElement("field", sluice::ElementKind::kShared, &el), "field");
  Ok(el->Write(rank * b, field.data() + rank * b, b), "write field");
  Ok(el->Close(), "close field");
  const std::vector<unsigned char> local = Expected(id, "local", nranks, rank);
  Ok(ds->OpenElement("local", sluice::ElementKind::kUnique, &el), "local");
  Ok(el->Write(0, local.data(), local.size()), "write local");
  Ok(el->Close(), "close local");
  if (rank == 0) {
    const std::vector<unsigned char> sparse = Expected(id, "sparse", 1, 0);
    Ok(ds->OpenElement("sparse", sluice::ElementKind::kShared, &el), "sparse");
    Ok(el->Write(kSparseAt, sparse.data() + kSparseAt, 16), "write sparse");
    Ok(el->Close(), "close sparse");
  }
  return ds;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 5 && std::string(argv[1]) == "expect") {
    const std::vector<unsigned char> v =
        Expected(atoll(argv[2]), argv[3], atoi(argv[4]),
                 argc > 5 ? atoi(argv[5]) : 0);
    return fwrite(v.data(), 1, v.size(), stdout) == v.size() ? 0 : 1;
  }
  if (argc < 4) {
    fprintf(stderr, "usage: see dataset_tool_helper.cc\n");
    return 2;
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  const std::string root = argv[1], mode = argv[3];
  setenv("SLUICE_DATA_ROOTS", root.c_str(), 1);
  std::unique_ptr<sluice::Context> ctx;
  Ok(sluice::mpi::InitContext(MPI_COMM_WORLD, argv[2], "", &ctx), "init");
  if (mode == "write") {
    for (int i = 5; i < argc; ++i) {
      Ok(Write(ctx.get(), argv[4], atoll(argv[i]))->Close(), "commit");
    }
  } else if (mode == "torn") {
    // Abandoned: no collective close, so no commit; the context's end
    // makes the stores durable with the id's data in them.
    Write(ctx.get(), argv[4], atoll(argv[5])).reset();
  } else if (mode == "hold") {
    Ok(Write(ctx.get(), argv[4], atoll(argv[5]))->Close(), "commit");
    if (rank == 0) {
      printf("ready\n");
      fflush(stdout);
    }
    const std::string stop = root + "/" + argv[2] + ".stop";
    while (access(stop.c_str(), F_OK) != 0) usleep(50000);
  } else if (mode != "open") {
    fprintf(stderr, "unknown mode %s\n", mode.c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  Ok(ctx->Fini(), "fini");
  MPI_Finalize();
  return 0;
}
