// Symbol visibility for libsluice. The library is compiled with
// -fvisibility=hidden; only declarations marked SLUICE_EXPORT form its ABI.
#ifndef SLUICE_EXPORT_H_
#define SLUICE_EXPORT_H_

#define SLUICE_EXPORT __attribute__((visibility("default")))

#endif  // SLUICE_EXPORT_H_
