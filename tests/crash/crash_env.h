// The crash drivers' other two ways to crash a writer, besides SIGKILL
// (SLUICE_CRASH_MODE=kill, the default):
//
//   power  the writer runs over a FaultEnv (tests/fault_env.h) that cuts
//          the power at a random call that changes the disk: everything
//          not yet synced is dropped, and the writer exits kPowerLost;
//   fault  the FaultEnv fails a random call (EIO or ENOSPC, a write maybe
//          cut short first). The writer stops at the first error it is
//          given and exits kFaultSurfaced, or, if no error reaches it
//          within 100 operations, kFaultSwallowed; half the time the power
//          is cut as it stops. Either way the checker then requires
//          everything of the last barrier that succeeded.
//
// The supervisor draws each trial's call (at most SLUICE_CRASH_MAX_CALLS;
// the default is the driver's) and passes it to the writer in its
// environment.
#ifndef SLUICE_TESTS_CRASH_CRASH_ENV_H_
#define SLUICE_TESTS_CRASH_CRASH_ENV_H_

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "crash/crash_util.h"
#include "fault_env.h"

namespace sluice {
namespace crash {

enum WriterExit : int {
  kPowerLost = 77,
  kFaultSurfaced = 78,
  kFaultSwallowed = 79
};

enum class Mode { kKill, kPower, kFault };

inline Mode CrashMode() {
  const char* m = getenv("SLUICE_CRASH_MODE");
  if (m == nullptr || *m == '\0' || strcmp(m, "kill") == 0) return Mode::kKill;
  if (strcmp(m, "power") == 0) return Mode::kPower;
  if (strcmp(m, "fault") == 0) return Mode::kFault;
  fprintf(stderr,
          "crash driver: SLUICE_CRASH_MODE=%s is not kill, power or fault\n",
          m);
  exit(2);
}

inline const char* ModeName(Mode m) {
  return m == Mode::kKill ? "kill" : m == Mode::kPower ? "power" : "fault";
}

// Supervisor: sets up the next writer's crash (its environment) from the
// random word `r`.
inline void PlanCrash(Mode mode, uint64_t r, uint64_t default_max_calls) {
  const uint64_t max_calls =
      EnvNumber("SLUICE_CRASH_MAX_CALLS", default_max_calls);
  const std::string at = std::to_string(r % (max_calls + 1));
  unsetenv("SLUICE_CRASH_POWER_AT");
  unsetenv("SLUICE_CRASH_FAULT_AT");
  if (mode == Mode::kPower) setenv("SLUICE_CRASH_POWER_AT", at.c_str(), 1);
  if (mode == Mode::kFault) {
    setenv("SLUICE_CRASH_FAULT_AT", at.c_str(), 1);
    setenv("SLUICE_CRASH_FAULT_HOW", std::to_string((r >> 40) % 8).c_str(), 1);
  }
}

// Writer: installs the FaultEnv its supervisor asked for.
class CrashEnv {
 public:
  explicit CrashEnv(const std::string& dir) {
    const char* power = getenv("SLUICE_CRASH_POWER_AT");
    const char* fault = getenv("SLUICE_CRASH_FAULT_AT");
    if (power == nullptr && fault == nullptr) return;
    env_ = std::make_unique<test::FaultEnv>(dir + ".stash");
    if (power != nullptr) {
      env_->PowerLossAt(strtoull(power, nullptr, 10),
                        [] { _exit(kPowerLost); });
    } else {
      const uint64_t how = EnvNumber("SLUICE_CRASH_FAULT_HOW", 0);
      const int err = how & 1 ? ENOSPC : EIO;
      drop_ = how & 2;
      env_->InjectAt(strtoull(fault, nullptr, 10), test::FaultEnv::kAll, err,
                     /*short_write=*/how & 4);
    }
    Env::SetDefault(env_.get());
  }

  // An operation failed with `message`. Under an injected fault the writer
  // ends here, as planned; any other error is a real one (exit 1).
  [[noreturn]] void Failed(const char* who, const std::string& message) {
    if (env_ != nullptr && env_->injected() > 0) {
      if (getenv("SLUICE_CRASH_VERBOSE") != nullptr) {
        fprintf(stderr, "%s: %s\n", who, message.c_str());
      }
      Stop(kFaultSurfaced);
    }
    fprintf(stderr, "%s: %s\n", who, message.c_str());
    _exit(1);
  }

  // After each operation: a fault nobody reported ends the writer too.
  void Step() {
    if (env_ != nullptr && env_->injected() > 0 && ++after_ > 100) {
      Stop(kFaultSwallowed);
    }
  }

 private:
  [[noreturn]] void Stop(int code) {
    if (getenv("SLUICE_CRASH_VERBOSE") != nullptr) {
      fprintf(stderr, "crash writer: injected %s; %s%s\n",
              env_->fault().c_str(),
              code == kFaultSurfaced ? "reported" : "not reported",
              drop_ ? ", power cut" : "");
    }
    if (drop_) env_->DropUnsynced();
    _exit(code);
  }

  std::unique_ptr<test::FaultEnv> env_;  // never uninstalled: the writer _exits
  bool drop_ = false;
  int after_ = 0;
};

// Supervisor: what a writer's exit status says. True for the ways a
// writer is meant to end (killed, or one of WriterExit).
inline bool ExpectedEnd(int status, int* code) {
  *code = 0;
  if (WIFSIGNALED(status)) return WTERMSIG(status) == SIGKILL;
  if (!WIFEXITED(status)) return false;
  *code = WEXITSTATUS(status);
  return *code == kPowerLost || *code == kFaultSurfaced ||
         *code == kFaultSwallowed;
}

}  // namespace crash
}  // namespace sluice

#endif  // SLUICE_TESTS_CRASH_CRASH_ENV_H_
