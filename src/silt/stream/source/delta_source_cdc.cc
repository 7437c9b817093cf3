// The Delta source's readChangeFeed mode: planning and reading batches of
// the change data feed, as delta-spark's DeltaSourceCDCSupport does (see
// delta_source.h for the contract).
#include <re2/re2.h>

#include <algorithm>
#include <limits>
#include <map>

#include "silt/delta/change_feed.h"
#include "silt/delta/log_cleanup.h"
#include "silt/delta/protocol.h"
#include "silt/stream/source/delta_source.h"
#include "silt/stream/source/delta_source_internal.h"

namespace silt::stream {

// Spark's AdmissionLimits with its DeltaSourceAdmissionBase: single files
// are admitted while there is capacity before taking them; a group that
// must stay whole (a commit's change files, a commit with deletion
// vectors) is admitted when it fits, or when nothing was looked at yet in
// this plan (so a batch always makes progress).
struct DeltaSource::CdcAdmission {
  int64_t files_to_take = 0;
  int64_t bytes_to_take = 0;
  bool commit_processed = false;

  bool HasCapacity() const { return files_to_take > 0 && bytes_to_take > 0; }

  // One step; placeholders (version start/end) are always admitted and
  // not counted.
  bool AdmitOne(bool is_file, int64_t size) {
    commit_processed = true;
    if (!is_file) return true;
    const bool admit = HasCapacity();
    files_to_take -= 1;
    bytes_to_take -= size;
    return admit;
  }

  // A whole group of `count` steps (placeholders included, as Spark counts
  // them) holding `bytes`.
  bool AdmitAll(int64_t count, int64_t bytes) {
    if (count == 0) return true;
    const bool admit =
        !commit_processed || (files_to_take - count >= 0 && bytes_to_take - bytes >= 0);
    commit_processed = true;
    files_to_take -= count;
    bytes_to_take -= bytes;
    return admit;
  }
};

Status DeltaSource::WalkCdcChanges(int64_t from_version, int64_t from_index, bool initial,
                                   CdcAdmission* admission,
                                   const std::optional<DeltaSourceOffset>& bound,
                                   const CdcVisitor& visit) {
  // Spark's isValidIndexedFile: after the start, up to the bound, and not
  // excluded by excludeRegex (placeholders never are).
  auto valid = [&](const CdcChange& change) {
    if (!(change.version > from_version || change.index > from_index)) return false;
    if (bound && !(change.version < bound->reservoir_version ||
                   (change.version == bound->reservoir_version && change.index <= bound->index))) {
      return false;
    }
    if (change.kind != ChangeKind::kFile || exclude_ == nullptr) return true;
    const std::string& path = change.add != nullptr      ? change.add->path
                              : change.remove != nullptr ? change.remove->path
                                                         : change.cdc->path;
    return !re2::RE2::PartialMatch(path, *exclude_);
  };
  std::vector<CdcChange> group;
  auto visit_all = [&](const std::vector<CdcChange>& changes) -> Status {
    for (const CdcChange& change : changes) SILT_RETURN_NOT_OK(visit(change));
    return Status::OK();
  };
  // Files one at a time (Spark's takeWhile(admit)); false once one was not
  // admitted.
  auto visit_each = [&](const std::vector<CdcChange>& changes) -> Result<bool> {
    for (const CdcChange& change : changes) {
      if (admission != nullptr &&
          !admission->AdmitOne(change.kind == ChangeKind::kFile, change.size)) {
        return false;
      }
      SILT_RETURN_NOT_OK(visit(change));
    }
    return true;
  };
  auto group_bytes = [](const std::vector<CdcChange>& changes) {
    int64_t bytes = 0;
    for (const CdcChange& change : changes) bytes += change.size;
    return bytes;
  };

  int64_t first_commit = from_version;
  if (initial) {
    SILT_ASSIGN_OR_RETURN(const std::vector<delta::AddFile>* files, SnapshotFiles(from_version));
    group.push_back({from_version, DeltaSourceOffset::kBaseIndex, ChangeKind::kBase});
    for (size_t file_idx = 0; file_idx < files->size(); ++file_idx) {
      const delta::AddFile& add = (*files)[file_idx];
      group.push_back({from_version, static_cast<int64_t>(file_idx), ChangeKind::kFile, &add,
                       nullptr, nullptr, add.size});
    }
    group.push_back({from_version, internal::kDeltaEndIndex, ChangeKind::kEnd});
    std::erase_if(group, [&](const CdcChange& change) { return !valid(change); });
    SILT_ASSIGN_OR_RETURN(bool more, visit_each(group));
    (void)more;  // the capacity check below stops the walk
    first_commit = from_version + 1;
  }
  SILT_ASSIGN_OR_RETURN(std::vector<int64_t> versions, table_->ListVersions());
  int64_t last_seen = first_commit - 1;
  for (int64_t version : versions) {
    if (version < first_commit) continue;
    // Spark's takeWhile(hasCapacity) over the versions.
    if (admission != nullptr && !admission->HasCapacity()) break;
    // Nothing after the bound is valid (Spark reads on and filters all).
    if (bound && version > bound->reservoir_version) break;
    if (options_.fail_on_data_loss && version > last_seen + 1) {
      return internal::DeltaMissingVersionError(last_seen + 1, version, options_.path);
    }
    last_seen = version;
    SILT_ASSIGN_OR_RETURN(std::shared_ptr<const delta::CommitActions> commit, Commit(version));
    if (commit->metadata) SILT_RETURN_NOT_OK(CheckSchemaChange(*commit->metadata, version));
    if (commit->protocol) {
      Status gate = delta::CheckReadSupported(
          *commit->protocol, commit->metadata ? *commit->metadata : init_snapshot_->metadata());
      if (!gate.ok()) {
        return gate.WithContextParts("Delta source ", options_.path, " version ", version);
      }
    }
    group.clear();
    if (!commit->cdc_files.empty()) {
      // The commit's change data: its change files. Planning within limits
      // sees no placeholders (so a batch ending here ends at the last
      // change file's index); without limits (Trigger.Once, a batch's
      // read) the version's start and end are steps as elsewhere.
      if (admission == nullptr) {
        group.push_back({version, DeltaSourceOffset::kBaseIndex, ChangeKind::kBase});
      }
      for (size_t cdc_idx = 0; cdc_idx < commit->cdc_files.size(); ++cdc_idx) {
        const delta::AddCdcFile& cdc = commit->cdc_files[cdc_idx];
        group.push_back({version, static_cast<int64_t>(cdc_idx), ChangeKind::kFile, nullptr,
                         nullptr, &cdc, cdc.size});
      }
      if (admission == nullptr) {
        group.push_back({version, internal::kDeltaEndIndex, ChangeKind::kEnd});
      }
      std::erase_if(group, [&](const CdcChange& change) { return !valid(change); });
      if (admission == nullptr ||
          admission->AdmitAll(static_cast<int64_t>(group.size()), group_bytes(group))) {
        SILT_RETURN_NOT_OK(visit_all(group));
      }
      continue;
    }
    // Adds and removes with dataChange, numbered together in log order.
    const bool skip = delta::IsNoChangeMerge(commit->commit_info_json);
    bool has_deletion_vectors = false;
    group.push_back({version, DeltaSourceOffset::kBaseIndex, ChangeKind::kBase});
    int64_t index = 0;
    for (const auto& [kind, position] : commit->file_action_order) {
      CdcChange change{version, 0, ChangeKind::kFile};
      if (kind == delta::FileActionKind::kAdd) {
        const delta::AddFile& add = commit->adds[position];
        if (!add.data_change) continue;
        has_deletion_vectors = has_deletion_vectors || add.deletion_vector.has_value();
        change.add = &add;
        change.size = add.size;
      } else if (kind == delta::FileActionKind::kRemove) {
        const delta::RemoveFile& remove = commit->removes[position];
        if (!remove.data_change) continue;
        has_deletion_vectors = has_deletion_vectors || remove.deletion_vector.has_value();
        change.remove = &remove;
        change.size = remove.size.value_or(0);
      } else {
        continue;
      }
      change.index = index++;
      // A no-change MERGE's files keep their indexes but are not read.
      if (!skip) group.push_back(change);
    }
    group.push_back({version, internal::kDeltaEndIndex, ChangeKind::kEnd});
    std::erase_if(group, [&](const CdcChange& change) { return !valid(change); });
    if (admission == nullptr) {
      SILT_RETURN_NOT_OK(visit_all(group));
    } else if (has_deletion_vectors) {
      // A removed file and its re-add with a new deletion vector must be
      // read together: the whole commit or nothing.
      if (admission->AdmitAll(static_cast<int64_t>(group.size()), group_bytes(group))) {
        SILT_RETURN_NOT_OK(visit_all(group));
      }
    } else {
      SILT_ASSIGN_OR_RETURN(bool more, visit_each(group));
      (void)more;
    }
  }
  return Status::OK();
}

Result<std::optional<DeltaSourceOffset>> DeltaSource::NextCdcOffset(
    const std::optional<DeltaSourceOffset>& start, int64_t from_version, int64_t from_index,
    bool initial, bool limited, const std::optional<DeltaSourceOffset>& bound) {
  CdcAdmission admission;
  if (limited) {
    admission.files_to_take = options_.max_files_per_trigger.value_or(
        options_.max_bytes_per_trigger ? internal::kDeltaUnlimitedFiles
                                       : internal::kDeltaDefaultMaxFiles);
    admission.bytes_to_take =
        options_.max_bytes_per_trigger.value_or(std::numeric_limits<int64_t>::max());
  }
  std::optional<CdcChange> last;
  SILT_RETURN_NOT_OK(WalkCdcChanges(from_version, from_index, initial,
                                    limited ? &admission : nullptr, bound,
                                    [&](const CdcChange& change) {
                                      last = change;
                                      return Status::OK();
                                    }));
  if (!last) return start;
  return std::optional<DeltaSourceOffset>(OffsetAfter(
      last->version, last->index, last->kind == ChangeKind::kEnd, from_version, initial));
}

Result<std::unique_ptr<BatchReader>> DeltaSource::GetCdcBatch(int64_t from_version,
                                                              int64_t from_index, bool initial,
                                                              const DeltaSourceOffset& end) {
  // delta-spark's changesToDF checks the change data feed at the batch's
  // start version only (a later metaData action is not among the file
  // actions it is given).
  {
    delta::SnapshotPtr at = init_snapshot_;
    if (from_version != init_snapshot_->version()) {
      Result<delta::SnapshotPtr> snapshot = table_->SnapshotAt(from_version);
      if (!snapshot.ok()) {
        return snapshot.status().WithContextParts("Delta source ", options_.path,
                                                  ": reading the change data feed from version ",
                                                  from_version);
      }
      at = *snapshot;
    }
    if (!delta::ChangeDataFeedEnabled(at->metadata())) {
      return delta::MissingChangeDataError(from_version, end.reservoir_version, from_version,
                                           options_.path);
    }
  }
  std::vector<delta::CommitChanges> changes;
  SILT_RETURN_NOT_OK(
      WalkCdcChanges(from_version, from_index, initial, nullptr, end, [&](const CdcChange& change) {
        if (change.kind != ChangeKind::kFile) return Status::OK();
        if (changes.empty() || changes.back().version != change.version) {
          changes.emplace_back();
          changes.back().version = change.version;
        }
        delta::CommitChanges& commit = changes.back();
        if (change.add != nullptr) {
          commit.adds.push_back(*change.add);
          commit.adds.back().stats.reset();
        } else if (change.remove != nullptr) {
          commit.removes.push_back(*change.remove);
        } else {
          commit.cdc_files.push_back(*change.cdc);
        }
        return Status::OK();
      }));
  if (changes.empty()) return std::unique_ptr<BatchReader>(new internal::EmptyBatchReader());
  // _commit_timestamp: the commit files' modification times made strictly
  // increasing, as delta-spark's getTimestampsByVersion takes them.
  SILT_ASSIGN_OR_RETURN(delta::LogFileTimes times,
                        delta::ListLogFileTimes(fs_.get(), table_->log_path()));
  std::map<int64_t, int64_t> timestamps_ms;
  for (const delta::LogFileTimes::Commit& commit : times.commits) {
    timestamps_ms[commit.version] = commit.monotonic_time_ms;
  }
  for (delta::CommitChanges& commit : changes) {
    auto it = timestamps_ms.find(commit.version);
    if (it == timestamps_ms.end()) {
      return Status::NotFound("Delta source ", options_.path, ": the commit of version ",
                              commit.version,
                              " is gone from the log; its change rows need its timestamp");
    }
    commit.timestamp_ms = it->second;
  }
  return std::unique_ptr<BatchReader>(new internal::RechunkedBatchReader<delta::ChangeFeedReader>(
      delta::ChangeFeedReader::MakeForChanges(table_.get(), init_snapshot_, std::move(changes))));
}

}  // namespace silt::stream
