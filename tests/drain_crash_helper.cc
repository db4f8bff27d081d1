// The job and the checks of drain_crash_test.sh and tool_drain_test.sh:
//
//   drain_crash_helper write FIRST LAST [wait]   (under mpiexec) commits
//       ids FIRST..LAST of dataset "ckpt" in context "ctx", as the SLUICE_*
//       environment configures it (data_roots, stage_mode, ...); rank 0
//       prints "committed ID" as each commit returns (with "wait", the
//       drain of each id is waited for before the next is written, and
//       "drained ID PHASE" printed), then "written", and "finished" once
//       the context has ended (its drains waited for); the context is
//       DRAIN_TEST_CONTEXT's value when set, and with DRAIN_TEST_HOLD=FILE
//       the job keeps its context (its stores) open after "written" until
//       FILE exists
//   drain_crash_helper check ROOTS [ID...]   (one process, no MPI) opens
//       context "ctx" with data_roots=ROOTS and stage_mode disable, and
//       reads ids ID... (none given: every committed id of the first root)
//       whole, checking every byte; prints "ok ID READ_ROOT" for each,
//       where READ_ROOT is the data root its bytes came from; exits 1 at
//       the first id that does not read back
//   drain_crash_helper missing ROOTS ID...   (one process) as check, but
//       each id must not be found (NotFound): prints "missing ID"
//
// Each rank writes its block of the shared element "field" and three
// elements of its own ("own.0" .. "own.2"), about 2 MiB in all, with
// bytes that differ by id, element and rank (dataset_bytes.h).
#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "dataset_bytes.h"
#include "sluice/dataset.h"
#include "sluice/mpi.h"

namespace {

int rank = 0;
bool under_mpi = false;

[[noreturn]] void Die(const std::string& what) {
  fprintf(stderr, "drain_crash_helper (rank %d): %s\n", rank, what.c_str());
  if (under_mpi) MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}

void Ok(const sluice::Status& s, const std::string& what) {
  if (!s.ok()) Die(what + ": " + s.ToString());
}

constexpr int kOwn = 3;
uint64_t Block(int64_t id) { return (512u << 10) + 4096 * (id % 16); }
uint64_t Own(int64_t id, int r, int k) {
  return (512u << 10) + 1000 * k + 13 * r + id % 1000;
}
int OwnTag(int r, int k) { return 100 + 10 * r + k; }

std::vector<unsigned char> Bytes(int64_t id, int tag, uint64_t off,
                                 uint64_t n) {
  std::vector<unsigned char> v(n);
  for (uint64_t i = 0; i < n; ++i) v[i] = DatasetByte(id, tag, off + i);
  return v;
}

void Write(sluice::Context* ctx, int64_t id) {
  std::unique_ptr<sluice::Dataset> ds;
  Ok(ctx->OpenDataset("ckpt", id, sluice::kDatasetWrite, &ds), "open");
  std::unique_ptr<sluice::Element> el;
  const uint64_t b = Block(id);
  Ok(ds->OpenElement("field", sluice::ElementKind::kShared, &el), "field");
  const auto field = Bytes(id, 1, rank * b, b);
  for (uint64_t at = 0; at < b; at += 65536) {
    const uint64_t n = std::min<uint64_t>(65536, b - at);
    Ok(el->Write(rank * b + at, field.data() + at, n), "write field");
  }
  Ok(el->Close(), "close field");
  for (int k = 0; k < kOwn; ++k) {
    const auto own = Bytes(id, OwnTag(rank, k), 0, Own(id, rank, k));
    Ok(ds->OpenElement("own." + std::to_string(k),
                       sluice::ElementKind::kUnique, &el),
       "own");
    Ok(el->Write(0, own.data(), own.size()), "write own");
    Ok(el->Close(), "close own");
  }
  Ok(ds->Close(), "commit of id " + std::to_string(id));
}

void Expect(sluice::Element* el, int64_t id, int tag, uint64_t size) {
  const std::string what =
      "id " + std::to_string(id) + " element " + el->name();
  if (el->size() != size) {
    Die(what + " has " + std::to_string(el->size()) + " bytes, not " +
        std::to_string(size));
  }
  std::vector<unsigned char> buf(size);
  size_t got = 0;
  Ok(el->Read(0, buf.data(), size, &got), "read of " + what);
  if (got != size) Die("short read of " + what);
  if (buf != Bytes(id, tag, 0, size)) Die(what + " reads wrong bytes");
}

// Reads id `id` whole; returns the root it was read from.
std::string Check(sluice::Context* ctx, int64_t id) {
  std::unique_ptr<sluice::Dataset> ds;
  Ok(ctx->OpenDataset("ckpt", id, sluice::kDatasetRead, &ds),
     "open of id " + std::to_string(id));
  std::unique_ptr<sluice::Element> el;
  Ok(ds->OpenElement("field", sluice::ElementKind::kShared, &el), "field");
  const uint64_t b = Block(id);
  if (el->size() == 0 || el->size() % b != 0) {
    Die("id " + std::to_string(id) + ": field of " +
        std::to_string(el->size()) + " bytes");
  }
  const int ranks = static_cast<int>(el->size() / b);
  Expect(el.get(), id, 1, el->size());
  Ok(el->Close(), "close");
  for (int r = 0; r < ranks; ++r) {
    for (int k = 0; k < kOwn; ++k) {
      Ok(ds->OpenElement("own." + std::to_string(k),
                         sluice::ElementKind::kUnique, &el, r),
         "own." + std::to_string(k) + " of rank " + std::to_string(r));
      Expect(el.get(), id, OwnTag(r, k), Own(id, r, k));
      Ok(el->Close(), "close");
    }
  }
  Ok(ds->Close(), "close");
  return ds->stats().read_root;
}

int WriteMain(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  under_mpi = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* name = getenv("DRAIN_TEST_CONTEXT");
  std::unique_ptr<sluice::Context> ctx;
  Ok(sluice::mpi::InitContext(MPI_COMM_WORLD, name ? name : "ctx", "", &ctx),
     "init");
  for (int64_t id = atoll(argv[2]); id <= atoll(argv[3]); ++id) {
    Write(ctx.get(), id);
    if (rank == 0) {
      printf("committed %lld\n", static_cast<long long>(id));
      fflush(stdout);
    }
    if (argc > 4) {
      sluice::DrainState st;
      Ok(ctx->DrainWait("ckpt", id, &st), "drain of id " + std::to_string(id));
      if (rank == 0) {
        printf("drained %lld %d\n", static_cast<long long>(id),
               static_cast<int>(st.phase));
        fflush(stdout);
      }
    }
  }
  if (rank == 0) {
    printf("written\n");
    fflush(stdout);
  }
  if (const char* hold = getenv("DRAIN_TEST_HOLD")) {
    while (access(hold, F_OK) != 0) usleep(20000);
  }
  Ok(ctx->Fini(), "fini");
  if (rank == 0) {
    printf("finished\n");
    fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}

int CheckMain(int argc, char** argv) {
  const bool missing = strcmp(argv[1], "missing") == 0;
  setenv("SLUICE_DATA_ROOTS", argv[2], 1);
  setenv("SLUICE_STAGE_MODE", "disable", 1);
  unsetenv("SLUICE_KEEP_LAST");
  std::unique_ptr<sluice::Context> ctx;
  Ok(sluice::Context::InitSingle("ctx", "", &ctx), "init");
  std::vector<int64_t> ids;
  for (int i = 3; i < argc; ++i) ids.push_back(atoll(argv[i]));
  if (argc == 3) {
    std::vector<sluice::DatasetIdInfo> listed;
    Ok(ctx->ListIds("ckpt", &listed), "list");
    for (const auto& i : listed) {
      if (i.state == sluice::IdState::kCommitted) ids.push_back(i.id);
    }
  }
  for (int64_t id : ids) {
    if (missing) {
      std::unique_ptr<sluice::Dataset> ds;
      sluice::Status s =
          ctx->OpenDataset("ckpt", id, sluice::kDatasetRead, &ds);
      if (!s.IsNotFound()) {
        Die("id " + std::to_string(id) + " should not be found, but: " +
            (s.ok() ? "it opens" : s.ToString()));
      }
      printf("missing %lld\n", static_cast<long long>(id));
      continue;
    }
    const std::string from = Check(ctx.get(), id);
    printf("ok %lld %s\n", static_cast<long long>(id), from.c_str());
  }
  Ok(ctx->Fini(), "fini");
  return fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if ((argc == 4 || (argc == 5 && strcmp(argv[4], "wait") == 0)) &&
      strcmp(argv[1], "write") == 0) {
    return WriteMain(argc, argv);
  }
  if ((argc >= 3 && strcmp(argv[1], "check") == 0) ||
      (argc >= 4 && strcmp(argv[1], "missing") == 0)) {
    return CheckMain(argc, argv);
  }
  fprintf(stderr,
          "usage: drain_crash_helper write FIRST LAST [wait] | check ROOTS "
          "[ID...] | missing ROOTS ID...\n");
  return 2;
}
