// Reads what adios2_writer wrote, on any number of ranks, through the
// engine the XML file picks, and checks every value:
//   adios2_reader XML OUTPUT STEPS WRITERS
// STEPS: the steps it must find (then EndOfStream); WRITERS: the writer's
// rank count. Each reader rank selects a slice of temperature and a box of
// cells (rows and an inner range of columns) shifted off the writers'
// block boundaries, so that its selections cross them; reads every
// rank_id (the local value, read as a 1-D array of WRITERS values), time,
// label, every block of particles (a local array, by block selection and
// a selection of the block's whole box from BlocksInfo), and the
// attributes; and checks the blocks' count, starts and minimum and
// maximum (BlocksInfo). Prints "digest HEX": a hash of every value read by
// every rank, the same for any engine that returns the same values.
#include <mpi.h>

#include <adios2.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "test_values.h"

namespace {

int failures = 0;
uint64_t digest = 1469598103934665603ull;

void Hash(const void* p, size_t n) {
  const unsigned char* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) digest = (digest ^ b[i]) * 1099511628211ull;
}

#define EXPECT(cond, ...)                                    \
  do {                                                       \
    if (!(cond)) {                                           \
      if (++failures <= 20) {                                \
        fprintf(stderr, "adios2_reader rank %d: ", g_rank);  \
        fprintf(stderr, __VA_ARGS__);                        \
        fprintf(stderr, "\n");                               \
      }                                                      \
    }                                                        \
  } while (0)

int g_rank = 0;

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 5) {
    fprintf(stderr, "usage: adios2_reader XML OUTPUT STEPS WRITERS\n");
    return 2;
  }
  const std::string xml = argv[1], output = argv[2];
  const int want_steps = atoi(argv[3]);
  const size_t writers = static_cast<size_t>(atoi(argv[4]));
  using namespace sluice_adios2_test;
  const size_t r = static_cast<size_t>(g_rank), n = static_cast<size_t>(size);
  int steps = 0;
  uint64_t values = 0;
  try {
    adios2::ADIOS adios(xml);
    adios2::IO io = adios.DeclareIO("checkpoint");
    adios2::Engine engine = io.Open(output, adios2::Mode::Read);
    while (engine.BeginStep() == adios2::StepStatus::OK) {
      const int s = static_cast<int>(engine.CurrentStep());
      EXPECT(s == steps, "step %d where %d was next", s, steps);
      // temperature: [lo, hi), off the writers' boundaries by 13.
      auto temperature = io.InquireVariable<double>("temperature");
      EXPECT(temperature, "step %d: no temperature", s);
      const size_t total = writers * kPerRank;
      EXPECT(temperature.Shape() == adios2::Dims{total}, "step %d: temperature's shape", s);
      const size_t lo = std::min(r * total / n + 13, total);
      const size_t hi = std::min((r + 1) * total / n + 13, total);
      std::vector<double> t;
      temperature.SetSelection({{lo}, {hi - lo}});
      engine.Get(temperature, t);  // deferred: filled by EndStep
      // cells: rows [rlo, rhi), columns [1, kCols - 1).
      auto cells = io.InquireVariable<int32_t>("cells");
      EXPECT(cells, "step %d: no cells", s);
      const size_t rows = writers * kRows;
      EXPECT(cells.Shape() == (adios2::Dims{rows, kCols}), "step %d: cells' shape", s);
      const size_t rlo = std::min(r * rows / n + 3, rows);
      const size_t rhi = std::min((r + 1) * rows / n + 3, rows);
      std::vector<int32_t> c;
      cells.SetSelection({{rlo, 1}, {rhi - rlo, kCols - 2}});
      engine.Get(cells, c, adios2::Mode::Sync);
      auto rank_id = io.InquireVariable<int32_t>("rank_id");
      EXPECT(rank_id, "step %d: no rank_id", s);
      std::vector<int32_t> ids;
      engine.Get(rank_id, ids, adios2::Mode::Sync);
      auto time = io.InquireVariable<double>("time");
      EXPECT(time, "step %d: no time", s);
      double tm = -1;
      engine.Get(time, tm, adios2::Mode::Sync);
      auto label = io.InquireVariable<std::string>("label");
      EXPECT(label, "step %d: no label", s);
      std::string lb;
      engine.Get(label, lb, adios2::Mode::Sync);
      EXPECT(lb == Label(s), "step %d: label %s", s, lb.c_str());
      Hash(lb.data(), lb.size());
      auto particles = io.InquireVariable<float>("particles");
      EXPECT(particles, "step %d: no particles", s);
      auto pblocks = engine.BlocksInfo(particles, engine.CurrentStep());
      EXPECT(pblocks.size() == writers, "step %d: %zu blocks of particles", s,
             pblocks.size());
      for (size_t b = 0; b < pblocks.size(); ++b) {
        const int w = static_cast<int>(b);
        EXPECT(pblocks[b].Count == adios2::Dims{Particles(w)},
               "step %d: particles' block %zu count", s, b);
        // The block, and (for engines that cannot size a block selection
        // themselves: a plugin cannot) its whole box, from BlocksInfo.
        particles.SetBlockSelection(b);
        particles.SetSelection({{0}, pblocks[b].Count});
        std::vector<float> got;
        engine.Get(particles, got, adios2::Mode::Sync);
        EXPECT(got.size() == Particles(w), "step %d: %zu particles in block %zu", s,
               got.size(), b);
        for (size_t i = 0; i < got.size(); ++i) {
          EXPECT(got[i] == Particle(s, w, i), "step %d: particles[%zu][%zu] = %g", s, b,
                 i, got[i]);
        }
        Hash(got.data(), got.size() * sizeof(float));
        values += got.size();
      }
      auto units = io.InquireAttribute<std::string>("units");
      EXPECT(units && units.Data().size() == 1 && units.Data()[0] == "kelvin",
             "step %d: attribute units", s);
      auto scale = io.InquireAttribute<double>("scale");
      EXPECT(scale && scale.Data().size() == 1 && scale.Data()[0] == 2.5,
             "step %d: attribute scale", s);
      auto blocks = engine.BlocksInfo(temperature, engine.CurrentStep());
      EXPECT(blocks.size() == writers, "step %d: %zu blocks of temperature", s, blocks.size());
      for (size_t b = 0; b < blocks.size() && b < writers; ++b) {
        EXPECT(blocks[b].Start == adios2::Dims{b * kPerRank} &&
                   blocks[b].Count == adios2::Dims{kPerRank},
               "step %d: temperature's block %zu", s, b);
        EXPECT(blocks[b].Min == Temperature(s, b * kPerRank) &&
                   blocks[b].Max == Temperature(s, (b + 1) * kPerRank - 1),
               "step %d: temperature's block %zu: min %g max %g", s, b,
               blocks[b].Min, blocks[b].Max);
      }
      engine.EndStep();
      EXPECT(t.size() == hi - lo, "step %d: %zu temperatures", s, t.size());
      for (size_t i = 0; i < t.size(); ++i) {
        EXPECT(t[i] == Temperature(s, lo + i), "step %d: temperature[%zu] = %g", s,
               lo + i, t[i]);
      }
      EXPECT(c.size() == (rhi - rlo) * (kCols - 2), "step %d: %zu cells", s, c.size());
      for (size_t i = 0; i < rhi - rlo && c.size() == (rhi - rlo) * (kCols - 2); ++i) {
        for (size_t j = 1; j + 1 < kCols; ++j) {
          const int32_t got = c[i * (kCols - 2) + (j - 1)];
          EXPECT(got == Cell(s, rlo + i, j), "step %d: cells[%zu][%zu] = %d", s,
                 rlo + i, j, got);
        }
      }
      EXPECT(ids.size() == writers, "step %d: %zu rank_ids", s, ids.size());
      for (size_t w = 0; w < ids.size(); ++w) {
        EXPECT(ids[w] == RankId(s, static_cast<int>(w)), "step %d: rank_id[%zu] = %d",
               s, w, ids[w]);
      }
      EXPECT(tm == Time(s), "step %d: time %g", s, tm);
      Hash(t.data(), t.size() * sizeof(double));
      Hash(c.data(), c.size() * sizeof(int32_t));
      Hash(ids.data(), ids.size() * sizeof(int32_t));
      Hash(&tm, sizeof tm);
      values += t.size() + c.size() + ids.size() + 1;
      ++steps;
    }
    engine.Close();
  } catch (const std::exception& e) {
    fprintf(stderr, "adios2_reader rank %d: %s\n", g_rank, e.what());
    ++failures;
  }
  EXPECT(steps == want_steps, "%d steps, expected %d", steps, want_steps);
  // Every rank's digest, in rank order, hashed into one.
  std::vector<uint64_t> all(n);
  MPI_Gather(&digest, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  int bad = 0;
  MPI_Reduce(&failures, &bad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  printf("adios2_reader rank %d: %d steps, %" PRIu64 " values checked, %d wrong\n",
         g_rank, steps, values, failures);
  if (g_rank == 0) {
    digest = 1469598103934665603ull;
    Hash(all.data(), all.size() * sizeof(uint64_t));
    printf("digest %016" PRIx64 "\n", digest);
  }
  MPI_Finalize();
  return g_rank == 0 ? (bad == 0 ? 0 : 1) : (failures == 0 ? 0 : 1);
}
