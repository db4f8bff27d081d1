/* The checks of the plain-C tests of the C API: a failed CHECK prints the
 * condition with errno and sluice_errmsg() and counts a failure; the test
 * exits non-zero when `failures` is. */
#ifndef SLUICE_TESTS_C_CHECK_H_
#define SLUICE_TESTS_C_CHECK_H_

#include <errno.h>
#include <stdio.h>

#include "sluice/sluice.h"

static int failures = 0;
#define CHECK(cond)                                                       \
  do {                                                                    \
    if (!(cond)) {                                                        \
      fprintf(stderr, "%s:%d: CHECK failed: %s (errno %d, %s)\n",         \
              __FILE__, __LINE__, #cond, errno, sluice_errmsg());         \
      failures++;                                                         \
    }                                                                     \
  } while (0)

#endif /* SLUICE_TESTS_C_CHECK_H_ */
