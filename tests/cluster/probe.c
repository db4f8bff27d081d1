// What a job sees of the cluster: each rank's processor name and the size
// of its node's communicator (MPI_COMM_TYPE_SHARED), printed by rank 0 in
// rank order as "rank R host H node_ranks K"; data checked across every
// pair of ranks (a ring of 1 MiB messages and an allreduce).
//
//   probe                  print and check, exit 0 when all holds
//   probe --hold S DIR F   also write DIR/probe.RANK (DIR: node-local),
//                          then, once every rank has, create F (on the
//                          PFS), and keep exchanging messages for S s
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int Fail(const char* what) {
  fprintf(stderr, "probe: %s\n", what);
  MPI_Abort(MPI_COMM_WORLD, 1);
  return 1;
}

// Sends 1 MiB to the next rank, receives from the previous one, checks it.
static int Ring(int rank, int size, int round) {
  enum { kBytes = 1 << 20 };
  static unsigned char out[kBytes], in[kBytes];
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  for (int i = 0; i < kBytes; ++i) {
    out[i] = (unsigned char)(rank * 131 + i * 7 + round);
  }
  MPI_Sendrecv(out, kBytes, MPI_BYTE, next, 7, in, kBytes, MPI_BYTE, prev, 7,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  for (int i = 0; i < kBytes; ++i) {
    if (in[i] != (unsigned char)(prev * 131 + i * 7 + round)) return 0;
  }
  return 1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, len;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char host[MPI_MAX_PROCESSOR_NAME] = {0};
  MPI_Get_processor_name(host, &len);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank,
                      MPI_INFO_NULL, &node);
  int node_ranks;
  MPI_Comm_size(node, &node_ranks);

  char line[MPI_MAX_PROCESSOR_NAME + 64];
  snprintf(line, sizeof line, "rank %d host %s node_ranks %d", rank, host,
           node_ranks);
  char* all = rank == 0 ? calloc((size_t)size, sizeof line) : NULL;
  MPI_Gather(line, (int)sizeof line, MPI_CHAR, all, (int)sizeof line,
             MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int r = 0; r < size; ++r) printf("%s\n", all + (size_t)r * sizeof line);
    fflush(stdout);
    free(all);
  }
  if (!Ring(rank, size, 0)) return Fail("ring: wrong bytes");
  int64_t one = 1, sum = 0;
  MPI_Allreduce(&one, &sum, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (sum != size) return Fail("allreduce: wrong sum");

  if (argc == 5 && strcmp(argv[1], "--hold") == 0) {
    const int seconds = atoi(argv[2]);
    char path[4096];
    snprintf(path, sizeof path, "%s/probe.%d", argv[3], rank);
    FILE* f = fopen(path, "w");
    if (f == NULL || fprintf(f, "%s\n", line) < 0 || fclose(f) != 0) {
      return Fail("cannot write the node-local file");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      f = fopen(argv[4], "w");
      if (f == NULL || fclose(f) != 0) return Fail("cannot create the flag");
    }
    const double end = MPI_Wtime() + seconds;
    for (int round = 1; MPI_Wtime() < end; ++round) {
      if (!Ring(rank, size, round)) return Fail("ring: wrong bytes");
      usleep(100000);
    }
  } else if (argc != 1) {
    return Fail("usage: probe [--hold SECONDS LOCAL_DIR FLAG_FILE]");
  }
  MPI_Comm_free(&node);
  MPI_Finalize();
  return 0;
}
