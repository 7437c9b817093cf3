#include "silt/delta/auto_compact.h"

#include <memory>

#include "silt/base/logging.h"
#include "silt/delta/optimize.h"
#include "silt/delta/table.h"

namespace silt::delta {

AutoCompactor::AutoCompactor(fs::FileSystemPtr fs, std::string table_path,
                             AutoCompactOptions options)
    : fs_(std::move(fs)), table_path_(std::move(table_path)), options_(options) {}

AutoCompactor::~AutoCompactor() {
  if (thread_.joinable()) thread_.join();
}

void AutoCompactor::OnCommit() {
  ++commits_since_last_;
  if (commits_since_last_ < options_.every_n_commits || running_.load()) return;
  if (thread_.joinable()) thread_.join();  // the previous one has finished
  commits_since_last_ = 0;
  running_.store(true);
  thread_ = std::thread([this] { Run(); });
}

void AutoCompactor::Run() {
  Result<std::unique_ptr<DeltaTable>> table = DeltaTable::Open(fs_, table_path_);
  if (table.ok()) {
    OptimizeOptions optimize;
    optimize.target_file_bytes = options_.max_file_bytes;
    optimize.min_input_files = options_.min_num_files;
    optimize.auto_compact = true;
    Result<OptimizeResult> result = Optimize(table->get(), optimize);
    if (!result.ok()) {
      SILT_LOG_WARN("autoCompact", "compaction of ", table_path_,
                    " failed (the stream continues): ", result.status().message());
    } else if (result->version >= 0) {
      compactions_.fetch_add(1);
    }
  } else {
    SILT_LOG_WARN("autoCompact", "cannot open ", table_path_, ": ", table.status().message());
  }
  running_.store(false);
}

}  // namespace silt::delta
