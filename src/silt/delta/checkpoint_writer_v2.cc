// V2 checkpoints (checkpoint_writer_internal.h): the sidecars, chosen by
// the handle's SidecarPlan, then the top-level file and `_last_checkpoint`.
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "silt/base/json_writer.h"
#include "silt/base/uuid.h"
#include "silt/delta/checkpoint_reader.h"
#include "silt/delta/checkpoint_writer_internal.h"

namespace silt::delta {

// V2 checkpoints (PROTOCOL.md "V2 Spec", "Sidecar Files").
//
// The top-level file `<v>.checkpoint.<uuid>.json` holds the checkpointMetadata
// action, one sidecar action per sidecar file, and the non-file actions
// (protocol, metaData, txns, domainMetadata); every add and remove is in the sidecars under
// `_delta_log/_sidecars/`. A sidecar is only a set of file actions, so a later
// checkpoint may name it again as long as every action in it is still part
// of the state it describes (its adds still live, unchanged; its removes still
// unexpired tombstones) and no other sidecar repeats one of them; the metadata
// cleanup rules protect any sidecar some kept checkpoint references.
//
// The handle remembers what it put where (SidecarPlan): for every file action
// of its last V2 checkpoint, a 128-bit hash of everything the checkpoint
// writes for it, and the sidecar holding it. The next checkpoint hashes the
// state's actions (one pass, no encoding), keeps each sidecar whose actions
// are all still there, and encodes only the rest: the actions that are new
// since, plus those of sidecars that lost an action (a file compacted away,
// a tombstone expired) and of small recent sidecars merged into the new one.
// The merging keeps the count low: a new sidecar absorbs the newest kept
// sidecar while that one is no larger than what it already holds (sizes
// then fall geometrically from the oldest sidecar to the newest, like a
// binary counter, so there are O(log n) of them and each action is
// re-encoded O(log n) times over its life), and a sidecar of
// kSidecarFullActions is never merged again. The first V2 checkpoint
// through a handle (a process start) writes the whole state.
//
// A hash collision between an action that changed and the old one it
// replaces would keep a stale sidecar; with 128-bit hashes its probability
// is about n / 2^128 per checkpoint.

struct SidecarPlan {
  struct Sidecar {
    std::string name;  // file name under _delta_log/_sidecars
    int64_t size_in_bytes = 0;
    int64_t modification_time_ms = 0;
    int64_t num_actions = 0;
  };
  struct Entry {
    uint64_t low = 0;
    uint64_t high = 0;
    uint32_t sidecar = 0;
    bool operator<(const Entry& other) const {
      return low != other.low ? low < other.low : high < other.high;
    }
  };
  std::string table_id;  // metaData.id of the table the sidecars belong to
  bool write_stats = true;
  int64_t version = -1;  // of the checkpoint this plan describes
  // False when `entries` were not kept (a checkpoint of a state without its
  // checkpointed files): the next checkpoint of a whole state cannot match
  // its actions against this plan and writes them all.
  bool hashed = true;
  std::vector<Sidecar> sidecars;  // oldest first
  std::vector<Entry> entries;     // one per action in a sidecar, sorted
};

namespace checkpoint_writer_internal {

namespace {

constexpr int64_t kSidecarFullActions = 100'000;

// Serializes what a checkpoint writes for one action into `buf` (reused)
// and hashes it.
class ActionHasher {
 public:
  SidecarPlan::Entry Add(const AddFile& add, bool write_stats) {
    buf_.clear();
    buf_ += 'a';
    Str(add.path);
    Partitions(add.partition_values);
    Long(add.size);
    Long(add.modification_time);
    for (const auto& [key, value] : add.tags) {
      Str(key);
      Str(value);
    }
    buf_ += '|';
    Dv(add.deletion_vector);
    OptLong(add.base_row_id);
    OptLong(add.default_row_commit_version);
    if (add.clustering_provider) {
      buf_ += 'c';
      Str(*add.clustering_provider);
    } else {
      buf_ += '-';
    }
    if (write_stats && add.stats) {
      buf_ += 's';
      Str(*add.stats);
    }
    return Hash();
  }

  SidecarPlan::Entry Remove(const RemoveFile& remove) {
    buf_.clear();
    buf_ += 'r';
    Str(remove.path);
    Long(remove.deletion_timestamp.value_or(std::numeric_limits<int64_t>::min()));
    buf_ += remove.extended_file_metadata ? 'e' : '-';
    if (remove.extended_file_metadata) Partitions(remove.partition_values);
    Long(remove.size.value_or(std::numeric_limits<int64_t>::min()));
    Dv(remove.deletion_vector);
    OptLong(remove.base_row_id);
    OptLong(remove.default_row_commit_version);
    return Hash();
  }

 private:
  void Str(std::string_view v) {
    Long(static_cast<int64_t>(v.size()));
    buf_.append(v);
  }
  void Long(int64_t v) {
    char bytes[sizeof(v)];
    std::memcpy(bytes, &v, sizeof(v));
    buf_.append(bytes, sizeof(v));
  }
  void OptLong(const std::optional<int64_t>& v) {
    if (v) {
      buf_ += 'l';
      Long(*v);
    } else {
      buf_ += '-';
    }
  }
  void Partitions(const PartitionValues& values) {
    for (const auto& [key, value] : values) {
      Str(key);
      if (value) {
        buf_ += 'v';
        Str(*value);
      } else {
        buf_ += 'n';
      }
    }
    buf_ += '|';
  }
  void Dv(const std::optional<DeletionVectorDescriptor>& dv) {
    if (!dv) {
      buf_ += '-';
      return;
    }
    buf_ += 'd';
    Str(dv->storage_type);
    Str(dv->path_or_inline_dv);
    Long(dv->offset.value_or(-1));
    Long(dv->size_in_bytes);
    Long(dv->cardinality);
    Long(dv->max_row_index.value_or(-1));
  }
  SidecarPlan::Entry Hash() const {
    const XXH128_hash_t h = XXH3_128bits(buf_.data(), buf_.size());
    SidecarPlan::Entry e;
    e.low = h.low64;
    e.high = h.high64;
    return e;
  }

  std::string buf_;
};

std::string SidecarFileName(int64_t version) {
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%020lld.checkpoint.0000000001.0000000001.",
                static_cast<long long>(version));
  return std::string(buf) + NewUuid() + ".parquet";
}

// An action of the state, by kind and index in snapshot.files() or in
// snapshot.tombstones().
struct ActionRef {
  bool is_add = true;
  uint32_t index = 0;
};

// Writes one sidecar file with the rows `emit(CheckpointRows*)` appends;
// returns its plan entry (size and modification time as stored).
template <typename Emit>
Result<SidecarPlan::Sidecar> WriteSidecarRows(DeltaTable* table, int64_t version, Emit&& emit) {
  fs::FileSystem* fs = table->file_system().get();
  SidecarPlan::Sidecar sidecar;
  sidecar.name = SidecarFileName(version);
  const std::string path = fs::JoinPath(fs::JoinPath(table->log_path(), "_sidecars"), sidecar.name);
  SILT_ASSIGN_OR_RETURN_CTX(
      std::unique_ptr<parquet::ParquetFileWriter> writer,
      parquet::ParquetFileWriter::Open(fs, path, SidecarSchema(), CheckpointWriterOptions()),
      "writing checkpoint sidecar ", path);
  CheckpointRows rows(writer.get(), SidecarSchema());
  Status st = emit(&rows);
  if (st.ok()) st = rows.Flush();
  if (!st.ok()) {
    (void)writer->Abort();
    return st.WithContextParts("writing checkpoint sidecar ", path);
  }
  SILT_RETURN_NOT_OK_CTX(writer->Close().status(), "writing checkpoint sidecar ", path);
  SILT_ASSIGN_OR_RETURN_CTX(fs::FileInfo stored, fs->GetFileInfo(path),
                            "writing checkpoint sidecar ", path);
  sidecar.size_in_bytes = stored.size;
  sidecar.modification_time_ms = stored.modification_time_ms;
  sidecar.num_actions = rows.rows();
  return sidecar;
}

// Writes `actions` [begin, end) as one sidecar file.
Result<SidecarPlan::Sidecar> WriteSidecar(DeltaTable* table, const Snapshot& snapshot,
                                          int64_t version, const std::vector<ActionRef>& actions,
                                          size_t begin, size_t end, bool write_stats) {
  return WriteSidecarRows(table, version, [&](CheckpointRows* rows) {
    for (size_t i = begin; i < end; ++i) {
      const ActionRef& ref = actions[i];
      if (ref.is_add) {
        AppendAdd(rows->Begin(kSidecarAdd), snapshot.files()[ref.index], write_stats);
      } else {
        AppendRemove(rows->Begin(kSidecarRemove), snapshot.tombstones()[ref.index]);
      }
      SILT_RETURN_NOT_OK(rows->EndRow());
    }
    return Status::OK();
  });
}

void WriteSidecarAction(JsonWriter* w, const SidecarPlan::Sidecar& sidecar) {
  w->BeginObject();
  w->Key("sidecar");
  w->BeginObject();
  w->Member("path", sidecar.name);
  w->Member("sizeInBytes", sidecar.size_in_bytes);
  w->Member("modificationTime", sidecar.modification_time_ms);
  w->EndObject();
  w->EndObject();
}

// Writes the top-level file of the V2 checkpoint of `snapshot` whose
// sidecars are `plan`'s, then `_last_checkpoint`; makes `plan` the handle's.
Result<CheckpointInfo> PublishV2Checkpoint(DeltaTable* table, const Snapshot& snapshot,
                                           const CheckpointSettings& settings,
                                           std::shared_ptr<SidecarPlan> plan, CheckpointInfo info) {
  fs::FileSystem* fs = table->file_system().get();
  const int64_t version = snapshot.version();
  // The top-level file: checkpointMetadata, the sidecars, then the non-file
  // actions (delta-spark's order).
  int64_t sidecar_bytes = 0;
  int64_t file_actions = 0;
  for (const SidecarPlan::Sidecar& sidecar : plan->sidecars) {
    sidecar_bytes += sidecar.size_in_bytes;
    file_actions += sidecar.num_actions;
  }
  const int64_t num_add_files = snapshot.num_files();
  JsonWriter w;
  auto checkpoint_metadata = [&](JsonWriter* out) {
    out->BeginObject();
    out->Key("checkpointMetadata");
    out->BeginObject();
    out->Member("version", version);
    out->Key("tags");
    out->BeginObject();
    out->Member("sidecarNumActions", std::to_string(file_actions));
    out->Member("sidecarSizeInBytes", std::to_string(sidecar_bytes));
    out->Member("numOfAddFiles", std::to_string(num_add_files));
    out->Member("sidecarFileSchema", columnar::SchemaToJson(*SidecarSchema()));
    out->EndObject();
    out->EndObject();
    out->EndObject();
  };
  auto take_line = [&w](std::string* out) {
    *out += w.str();
    *out += '\n';
    w.Clear();
  };
  std::string text;
  checkpoint_metadata(&w);
  take_line(&text);
  for (const SidecarPlan::Sidecar& sidecar : plan->sidecars) {
    WriteSidecarAction(&w, sidecar);
    take_line(&text);
  }
  CommitActions non_file;
  non_file.protocol = snapshot.protocol();
  non_file.metadata = snapshot.metadata();
  for (const auto& [app_id, txn] : snapshot.txns()) {
    if (settings.txn_cutoff_ms && txn.last_updated.value_or(0) < *settings.txn_cutoff_ms) continue;
    non_file.txns.push_back(txn);
  }
  for (const auto& [name, domain] : snapshot.domain_metadata()) {
    non_file.domain_metadata.push_back(domain);
  }
  const std::string non_file_text = SerializeCommit(non_file);
  text += non_file_text;

  const std::string name = Status::Concat(
      std::string_view(CheckpointFileName(version)).substr(0, 32), NewUuid(), ".json");
  info.path = fs::JoinPath(table->log_path(), name);
  SILT_RETURN_NOT_OK_CTX(fs->WriteFile(info.path, text), "writing checkpoint ", info.path);
  SILT_ASSIGN_OR_RETURN_CTX(fs::FileInfo stored, fs->GetFileInfo(info.path), "writing checkpoint ",
                            info.path);
  // Only now, with the checkpoint that names them published, does the next
  // checkpoint through this handle build on these sidecars.
  table->set_sidecar_plan(plan);
  const int64_t num_non_file = 2 + static_cast<int64_t>(non_file.txns.size()) +
                               static_cast<int64_t>(non_file.domain_metadata.size());
  info.num_actions = 1 + static_cast<int64_t>(plan->sidecars.size()) + num_non_file + file_actions;
  info.num_add_files = num_add_files;
  info.size_in_bytes = stored.size + sidecar_bytes;

  std::string last = fs::JoinPath(table->log_path(), "_last_checkpoint");
  if (LastCheckpointVersion(fs, last) > info.version) return info;
  w.Clear();
  w.BeginObject();
  w.Member("version", info.version);
  w.Member("size", info.num_actions);
  w.Member("sizeInBytes", info.size_in_bytes);
  w.Member("numOfAddFiles", info.num_add_files);
  w.Key("v2Checkpoint");
  w.BeginObject();
  w.Member("path", name);
  w.Member("sizeInBytes", stored.size);
  w.Member("modificationTime", stored.modification_time_ms);
  w.Key("nonFileActions");
  w.BeginArray();
  size_t start = 0;
  while (start < non_file_text.size()) {
    size_t end = non_file_text.find('\n', start);
    if (end == std::string::npos) end = non_file_text.size();
    w.Raw(std::string_view(non_file_text).substr(start, end - start));
    start = end + 1;
  }
  checkpoint_metadata(&w);
  w.EndArray();
  w.Key("sidecarFiles");
  w.BeginArray();
  for (const SidecarPlan::Sidecar& sidecar : plan->sidecars) {
    w.BeginObject();
    w.Member("path", sidecar.name);
    w.Member("sizeInBytes", sidecar.size_in_bytes);
    w.Member("modificationTime", sidecar.modification_time_ms);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.EndObject();
  SILT_RETURN_NOT_OK_CTX(fs->WriteFile(last, w.Take()), "writing ", last);
  return info;
}

// The V2 checkpoint of a state that holds only the files added since the
// handle's last V2 checkpoint (Snapshot::files_elided): that state changed
// by blind appends alone, so every sidecar of that checkpoint still holds
// live files only and is named again; the new files go into one new
// sidecar, with the newest old sidecars merged into it by the rule of
// WriteV2Checkpoint, read back from storage (their files are not in
// memory). Merging stops at sidecars of kElidedMergeLimit actions, which
// bounds what a checkpoint reads back (and holds) at once.
constexpr int64_t kElidedMergeLimit = 8'192;

Result<CheckpointInfo> WriteElidedV2Checkpoint(DeltaTable* table, const Snapshot& snapshot,
                                               const CheckpointSettings& settings) {
  const int64_t version = snapshot.version();
  const std::shared_ptr<SidecarPlan>& previous = table->sidecar_plan();
  if (previous == nullptr || previous->version != snapshot.elided_since() ||
      previous->table_id != snapshot.metadata().id ||
      previous->write_stats != settings.write_stats || !snapshot.tombstones().empty()) {
    return Status::Internal("checkpoint of ", table->path(), " at version ", version,
                            ": the state holds only the files added since version ",
                            snapshot.elided_since(),
                            ", whose checkpoint is not the last one written through this handle");
  }
  const size_t num_old = previous->sidecars.size();
  int64_t pending = static_cast<int64_t>(snapshot.files().size());
  size_t merge_from = num_old;
  while (merge_from > 0) {
    const int64_t size = previous->sidecars[merge_from - 1].num_actions;
    if (size >= kElidedMergeLimit || size > pending) break;
    --merge_from;
    pending += size;
  }
  auto plan = std::make_shared<SidecarPlan>();
  plan->table_id = snapshot.metadata().id;
  plan->write_stats = settings.write_stats;
  plan->version = version;
  plan->hashed = false;
  plan->sidecars.assign(previous->sidecars.begin(),
                        previous->sidecars.begin() + static_cast<std::ptrdiff_t>(merge_from));
  CheckpointInfo info;
  info.version = version;
  info.sidecars_reused = static_cast<int64_t>(merge_from);
  if (pending > 0) {
    const std::string sidecar_dir = fs::JoinPath(table->log_path(), "_sidecars");
    SILT_ASSIGN_OR_RETURN(
        SidecarPlan::Sidecar sidecar, WriteSidecarRows(table, version, [&](CheckpointRows* rows) {
          for (size_t s = merge_from; s < num_old; ++s) {
            const std::string path = fs::JoinPath(sidecar_dir, previous->sidecars[s].name);
            SILT_ASSIGN_OR_RETURN_CTX(
                CommitActions merged, ReadParquetCheckpoint(table->file_system().get(), path),
                "merging sidecar ", path, " into the checkpoint at version ", version);
            for (const AddFile& add : merged.adds) {
              AppendAdd(rows->Begin(kSidecarAdd), add, settings.write_stats);
              SILT_RETURN_NOT_OK(rows->EndRow());
            }
            for (const RemoveFile& remove : merged.removes) {
              AppendRemove(rows->Begin(kSidecarRemove), remove);
              SILT_RETURN_NOT_OK(rows->EndRow());
            }
          }
          for (const AddFile& add : snapshot.files()) {
            AppendAdd(rows->Begin(kSidecarAdd), add, settings.write_stats);
            SILT_RETURN_NOT_OK(rows->EndRow());
          }
          return Status::OK();
        }));
    info.file_actions_encoded = sidecar.num_actions;
    if (sidecar.num_actions != pending) {
      return Status::Corruption("checkpoint of ", table->path(), " at version ", version,
                                ": the merged sidecars hold ",
                                sidecar.num_actions - static_cast<int64_t>(snapshot.files().size()),
                                " actions, their checkpoint said ",
                                pending - static_cast<int64_t>(snapshot.files().size()));
    }
    plan->sidecars.push_back(std::move(sidecar));
    info.sidecars_written = 1;
  }
  return PublishV2Checkpoint(table, snapshot, settings, std::move(plan), std::move(info));
}

}  // namespace

Result<CheckpointInfo> WriteV2Checkpoint(DeltaTable* table, const Snapshot& snapshot,
                                         const CheckpointSettings& settings) {
  if (snapshot.files_elided()) return WriteElidedV2Checkpoint(table, snapshot, settings);
  const int64_t version = snapshot.version();
  std::shared_ptr<SidecarPlan> previous = table->sidecar_plan();
  if (previous != nullptr && (previous->table_id != snapshot.metadata().id ||
                              previous->write_stats != settings.write_stats || !previous->hashed)) {
    previous = nullptr;
  }
  const size_t num_old = previous != nullptr ? previous->sidecars.size() : 0;

  // Which kept sidecar (if any) holds each action of the state.
  constexpr uint32_t kNew = std::numeric_limits<uint32_t>::max();
  std::vector<ActionRef> actions;
  std::vector<SidecarPlan::Entry> keys;
  std::vector<int64_t> present(num_old, 0);
  ActionHasher hasher;
  const std::vector<AddFile>& files = snapshot.files();
  const std::vector<RemoveFile>& tombstones = snapshot.tombstones();
  actions.reserve(files.size());
  keys.reserve(files.size());
  auto place = [&](SidecarPlan::Entry key, ActionRef ref) {
    key.sidecar = kNew;
    if (previous != nullptr) {
      auto it = std::lower_bound(previous->entries.begin(), previous->entries.end(), key);
      if (it != previous->entries.end() && it->low == key.low && it->high == key.high) {
        key.sidecar = it->sidecar;
        ++present[it->sidecar];
      }
    }
    actions.push_back(ref);
    keys.push_back(key);
  };
  for (size_t i = 0; i < files.size(); ++i) {
    place(hasher.Add(files[i], settings.write_stats), {true, static_cast<uint32_t>(i)});
  }
  for (size_t i = 0; i < tombstones.size(); ++i) {
    if (!KeepTombstone(tombstones[i], settings.tombstone_cutoff_ms)) continue;
    place(hasher.Remove(tombstones[i]), {false, static_cast<uint32_t>(i)});
  }

  // Keep the sidecars whose every action is still there, then merge the
  // newest kept ones into the new sidecar while they are no larger than it.
  std::vector<bool> keep(num_old, false);
  int64_t pending = 0;
  for (const SidecarPlan::Entry& key : keys) {
    if (key.sidecar == kNew) ++pending;
  }
  for (size_t s = 0; s < num_old; ++s) {
    keep[s] = present[s] == previous->sidecars[s].num_actions;
    if (!keep[s]) pending += present[s];
  }
  for (size_t s = num_old; s-- > 0;) {
    if (!keep[s]) continue;
    const int64_t size = previous->sidecars[s].num_actions;
    if (size >= kSidecarFullActions || size > pending) break;
    keep[s] = false;
    pending += size;
  }

  auto plan = std::make_shared<SidecarPlan>();
  plan->table_id = snapshot.metadata().id;
  plan->write_stats = settings.write_stats;
  plan->version = version;
  std::vector<uint32_t> renumber(num_old, kNew);
  for (size_t s = 0; s < num_old; ++s) {
    if (!keep[s]) continue;
    renumber[s] = static_cast<uint32_t>(plan->sidecars.size());
    plan->sidecars.push_back(previous->sidecars[s]);
  }
  const size_t num_kept = plan->sidecars.size();

  // Encode the rest, kSidecarFullActions per file.
  std::vector<ActionRef> fresh;
  std::vector<SidecarPlan::Entry> fresh_keys;
  fresh.reserve(static_cast<size_t>(pending));
  fresh_keys.reserve(static_cast<size_t>(pending));
  plan->entries.reserve(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    SidecarPlan::Entry key = keys[i];
    if (key.sidecar != kNew && keep[key.sidecar]) {
      key.sidecar = renumber[key.sidecar];
      plan->entries.push_back(key);
    } else {
      fresh.push_back(actions[i]);
      fresh_keys.push_back(key);
    }
  }
  CheckpointInfo info;
  info.version = version;
  for (size_t begin = 0; begin < fresh.size(); begin += kSidecarFullActions) {
    const size_t end = std::min(fresh.size(), begin + static_cast<size_t>(kSidecarFullActions));
    SILT_ASSIGN_OR_RETURN(
        SidecarPlan::Sidecar sidecar,
        WriteSidecar(table, snapshot, version, fresh, begin, end, settings.write_stats));
    const auto index = static_cast<uint32_t>(plan->sidecars.size());
    for (size_t i = begin; i < end; ++i) {
      SidecarPlan::Entry key = fresh_keys[i];
      key.sidecar = index;
      plan->entries.push_back(key);
    }
    plan->sidecars.push_back(std::move(sidecar));
  }
  std::sort(plan->entries.begin(), plan->entries.end());
  info.sidecars_reused = static_cast<int64_t>(num_kept);
  info.sidecars_written = static_cast<int64_t>(plan->sidecars.size() - num_kept);
  info.file_actions_encoded = static_cast<int64_t>(fresh.size());
  return PublishV2Checkpoint(table, snapshot, settings, std::move(plan), std::move(info));
}

}  // namespace checkpoint_writer_internal

SnapshotPtr DeltaTable::ElideCheckpointedFiles(SnapshotPtr snapshot) const {
  if (!elide_checkpointed_files_ || snapshot == nullptr) return snapshot;
  const std::shared_ptr<SidecarPlan> plan = sidecar_plan();
  if (plan == nullptr || plan->version != snapshot->version() ||
      plan->table_id != snapshot->metadata().id || !snapshot->tombstones().empty()) {
    return snapshot;
  }
  std::shared_ptr<Snapshot> elided;
  if (snapshot.use_count() == 1) {
    // The only reference, created non-const by replay: nobody observes it
    // being emptied.
    elided = std::const_pointer_cast<Snapshot>(std::move(snapshot));
  } else {
    // Shared: a copy of everything but the files (no tombstones to copy).
    elided = std::const_pointer_cast<Snapshot>(snapshot->WithFiles({}));
    elided->elided_files_ = snapshot->num_files();
    elided->elided_since_ = elided->version_;
    return elided;
  }
  elided->elided_files_ = elided->num_files();
  elided->elided_since_ = elided->version_;
  std::vector<AddFile>().swap(elided->files_);
  return elided;
}

}  // namespace silt::delta
