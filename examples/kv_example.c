/* Sluice K/V API from C: write a checkpoint, make it durable, read it back. */
#include <sluice/sluice.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  /* The headers this program was built with, and the library it runs with. */
  if (strcmp(sluice_version(), SLUICE_VERSION) != 0) {
    fprintf(stderr, "built for Sluice %s, running with %s\n", SLUICE_VERSION,
            sluice_version());
    return 1;
  }
  sluice_store_t* db;
  double field[1024] = {3.14}, back[1024];
  size_t n;
  if (sluice_kv_open(argc > 1 ? argv[1] : "ckpt.sluice", NULL, &db) != SLUICE_OK ||
      sluice_kv_put(db, "step42/field", 12, field, sizeof field, SLUICE_ASYNC) ||
      sluice_kv_write_barrier(db) ||  /* durable once this returns */
      sluice_kv_get_into(db, "step42/field", 12, back, sizeof back, &n)) {
    fprintf(stderr, "sluice: %s\n", sluice_errmsg());
    return 1;
  }
  printf("read %zu bytes back with Sluice %s, %s\n", n, sluice_version(),
         memcmp(field, back, n) ? "WRONG" : "ok");
  return sluice_kv_close(db) || memcmp(field, back, n);
}
