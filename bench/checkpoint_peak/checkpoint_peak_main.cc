// silt_checkpoint_peak: the heap one incremental classic checkpoint
// (decisions 161, 190) takes at its peak, against the number of files in the
// table (bench/results/2026-12-07-vm-ckpt2.md; not installed).
//
//   silt_checkpoint_peak TABLE --files N [--batch B] [--interval K]
//
// Creates the Delta table TABLE (local, must not exist) and appends N files
// in commits of B (512) through one eliding handle, as a streaming sink does
// (CommitAndAdvance with the sink's txn), with delta.checkpointInterval K
// (16) and background checkpoints, waited for after each commit; so between
// two checkpoints K*B files are added and staged in groups of
// kClassicStageAdds. After every commit that wrote a checkpoint it prints
// one JSON line: the version, files, the checkpoint's bytes, row groups and
// footer bytes (and its heap, decoded), and the peak heap of the commit and
// the wait above the heap live before it (every malloc, free, realloc...
// counted by this program with malloc_usable_size: glibc's own overhead per
// block and the free pages it keeps are not counted).
#include <malloc.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "silt/delta/checkpoint_writer.h"
#include "silt/delta/protocol.h"
#include "silt/delta/table.h"
#include "silt/fs/file_system.h"
#include "silt/parquet/row_group_copy.h"

namespace {

std::atomic<int64_t> g_live{0};
std::atomic<int64_t> g_peak{0};

void Counted(void* p) {
  if (p == nullptr) return;
  const int64_t n = static_cast<int64_t>(malloc_usable_size(p));
  const int64_t live = g_live.fetch_add(n) + n;
  int64_t peak = g_peak.load(std::memory_order_relaxed);
  while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {
  }
}

void Uncounted(void* p) {
  if (p != nullptr) g_live.fetch_sub(static_cast<int64_t>(malloc_usable_size(p)));
}

}  // namespace

// Every heap block of the process (operator new calls malloc): glibc's
// entry points, wrapped.
extern "C" {
void* __libc_malloc(size_t n);
void* __libc_calloc(size_t n, size_t size);
void* __libc_realloc(void* p, size_t n);
void* __libc_memalign(size_t alignment, size_t n);
void __libc_free(void* p);

void* malloc(size_t n) {
  void* p = __libc_malloc(n);
  Counted(p);
  return p;
}
void* calloc(size_t n, size_t size) {
  void* p = __libc_calloc(n, size);
  Counted(p);
  return p;
}
void* realloc(void* p, size_t n) {
  const int64_t before = p == nullptr ? 0 : static_cast<int64_t>(malloc_usable_size(p));
  void* q = __libc_realloc(p, n);
  if (q != nullptr || n == 0) g_live.fetch_sub(before);
  Counted(q);
  return q;
}
void free(void* p) {
  Uncounted(p);
  __libc_free(p);
}
void* memalign(size_t alignment, size_t n) {
  void* p = __libc_memalign(alignment, n);
  Counted(p);
  return p;
}
void* aligned_alloc(size_t alignment, size_t n) { return memalign(alignment, n); }
int posix_memalign(void** out, size_t alignment, size_t n) {
  void* p = memalign(alignment, n);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}
}

namespace silt {
namespace {

int Fail(const Status& s) {
  std::cerr << "silt_checkpoint_peak: " << s.ToString() << "\n";
  return 1;
}

delta::AddFile MakeAdd(int64_t n) {
  delta::AddFile a;
  const std::string date = "2026-12-" + std::to_string(10 + n % 7);
  char id[40];
  std::snprintf(id, sizeof(id), "%08llx-1c2d-4e5f-8a9b-%012llx", static_cast<unsigned long long>(n),
                static_cast<unsigned long long>(n * 2654435761ULL % 1000000000000ULL));
  a.path = "event_date=" + date + "/part-00000-" + id + ".c000.snappy.parquet";
  a.partition_values = {{"event_date", date}};
  a.size = 4'000 + n % 977;
  a.modification_time = 1'796'000'000'000 + n * 37;
  a.stats =
      R"({"numRecords":)" + std::to_string(40 + n % 13) + R"(,"minValues":{"event_id":")" +
      std::to_string(n * 64) + R"(","user_id":)" + std::to_string(n % 10007) +
      R"(,"amount":1.25,"event_time":"2026-12-07T12:00:00.000Z"},"maxValues":{"event_id":")" +
      std::to_string(n * 64 + 63) + R"(","user_id":)" + std::to_string(n % 10007 + 900) +
      R"(,"amount":998.5,"event_time":"2026-12-07T12:00:01.000Z"},"nullCount":{"event_id":0,"user_id":0,"amount":0,"event_time":0}})";
  return a;
}

Status Run(const std::string& path, int64_t files, int64_t batch, int64_t interval) {
  SILT_ASSIGN_OR_RETURN(fs::FileSystemPtr fs, fs::FileSystemForPath(path));
  SILT_ASSIGN_OR_RETURN(auto table, delta::DeltaTable::Open(fs, path));
  table->set_elide_checkpointed_files(true);
  table->set_background_checkpoints(true);
  delta::SnapshotPtr state;
  {
    delta::CommitRequest create;
    delta::Metadata m;
    m.schema =
        columnar::DataType::Struct({columnar::Field{"event_id", columnar::DataType::String()},
                                    columnar::Field{"user_id", columnar::DataType::Long()},
                                    columnar::Field{"event_date", columnar::DataType::String()}});
    m.partition_columns = {"event_date"};
    m.configuration = {{"delta.checkpointInterval", std::to_string(interval)}};
    create.new_metadata = m;
    SILT_ASSIGN_OR_RETURN(create.new_protocol, delta::ProtocolForNewTable(m.configuration));
    create.operation = "CREATE TABLE";
    SILT_RETURN_NOT_OK(delta::CommitAndAdvance(table.get(), &state, create).status());
  }
  int64_t next = 0;
  int64_t batch_id = 0;
  while (next < files) {
    delta::CommitRequest r;
    r.operation = "STREAMING UPDATE";
    for (int64_t i = 0; i < batch && next < files; ++i) r.adds.push_back(MakeAdd(next++));
    r.txn = delta::Txn{"q", batch_id++, 1};
    const int64_t live_before = g_live.load();
    g_peak.store(live_before);
    SILT_RETURN_NOT_OK(delta::CommitAndAdvance(table.get(), &state, r).status());
    table->WaitForBackgroundCheckpoint();
    const int64_t peak = g_peak.load() - live_before;
    if (state == nullptr) return Status::Internal("the writer's state was dropped");
    const int64_t version = state->version();
    if (version % interval != 0) continue;
    const std::string cp = path + "/_delta_log/" + delta::CheckpointFileName(version);
    SILT_ASSIGN_OR_RETURN(auto file, fs->OpenForRead(cp));
    SILT_ASSIGN_OR_RETURN(int64_t size, file->Size());
    SILT_ASSIGN_OR_RETURN(std::string trailer, file->ReadAt(size - 8, 8));
    uint32_t footer_len = 0;
    std::memcpy(&footer_len, trailer.data(), 4);
    // The footer decoded, as a checkpoint holds that of the previous one
    // (and builds the next one's), in heap bytes.
    const int64_t live_footer = g_live.load();
    SILT_ASSIGN_OR_RETURN(parquet::FileMetaData meta, parquet::ReadFooter(file.get(), size, cp));
    const int64_t footer_heap = g_live.load() - live_footer;
    std::cout << "{\"version\":" << version << ",\"files\":" << next
              << ",\"checkpoint_bytes\":" << size << ",\"row_groups\":" << meta.row_groups.size()
              << ",\"footer_bytes\":" << footer_len << ",\"footer_heap\":" << footer_heap
              << ",\"live_before\":" << live_before << ",\"peak_above_live\":" << peak << "}"
              << std::endl;
  }
  return Status::OK();
}

}  // namespace
}  // namespace silt

int main(int argc, char** argv) {
  if (argc < 4 || std::string(argv[2]) != "--files") {
    std::cerr << "usage: silt_checkpoint_peak TABLE --files N [--batch B] [--interval K]\n";
    return 2;
  }
  const std::string path = argv[1];
  const int64_t files = std::atoll(argv[3]);
  int64_t batch = 512;
  int64_t interval = 16;
  for (int i = 4; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--batch") batch = std::atoll(argv[i + 1]);
    if (std::string(argv[i]) == "--interval") interval = std::atoll(argv[i + 1]);
  }
  silt::Status st = silt::Run(path, files, batch, interval);
  return st.ok() ? 0 : silt::Fail(st);
}
