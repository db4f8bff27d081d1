// Sluice K/V API from C++: write a checkpoint, make it durable, read it back.
#include <sluice/kv.h>

#include <iostream>
#include <vector>

int main(int argc, char** argv) {
  std::unique_ptr<sluice::Store> db;
  sluice::StoreOptions options;  // RocksDB, no WAL: LSMIO's tuning
  std::vector<double> field(1024, 3.14);
  std::string_view bytes(reinterpret_cast<const char*>(field.data()),
                         field.size() * sizeof(double));
  std::string back;
  sluice::Status s = sluice::Store::Open(options, argc > 1 ? argv[1] : "ckpt.sluice", &db);
  if (s.ok()) s = db->Put("step42/field", bytes, sluice::WriteMode::kAsync);
  if (s.ok()) s = db->WriteBarrier();  // durable once this returns
  if (s.ok()) s = db->Get("step42/field", &back);
  if (s.ok()) s = db->Close();
  if (!s.ok()) { std::cerr << s.ToString() << "\n"; return 1; }
  std::cout << "read " << back.size() << " bytes back, " << (back == bytes ? "ok" : "WRONG") << "\n";
  return back == bytes ? 0 : 1;
}
