// libFuzzer target for the Delta log as silt reads it from a table it did
// not write: commit files (delta::ParseCommit, then log replay of the
// parsed actions into a snapshot: protocol checks, schemaString, partition
// values, stats) and `_last_checkpoint` (read by the checkpoint writer
// before it records a newer checkpoint). The same input is used three
// ways: parsed as commit text, replayed as commit 0 of a table in memory,
// and stored as `_last_checkpoint` of a small valid table that is then
// checkpointed. Any bytes must end in a value or a Status, never a crash,
// hang or sanitizer report. Built only with clang (SILT_BUILD_FUZZERS=ON);
// see README.md in this directory.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "silt/delta/actions.h"
#include "silt/delta/checkpoint_writer.h"
#include "silt/delta/table.h"
#include "silt/fs/file_system.h"

namespace {

// A valid two-column table's first commit (as delta-spark writes it).
constexpr std::string_view kValidCommit0 =
    R"({"protocol":{"minReaderVersion":1,"minWriterVersion":2}})"
    "\n"
    R"({"metaData":{"id":"fuzz","format":{"provider":"parquet","options":{}},)"
    R"("schemaString":"{\"type\":\"struct\",\"fields\":[{\"name\":\"a\",\"type\":\"long\",)"
    R"(\"nullable\":true,\"metadata\":{}},{\"name\":\"p\",\"type\":\"string\",)"
    R"(\"nullable\":true,\"metadata\":{}}]}","partitionColumns":["p"],)"
    R"("configuration":{},"createdTime":1700000000000}})"
    "\n"
    R"({"add":{"path":"p=x/part-0.parquet","partitionValues":{"p":"x"},"size":10,)"
    R"("modificationTime":1700000000000,"dataChange":true,)"
    R"("stats":"{\"numRecords\":1,\"minValues\":{\"a\":1},\"maxValues\":{\"a\":1},)"
    R"(\"nullCount\":{\"a\":0}}"}})"
    "\n";

void ReplayAsCommit0(std::string_view text) {
  auto fs = silt::fs::MakeMemoryFileSystem();
  if (!fs->WriteFile("/t/_delta_log/00000000000000000000.json", text).ok()) std::abort();
  auto table = silt::delta::DeltaTable::Open(fs, "/t");
  if (!table.ok()) std::abort();
  auto snapshot = (*table)->LatestSnapshot();
  (void)snapshot;
}

void CheckpointWithLastCheckpoint(std::string_view text) {
  auto fs = silt::fs::MakeMemoryFileSystem();
  if (!fs->WriteFile("/t/_delta_log/00000000000000000000.json", kValidCommit0).ok()) std::abort();
  if (!fs->WriteFile("/t/_delta_log/_last_checkpoint", text).ok()) std::abort();
  auto table = silt::delta::DeltaTable::Open(fs, "/t");
  if (!table.ok()) std::abort();
  auto snapshot = (*table)->LatestSnapshot();
  if (!snapshot.ok()) std::abort();  // the fixed commit is valid
  auto info = silt::delta::WriteCheckpoint(table->get(), **snapshot, 1700000000000);
  if (!info.ok()) std::abort();  // _last_checkpoint is only a hint
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = silt::delta::ParseCommit(text, "fuzz.json");
  if (parsed.ok()) (void)silt::delta::SerializeCommit(*parsed);
  ReplayAsCommit0(text);
  CheckpointWithLastCheckpoint(text);
  return 0;
}
