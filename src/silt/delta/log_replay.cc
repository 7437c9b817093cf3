// Snapshot reconstruction (PROTOCOL.md "Action Reconciliation", FORMATS.md
// A8) from JSON commits: the latest protocol and metaData win, txn versions
// are kept per appId, and file actions are reconciled by canonical path —
// the newest add or remove of a path decides whether it is live.

#include <algorithm>
#include <unordered_map>

#include "silt/delta/partition_utils.h"
#include "silt/delta/protocol.h"
#include "silt/delta/table.h"

namespace silt::delta {

namespace {

// The checkpoint a reader would need to start from when commits before
// `first_version` are gone, for the error message.
std::string CheckpointToName(const std::vector<std::string>& checkpoint_files) {
  for (auto it = checkpoint_files.rbegin(); it != checkpoint_files.rend(); ++it) {
    if (*it != "_last_checkpoint") return *it;
  }
  return checkpoint_files.empty() ? std::string() : checkpoint_files.back();
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
    for (const RemoveFile& remove : actions.removes) {
      SILT_ASSIGN_OR_RETURN(std::string key, ResolveDataFilePath(table_path_, remove.path));
      files_.erase(key);
    }
    for (AddFile& add : actions.adds) {
      SILT_ASSIGN_OR_RETURN(std::string key, ResolveDataFilePath(table_path_, add.path));
      files_[std::move(key)] = std::move(add);
    }
    commit_timestamp_ms_ = actions.commit_timestamp_ms;
    return Status::OK();
  }

  const std::optional<Protocol>& protocol() const { return protocol_; }
  std::optional<Metadata>& metadata() { return metadata_; }
  std::map<std::string, Txn>& txns() { return txns_; }
  std::optional<int64_t> commit_timestamp_ms() const { return commit_timestamp_ms_; }

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
  std::optional<int64_t> commit_timestamp_ms_;
};

}  // namespace

Result<SnapshotPtr> DeltaTable::Replay(const LogListing& listing, int64_t version) {
  if (listing.versions.empty() || listing.versions.front() != 0) {
    std::string checkpoint = CheckpointToName(listing.checkpoint_files);
    int64_t first = listing.versions.empty() ? -1 : listing.versions.front();
    if (!checkpoint.empty()) {
      return Status::NotSupported("reading Delta checkpoints (", log_path(), "/", checkpoint,
                                  ") is not supported yet: the JSON commits of ", path_,
                                  " start at version ", first);
    }
    return Status::Corruption("Delta table ", path_, " has no commit 0 (", CommitFileName(0),
                              ") and no checkpoint; its log starts at version ", first);
  }
  LogReplay replay(path_);
  int64_t timestamp_ms = 0;
  for (size_t idx = 0; idx < listing.versions.size() && listing.versions[idx] <= version;
       ++idx) {
    int64_t v = listing.versions[idx];
    if (v != static_cast<int64_t>(idx)) {
      const auto missing = static_cast<int64_t>(idx);
      return Status::Corruption("the Delta log of ", path_, " is missing commit ", missing, " (",
                                CommitFileName(missing), "); versions must be contiguous");
    }
    SILT_ASSIGN_OR_RETURN(CommitActions actions, ReadCommit(v));
    SILT_RETURN_NOT_OK(replay.Apply(std::move(actions)));
    if (v == version) {
      timestamp_ms =
          replay.commit_timestamp_ms().value_or(listing.commits[idx].modification_time_ms);
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
  snapshot->txns_ = std::move(replay.txns());
  return SnapshotPtr(std::move(snapshot));
}

}  // namespace silt::delta
