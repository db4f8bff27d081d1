#include "sluice/status.h"

#include <errno.h>

namespace sluice {

Status::Status(Code code, std::string_view msg)
    : state_(code == Code::kOk ? nullptr
                               : new State{code, std::string(msg)}) {}

Status::Status(const Status& other)
    : state_(other.state_ ? new State(*other.state_) : nullptr) {}

Status& Status::operator=(const Status& other) {
  if (this != &other) {
    state_.reset(other.state_ ? new State(*other.state_) : nullptr);
  }
  return *this;
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return state_ ? state_->msg : kEmpty;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(CodeName(state_->code)) + ": " + state_->msg;
}

const char* CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "OK";
    case Code::kNotFound: return "NotFound";
    case Code::kCorruption: return "Corruption";
    case Code::kNotSupported: return "NotSupported";
    case Code::kInvalidArgument: return "InvalidArgument";
    case Code::kIOError: return "IOError";
    case Code::kBusy: return "Busy";
    case Code::kNotAStore: return "NotAStore";
    case Code::kVersionTooNew: return "VersionTooNew";
    case Code::kNoSpace: return "NoSpace";
    case Code::kIncomplete: return "Incomplete";
    case Code::kAlreadyExists: return "AlreadyExists";
    case Code::kNotADirectory: return "NotADirectory";
    case Code::kIsADirectory: return "IsADirectory";
    case Code::kNotEmpty: return "NotEmpty";
    case Code::kNameTooLong: return "NameTooLong";
  }
  return "Unknown";
}

int ErrnoOf(const Status& s) {
  switch (s.code()) {
    case Code::kOk: return 0;
    case Code::kNotFound: return ENOENT;
    case Code::kAlreadyExists: return EEXIST;
    case Code::kNotADirectory: return ENOTDIR;
    case Code::kIsADirectory: return EISDIR;
    case Code::kNotEmpty: return ENOTEMPTY;
    case Code::kNameTooLong: return ENAMETOOLONG;
    case Code::kInvalidArgument: return EINVAL;
    case Code::kNoSpace: return ENOSPC;
    case Code::kBusy: return EBUSY;
    case Code::kNotSupported: return ENOTSUP;
    case Code::kCorruption:
    case Code::kIOError:
    case Code::kIncomplete:
    case Code::kNotAStore:
    case Code::kVersionTooNew:
      return EIO;
  }
  return EIO;
}

}  // namespace sluice
