// Background drains (drain_queue.h).
#include "dataset/drain_queue.h"

#include <chrono>
#include <cstdio>

namespace sluice {
namespace dataset {

void DrainQueue::Add(std::shared_ptr<DrainJob> job) {
  std::lock_guard<std::mutex> lock(mu_);
  job->options.stop = &job->stop;
  job->options.bytes_done = &job->done;
  job->options.bytes_total = &job->total;
  auto& slot = jobs_[{job->dataset, job->id}];
  if (slot && (slot->phase == DrainPhase::kQueued ||
               slot->phase == DrainPhase::kDraining)) {
    return;  // queued or draining already
  }
  slot = job;
  if (stopping_) {
    job->phase = DrainPhase::kFailed;
    job->error = Status::InvalidArgument("the context has ended");
    return;
  }
  queue_.push_back(std::move(job));
  if (static_cast<int>(pool_.size()) < threads_) {
    pool_.emplace_back([this] { Run(); });
  }
  cv_.notify_one();
}

std::shared_ptr<DrainJob> DrainQueue::Find(const std::string& dataset,
                                           int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find({dataset, id});
  return it == jobs_.end() ? nullptr : it->second;
}

DrainState DrainQueue::State(const DrainJob& job) {
  std::lock_guard<std::mutex> lock(mu_);
  DrainState st;
  st.phase = job.phase;
  st.root = job.dst_root;
  st.root_path = job.dst_root_path;
  st.bytes_done = job.done.load();
  st.bytes_total = job.total.load();
  st.bytes_resumed = job.resumed;
  st.error = job.error;
  return st;
}

void DrainQueue::Wait(const std::shared_ptr<DrainJob>& job) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] {
    return job->phase != DrainPhase::kQueued &&
           job->phase != DrainPhase::kDraining;
  });
}

Status DrainQueue::WaitAll(bool progress, const std::string& what) {
  std::unique_lock<std::mutex> lock(mu_);
  auto busy = [&] { return !queue_.empty() || running_ > 0; };
  const auto t0 = std::chrono::steady_clock::now();
  while (busy()) {
    cv_.wait_for(lock, std::chrono::seconds(progress ? 2 : 60));
    if (progress && busy()) {
      uint64_t done = 0, total = 0;
      int left = 0;
      for (auto& [key, j] : jobs_) {
        if (j->phase != DrainPhase::kQueued &&
            j->phase != DrainPhase::kDraining) {
          continue;
        }
        ++left;
        done += j->done.load();
        total += j->total.load();
      }
      const double s = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - t0)
                           .count();
      fprintf(stderr,
              "sluice: %s: waiting for %d drain(s): %.1f of %.1f MiB "
              "durable (%.0f s)\n",
              what.c_str(), left, done / 1048576.0, total / 1048576.0, s);
    }
  }
  for (auto& [key, j] : jobs_) {
    if (j->phase == DrainPhase::kFailed) return j->error;
  }
  return Status::OK();
}

void DrainQueue::TakeQueued(const std::string& dataset, int64_t below,
                            std::vector<std::shared_ptr<DrainJob>>* taken,
                            std::vector<int64_t>* began) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto q = queue_.begin(); q != queue_.end();) {
    if ((*q)->dataset == dataset && (*q)->id < below) {
      taken->push_back(*q);
      q = queue_.erase(q);
    } else {
      ++q;
    }
  }
  for (auto& [key, j] : jobs_) {
    if (key.first == dataset && key.second < below &&
        (j->phase == DrainPhase::kDraining ||
         j->phase == DrainPhase::kDurable ||
         j->phase == DrainPhase::kFailed)) {
      began->push_back(key.second);
    }
  }
}

void DrainQueue::Return(const std::shared_ptr<DrainJob>& job, bool skip) {
  std::lock_guard<std::mutex> lock(mu_);
  if (skip || stopping_) {
    job->phase = skip ? DrainPhase::kSkipped : DrainPhase::kFailed;
    if (!skip) job->error = Status::InvalidArgument("the context has ended");
  } else {
    queue_.push_back(job);
    cv_.notify_one();
  }
  cv_.notify_all();
}

void DrainQueue::Cancel(const std::string& dataset, int64_t id) {
  std::unique_lock<std::mutex> lock(mu_);
  auto it = jobs_.find({dataset, id});
  if (it == jobs_.end()) return;
  std::shared_ptr<DrainJob> job = it->second;
  jobs_.erase(it);
  for (auto q = queue_.begin(); q != queue_.end(); ++q) {
    if (*q == job) {
      queue_.erase(q);
      return;
    }
  }
  job->stop = true;
  cv_.wait(lock, [&] { return job->phase != DrainPhase::kDraining; });
}

void DrainQueue::Stop() {
  std::vector<std::thread> pool;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (auto& [key, j] : jobs_) j->stop = true;
    pool.swap(pool_);
    cv_.notify_all();
  }
  for (auto& t : pool) t.join();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& j : queue_) {
    j->phase = DrainPhase::kFailed;
    j->error = Status::Incomplete("the drain of dataset " + j->dataset +
                                  " id " + std::to_string(j->id) +
                                  " was not started before the context "
                                  "ended; the next context resumes it");
  }
  queue_.clear();
  cv_.notify_all();
}

void DrainQueue::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    std::shared_ptr<DrainJob> job = queue_.front();
    queue_.pop_front();
    job->phase = DrainPhase::kDraining;
    ++running_;
    lock.unlock();
    tier::DrainResult r;
    Status s = tier::DrainId(job->src_dir, job->dst_dir, job->dataset,
                             job->id, job->writers, job->source.get(),
                             job->options, &r);
    if (s.ok() && r.published && job->keep_dst > 0) {
      // The id is complete there: older ones beyond keep_last go.
      Status k = tier::KeepLastDrained(job->dst_dir, job->dataset,
                                       job->keep_dst);
      if (!k.ok()) {
        fprintf(stderr, "sluice: dataset %s id %lld is drained, but: %s\n",
                job->dataset.c_str(), static_cast<long long>(job->id),
                k.ToString().c_str());
      }
    }
    lock.lock();
    --running_;
    job->resumed = r.resumed;
    // A writer another process drains now (`sluice drain`) is that
    // process's to finish: this share counts as handed over, and the id
    // is durable when the index is there (GetDrainState looks).
    if (s.ok()) {
      job->durable = r.durable;
      job->phase = DrainPhase::kDurable;
    } else {
      job->phase = DrainPhase::kFailed;
      job->error = s;
    }
    cv_.notify_all();
  }
}

}  // namespace dataset
}  // namespace sluice
