/* The version of Sluice these headers belong to. sluice_version()
 * (sluice.h) is the version of the library a program runs with: compare
 * them to detect a program built against other headers than the library
 * it loads. Kept equal to the project's version in CMakeLists.txt (the
 * configure step checks). */
#ifndef SLUICE_VERSION_H_
#define SLUICE_VERSION_H_

#define SLUICE_VERSION_MAJOR 0
#define SLUICE_VERSION_MINOR 1
#define SLUICE_VERSION_PATCH 0
/* "MAJOR.MINOR.PATCH" */
#define SLUICE_VERSION "0.1.0"

#endif /* SLUICE_VERSION_H_ */
