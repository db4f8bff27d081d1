// What `sluice drain` works on: the contexts of its ROOT and, for each,
// the destination its drains go to (--to, or the data root after ROOT in
// the configuration's data_roots); and `sluice drain --status`.
#ifndef SLUICE_TOOLS_DRAIN_TARGETS_H_
#define SLUICE_TOOLS_DRAIN_TARGETS_H_

#include <string>
#include <vector>

#include "args.h"
#include "sluice/config.h"
#include "sluice/status.h"

namespace sluice {
namespace tool {

struct DrainTarget {
  std::string name;      // the context
  std::string src;       // its directory on ROOT (real path)
  std::string dst_root;  // the destination data root
  std::string dst;       // dst_root/name
  Config config;         // context `name`'s configuration
};

// The data root after `data_root` in `roots` (a data_roots value: paths,
// comma-separated), entries compared by their real paths; empty when
// `data_root` is none of them or the last.
std::string NextDataRoot(const std::string& roots,
                         const std::string& data_root);

// The contexts of a.pos[0] (a data root, or one context directory; only
// --context NAME's if given) with their destinations. Bad usage (no
// destination known, --to naming a context directory or ROOT itself)
// exits 2 through Usage(cmd, ...); what cannot be read is the error.
Status FindTargets(const char* cmd, const Args& a,
                   std::vector<DrainTarget>* out);

// `sluice drain --status`: prints where every id of `targets` stands;
// returns the exit status (1 when something could not be read).
int DrainStatusCmd(const std::vector<DrainTarget>& targets, bool json);

}  // namespace tool
}  // namespace sluice

#endif  // SLUICE_TOOLS_DRAIN_TARGETS_H_
