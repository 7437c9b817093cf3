// Snapshot reconstruction (PROTOCOL.md "Action Reconciliation", FORMATS.md
// A8) from JSON commits: the latest protocol and metaData win, txn versions
// are kept per appId, and file actions are reconciled by canonical path —
// the newest add or remove of a path decides whether it is live.

#include <algorithm>
#include <unordered_map>

#include "silt/delta/checkpoint_reader.h"
#include "silt/delta/partition_utils.h"
#include "silt/delta/protocol.h"
#include "silt/delta/table.h"

namespace silt::delta {

namespace {

// Adds the actions of one checkpoint part or sidecar to `into`.
Status MergeCheckpointActions(CommitActions part, std::string_view source, CommitActions* into) {
  if (part.protocol) {
    if (into->protocol) {
      return Status::Corruption("Delta checkpoint ", source, " holds a second protocol action");
    }
    into->protocol = std::move(part.protocol);
  }
  if (part.metadata) {
    if (into->metadata) {
      return Status::Corruption("Delta checkpoint ", source, " holds a second metaData action");
    }
    into->metadata = std::move(part.metadata);
  }
  for (auto& add : part.adds) into->adds.push_back(std::move(add));
  for (auto& remove : part.removes) into->removes.push_back(std::move(remove));
  for (auto& txn : part.txns) into->txns.push_back(std::move(txn));
  for (auto& key : part.other_action_keys) into->other_action_keys.push_back(std::move(key));
  return Status::OK();
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

class LogReplay {
 public:
  explicit LogReplay(std::string table_path) : table_path_(std::move(table_path)) {}

  Status Apply(CommitActions actions) {
    if (actions.protocol) protocol_ = std::move(actions.protocol);
    if (actions.metadata) metadata_ = std::move(actions.metadata);
    for (Txn& txn : actions.txns) {
      std::string app_id = txn.app_id;
      txns_[app_id] = std::move(txn);
    }
    // Within one commit an add and a remove of the same path are only legal
    // with different deletion vectors, where the add is the newer state;
    // applying removes first gives exactly that.
    // A logical file is (path, deletion vector id).
    for (RemoveFile& remove : actions.removes) {
      SILT_ASSIGN_OR_RETURN(std::string key, ResolveDataFilePath(table_path_, remove.path));
      if (remove.deletion_vector) key += "\n" + remove.deletion_vector->UniqueId();
      files_.erase(key);
      tombstones_[std::move(key)] = std::move(remove);
    }
    for (AddFile& add : actions.adds) {
      SILT_ASSIGN_OR_RETURN(std::string key, ResolveDataFilePath(table_path_, add.path));
      if (add.deletion_vector) key += "\n" + add.deletion_vector->UniqueId();
      tombstones_.erase(key);
      files_[std::move(key)] = std::move(add);
    }
    for (const std::string& key : actions.other_action_keys) {
      if (key == "domainMetadata") has_unmodelled_actions_ = true;
    }
    commit_timestamp_ms_ = actions.commit_timestamp_ms;
    return Status::OK();
  }

  const std::optional<Protocol>& protocol() const { return protocol_; }
  std::optional<Metadata>& metadata() { return metadata_; }
  std::map<std::string, Txn>& txns() { return txns_; }
  std::optional<int64_t> commit_timestamp_ms() const { return commit_timestamp_ms_; }

  bool has_unmodelled_actions() const { return has_unmodelled_actions_; }

  std::vector<RemoveFile> TakeTombstones() {
    std::vector<RemoveFile> removes;
    removes.reserve(tombstones_.size());
    for (auto& [key, remove] : tombstones_) removes.push_back(std::move(remove));
    std::sort(removes.begin(), removes.end(),
              [](const RemoveFile& a, const RemoveFile& b) { return a.path < b.path; });
    return removes;
  }

  std::vector<AddFile> TakeFiles() {
    std::vector<AddFile> files;
    files.reserve(files_.size());
    for (auto& [key, add] : files_) files.push_back(std::move(add));
    std::sort(files.begin(), files.end(),
              [](const AddFile& a, const AddFile& b) { return a.path < b.path; });
    return files;
  }

 private:
  std::string table_path_;
  std::optional<Protocol> protocol_;
  std::optional<Metadata> metadata_;
  std::map<std::string, Txn> txns_;
  std::unordered_map<std::string, AddFile> files_;
  std::unordered_map<std::string, RemoveFile> tombstones_;
  bool has_unmodelled_actions_ = false;
  std::optional<int64_t> commit_timestamp_ms_;
};

}  // namespace

Result<CommitActions> DeltaTable::ReadCheckpoint(const CheckpointEntry& checkpoint) {
  CommitActions merged;
  merged.version = checkpoint.version;
  for (const std::string& name : checkpoint.files) {
    std::string file = fs::JoinPath(log_path(), name);
    CommitActions part;
    if (EndsWith(name, ".json")) {
      SILT_ASSIGN_OR_RETURN_CTX(std::string text, fs_->ReadFile(file), "reading checkpoint ", file);
      SILT_ASSIGN_OR_RETURN(part, ParseCommit(text, file));
    } else {
      SILT_ASSIGN_OR_RETURN(part, ReadParquetCheckpoint(fs_.get(), file));
    }
    SILT_ASSIGN_OR_RETURN(std::vector<std::string> sidecars, SidecarPaths(part, file));
    part.raw_lines.clear();
    SILT_RETURN_NOT_OK(MergeCheckpointActions(std::move(part), file, &merged));
    for (const std::string& sidecar : sidecars) {
      // Sidecar paths are relative to _delta_log/_sidecars/ unless absolute.
      std::string sidecar_file;
      if (sidecar.find("://") != std::string::npos || (!sidecar.empty() && sidecar[0] == '/')) {
        SILT_ASSIGN_OR_RETURN(sidecar_file, ResolveDataFilePath(path_, sidecar));
      } else {
        sidecar_file = fs::JoinPath(fs::JoinPath(log_path(), "_sidecars"), sidecar);
      }
      SILT_ASSIGN_OR_RETURN(CommitActions actions, ReadParquetCheckpoint(fs_.get(), sidecar_file));
      actions.raw_lines.clear();
      SILT_RETURN_NOT_OK(MergeCheckpointActions(std::move(actions), sidecar_file, &merged));
    }
  }
  return merged;
}

Result<SnapshotPtr> DeltaTable::Replay(const LogListing& listing, int64_t version) {
  // The newest checkpoint at or before `version` that reads cleanly; an
  // unreadable one (torn write, corruption) falls back to an older one, then
  // to commit 0.
  std::optional<CommitActions> checkpoint_actions;
  const CheckpointEntry* checkpoint = nullptr;
  Status checkpoint_error;
  for (auto it = listing.checkpoints.rbegin(); it != listing.checkpoints.rend(); ++it) {
    if (it->version > version) continue;
    auto actions = ReadCheckpoint(*it);
    if (actions.ok()) {
      checkpoint_actions = std::move(*actions);
      checkpoint = &*it;
      break;
    }
    if (!actions.status().IsCorruption() && !actions.status().IsNotFound()) {
      return actions.status();
    }
    if (checkpoint_error.ok()) checkpoint_error = actions.status();
  }
  int64_t start = -1;  // the last version already applied
  if (checkpoint != nullptr) {
    start = checkpoint->version;
  } else if (listing.versions.empty() || listing.versions.front() != 0) {
    int64_t first = listing.versions.empty() ? -1 : listing.versions.front();
    if (!checkpoint_error.ok()) {
      return checkpoint_error.WithContextParts(
          "Delta table ", path_,
          ": no readable checkpoint and no commit 0 (its log starts at "
          "version ",
          first, ")");
    }
    return Status::Corruption("Delta table ", path_, " has no commit 0 (", CommitFileName(0),
                              ") and no complete checkpoint at or before version ", version,
                              "; its log starts at version ", first);
  }
  LogReplay replay(path_);
  int64_t timestamp_ms = 0;
  if (checkpoint_actions) {
    SILT_RETURN_NOT_OK(replay.Apply(std::move(*checkpoint_actions)));
    timestamp_ms = checkpoint->modification_time_ms;
    if (version == start) {
      auto it = std::lower_bound(listing.versions.begin(), listing.versions.end(), start);
      if (it != listing.versions.end() && *it == start) {
        const fs::FileInfo& info = listing.commits[it - listing.versions.begin()];
        auto commit = ReadCommit(start);
        timestamp_ms = commit.ok() && commit->commit_timestamp_ms ? *commit->commit_timestamp_ms
                                                                  : info.modification_time_ms;
      }
    }
  }
  // Commits are read by name, not taken from the listing: a directory
  // listing that races with concurrent writers may miss a file created
  // during it (readdir order is not creation order) while showing a later
  // one, so a gap in the listing is only corruption when the file is really
  // absent.
  for (int64_t v = start + 1; v <= version; ++v) {
    Result<CommitActions> actions = ReadCommit(v);
    if (!actions.ok()) {
      if (!actions.status().IsNotFound()) return actions.status();
      return Status::Corruption("the Delta log of ", path_, " is missing commit ", v, " (",
                                CommitFileName(v), "); versions must be contiguous");
    }
    SILT_RETURN_NOT_OK(replay.Apply(std::move(*actions)));
    start = v;
    if (v == version) {
      std::optional<int64_t> ts = replay.commit_timestamp_ms();
      if (!ts) {
        auto it = std::lower_bound(listing.versions.begin(), listing.versions.end(), v);
        if (it != listing.versions.end() && *it == v) {
          ts = listing.commits[static_cast<size_t>(it - listing.versions.begin())]
                   .modification_time_ms;
        } else {
          auto info = fs_->GetFileInfo(fs::JoinPath(log_path(), CommitFileName(v)));
          ts = info.ok() ? info->modification_time_ms : 0;
        }
      }
      timestamp_ms = *ts;
    }
  }
  if (!replay.protocol()) {
    return Status::Corruption("Delta table ", path_, " has no protocol action in versions 0 to ",
                              version);
  }
  SILT_RETURN_NOT_OK_CTX(
      CheckReadSupported(*replay.protocol(), replay.metadata().value_or(Metadata())),
      "Delta table ", path_, " version ", version);
  if (!replay.metadata()) {
    return Status::Corruption("Delta table ", path_, " has no metaData action in versions 0 to ",
                              version);
  }
  if (replay.metadata()->schema == nullptr) {
    return Status::Corruption("Delta table ", path_, " version ", version,
                              ": metaData has no schemaString");
  }
  auto snapshot = std::make_shared<Snapshot>();
  snapshot->version_ = version;
  snapshot->timestamp_ms_ = timestamp_ms;
  snapshot->protocol_ = *replay.protocol();
  snapshot->metadata_ = std::move(*replay.metadata());
  snapshot->files_ = replay.TakeFiles();
  snapshot->tombstones_ = replay.TakeTombstones();
  snapshot->has_unmodelled_actions_ = replay.has_unmodelled_actions();
  snapshot->txns_ = std::move(replay.txns());
  return SnapshotPtr(std::move(snapshot));
}

}  // namespace silt::delta
