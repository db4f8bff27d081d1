// Ranks as threads of one process: a dataset::Group whose collective calls
// meet in memory, so that the dataset layer's multi-rank paths (the commit's
// agreement, file_per_node's node writer) run without MPI, and under the
// sanitizers. Each rank's thread makes the same collective calls in the
// same order, as MPI ranks would.
#ifndef SLUICE_TESTS_THREAD_GROUP_H_
#define SLUICE_TESTS_THREAD_GROUP_H_

#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dataset/group.h"
#include "sluice/dataset.h"

namespace sluice {
namespace test {

// Every member's string to every member: a barrier with a payload.
class Exchange {
 public:
  explicit Exchange(int size) : size_(size), slots_(size) {}
  std::vector<std::string> All(int member, const std::string& mine) {
    std::unique_lock<std::mutex> lock(mu_);
    // Wait until the previous round has been read by everyone.
    cv_.wait(lock, [this] { return !reading_; });
    slots_[member] = mine;
    const uint64_t round = round_;
    if (++arrived_ == size_) {
      reading_ = true;
      ++round_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return round_ != round; });
    }
    std::vector<std::string> out = slots_;
    if (--arrived_ == 0) {
      reading_ = false;
      cv_.notify_all();
    }
    return out;
  }

 private:
  const int size_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> slots_;
  int arrived_ = 0;
  uint64_t round_ = 0;
  bool reading_ = false;
};

// The ranks of one job: rank r is on node node_of[r]; nodes are numbered by
// their lowest rank.
struct ThreadJob {
  explicit ThreadJob(std::vector<int> node_of_rank)
      : node_of(std::move(node_of_rank)),
        world(static_cast<int>(node_of.size())) {
    int nodes = 0;
    for (int n : node_of) nodes = std::max(nodes, n + 1);
    for (int n = 0; n < nodes; ++n) {
      int count = 0;
      for (int m : node_of) count += m == n;
      node.push_back(std::make_unique<Exchange>(count));
    }
  }
  std::vector<int> node_of;
  Exchange world;
  std::vector<std::unique_ptr<Exchange>> node;
};

class ThreadGroup : public dataset::Group {
 public:
  ThreadGroup(ThreadJob* job, int rank) : job_(job), rank_(rank) {
    const int n = job->node_of[rank];
    for (int r = 0; r < size(); ++r) {
      if (job->node_of[r] != n) continue;
      if (node_members_.empty()) leader_ = r;
      if (r == rank) node_index_ = static_cast<int>(node_members_.size());
      node_members_.push_back(r);
    }
  }
  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(job_->node_of.size()); }
  int node() const override { return job_->node_of[rank_]; }
  int nodes() const override { return static_cast<int>(job_->node.size()); }
  int node_leader() const override { return leader_; }
  int node_size() const override {
    return static_cast<int>(node_members_.size());
  }
  Status NodeBroadcast(std::string* data) override {
    *data = job_->node[node()]->All(node_index_, *data)[0];
    return Status::OK();
  }
  Status NodeBarrier() override {
    job_->node[node()]->All(node_index_, "");
    return Status::OK();
  }
  Status Agree(const Status& local, const std::string& what) override {
    std::string mine;
    if (!local.ok()) {
      mine = std::to_string(static_cast<int>(local.code())) + " " +
             local.message();
    }
    auto all = job_->world.All(rank_, mine);
    for (int r = 0; r < size(); ++r) {
      if (all[r].empty()) continue;
      const size_t sp = all[r].find(' ');
      return Status(static_cast<Code>(std::stoi(all[r].substr(0, sp))),
                    what + " failed on rank " + std::to_string(r) + ": " +
                        all[r].substr(sp + 1));
    }
    return Status::OK();
  }
  Status AnyTrue(bool* flag) override {
    auto all = job_->world.All(rank_, *flag ? "1" : "");
    for (const auto& a : all) *flag |= !a.empty();
    return Status::OK();
  }
  Status Broadcast(std::string* data, int root) override {
    *data = job_->world.All(rank_, *data)[root];
    return Status::OK();
  }
  Status Gather(const std::string& mine, std::vector<std::string>* all,
                int root) override {
    auto got = job_->world.All(rank_, mine);
    if (rank_ == root) *all = std::move(got);
    return Status::OK();
  }

 private:
  ThreadJob* const job_;
  const int rank_;
  int leader_ = 0, node_index_ = 0;
  std::vector<int> node_members_;
};

// Runs `body` on each rank of a job whose rank r is on node nodes[r], each
// rank a thread with a context "ctx" of its own, and the context's Fini
// after it; the failures of every rank are reported. fini_ok: whether Fini
// is to succeed (a store that could not write what it holds fails it).
inline void RunJob(const std::vector<int>& nodes,
                   const std::function<void(Context*, int)>& body,
                   bool fini_ok = true) {
  ThreadJob job(nodes);
  std::vector<std::thread> ranks;
  for (int r = 0; r < static_cast<int>(nodes.size()); ++r) {
    ranks.emplace_back([&, r] {
      std::unique_ptr<Context> ctx;
      Status s = dataset::InitContext(std::make_unique<ThreadGroup>(&job, r),
                                      "ctx", "", &ctx);
      ASSERT_TRUE(s.ok()) << "rank " << r << ": " << s.ToString();
      body(ctx.get(), r);
      s = ctx->Fini();
      if (fini_ok) {
        EXPECT_TRUE(s.ok()) << "rank " << r << ": " << s.ToString();
      }
    });
  }
  for (auto& t : ranks) t.join();
}

}  // namespace test
}  // namespace sluice

#endif  // SLUICE_TESTS_THREAD_GROUP_H_
