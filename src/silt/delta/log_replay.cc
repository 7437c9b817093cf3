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

// Appends `from` to `into`, moving the elements (the whole vector when
// `into` is empty).
template <typename T>
void AppendAll(std::vector<T>* from, std::vector<T>* into) {
  if (into->empty()) {
    std::swap(*from, *into);
    return;
  }
  into->reserve(into->size() + from->size());
  for (T& item : *from) into->push_back(std::move(item));
  from->clear();
}

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
  AppendAll(&part.adds, &into->adds);
  AppendAll(&part.removes, &into->removes);
  AppendAll(&part.txns, &into->txns);
  AppendAll(&part.domain_metadata, &into->domain_metadata);
  AppendAll(&part.other_action_keys, &into->other_action_keys);
  return Status::OK();
}

// A relative log path without %-escapes or a scheme: it resolves to the
// table path joined with itself.
// (Nor a newline, which separates a logical file's path from its deletion
// vector id in replay's keys.)
bool IsPlainRelativePath(std::string_view path) {
  if (path.empty() || path.front() == '/') return false;
  for (char c : path) {
    if (c == '%' || c == ':' || c == '\n') return false;
  }
  return true;
}

}  // namespace

// Reconciles file actions by logical file: (canonical path, deletion vector
// id). The state at a checkpoint is kept as the checkpoint's own vectors
// (a checkpoint holds each logical file at most once), the commits after
// it go into maps keyed by logical file, and a checkpoint entry survives
// when no later commit added or removed the same logical file. A snapshot
// of 100,000 files thus costs one AddFile each and no per-file key unless
// later commits touch files.
class LogReplay {
 public:
  explicit LogReplay(std::string table_path) : table_path_(std::move(table_path)) {
    // A relative log path `p` without escapes resolves to this prefix + p
    // (fs::JoinPath; ResolveDataFilePath).
    relative_prefix_ = fs::JoinPath(table_path_, "x");
    relative_prefix_.pop_back();
  }

  // The actions of the checkpoint the replay starts from.
  void ApplyCheckpoint(CommitActions actions) {
    ApplyNonFileActions(&actions);
    base_files_ = std::move(actions.adds);
    base_tombstones_ = std::move(actions.removes);
  }
  // Starts from an already reconciled state (a snapshot's): its file lists
  // are sorted and hold each logical file once, as a checkpoint's do.
  // `plain_paths` says every path in them is plain (Snapshot::plain_paths_).
  void ApplyState(Protocol protocol, Metadata metadata, std::map<std::string, Txn> txns,
                  std::map<std::string, DomainMetadata> domains, std::vector<AddFile> files,
                  std::vector<RemoveFile> tombstones, bool plain_paths) {
    protocol_ = std::move(protocol);
    metadata_ = std::move(metadata);
    txns_ = std::move(txns);
    domains_ = std::move(domains);
    base_files_ = std::move(files);
    base_tombstones_ = std::move(tombstones);
    base_reconciled_ = true;
    base_plain_ = plain_paths;
  }

  Status Apply(CommitActions actions) {
    ApplyNonFileActions(&actions);
    // Within one commit an add and a remove of the same path are only legal
    // with different deletion vectors, where the add is the newer state;
    // applying removes first gives exactly that.
    for (RemoveFile& remove : actions.removes) {
      later_plain_ = later_plain_ && IsPlainRelativePath(remove.path);
      SILT_ASSIGN_OR_RETURN(std::string key, Key(remove.path, remove.deletion_vector));
      files_.erase(key);
      tombstones_[std::move(key)] = std::move(remove);
    }
    for (AddFile& add : actions.adds) {
      later_plain_ = later_plain_ && IsPlainRelativePath(add.path);
      SILT_ASSIGN_OR_RETURN(std::string key, Key(add.path, add.deletion_vector));
      tombstones_.erase(key);
      files_[std::move(key)] = std::move(add);
    }
    return Status::OK();
  }

  const std::optional<Protocol>& protocol() const { return protocol_; }
  std::optional<Metadata>& metadata() { return metadata_; }
  std::map<std::string, Txn>& txns() { return txns_; }
  std::map<std::string, DomainMetadata>& domains() { return domains_; }
  std::optional<int64_t> commit_timestamp_ms() const { return commit_timestamp_ms_; }

  // The live files and the tombstones, each sorted by path; `plain_paths`
  // tells whether every path in them is plain (Snapshot::plain_paths_).
  Status Finish(std::vector<AddFile>* files, std::vector<RemoveFile>* tombstones,
                bool* plain_paths) {
    if (base_reconciled_ && base_plain_ && later_plain_) {
      // A reconciled state whose entries are found by path: only the
      // logical files the later commits touched are looked up, and the
      // base needs no re-sorting (the per-batch path of a streaming writer,
      // whose cost must not grow with the table).
      DropSupersededByLookup(&base_files_);
      DropSupersededByLookup(&base_tombstones_);
      *plain_paths = true;
    } else {
      SILT_RETURN_NOT_OK(DropSuperseded(&base_files_));
      SILT_RETURN_NOT_OK(DropSuperseded(&base_tombstones_));
      if (!base_reconciled_) {
        SortUnique(&base_files_);
        SortUnique(&base_tombstones_);
        DropLiveTombstones();
      }
      *plain_paths = later_plain_ && AllPlain(base_files_) && AllPlain(base_tombstones_);
    }
    *files = MergeSorted(std::move(base_files_), &files_);
    *tombstones = MergeSorted(std::move(base_tombstones_), &tombstones_);
    return Status::OK();
  }

 private:
  void ApplyNonFileActions(CommitActions* actions) {
    if (actions->protocol) protocol_ = std::move(actions->protocol);
    if (actions->metadata) metadata_ = std::move(actions->metadata);
    for (Txn& txn : actions->txns) {
      std::string app_id = txn.app_id;
      txns_[app_id] = std::move(txn);
    }
    // The newest action of a domain wins; a removed domain leaves the state.
    for (DomainMetadata& domain : actions->domain_metadata) {
      if (domain.removed) {
        domains_.erase(domain.domain);
      } else {
        std::string name = domain.domain;
        domains_[name] = std::move(domain);
      }
    }
    commit_timestamp_ms_ = actions->commit_timestamp_ms;
  }

  // The logical file a log path (+ deletion vector) names.
  Result<std::string> Key(std::string_view path,
                          const std::optional<DeletionVectorDescriptor>& dv) const {
    SILT_ASSIGN_OR_RETURN(std::string key, ResolveDataFilePath(table_path_, path));
    if (dv) key += "\n" + dv->UniqueId();
    return key;
  }

  // Drops the checkpoint entries whose logical file a later commit added or
  // removed. Most log paths are relative without escapes: their key is
  // looked up without allocating.
  template <typename Action>
  Status DropSuperseded(std::vector<Action>* base) {
    if (files_.empty() && tombstones_.empty()) return Status::OK();
    size_t kept = 0;
    for (size_t i = 0; i < base->size(); ++i) {
      const Action& action = (*base)[i];
      std::string_view path = action.path;
      if (!action.deletion_vector && IsPlainRelativePath(path)) {
        scratch_.assign(relative_prefix_);
        scratch_.append(path);
      } else {
        SILT_ASSIGN_OR_RETURN(scratch_, Key(path, action.deletion_vector));
      }
      if (files_.count(scratch_) > 0 || tombstones_.count(scratch_) > 0) continue;
      if (kept != i) (*base)[kept] = std::move((*base)[i]);
      ++kept;
    }
    base->erase(base->begin() + static_cast<std::ptrdiff_t>(kept), base->end());
    return Status::OK();
  }

  template <typename Action>
  static bool AllPlain(const std::vector<Action>& actions) {
    for (const Action& action : actions) {
      if (!IsPlainRelativePath(action.path)) return false;
    }
    return true;
  }

  // DropSuperseded for a base whose paths are all plain and sorted: a plain
  // entry's logical file is relative_prefix_ + path (+ "\n" + DV id), so
  // each key of the later commits names at most the base entries with that
  // path, found by binary search.
  template <typename Action>
  void DropSupersededByLookup(std::vector<Action>* base) {
    if (base->empty() || (files_.empty() && tombstones_.empty())) return;
    std::vector<size_t> doomed;
    auto mark = [&](const std::string& key) {
      if (key.compare(0, relative_prefix_.size(), relative_prefix_) != 0) return;
      std::string_view rest = std::string_view(key).substr(relative_prefix_.size());
      const size_t newline = rest.find('\n');
      std::string_view path = rest.substr(0, newline);
      std::string_view dv_id =
          newline == std::string_view::npos ? std::string_view() : rest.substr(newline + 1);
      auto first = std::lower_bound(
          base->begin(), base->end(), path,
          [](const Action& a, std::string_view p) { return std::string_view(a.path) < p; });
      for (auto it = first; it != base->end() && it->path == path; ++it) {
        const bool same = newline == std::string_view::npos
                              ? !it->deletion_vector.has_value()
                              : it->deletion_vector && it->deletion_vector->UniqueId() == dv_id;
        if (same) doomed.push_back(static_cast<size_t>(it - base->begin()));
      }
    };
    for (const auto& [key, action] : files_) mark(key);
    for (const auto& [key, action] : tombstones_) mark(key);
    if (doomed.empty()) return;
    std::sort(doomed.begin(), doomed.end());
    doomed.erase(std::unique(doomed.begin(), doomed.end()), doomed.end());
    size_t kept = 0;
    size_t next = 0;
    for (size_t i = 0; i < base->size(); ++i) {
      if (next < doomed.size() && doomed[next] == i) {
        ++next;
        continue;
      }
      if (kept != i) (*base)[kept] = std::move((*base)[i]);
      ++kept;
    }
    base->erase(base->begin() + static_cast<std::ptrdiff_t>(kept), base->end());
  }

  static std::string DvId(const std::optional<DeletionVectorDescriptor>& dv) {
    return dv ? dv->UniqueId() : std::string();
  }

  // Orders by path, then by deletion vector (a logical file).
  template <typename Action>
  static bool Before(const Action& a, const Action& b) {
    int c = a.path.compare(b.path);
    if (c != 0) return c < 0;
    if (!a.deletion_vector && !b.deletion_vector) return false;
    return DvId(a.deletion_vector) < DvId(b.deletion_vector);
  }

  template <typename A, typename B>
  static bool SameLogicalFile(const A& a, const B& b) {
    return a.path == b.path && a.deletion_vector.has_value() == b.deletion_vector.has_value() &&
           (!a.deletion_vector || DvId(a.deletion_vector) == DvId(b.deletion_vector));
  }

  // Sorts checkpoint entries and keeps one per logical file (a checkpoint
  // holds each at most once).
  template <typename Action>
  static void SortUnique(std::vector<Action>* base) {
    auto before = [](const Action& a, const Action& b) { return Before(a, b); };
    if (!std::is_sorted(base->begin(), base->end(), before)) {
      std::sort(base->begin(), base->end(), before);
    }
    size_t kept = 0;
    for (size_t i = 0; i < base->size(); ++i) {
      if (kept > 0 && SameLogicalFile((*base)[kept - 1], (*base)[i])) continue;
      if (kept != i) (*base)[kept] = std::move((*base)[i]);
      ++kept;
    }
    base->erase(base->begin() + static_cast<std::ptrdiff_t>(kept), base->end());
  }

  // A checkpoint tombstone of a file the checkpoint also adds is dropped
  // (replay applies removes before adds). Both are sorted by path.
  void DropLiveTombstones() {
    size_t file = 0;
    size_t kept = 0;
    for (size_t i = 0; i < base_tombstones_.size(); ++i) {
      RemoveFile& remove = base_tombstones_[i];
      while (file < base_files_.size() && base_files_[file].path < remove.path) ++file;
      bool live = false;
      for (size_t f = file; f < base_files_.size() && base_files_[f].path == remove.path; ++f) {
        live = live || SameLogicalFile(base_files_[f], remove);
      }
      if (live) continue;
      if (kept != i) base_tombstones_[kept] = std::move(remove);
      ++kept;
    }
    base_tombstones_.erase(base_tombstones_.begin() + static_cast<std::ptrdiff_t>(kept),
                           base_tombstones_.end());
  }

  // `base` (sorted) with the commits' entries merged in, sorted; each entry
  // is moved once.
  template <typename Action>
  static std::vector<Action> MergeSorted(std::vector<Action> base,
                                         std::unordered_map<std::string, Action>* later) {
    std::vector<Action> added;
    added.reserve(later->size());
    for (auto& [key, action] : *later) added.push_back(std::move(action));
    later->clear();
    auto before = [](const Action& a, const Action& b) { return Before(a, b); };
    std::sort(added.begin(), added.end(), before);
    size_t b = base.size();
    base.resize(b + added.size());
    // Merge from the back into the new tail.
    size_t out = base.size();
    size_t a = added.size();
    while (a > 0) {
      if (b > 0 && before(added[a - 1], base[b - 1])) {
        base[--out] = std::move(base[--b]);
      } else {
        base[--out] = std::move(added[--a]);
      }
    }
    return base;
  }

  std::string table_path_;
  std::string relative_prefix_;
  std::string scratch_;
  std::optional<Protocol> protocol_;
  std::optional<Metadata> metadata_;
  std::map<std::string, Txn> txns_;
  // The checkpoint's entries, and the commits' after it by logical file.
  std::vector<AddFile> base_files_;
  std::vector<RemoveFile> base_tombstones_;
  std::unordered_map<std::string, AddFile> files_;
  std::unordered_map<std::string, RemoveFile> tombstones_;
  std::map<std::string, DomainMetadata> domains_;
  std::optional<int64_t> commit_timestamp_ms_;
  // ApplyState gave the base: sorted, one entry per logical file, no
  // tombstone of a live file; and whether all its paths are plain.
  bool base_reconciled_ = false;
  bool base_plain_ = false;
  // Every path the later commits named was plain.
  bool later_plain_ = true;
};

Result<CommitActions> DeltaTable::ReadCheckpoint(const CheckpointEntry& checkpoint) {
  CommitActions merged;
  merged.version = checkpoint.version;
  for (const std::string& name : checkpoint.files) {
    std::string file = fs::JoinPath(log_path(), name);
    CommitActions part;
    if (name.ends_with(".json")) {
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
    replay.ApplyCheckpoint(std::move(*checkpoint_actions));
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
  return ReplayCommits(&replay, listing, start, version, timestamp_ms);
}

Result<SnapshotPtr> DeltaTable::ReplayCommits(LogReplay* replay_state, const LogListing& listing,
                                              int64_t start, int64_t version,
                                              int64_t timestamp_ms) {
  LogReplay& replay = *replay_state;
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
  return BuildSnapshot(&replay, version, timestamp_ms);
}

Result<SnapshotPtr> DeltaTable::BuildSnapshot(LogReplay* replay_state, int64_t version,
                                              int64_t timestamp_ms) {
  LogReplay& replay = *replay_state;
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
  SILT_RETURN_NOT_OK(
      replay.Finish(&snapshot->files_, &snapshot->tombstones_, &snapshot->plain_paths_));
  snapshot->domains_ = std::move(replay.domains());
  snapshot->txns_ = std::move(replay.txns());
  return SnapshotPtr(std::move(snapshot));
}

Result<SnapshotPtr> DeltaTable::Update(SnapshotPtr base) {
  if (base == nullptr) return LatestSnapshot();
  const int64_t start = base->version();
  auto commit_exists = [&](int64_t version) {
    return fs_->Exists(fs::JoinPath(log_path(), CommitFileName(version)));
  };
  // Probe for the next commit by name instead of listing a log that grows
  // with every batch (as Spark's listFrom(version + 1)). No next commit
  // while base's own commit is still there means nothing is newer: log
  // cleanup deletes oldest first and never the latest commit.
  SILT_ASSIGN_OR_RETURN(bool has_next, commit_exists(start + 1));
  // A state without its checkpointed files cannot take another writer's
  // commits (they may remove files it does not hold): read it whole.
  if (has_next && base->files_elided()) {
    // Another writer commits to this table: keep whole states from now on,
    // which take its commits without re-reading the table.
    elide_checkpointed_files_ = false;
    return LatestSnapshot();
  }
  LogListing listing;
  int64_t latest = start + 1;
  if (has_next) {
    while (true) {
      SILT_ASSIGN_OR_RETURN(bool more, commit_exists(latest + 1));
      if (!more) break;
      ++latest;
    }
  } else {
    SILT_ASSIGN_OR_RETURN(bool has_base, commit_exists(start));
    if (has_base) return base;
    // base's commit is gone (cleaned up, or base came from a checkpoint
    // alone): decide from a full listing.
    SILT_ASSIGN_OR_RETURN(listing, ListLog());
    latest = listing.LatestVersion();
    if (latest == start) return base;
    if (base->files_elided()) {
      elide_checkpointed_files_ = false;
      return LatestSnapshot();
    }
    // The commits after `base` must still be there (a listing that misses
    // one of them is caught by ReplayCommits, which reads each by name).
    if (latest < start || listing.versions.empty() || listing.versions.front() > start + 1) {
      if (latest < 0) return LatestSnapshot();
      return Replay(listing, latest);
    }
  }
  LogReplay replay(path_);
  const int64_t timestamp_ms = base->timestamp_ms();
  StartFromSnapshot(&replay, std::move(base));
  return ReplayCommits(&replay, listing, start, latest, timestamp_ms);
}

void DeltaTable::StartFromSnapshot(LogReplay* replay, SnapshotPtr base) {
  if (base.use_count() == 1) {
    // The only reference: the snapshot was created non-const by Replay, and
    // nobody else can observe it being emptied.
    auto* owned = const_cast<Snapshot*>(base.get());
    replay->ApplyState(std::move(owned->protocol_), std::move(owned->metadata_),
                       std::move(owned->txns_), std::move(owned->domains_),
                       std::move(owned->files_), std::move(owned->tombstones_),
                       owned->plain_paths_);
  } else {
    replay->ApplyState(base->protocol_, base->metadata_, base->txns_, base->domains_, base->files_,
                       base->tombstones_, base->plain_paths_);
  }
}

Result<SnapshotPtr> DeltaTable::ApplyCommit(SnapshotPtr base, CommitActions actions,
                                            int64_t timestamp_ms) {
  const int64_t version = actions.version;
  const int64_t expected = base == nullptr ? 0 : base->version() + 1;
  if (version != expected) {
    return Status::InvalidArgument("ApplyCommit: commit ", version, " of ", path_,
                                   " does not follow ",
                                   base == nullptr ? std::string("an empty table")
                                                   : Status::Concat("version ", base->version()));
  }
  int64_t elided_since = -1;
  int64_t elided_files = 0;
  if (base != nullptr && base->files_elided()) {
    // Only new files can be added to a state that does not hold the
    // checkpointed ones: a remove (or a deletion vector, which replaces a
    // file) could name a file it does not have.
    bool plain_adds = actions.removes.empty();
    for (const AddFile& add : actions.adds) {
      plain_adds = plain_adds && !add.deletion_vector;
    }
    if (!plain_adds) {
      return Status::NotSupported("commit ", version, " of ", path_,
                                  " removes or replaces files; the writer's state without its "
                                  "checkpointed files (since version ",
                                  base->elided_since(), ") cannot apply it");
    }
    elided_since = base->elided_since();
    elided_files = base->elided_files_;
  }
  LogReplay replay(path_);
  if (base != nullptr) StartFromSnapshot(&replay, std::move(base));
  SILT_RETURN_NOT_OK(replay.Apply(std::move(actions)));
  SILT_ASSIGN_OR_RETURN(
      SnapshotPtr next,
      BuildSnapshot(&replay, version, replay.commit_timestamp_ms().value_or(timestamp_ms)));
  if (elided_since >= 0) {
    // Created just above: nobody else holds it yet.
    auto* owned = const_cast<Snapshot*>(next.get());
    owned->elided_since_ = elided_since;
    owned->elided_files_ = elided_files;
  }
  return next;
}

}  // namespace silt::delta
