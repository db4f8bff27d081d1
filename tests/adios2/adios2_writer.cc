// An ADIOS2 application that knows nothing of Sluice: the XML file picks
// its engine (the io "checkpoint"). Every rank writes, each step:
//   temperature  double global array {ranks * 100}, this rank's 100
//   cells        int32 global array {ranks * 8, 6}, this rank's 8 rows
//   rank_id      int32 local value, rank * 1000 + step
//   time         double global value (rank 0), step * 0.5
//   particles    float local array, 5 + rank values (no global shape)
//   label        string global value (rank 0), "step-<step>"
// and the attributes units = "kelvin" and scale = 2.5. temperature goes
// out deferred (written at EndStep), the rest sync. The values are a
// function of (step, global index): adios2_reader checks them.
//   adios2_writer XML OUTPUT STEPS [--die-in-step K] [--no-steps]
//                 [--expect-failure] [--append FIRST] [--only-rank-0]
// --die-in-step K: in step K (1-based), once every rank has put its data
// and performed the puts, every rank kills itself with SIGKILL.
// --no-steps: no BeginStep/EndStep (STEPS should be 1: the Puts make one
// step, at Close). --expect-failure: an exception on every rank is the
// expected outcome (each rank says "failed as expected"; exit 0).
// --append FIRST: open with Mode::Append; the steps written are numbered
// (their values computed) from FIRST. --only-rank-0: the other ranks put
// nothing (with --no-steps, only rank 0 has a step to write at Close).
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <adios2.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "test_values.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 4) {
    fprintf(stderr, "usage: adios2_writer XML OUTPUT STEPS [--die-in-step K] "
                    "[--no-steps] [--expect-failure]\n");
    return 2;
  }
  const std::string xml = argv[1], output = argv[2];
  const int steps = atoi(argv[3]);
  int die_in = 0;
  bool no_steps = false, expect_failure = false;
  int append_from = -1;
  bool only_rank0 = false;
  for (int i = 4; i < argc; ++i) {
    if (strcmp(argv[i], "--die-in-step") == 0 && i + 1 < argc) {
      die_in = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--no-steps") == 0) {
      no_steps = true;  // Puts without BeginStep/EndStep: one step at Close
    } else if (strcmp(argv[i], "--append") == 0 && i + 1 < argc) {
      append_from = atoi(argv[++i]);  // Mode::Append, the first step's number
    } else if (strcmp(argv[i], "--only-rank-0") == 0) {
      only_rank0 = true;  // the other ranks put nothing
    } else if (strcmp(argv[i], "--expect-failure") == 0) {
      expect_failure = true;  // an exception is the expected outcome
    } else {
      fprintf(stderr, "adios2_writer: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  using namespace sluice_adios2_test;
  int rc = 0;
  try {
    adios2::ADIOS adios(xml);
    adios2::IO io = adios.DeclareIO("checkpoint");
    const size_t n = static_cast<size_t>(size);
    const size_t r = static_cast<size_t>(rank);
    auto temperature = io.DefineVariable<double>(
        "temperature", {n * kPerRank}, {r * kPerRank}, {kPerRank});
    auto cells = io.DefineVariable<int32_t>(
        "cells", {n * kRows, kCols}, {r * kRows, 0}, {kRows, kCols});
    auto rank_id = io.DefineVariable<int32_t>("rank_id", {adios2::LocalValueDim});
    auto time = io.DefineVariable<double>("time");
    auto particles = io.DefineVariable<float>("particles", {}, {}, {Particles(rank)});
    auto label = io.DefineVariable<std::string>("label");
    io.DefineAttribute<std::string>("units", "kelvin");
    io.DefineAttribute<double>("scale", 2.5);
    adios2::Engine engine =
        io.Open(output, append_from >= 0 ? adios2::Mode::Append : adios2::Mode::Write);
    const int first = append_from >= 0 ? append_from : 0;
    // Every step's buffers live until Close: deferred Puts outside a step
    // are read then.
    std::vector<std::vector<double>> ts(steps);
    std::vector<std::vector<float>> ps(steps);
    for (int k = 0; k < steps; ++k) {
      const int s = first + k;  // the step's number, which its values encode
      std::vector<double>& t = ts[k];
      t.resize(kPerRank);
      for (size_t i = 0; i < kPerRank; ++i) t[i] = Temperature(s, r * kPerRank + i);
      std::vector<int32_t> c(kRows * kCols);
      for (size_t i = 0; i < kRows; ++i) {
        for (size_t j = 0; j < kCols; ++j) c[i * kCols + j] = Cell(s, r * kRows + i, j);
      }
      std::vector<float>& p = ps[k];
      p.resize(Particles(rank));
      for (size_t i = 0; i < p.size(); ++i) p[i] = Particle(s, rank, i);
      if (!no_steps) engine.BeginStep();
      if (only_rank0 && rank != 0) {
        if (!no_steps) engine.EndStep();
        continue;
      }
      engine.Put(particles, p.data());  // deferred
      engine.Put(temperature, t.data());  // deferred: read at EndStep
      engine.Put(cells, c.data(), adios2::Mode::Sync);  // c goes: copied
      engine.Put(rank_id, RankId(s, rank), adios2::Mode::Sync);
      if (rank == 0) {
        engine.Put(time, Time(s), adios2::Mode::Sync);
        engine.Put(label, Label(s), adios2::Mode::Sync);
      }
      if (k + 1 == die_in) {
        engine.PerformPuts();
        MPI_Barrier(MPI_COMM_WORLD);
        fprintf(stderr, "adios2_writer: rank %d kills itself in step %d\n", rank, s + 1);
        kill(getpid(), SIGKILL);
      }
      if (!no_steps) engine.EndStep();
    }
    engine.Close();
    if (expect_failure) {
      fprintf(stderr, "adios2_writer rank %d: no failure\n", rank);
      rc = 1;
    }
  } catch (const std::exception& e) {
    fprintf(stderr, "adios2_writer rank %d: %s\n", rank, e.what());
    if (!expect_failure) MPI_Abort(MPI_COMM_WORLD, 1);
    // Every rank is to fail alike: none waits for another here.
    fprintf(stderr, "adios2_writer rank %d: failed as expected\n", rank);
  }
  MPI_Finalize();
  return rc;
}
