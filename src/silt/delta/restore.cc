// RESTORE: diff the target version's live files against the latest ones and
// commit the difference.

#include "silt/delta/restore.h"

#include <algorithm>
#include <map>

#include "silt/base/clock.h"
#include "silt/base/logging.h"
#include "silt/delta/partition_utils.h"
#include "silt/delta/protocol.h"

namespace silt::delta {

namespace {

// A logical file: its resolved path plus its deletion vector, as log replay
// keys files.
Result<std::string> FileKey(const std::string& table_path, const std::string& path,
                            const std::optional<DeletionVectorDescriptor>& dv) {
  SILT_ASSIGN_OR_RETURN(std::string key, ResolveDataFilePath(table_path, path));
  if (dv) key += "\n" + dv->UniqueId();
  return key;
}

bool SameMetadata(const Metadata& a, const Metadata& b) {
  return a.schema_string == b.schema_string && a.partition_columns == b.partition_columns &&
         a.configuration == b.configuration && a.name == b.name && a.description == b.description;
}

std::optional<std::vector<std::string>> MergeFeatures(
    const std::optional<std::vector<std::string>>& a,
    const std::optional<std::vector<std::string>>& b) {
  if (!a && !b) return std::nullopt;
  std::vector<std::string> out = a.value_or(std::vector<std::string>());
  for (const std::string& f : b.value_or(std::vector<std::string>())) {
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  }
  return out;
}

}  // namespace

Result<RestoreResult> Restore(DeltaTable* table, const SnapshotPtr& target,
                              const std::optional<std::string>& timestamp_text) {
  if (table == nullptr || target == nullptr) {
    return Status::InvalidArgument("Restore needs a table and a target snapshot");
  }
  const std::string& path = table->path();
  SILT_ASSIGN_OR_RETURN(SnapshotPtr latest, table->LatestSnapshot());
  if (target->version() > latest->version()) {
    return Status::InvalidArgument("cannot restore Delta table ", path, " to version ",
                                   target->version(), ": the latest version is ",
                                   latest->version());
  }
  SILT_RETURN_NOT_OK_CTX(CheckWriteSupported(latest->protocol(), latest->metadata()),
                         "RESTORE of Delta table ", path);

  std::map<std::string, const AddFile*> current;
  for (const AddFile& add : latest->files()) {
    SILT_ASSIGN_OR_RETURN(std::string key, FileKey(path, add.path, add.deletion_vector));
    current.emplace(std::move(key), &add);
  }
  RestoreResult result;
  result.restored_version = target->version();
  const int64_t now_ms = SystemClock().NowMicros() / 1000;
  CommitRequest request;
  std::vector<std::string> missing;
  int64_t missing_count = 0;
  for (const AddFile& add : target->files()) {
    result.num_files_after += 1;
    result.table_size_after += add.size;
    SILT_ASSIGN_OR_RETURN(std::string key, FileKey(path, add.path, add.deletion_vector));
    auto it = current.find(key);
    if (it != current.end()) {
      current.erase(it);
      continue;
    }
    SILT_ASSIGN_OR_RETURN(std::string file, ResolveDataFilePath(path, add.path));
    SILT_ASSIGN_OR_RETURN(bool exists, table->file_system()->Exists(file));
    if (!exists) {
      if (missing.size() < 10) missing.push_back(file);
      ++missing_count;
      continue;
    }
    AddFile restored = add;
    restored.data_change = true;
    result.restored_bytes += add.size;
    request.adds.push_back(std::move(restored));
  }
  if (missing_count > 0) {
    std::string list;
    for (const std::string& file : missing) list += "\n  " + file;
    return Status::NotFound(
        "cannot restore Delta table ", path, " to version ", target->version(), ": ", missing_count,
        " of its data file(s) no longer exist (most likely deleted by VACUUM); "
        "restore a more recent version. Missing:",
        list, missing_count > static_cast<int64_t>(missing.size()) ? "\n  ..." : "");
  }
  for (const auto& [key, add] : current) {
    RemoveFile remove;
    remove.path = add->path;
    remove.deletion_timestamp = now_ms;
    remove.data_change = true;
    remove.extended_file_metadata = true;
    remove.partition_values = add->partition_values;
    remove.size = add->size;
    remove.deletion_vector = add->deletion_vector;
    remove.base_row_id = add->base_row_id;
    remove.default_row_commit_version = add->default_row_commit_version;
    result.removed_bytes += add->size;
    request.removes.push_back(std::move(remove));
  }
  result.num_restored_files = static_cast<int64_t>(request.adds.size());
  result.num_removed_files = static_cast<int64_t>(request.removes.size());

  if (!SameMetadata(target->metadata(), latest->metadata())) {
    Metadata metadata = target->metadata();
    metadata.id = latest->metadata().id;
    request.new_metadata = std::move(metadata);
  }
  // Never downgrade: keep the higher versions and the union of features.
  const Protocol& now = latest->protocol();
  const Protocol& then = target->protocol();
  Protocol merged;
  merged.min_reader_version = std::max(now.min_reader_version, then.min_reader_version);
  merged.min_writer_version = std::max(now.min_writer_version, then.min_writer_version);
  merged.reader_features = MergeFeatures(now.reader_features, then.reader_features);
  merged.writer_features = MergeFeatures(now.writer_features, then.writer_features);
  if (merged.min_reader_version != now.min_reader_version ||
      merged.min_writer_version != now.min_writer_version ||
      merged.reader_features != now.reader_features ||
      merged.writer_features != now.writer_features) {
    request.new_protocol = merged;
  }

  request.operation = "RESTORE";
  request.is_blind_append = false;
  if (timestamp_text) {
    request.operation_parameters = {{"timestamp", *timestamp_text}};
  } else {
    request.operation_parameters = {{"version", std::to_string(target->version())}};
  }
  request.operation_metrics = {{"numRestoredFiles", std::to_string(result.num_restored_files)},
                               {"numRemovedFiles", std::to_string(result.num_removed_files)},
                               {"restoredFilesSize", std::to_string(result.restored_bytes)},
                               {"removedFilesSize", std::to_string(result.removed_bytes)},
                               {"numOfFilesAfterRestore", std::to_string(result.num_files_after)},
                               {"tableSizeAfterRestore", std::to_string(result.table_size_after)}};
  SILT_ASSIGN_OR_RETURN_CTX(CommitResult committed, Commit(table, latest, request),
                            "RESTORE of Delta table ", path, " to version ", target->version());
  result.version = committed.version;
  SILT_LOG_INFO("restore", "Delta table ", path, " version ", result.version, ": restored version ",
                target->version(), " (", result.num_restored_files, " file(s) added, ",
                result.num_removed_files, " removed)");
  return result;
}

}  // namespace silt::delta
