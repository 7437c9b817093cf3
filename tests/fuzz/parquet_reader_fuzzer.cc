// libFuzzer target for silt's Parquet reader: any input must give either
// rows that pass ValidateColumn or a Status, never a crash, hang or
// sanitizer report. Built only with clang (SILT_BUILD_FUZZERS=ON); see
// README.md in this directory.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "silt/columnar/column.h"
#include "silt/columnar/predicate.h"
#include "silt/fs/file_system.h"
#include "silt/parquet/file_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto fs = silt::fs::MakeMemoryFileSystem();
  const std::string path = "/fuzz/input.parquet";
  if (!fs->WriteFile(path, std::string(reinterpret_cast<const char*>(data), size)).ok()) return 0;
  auto reader = silt::parquet::ParquetFileReader::Open(fs.get(), path);
  if (!reader.ok()) return 0;
  for (int rg = 0; rg < (*reader)->num_row_groups(); ++rg) {
    auto batch = (*reader)->ReadRowGroup(rg);
    if (!batch.ok()) continue;
    // A batch the reader returns must be internally consistent.
    if (!silt::columnar::ValidateBatch(**batch).ok()) std::abort();
  }
  // Pruning paths: statistics, bloom filters and the page index of the
  // first column, with an equality and a range predicate.
  const auto& schema = (*reader)->schema();
  if (schema->num_fields() == 0) return 0;
  silt::columnar::ColumnPredicate eq;
  eq.column = schema->field(0).name;
  eq.type = schema->field(0).type;
  eq.op = silt::columnar::PredicateOp::kEq;
  silt::columnar::PredicateValue v;
  v.i64 = static_cast<int64_t>(size);
  v.f64 = 1.5;
  v.i128 = 7;
  v.str = "m";
  eq.values.push_back(v);
  silt::columnar::ColumnPredicate ge = eq;
  ge.op = silt::columnar::PredicateOp::kGtEq;
  for (const silt::columnar::Conjunction& conj :
       {silt::columnar::Conjunction{eq}, silt::columnar::Conjunction{ge}}) {
    auto kept = (*reader)->SelectRowGroups(conj);
    if (!kept.ok()) continue;
    for (int rg : *kept) {
      auto batch = (*reader)->ReadRowGroupPruned(rg, {}, conj);
      if (!batch.ok()) continue;
      if (!silt::columnar::ValidateBatch(**batch).ok()) std::abort();
    }
  }
  return 0;
}
