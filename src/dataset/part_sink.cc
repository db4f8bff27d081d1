// Parts written into a store of this process (part_sink.h).
#include "dataset/part_sink.h"

#include "fs/writer_fs.h"

namespace sluice {
namespace dataset {
namespace {

class StoreFile : public PartFile {
 public:
  StoreFile(FileSystem* fs, std::string path, std::unique_ptr<File> file)
      : fs_(fs), path_(std::move(path)), file_(std::move(file)) {}

  Status PWrite(const char* buf, size_t n, uint64_t offset) override {
    return file_->PWrite(buf, n, offset);
  }

  Status Flush() override {
    if (!file_) return Status::InvalidArgument(path_ + " is closed");
    auto* wf = dynamic_cast<fs::WriterFile*>(file_.get());
    return wf ? wf->FlushBuffer() : Status::OK();
  }

  Status ReadBack(char* buf, size_t n, uint64_t offset) override {
    if (!file_) return Status::InvalidArgument(path_ + " is closed");
    auto* wf = dynamic_cast<fs::WriterFile*>(file_.get());
    if (!wf) return PartFile::ReadBack(buf, n, offset);
    return wf->ReadBack(buf, n, offset);
  }

  Status Close(FileInfo* info) override {
    if (!file_) return Status::InvalidArgument(path_ + " is closed");
    auto* wf = dynamic_cast<fs::WriterFile*>(file_.get());
    Status s = wf ? wf->CloseWithoutBarrier() : file_->Close();
    file_.reset();
    if (s.ok()) s = fs_->Stat(path_, info);
    return s;
  }

 private:
  FileSystem* const fs_;
  const std::string path_;
  std::unique_ptr<File> file_;
};

class StoreSink : public PartSink {
 public:
  explicit StoreSink(FileSystem* fs) : fs_(fs) {}

  Status MakeDirs(const std::string& path) override {
    size_t pos = 1;
    while (pos <= path.size()) {
      size_t slash = path.find('/', pos);
      if (slash == std::string::npos) slash = path.size();
      Status s = fs_->Mkdir(path.substr(0, slash), 0755);
      if (!s.ok() && s.code() != Code::kAlreadyExists) return s;
      pos = slash + 1;
    }
    return Status::OK();
  }

  Status Create(const std::string& path,
                std::unique_ptr<PartFile>* out) override {
    std::unique_ptr<File> f;
    Status s = fs_->OpenFile(path, kReadWrite | kCreate, 0644, &f);
    if (s.ok()) out->reset(new StoreFile(fs_, path, std::move(f)));
    return s;
  }

 private:
  FileSystem* const fs_;
};

}  // namespace

std::unique_ptr<PartSink> NewStoreSink(FileSystem* fs) {
  return std::make_unique<StoreSink>(fs);
}

}  // namespace dataset
}  // namespace sluice
