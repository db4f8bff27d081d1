#include "c/c_fd_table.h"

#include <climits>
#include <mutex>
#include <unordered_map>

namespace sluice {
namespace capi {
namespace {
std::mutex table_mu;
// GUARDED_BY(table_mu)
std::unordered_map<int, std::shared_ptr<Descriptor>> table;
int next_fd = 0;  // GUARDED_BY(table_mu)
}  // namespace

int AddDescriptor(std::shared_ptr<Descriptor> d) {
  std::lock_guard<std::mutex> lock(table_mu);
  int fd;
  do {
    fd = next_fd;
    next_fd = next_fd == INT_MAX ? 0 : next_fd + 1;
  } while (table.count(fd) != 0);
  table.emplace(fd, std::move(d));
  return fd;
}

std::shared_ptr<Descriptor> FindDescriptor(int fd) {
  std::lock_guard<std::mutex> lock(table_mu);
  auto it = table.find(fd);
  return it == table.end() ? nullptr : it->second;
}

std::shared_ptr<Descriptor> RemoveDescriptor(int fd) {
  std::lock_guard<std::mutex> lock(table_mu);
  auto it = table.find(fd);
  if (it == table.end()) return nullptr;
  std::shared_ptr<Descriptor> d = std::move(it->second);
  table.erase(it);
  return d;
}

std::vector<std::shared_ptr<Descriptor>> RemoveDescriptors(
    const FileSystem* fs) {
  std::vector<std::shared_ptr<Descriptor>> out;
  std::lock_guard<std::mutex> lock(table_mu);
  for (auto it = table.begin(); it != table.end();) {
    if (fs == nullptr || it->second->fs.get() == fs) {
      out.push_back(std::move(it->second));
      it = table.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

Status CloseDescriptor(Descriptor* d) {
  std::unique_lock<std::shared_mutex> lock(d->mu);
  if (!d->file) return Status::OK();
  Status s = d->file->Close();
  d->file.reset();
  return s;
}

}  // namespace capi
}  // namespace sluice
