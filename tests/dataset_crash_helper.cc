// The two halves of dataset_crash_test.sh, over MPI:
//
//   dataset_crash_helper write DIR   writes ids HIGHEST+1, +2, ... of
//                                    dataset "ckpt" until killed, removing
//                                    ids older than the last three
//   dataset_crash_helper verify DIR  (after a kill -9 of the writers) opens
//                                    the context, which reclaims torn ids;
//                                    every committed id, HIGHEST first,
//                                    must read back whole, every byte
//                                    checked; then no store may hold data
//                                    of an id that has no commit record.
//                                    Prints "highest N".
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "dataset_bytes.h"
#include "sluice/dataset.h"
#include "sluice/fs.h"
#include "sluice/mpi.h"

namespace {

int rank = 0, nranks = 1;

void Die(const std::string& what) {
  fprintf(stderr, "rank %d: %s\n", rank, what.c_str());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

void Ok(const sluice::Status& s, const std::string& what) {
  if (!s.ok()) Die(what + ": " + s.ToString());
}

size_t Block(int64_t id) { return (256u << 10) + (id * 7919) % (256u << 10); }
size_t Unique(int64_t id, int r) { return 100000 + 13 * r + id; }

void Write(sluice::Context* ctx, int64_t id) {
  std::unique_ptr<sluice::Dataset> ds;
  Ok(ctx->OpenDataset("ckpt", id, sluice::kDatasetWrite, &ds), "open");
  const size_t b = Block(id);
  std::vector<unsigned char> buf(b);
  for (size_t i = 0; i < b; ++i) buf[i] = DatasetByte(id, 1, rank * b + i);
  std::unique_ptr<sluice::Element> el;
  Ok(ds->OpenElement("field", sluice::ElementKind::kShared, &el), "element");
  for (size_t at = 0; at < b; at += 65536) {
    const size_t n = std::min<size_t>(65536, b - at);
    Ok(el->Write(rank * b + at, buf.data() + at, n), "write");
  }
  Ok(el->Close(), "element close");
  const size_t u = Unique(id, rank);
  buf.resize(u);
  for (size_t i = 0; i < u; ++i) buf[i] = DatasetByte(id, 100 + rank, i);
  Ok(ds->OpenElement("local", sluice::ElementKind::kUnique, &el), "element");
  Ok(el->Write(0, buf.data(), u), "write");
  Ok(el->Close(), "element close");
  Ok(ds->Close(), "commit of id " + std::to_string(id));
}

void Check(sluice::Element* el, int64_t id, int tag, uint64_t size) {
  if (el->size() != size) {
    Die("id " + std::to_string(id) + " element " + el->name() + " has " +
        std::to_string(el->size()) + " bytes, not " + std::to_string(size));
  }
  std::vector<unsigned char> buf(size);
  size_t got = 0;
  Ok(el->Read(0, buf.data(), size, &got), "read of id " + std::to_string(id));
  if (got != size) Die("short read of id " + std::to_string(id));
  for (size_t i = 0; i < size; ++i) {
    if (buf[i] != DatasetByte(id, tag, i)) {
      Die("id " + std::to_string(id) + " element " + el->name() + " byte " +
          std::to_string(i) + " is wrong");
    }
  }
}

void Verify(sluice::Context* ctx, int64_t which, int64_t* opened) {
  std::unique_ptr<sluice::Dataset> ds;
  Ok(ctx->OpenDataset("ckpt", which, sluice::kDatasetRead, &ds), "open");
  const int64_t id = ds->id();
  *opened = id;
  std::unique_ptr<sluice::Element> el;
  Ok(ds->OpenElement("field", sluice::ElementKind::kShared, &el), "field");
  const uint64_t b = Block(id);
  if (el->size() == 0 || el->size() % b != 0) Die("bad field size");
  const int writers = static_cast<int>(el->size() / b);
  // Every rank checks the whole of it: a torn id read by any rank fails.
  std::vector<unsigned char> buf(el->size());
  size_t got = 0;
  Ok(el->Read(0, buf.data(), buf.size(), &got), "read");
  if (got != buf.size()) Die("short read");
  for (size_t i = 0; i < buf.size(); ++i) {
    if (buf[i] != DatasetByte(id, 1, i)) {
      Die("id " + std::to_string(id) + " field byte " + std::to_string(i) +
          " is wrong");
    }
  }
  Ok(el->Close(), "close");
  for (int w = rank; w < writers; w += nranks) {
    Ok(ds->OpenElement("local", sluice::ElementKind::kUnique, &el, w),
       "unique of rank " + std::to_string(w));
    Check(el.get(), id, 100 + w, Unique(id, w));
    Ok(el->Close(), "close");
  }
  Ok(ds->Close(), "close");
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (argc != 3) Die("usage: dataset_crash_helper write|verify DIR");
  setenv("SLUICE_DATA_ROOTS", argv[2], 1);
  std::unique_ptr<sluice::Context> ctx;
  Ok(sluice::mpi::InitContext(MPI_COMM_WORLD, "crash", "", &ctx), "init");
  std::vector<sluice::DatasetIdInfo> ids;
  Ok(ctx->ListIds("ckpt", &ids), "list");
  std::set<int64_t> committed;
  for (const auto& i : ids) {
    if (i.state == sluice::IdState::kCommitted) committed.insert(i.id);
  }
  if (strcmp(argv[1], "write") == 0) {
    int64_t id = committed.empty() ? 1 : *committed.rbegin() + 1;
    for (;; ++id) {
      Write(ctx.get(), id);
      if (committed.count(id - 3)) {
        Ok(ctx->UnlinkId("ckpt", id - 3), "unlink");
      }
      committed.insert(id);
    }
  }
  if (strcmp(argv[1], "verify") != 0) Die("write or verify");
  int64_t highest = -1;
  if (!committed.empty()) {
    Verify(ctx.get(), sluice::kDatasetIdHighest, &highest);
    if (highest != *committed.rbegin()) Die("HIGHEST is not the highest id");
    for (int64_t id : committed) {
      int64_t got;
      Verify(ctx.get(), id, &got);
    }
  }
  const std::string root = ctx->root();
  Ok(ctx->Fini(), "fini");
  ctx.reset();
  MPI_Barrier(MPI_COMM_WORLD);
  // No store holds data of an id without a record: the torn one's is gone.
  if (rank == 0) {
    std::unique_ptr<sluice::FileSystem> fs;
    sluice::FsOptions o;
    Ok(sluice::FileSystem::Open(o, root, sluice::FileSystem::kReader, &fs),
       "reader");
    std::vector<sluice::DirEntry> entries;
    sluice::Status s = fs->ReadDir("/ckpt", &entries);
    if (!s.IsNotFound()) Ok(s, "listing /ckpt");
    for (const auto& e : entries) {
      if (!committed.count(atoll(e.name.c_str()))) {
        Die("the data of id " + e.name + ", never committed, is still in " +
            root);
      }
    }
    printf("highest %lld, %zu committed\n", static_cast<long long>(highest),
           committed.size());
  }
  MPI_Finalize();
  return 0;
}
