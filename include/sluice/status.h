// Status: the outcome of every fallible Sluice call.
//
// No exception crosses the library boundary: every fallible call returns a
// Status. An OK status holds no allocation, so success costs one pointer test.
// A failure carries a code (what kind of failure, for programs) and a message
// (what failed, for people: it always names the path or key concerned).
//
// Thread-safety: a Status is a value. Distinct objects may be used from
// different threads; one object must not be modified concurrently.
#ifndef SLUICE_STATUS_H_
#define SLUICE_STATUS_H_

#include <memory>
#include <string>
#include <string_view>

#include "sluice/export.h"

namespace sluice {

// The codes are part of the C ABI (sluice.h mirrors them): append only.
enum class Code : int {
  kOk = 0,
  kNotFound = 1,         // the key, file or store does not exist
  kCorruption = 2,       // stored bytes fail a checksum or are malformed
  kNotSupported = 3,     // the backend or build cannot do this
  kInvalidArgument = 4,  // bad option, key or call sequence
  kIOError = 5,          // the operating system reported an error
  kBusy = 6,             // another process holds the store open for writing
  kNotAStore = 7,        // the path exists but is not a Sluice store
  kVersionTooNew = 8,    // written by a newer Sluice format than this one reads
  kNoSpace = 9,          // the device is full (ENOSPC, EDQUOT)
  kIncomplete = 10,      // an operation was interrupted or is unfinished
  kAlreadyExists = 11,   // O_CREAT|O_EXCL, mkdir of an existing name
  kNotADirectory = 12,   // a path component is a file
  kIsADirectory = 13,    // a file operation on a directory
  kNotEmpty = 14,        // rmdir, or rename over, a non-empty directory
  kNameTooLong = 15,     // a name over NAME_MAX or a path over PATH_MAX bytes
};

class SLUICE_EXPORT Status {
 public:
  Status() noexcept = default;
  Status(const Status& other);
  Status& operator=(const Status& other);
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;
  ~Status() = default;

  static Status OK() { return Status(); }
  static Status NotFound(std::string_view msg) { return {Code::kNotFound, msg}; }
  static Status Corruption(std::string_view msg) {
    return {Code::kCorruption, msg};
  }
  static Status NotSupported(std::string_view msg) {
    return {Code::kNotSupported, msg};
  }
  static Status InvalidArgument(std::string_view msg) {
    return {Code::kInvalidArgument, msg};
  }
  static Status IOError(std::string_view msg) { return {Code::kIOError, msg}; }
  static Status Busy(std::string_view msg) { return {Code::kBusy, msg}; }
  static Status NotAStore(std::string_view msg) {
    return {Code::kNotAStore, msg};
  }
  static Status VersionTooNew(std::string_view msg) {
    return {Code::kVersionTooNew, msg};
  }
  static Status NoSpace(std::string_view msg) { return {Code::kNoSpace, msg}; }
  static Status Incomplete(std::string_view msg) {
    return {Code::kIncomplete, msg};
  }
  static Status AlreadyExists(std::string_view msg) {
    return {Code::kAlreadyExists, msg};
  }
  static Status NotADirectory(std::string_view msg) {
    return {Code::kNotADirectory, msg};
  }
  static Status IsADirectory(std::string_view msg) {
    return {Code::kIsADirectory, msg};
  }
  static Status NotEmpty(std::string_view msg) {
    return {Code::kNotEmpty, msg};
  }
  static Status NameTooLong(std::string_view msg) {
    return {Code::kNameTooLong, msg};
  }

  Status(Code code, std::string_view msg);

  bool ok() const { return state_ == nullptr; }
  Code code() const { return state_ ? state_->code : Code::kOk; }
  bool IsNotFound() const { return code() == Code::kNotFound; }
  bool IsCorruption() const { return code() == Code::kCorruption; }
  bool IsBusy() const { return code() == Code::kBusy; }

  // The message alone ("" when OK).
  const std::string& message() const;
  // "OK", or "<code name>: <message>".
  std::string ToString() const;

 private:
  struct State {
    Code code;
    std::string msg;
  };
  std::unique_ptr<State> state_;
};

// A short name for a code: "NotFound", "IOError", ...
SLUICE_EXPORT const char* CodeName(Code code);

// The errno a POSIX call reports for `s` (0 when OK; EIO for corruption and
// the other store failures).
SLUICE_EXPORT int ErrnoOf(const Status& s);

}  // namespace sluice

#endif  // SLUICE_STATUS_H_
