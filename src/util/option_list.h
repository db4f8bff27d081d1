// The "name=value" lists of options (StoreOptions::SetAll, FsOptions::SetAll,
// the configuration variable `options`): one reader for all of them.
#ifndef SLUICE_UTIL_OPTION_LIST_H_
#define SLUICE_UTIL_OPTION_LIST_H_

#include <functional>
#include <string_view>

#include "sluice/status.h"

namespace sluice {

// Calls set(name, value) for each "name=value" item of `list`, in order;
// items are separated by ',' or ';', and empty ones skipped. Stops at the
// first error; an item without '=' is InvalidArgument.
Status ForEachOption(
    std::string_view list,
    const std::function<Status(std::string_view, std::string_view)>& set);

}  // namespace sluice

#endif  // SLUICE_UTIL_OPTION_LIST_H_
