// VACUUM: compute what the log still needs, list (or, in lite mode, read
// from the log) what is on storage, delete the difference that is older
// than the cutoff, and record VACUUM START / END around the deletes.

#include "silt/delta/vacuum.h"

#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <unordered_set>

#include "silt/base/logging.h"
#include "silt/base/strings.h"
#include "silt/delta/checkpoint_reader.h"
#include "silt/delta/deletion_vector.h"
#include "silt/delta/partition_utils.h"
#include "silt/delta/protocol.h"
#include "silt/delta/table_properties.h"
#include "silt/delta/table_root.h"

namespace silt::delta {

namespace {

// The storage path of an on-disk deletion vector (PROTOCOL.md "Deletion
// Vector Descriptor"), or nullopt for an inline one or an unreadable id (a
// malformed id names no file, so it protects none either).
std::optional<std::string> DeletionVectorFile(const std::string& table_path,
                                              const DeletionVectorDescriptor& dv) {
  Result<std::string> file = DeletionVectorFilePath(table_path, dv);
  if (!file.ok()) return std::nullopt;
  return *std::move(file);
}

// Checkpoint files in `_delta_log`, grouped by version (newest last).
std::map<int64_t, std::vector<std::string>> CheckpointFiles(const std::vector<fs::FileInfo>& log) {
  std::map<int64_t, std::vector<std::string>> out;
  for (const fs::FileInfo& info : log) {
    std::string_view name = fs::BaseName(info.path);
    if (name.size() < 32 || name.substr(20, 12) != ".checkpoint.") continue;
    if (!name.ends_with(".parquet") && !name.ends_with(".json")) continue;
    if (!AllDigits(name.substr(0, 20))) continue;
    out[std::stoll(std::string(name.substr(0, 20)))].push_back(info.path);
  }
  return out;
}

Result<CommitActions> ReadCheckpointFile(fs::FileSystem* fs, const std::string& log_path,
                                         const std::string& file) {
  CommitActions actions;
  if (file.ends_with(".json")) {
    SILT_ASSIGN_OR_RETURN(std::string text, fs->ReadFile(file));
    SILT_ASSIGN_OR_RETURN(actions, ParseCommit(text, file));
  } else {
    SILT_ASSIGN_OR_RETURN(actions, ReadParquetCheckpoint(fs, file));
  }
  SILT_ASSIGN_OR_RETURN(std::vector<std::string> sidecars, SidecarPaths(actions, file));
  for (const std::string& sidecar : sidecars) {
    std::string sidecar_file =
        (sidecar.find("://") != std::string::npos || sidecar.starts_with("/"))
            ? sidecar
            : fs::JoinPath(fs::JoinPath(log_path, "_sidecars"), sidecar);
    SILT_ASSIGN_OR_RETURN(CommitActions part, ReadParquetCheckpoint(fs, sidecar_file));
    for (RemoveFile& r : part.removes) actions.removes.push_back(std::move(r));
  }
  return actions;
}

// commitInfo.operation and operationParameters.status of a commit.
std::pair<std::string, std::string> OperationAndStatus(const CommitActions& commit) {
  if (!commit.commit_info_json) return {};
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(*commit.commit_info_json).get(root) != simdjson::SUCCESS) return {};
  std::string_view operation;
  std::string_view status;
  if (root["operation"].get_string().get(operation) != simdjson::SUCCESS) return {};
  if (root["operationParameters"]["status"].get_string().get(status) != simdjson::SUCCESS) {
    status = {};
  }
  return {std::string(operation), std::string(status)};
}

// Whether a path relative to the table root has a hidden component
// (IsHiddenForVacuum). Adds the directories it passes to `directories` when
// given.
bool IsHiddenPath(std::string_view relative, const std::vector<std::string>& partition_columns,
                  std::set<std::string>* directories) {
  size_t start = 0;
  while (start <= relative.size()) {
    size_t slash = relative.find('/', start);
    std::string_view component = relative.substr(
        start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (IsHiddenForVacuum(component, partition_columns)) return true;
    if (slash == std::string_view::npos) break;
    if (directories != nullptr) directories->insert(std::string(relative.substr(0, slash)));
    start = slash + 1;
  }
  return false;
}

// Hadoop's ChecksumFileSystem sidecar of `file`: `.<name>.crc` beside it.
std::string ChecksumSidecar(std::string_view file) {
  std::string_view dir = fs::DirName(file);
  std::string name = ".";
  name += fs::BaseName(file);
  name += ".crc";
  return dir.empty() ? name : fs::JoinPath(dir, name);
}

bool DefaultLogCommits(const std::string& table_path) {
  // delta-spark records VACUUM commits on file, hdfs, gs and Azure storage,
  // not on S3.
  return !table_path.starts_with("s3://") && !table_path.starts_with("s3a://");
}

}  // namespace

std::string FormatRetention(int64_t ms) {
  if (ms % 3600000 == 0) return std::to_string(ms / 3600000) + " hours";
  if (ms % 60000 == 0) return std::to_string(ms / 60000) + " minutes";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " seconds";
  return std::to_string(ms) + " ms";
}

bool IsHiddenForVacuum(std::string_view name, const std::vector<std::string>& partition_columns) {
  if (!name.starts_with("_") && !name.starts_with(".")) return false;
  if (name.starts_with("_delta_index") || name.starts_with("_change_data")) return false;
  for (const std::string& column : partition_columns) {
    if (name.starts_with(column + "=")) return false;
  }
  return true;
}

Result<VacuumResult> Vacuum(DeltaTable* table, const VacuumOptions& options) {
  if (table == nullptr) return Status::InvalidArgument("Vacuum needs a table");
  std::string path = table->path();
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  fs::FileSystem* fs = table->file_system().get();
  Clock& clock = options.clock != nullptr ? *options.clock : SystemClock();

  SILT_ASSIGN_OR_RETURN(SnapshotPtr snapshot, table->LatestSnapshot());
  const Protocol& protocol = snapshot->protocol();
  Status writable = CheckWriteSupported(protocol, snapshot->metadata(), RowPreservingFeatures());
  if (!writable.ok()) {
    bool protocol_check =
        protocol.reader_features &&
        std::find(protocol.reader_features->begin(), protocol.reader_features->end(),
                  "vacuumProtocolCheck") != protocol.reader_features->end();
    return writable.WithContextParts(
        "VACUUM of Delta table ", path,
        protocol_check ? " (the table's vacuumProtocolCheck feature requires VACUUM to pass the "
                         "writer protocol check)"
                       : " (VACUUM requires the writer protocol check)");
  }

  VacuumResult result;
  SILT_ASSIGN_OR_RETURN_CTX(result.default_retention_ms,
                            DeletedFileRetentionMs(snapshot->metadata().configuration),
                            "Delta table ", path);
  result.retention_ms = options.retention_ms.value_or(result.default_retention_ms);
  if (result.retention_ms < 0) {
    return Status::InvalidArgument("VACUUM retention must not be negative, got ",
                                   result.retention_ms, " ms");
  }
  if (options.retention_check && result.retention_ms < result.default_retention_ms) {
    return Status::InvalidArgument(
        "VACUUM of Delta table ", path, ": the retention of ", FormatRetention(result.retention_ms),
        " is shorter than the table's delta.deletedFileRetentionDuration of ",
        FormatRetention(result.default_retention_ms),
        ". Files that a concurrent writer or a reader of a recent version still needs could be "
        "deleted and the table corrupted. If no operation is running on the table, disable the "
        "check (--unsafe-ignore-retention-check; in Spark, "
        "spark.databricks.delta.retentionDurationCheck.enabled = false); otherwise use a "
        "retention of at least ",
        FormatRetention(result.default_retention_ms));
  }
  const int64_t now_ms = clock.NowMicros() / 1000;
  result.cutoff_ms = now_ms - result.retention_ms;

  // What the log still needs, by normalized storage path (a log may name one
  // file as "a/../b"; table_root.h).
  auto canonical = [](std::string file) {
    std::optional<std::string> normalized = NormalizeStoragePath(file);
    return normalized ? *std::move(normalized) : std::move(file);
  };
  std::unordered_set<std::string> keep;
  auto keep_dv = [&](const std::optional<DeletionVectorDescriptor>& dv) {
    if (!dv) return;
    if (std::optional<std::string> file = DeletionVectorFile(path, *dv)) {
      keep.insert(canonical(*std::move(file)));
    }
  };
  for (const AddFile& add : snapshot->files()) {
    SILT_ASSIGN_OR_RETURN(std::string file, ResolveDataFilePath(path, add.path));
    keep.insert(canonical(std::move(file)));
    keep_dv(add.deletion_vector);
  }
  // Lite mode's candidates: removes older than the cutoff, by resolved (not
  // yet checked) storage path, with the path the log gave for reports.
  struct Expired {
    int64_t size = -1;
    std::string log_path;
  };
  std::map<std::string, Expired> expired_removes;
  auto note_remove = [&](const RemoveFile& remove) -> Status {
    SILT_ASSIGN_OR_RETURN(std::string file, ResolveDataFilePath(path, remove.path));
    if (remove.deletion_timestamp.value_or(0) >= result.cutoff_ms) {
      keep.insert(canonical(std::move(file)));
      keep_dv(remove.deletion_vector);
    } else {
      expired_removes.emplace(std::move(file), Expired{remove.size.value_or(-1), remove.path});
      if (remove.deletion_vector) {
        if (std::optional<std::string> dv = DeletionVectorFile(path, *remove.deletion_vector)) {
          expired_removes.emplace(
              *dv, Expired{-1, "the deletion vector " + remove.deletion_vector->path_or_inline_dv +
                                   " of " + remove.path});
        }
      }
    }
    return Status::OK();
  };
  SILT_ASSIGN_OR_RETURN(std::vector<int64_t> versions, table->ListVersions());
  bool completed_vacuum_recorded = false;
  for (int64_t version : versions) {
    if (version > snapshot->version()) break;
    SILT_ASSIGN_OR_RETURN(CommitActions commit, table->ReadCommit(version));
    for (const RemoveFile& remove : commit.removes) SILT_RETURN_NOT_OK(note_remove(remove));
    auto [operation, status] = OperationAndStatus(commit);
    if (operation == "VACUUM END" && status == "COMPLETED") completed_vacuum_recorded = true;
  }
  const bool log_truncated = versions.empty() || versions.front() > 0;
  if (log_truncated) {
    // The commits before the first one left are only summarized by a
    // checkpoint; its removes are the tombstones that are still retained.
    SILT_ASSIGN_OR_RETURN(std::vector<fs::FileInfo> log_files, fs->ListDir(table->log_path()));
    std::map<int64_t, std::vector<std::string>> checkpoints = CheckpointFiles(log_files);
    bool read_one = false;
    Status last_error;
    for (auto it = checkpoints.rbegin(); it != checkpoints.rend() && !read_one; ++it) {
      if (it->first > snapshot->version()) continue;
      std::vector<RemoveFile> removes;
      Status st;
      for (const std::string& file : it->second) {
        Result<CommitActions> actions = ReadCheckpointFile(fs, table->log_path(), file);
        if (!actions.ok()) {
          st = actions.status();
          break;
        }
        for (RemoveFile& r : actions->removes) removes.push_back(std::move(r));
      }
      if (!st.ok()) {
        last_error = st;
        continue;
      }
      for (const RemoveFile& remove : removes) SILT_RETURN_NOT_OK(note_remove(remove));
      read_one = true;
    }
    if (!read_one && !checkpoints.empty()) {
      return last_error.WithContextParts(
          "VACUUM of Delta table ", path,
          ": no checkpoint could be read, so the retained tombstones are unknown");
    }
  }

  // What storage holds that the log no longer needs.
  std::vector<std::pair<std::string, int64_t>> doomed;  // path, size
  // Hadoop checksum sidecars (`.name.crc`) that exist beside the candidates.
  std::unordered_set<std::string> sidecars;
  const std::string root = NormalizeStoragePath(path).value_or(path);
  // The part of a CheckInsideTable result below the root.
  auto relative_of = [&](std::string_view file) {
    return file.substr(root.size() + (root.ends_with("/") ? 0 : 1));
  };
  auto skip = [&](std::string why) {
    SILT_LOG_WARN("vacuum", "Delta table ", path, ": skipped ", why);
    result.skipped.push_back(std::move(why));
  };
  if (options.lite) {
    if (log_truncated && !completed_vacuum_recorded) {
      return Status::InvalidArgument(
          "VACUUM LITE of Delta table ", path, ": the log starts at version ",
          versions.empty() ? -1 : versions.front(),
          " and records no completed VACUUM, so files removed by the cleaned-up commits are "
          "unknown; run a full VACUUM (without --lite)");
    }
    const std::vector<std::string>& partition_columns = snapshot->partition_columns();
    for (const auto& [resolved, expired] : expired_removes) {
      Result<std::string> inside = CheckInsideTable(path, resolved);
      if (!inside.ok()) {
        skip(expired.log_path + ": it resolves to " + resolved + ", outside the table root");
        continue;
      }
      const std::string& file = *inside;
      if (IsHiddenPath(relative_of(file), partition_columns, nullptr)) {
        skip(expired.log_path + ": VACUUM never deletes hidden files (names starting with _ or .)");
        continue;
      }
      if (keep.count(file) != 0) continue;
      Result<fs::FileInfo> info = fs->GetFileInfo(file);
      if (!info.ok()) {
        if (info.status().IsNotFound()) continue;  // deleted by an earlier VACUUM
        return info.status().WithContextParts("VACUUM of Delta table ", path);
      }
      doomed.emplace_back(file, info->size);
      // No writer that uses S3 leaves sidecars there: spare a request each.
      if (!path.starts_with("s3://") && !path.starts_with("s3a://")) {
        std::string sidecar = ChecksumSidecar(file);
        Result<bool> exists = fs->Exists(sidecar);
        if (exists.ok() && *exists) sidecars.insert(std::move(sidecar));
      }
    }
    result.directories = 1;
  } else {
    SILT_ASSIGN_OR_RETURN_CTX(std::vector<fs::FileInfo> listing, fs->ListRecursive(path),
                              "VACUUM of Delta table ", path);
    std::set<std::string> directories;
    const std::vector<std::string>& partition_columns = snapshot->partition_columns();
    for (const fs::FileInfo& info : listing) {
      if (info.is_dir) continue;
      Result<std::string> inside = CheckInsideTable(path, info.path);
      if (!inside.ok()) {
        skip(info.path + ": listed under the table but outside its root");
        continue;
      }
      const std::string& file = *inside;
      if (IsHiddenPath(relative_of(file), partition_columns, &directories)) {
        if (fs::BaseName(file).starts_with(".") && file.ends_with(".crc")) sidecars.insert(file);
        continue;
      }
      if (info.modification_time_ms >= result.cutoff_ms) continue;
      if (keep.count(file) != 0) continue;
      doomed.emplace_back(file, info.size);
    }
    result.directories = static_cast<int64_t>(directories.size()) + 1;
    SILT_ASSIGN_OR_RETURN_CTX(std::vector<fs::FileInfo> temps, fs->ListOrphanedTemps(path),
                              "VACUUM of Delta table ", path);
    for (const fs::FileInfo& info : temps) {
      if (info.modification_time_ms >= result.cutoff_ms) continue;  // maybe a live write
      if (!CheckInsideTable(path, info.path).ok()) continue;
      result.temp_files.push_back(info.path);
    }
  }
  std::sort(doomed.begin(), doomed.end());
  for (const auto& [file, size] : doomed) {
    result.files.push_back(file);
    result.bytes += size;
    std::string sidecar = ChecksumSidecar(file);
    if (sidecars.count(sidecar) != 0) result.checksum_files.push_back(std::move(sidecar));
  }
  SILT_LOG_INFO("vacuum", "Delta table ", path, ": ", result.files.size(), " file(s), ",
                result.bytes, " bytes, not needed by any version within ",
                FormatRetention(result.retention_ms), (options.dry_run ? " (dry run)" : ""));
  if (options.dry_run) return result;

  const bool log_commits = options.log_commits.value_or(DefaultLogCommits(path));
  // `parameters` are written as JSON strings, `json_parameters` as is.
  auto record = [&](const std::string& operation, std::map<std::string, std::string> parameters,
                    std::map<std::string, std::string> json_parameters,
                    std::map<std::string, std::string> metrics) -> Result<int64_t> {
    SILT_ASSIGN_OR_RETURN(SnapshotPtr latest, table->LatestSnapshot());
    CommitRequest request;
    request.operation = operation;
    request.operation_parameters = std::move(parameters);
    request.operation_parameters_json = std::move(json_parameters);
    request.operation_metrics = std::move(metrics);
    request.is_blind_append = true;
    SILT_ASSIGN_OR_RETURN(CommitResult committed, Commit(table, latest, request));
    return committed.version;
  };
  if (log_commits) {
    // Typed as delta-spark writes them: a boolean and numbers.
    std::map<std::string, std::string> parameters = {
        {"retentionCheckEnabled", options.retention_check ? "true" : "false"},
        {"defaultRetentionMillis", std::to_string(result.default_retention_ms)}};
    if (options.retention_ms) {
      parameters["specifiedRetentionMillis"] = std::to_string(*options.retention_ms);
    }
    SILT_ASSIGN_OR_RETURN_CTX(result.start_version,
                              record("VACUUM START", {}, parameters,
                                     {{"numFilesToDelete", std::to_string(result.files.size())},
                                      {"sizeOfDataToDelete", std::to_string(result.bytes)}}),
                              "recording VACUUM START in Delta table ", path);
  }
  // In batches (one S3 DeleteObjects request each), logged per file.
  constexpr size_t kBatch = 1000;
  Status delete_error;
  for (size_t start = 0; start < result.files.size(); start += kBatch) {
    size_t end = std::min(result.files.size(), start + kBatch);
    std::vector<std::string> batch(result.files.begin() + static_cast<std::ptrdiff_t>(start),
                                   result.files.begin() + static_cast<std::ptrdiff_t>(end));
    // A file's checksum goes with it, as Hadoop's ChecksumFileSystem (and so
    // delta-spark's VACUUM on local storage) deletes it.
    std::vector<std::string> with_sidecars = batch;
    for (const std::string& file : batch) {
      std::string sidecar = ChecksumSidecar(file);
      if (sidecars.count(sidecar) != 0) with_sidecars.push_back(std::move(sidecar));
    }
    Status st = fs->DeleteFiles(with_sidecars);
    if (!st.ok()) {
      delete_error = st.WithContextParts("VACUUM of Delta table ", path);
      break;
    }
    result.deleted += static_cast<int64_t>(batch.size());
    for (const std::string& file : batch) SILT_LOG_INFO("vacuum", "deleted ", file);
  }
  if (delete_error.ok() && !result.temp_files.empty()) {
    Status st = fs->DeleteFiles(result.temp_files);
    if (!st.ok()) {
      delete_error = st.WithContextParts("VACUUM of Delta table ", path, ": crash leftovers");
    } else {
      for (const std::string& file : result.temp_files) {
        SILT_LOG_INFO("vacuum", "deleted crash leftover ", file);
      }
    }
  }
  if (log_commits) {
    std::map<std::string, std::string> metrics;
    if (delete_error.ok()) {
      metrics = {{"numDeletedFiles", std::to_string(result.deleted)},
                 {"numVacuumedDirectories", std::to_string(result.directories)}};
    }
    Result<int64_t> end =
        record("VACUUM END", {{"status", delete_error.ok() ? "COMPLETED" : "FAILED"}}, {}, metrics);
    if (!end.ok() && delete_error.ok()) {
      return end.status().WithContextParts("recording VACUUM END in Delta table ", path);
    }
    if (end.ok()) result.end_version = *end;
  }
  if (!delete_error.ok()) return delete_error;
  return result;
}

}  // namespace silt::delta
