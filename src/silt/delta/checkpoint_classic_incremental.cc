#include "silt/delta/checkpoint_classic_incremental.h"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <utility>

#include "silt/base/logging.h"
#include "silt/columnar/builder.h"
#include "silt/delta/checkpoint_worker.h"
#include "silt/delta/checkpoint_writer_internal.h"
#include "silt/delta/table_properties.h"
#include "silt/fs/page_cache.h"
#include "silt/parquet/file_reader.h"
#include "silt/parquet/file_writer.h"
#include "silt/parquet/row_group_copy.h"

namespace silt::delta {

namespace {

// The add struct's fields in the classic checkpoint schema, in order
// (checkpoint_writer_rows.cc's CheckpointSchema); WriteAddRows checks the schema it
// is given against them.
constexpr std::array<std::string_view, 11> kAddFields = {
    "path", "partitionValues", "size",      "modificationTime",        "dataChange",
    "tags", "deletionVector",  "baseRowId", "defaultRowCommitVersion", "clusteringProvider",
    "stats"};

// Writes `adds` as rows of `schema` (the classic checkpoint schema, read
// back from the head file) with only the add column set, into `path`.
Status WriteAddRows(fs::FileSystem* fs, const std::string& path, const columnar::SchemaPtr& schema,
                    const std::vector<const AddFile*>& adds, bool write_stats) {
  const int add_col = schema->FieldIndex("add");
  if (add_col < 0) return Status::NotSupported("the checkpoint schema has no add column");
  const columnar::TypePtr& add_type = schema->field(add_col).type;
  if (add_type->num_fields() != static_cast<int>(kAddFields.size())) {
    return Status::NotSupported("the checkpoint schema's add column has ", add_type->num_fields(),
                                " fields, not ", kAddFields.size());
  }
  for (size_t i = 0; i < kAddFields.size(); ++i) {
    if (add_type->field(static_cast<int>(i)).name != kAddFields[i]) {
      return Status::NotSupported("the checkpoint schema's add field ", i, " is ",
                                  add_type->field(static_cast<int>(i)).name, ", not ",
                                  kAddFields[i]);
    }
  }
  // The classic writer's options, without the page index (the copied row
  // groups leave it out anyway) and without dictionaries, so that a later
  // checkpoint can merge these row groups (decision 193).
  parquet::WriterOptions options = checkpoint_writer_internal::CheckpointWriterOptions();
  options.write_page_index = false;
  options.enable_dictionary = false;
  SILT_ASSIGN_OR_RETURN(std::unique_ptr<parquet::ParquetFileWriter> writer,
                        parquet::ParquetFileWriter::Open(fs, path, schema, options));
  checkpoint_writer_internal::CheckpointRows rows(writer.get(), schema);
  Status st;
  for (const AddFile* add : adds) {
    checkpoint_writer_internal::AppendAdd(rows.Begin(add_col), *add, write_stats);
    st = rows.EndRow();
    if (!st.ok()) break;
  }
  if (st.ok()) st = rows.Flush();
  if (!st.ok()) {
    (void)writer->Abort();
    return st;
  }
  return writer->Close().status();
}

// A Parquet file, open with its footer read.
struct OpenParquet {
  std::unique_ptr<fs::RandomAccessFile> file;
  int64_t size = 0;
  parquet::FileMetaData meta;
  std::string path;
};

Result<OpenParquet> OpenWithFooter(fs::FileSystem* fs, const std::string& path) {
  OpenParquet out;
  out.path = path;
  SILT_ASSIGN_OR_RETURN_CTX(out.file, fs->OpenForRead(path), "reading ", path);
  SILT_ASSIGN_OR_RETURN_CTX(out.size, out.file->Size(), "reading ", path);
  SILT_ASSIGN_OR_RETURN(out.meta, parquet::ReadFooter(out.file.get(), out.size, path));
  return out;
}

// The checkpointSchema member of a _last_checkpoint text, minified; empty
// when absent.
std::string CheckpointSchemaJson(const std::string& last_checkpoint) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(last_checkpoint.data(), last_checkpoint.size(), true).get(root) !=
      simdjson::SUCCESS) {
    return {};
  }
  simdjson::dom::element schema;
  if (root["checkpointSchema"].get(schema) != simdjson::SUCCESS) return {};
  return simdjson::minify(schema);
}

// Whether a row group can be merged with others (RowGroupCopier::
// AppendMerged): no dictionary or index page in any column chunk.
bool Mergeable(const parquet::RowGroup& group) {
  for (const parquet::ColumnChunk& chunk : group.columns) {
    if (!chunk.meta_data || chunk.file_path) return false;
    const parquet::ColumnMetaData& m = *chunk.meta_data;
    if ((m.dictionary_page_offset && *m.dictionary_page_offset > 0) || m.index_page_offset) {
      return false;
    }
  }
  return true;
}

int64_t GroupBytes(const parquet::RowGroup& group) {
  int64_t bytes = 0;
  for (const parquet::ColumnChunk& chunk : group.columns) {
    if (chunk.meta_data) bytes += chunk.meta_data->total_compressed_size;
  }
  return bytes;
}

}  // namespace

std::vector<size_t> PackFrozenGroups(const std::vector<int64_t>& bytes, int64_t max_bytes) {
  std::vector<size_t> ends;
  int64_t run = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i > 0 && run + bytes[i] > max_bytes) {
      ends.push_back(i);
      run = 0;
    }
    run += bytes[i];
  }
  if (!bytes.empty()) ends.push_back(bytes.size());
  return ends;
}

Result<bool> UsesIncrementalClassicCheckpoint(const DeltaTable& table, const Snapshot& snapshot) {
  if (!table.elide_checkpointed_files()) return false;
  SILT_ASSIGN_OR_RETURN(bool v2, CheckpointPolicyV2(snapshot.metadata().configuration));
  const Protocol& p = snapshot.protocol();
  auto has = [](const std::optional<std::vector<std::string>>& features, std::string_view name) {
    return features && std::find(features->begin(), features->end(), name) != features->end();
  };
  if (v2 && p.min_writer_version >= 7 && has(p.writer_features, "v2Checkpoint") &&
      p.min_reader_version >= 3 && has(p.reader_features, "v2Checkpoint")) {
    return false;
  }
  if (!snapshot.tombstones().empty()) return false;
  for (const AddFile& add : snapshot.files()) {
    if (add.deletion_vector) return false;
  }
  return true;
}

Result<CheckpointInfo> WriteWriterCheckpoint(DeltaTable* table, const Snapshot& snapshot,
                                             int64_t now_ms) {
  Result<bool> incremental = UsesIncrementalClassicCheckpoint(*table, snapshot);
  if (!incremental.ok() || !*incremental) {
    table->set_classic_checkpoint_plan(nullptr);
    return WriteCheckpoint(table, snapshot, now_ms);
  }
  Result<CheckpointInfo> info = WriteIncrementalClassicCheckpoint(table, snapshot, now_ms);
  if (info.ok()) return info;
  table->set_classic_checkpoint_plan(nullptr);
  if (snapshot.files_elided()) return info.status();
  // A whole state can always take the classic checkpoint.
  SILT_LOG_WARN("delta", "incremental classic checkpoint of ", table->path(), " at version ",
                snapshot.version(), " not written (", info.status().ToString(),
                "); writing it whole");
  return WriteCheckpoint(table, snapshot, now_ms);
}

Result<CheckpointInfo> WriteIncrementalClassicCheckpoint(DeltaTable* table,
                                                         const Snapshot& snapshot, int64_t now_ms) {
  const int64_t version = snapshot.version();
  fs::FileSystem* fs = table->file_system().get();
  SILT_ASSIGN_OR_RETURN(bool write_stats,
                        CheckpointWriteStatsAsJson(snapshot.metadata().configuration));
  const std::shared_ptr<ClassicCheckpointPlan> previous = table->classic_checkpoint_plan();

  // The previous checkpoint, whose frozen groups are copied (elided state).
  std::optional<OpenParquet> prev;
  if (snapshot.files_elided()) {
    if (previous == nullptr || previous->version != snapshot.elided_since() ||
        previous->table_id != snapshot.metadata().id || previous->write_stats != write_stats) {
      return Status::Internal("classic checkpoint of ", table->path(), " at version ", version,
                              ": the state holds only the files added since version ",
                              snapshot.elided_since(),
                              ", whose checkpoint is not the last one written through this handle");
    }
    const std::string path = fs::JoinPath(table->log_path(), previous->file_name);
    SILT_ASSIGN_OR_RETURN_CTX(OpenParquet opened, OpenWithFooter(fs, path),
                              "building the checkpoint at version ", version);
    if (opened.size != previous->file_size ||
        opened.meta.row_groups.size() != previous->num_row_groups) {
      return Status::Internal("classic checkpoint of ", table->path(), " at version ", version,
                              ": ", path, " changed since this handle wrote it (", opened.size,
                              " bytes, ", opened.meta.row_groups.size(), " row groups; expected ",
                              previous->file_size, " and ", previous->num_row_groups, ")");
    }
    int64_t frozen_rows = 0;
    for (size_t g = 0; g < previous->num_frozen_groups; ++g) {
      frozen_rows += opened.meta.row_groups[g].num_rows;
    }
    if (frozen_rows != previous->num_frozen_adds) {
      return Status::Internal("classic checkpoint of ", table->path(), " at version ", version,
                              ": the frozen row groups of ", path, " hold ", frozen_rows,
                              " rows, expected ", previous->num_frozen_adds);
    }
    prev = std::move(opened);
  }

  // The previous plan's staged adds (decision 190), copied as frozen groups
  // after the previous checkpoint's.
  std::vector<OpenParquet> staged;
  if (prev) {
    for (const std::string& staged_file : previous->staged_files) {
      SILT_ASSIGN_OR_RETURN_CTX(OpenParquet opened,
                                OpenWithFooter(previous->staged_fs.get(), staged_file),
                                "building the checkpoint at version ", version);
      staged.push_back(std::move(opened));
    }
  }

  // The adds to encode: the previous tail and the files since (elided), or
  // every live file (whole state).
  std::vector<const AddFile*> pending;
  const int64_t prior_frozen_adds =
      prev ? previous->num_frozen_adds + previous->num_staged_adds : 0;
  if (prev) {
    pending.reserve(previous->tail.size() + snapshot.files().size());
    for (const AddFile& add : previous->tail) pending.push_back(&add);
  }
  for (const AddFile& add : snapshot.files()) pending.push_back(&add);
  if (prior_frozen_adds + static_cast<int64_t>(pending.size()) != snapshot.num_files()) {
    return Status::Internal("classic checkpoint of ", table->path(), " at version ", version,
                            ": the previous checkpoint and the files since hold ",
                            prior_frozen_adds + static_cast<int64_t>(pending.size()),
                            " files, the state ", snapshot.num_files());
  }
  // Freeze whole groups of kClassicTailAdds (a whole state), or everything
  // once the tail has grown that large; the rest is the new tail.
  size_t num_freeze = 0;
  if (prev) {
    if (static_cast<int64_t>(pending.size()) >= kClassicTailAdds) num_freeze = pending.size();
  } else {
    num_freeze = pending.size() - pending.size() % static_cast<size_t>(kClassicTailAdds);
  }

  // The head (protocol, metaData, txns, domains) from the classic writer,
  // and the add rows in the same schema, into memory.
  const fs::FileSystemPtr mem = fs::MakeMemoryFileSystem();
  SILT_ASSIGN_OR_RETURN(std::unique_ptr<DeltaTable> head_table, DeltaTable::Open(mem, "/head"));
  SILT_ASSIGN_OR_RETURN(CheckpointInfo head_info,
                        WriteCheckpoint(head_table.get(), *snapshot.WithFiles({}), now_ms));
  SILT_ASSIGN_OR_RETURN(OpenParquet head, OpenWithFooter(mem.get(), head_info.path));
  columnar::SchemaPtr schema;
  {
    SILT_ASSIGN_OR_RETURN(std::unique_ptr<parquet::ParquetFileReader> reader,
                          parquet::ParquetFileReader::Open(mem.get(), head_info.path));
    schema = reader->schema();
  }
  std::optional<OpenParquet> frozen;
  std::optional<OpenParquet> tail;
  if (num_freeze > 0) {
    std::vector<const AddFile*> adds(pending.begin(),
                                     pending.begin() + static_cast<std::ptrdiff_t>(num_freeze));
    SILT_RETURN_NOT_OK_CTX(WriteAddRows(mem.get(), "/frozen.parquet", schema, adds, write_stats),
                           "encoding the adds of the checkpoint at version ", version);
    SILT_ASSIGN_OR_RETURN(frozen, OpenWithFooter(mem.get(), "/frozen.parquet"));
  }
  if (num_freeze < pending.size()) {
    std::vector<const AddFile*> adds(pending.begin() + static_cast<std::ptrdiff_t>(num_freeze),
                                     pending.end());
    SILT_RETURN_NOT_OK_CTX(WriteAddRows(mem.get(), "/tail.parquet", schema, adds, write_stats),
                           "encoding the adds of the checkpoint at version ", version);
    SILT_ASSIGN_OR_RETURN(tail, OpenWithFooter(mem.get(), "/tail.parquet"));
  }

  // The checkpoint: copied frozen groups, new frozen groups, tail, head.
  CheckpointInfo info;
  info.version = version;
  const std::string file_name = CheckpointFileName(version);
  info.path = fs::JoinPath(table->log_path(), file_name);
  SILT_ASSIGN_OR_RETURN(std::unique_ptr<parquet::RowGroupCopier> copier,
                        parquet::RowGroupCopier::Open(fs, info.path));
  auto plan = std::make_shared<ClassicCheckpointPlan>();
  plan->version = version;
  plan->table_id = snapshot.metadata().id;
  plan->write_stats = write_stats;
  plan->file_name = file_name;
  auto append_all = [&](OpenParquet* part) {
    return copier->Append(part->file.get(), part->meta, 0, part->meta.row_groups.size(),
                          part->path);
  };
  // The frozen groups: the previous checkpoint's, the staged ones, the new
  // ones; packed into runs of at most kClassicGroupBytes, each run one row
  // group (decision 193). A group that cannot be merged is a run alone.
  std::vector<parquet::RowGroupCopier::Part> frozen_parts;
  auto add_parts = [&](OpenParquet* part, size_t count) {
    for (size_t g = 0; g < count; ++g) {
      frozen_parts.push_back({part->file.get(), &part->meta, g, &part->path});
    }
  };
  if (prev) {
    add_parts(&*prev, previous->num_frozen_groups);
    plan->num_frozen_adds = previous->num_frozen_adds + previous->num_staged_adds;
  }
  for (OpenParquet& part : staged) add_parts(&part, part.meta.row_groups.size());
  if (frozen) {
    add_parts(&*frozen, frozen->meta.row_groups.size());
    plan->num_frozen_adds += static_cast<int64_t>(num_freeze);
  }
  std::vector<int64_t> part_bytes;
  part_bytes.reserve(frozen_parts.size());
  for (const parquet::RowGroupCopier::Part& part : frozen_parts) {
    const parquet::RowGroup& group = part.meta->row_groups[part.group];
    part_bytes.push_back(Mergeable(group) ? GroupBytes(group) : kClassicGroupBytes + 1);
  }
  Status st = Status::OK();
  size_t run_start = 0;
  for (size_t run_end : PackFrozenGroups(part_bytes, kClassicGroupBytes)) {
    if (run_end - run_start == 1) {
      const parquet::RowGroupCopier::Part& part = frozen_parts[run_start];
      st = copier->Append(part.source, *part.meta, part.group, part.group + 1, *part.source_path);
    } else {
      st = copier->AppendMerged(std::vector<parquet::RowGroupCopier::Part>(
          frozen_parts.begin() + static_cast<std::ptrdiff_t>(run_start),
          frozen_parts.begin() + static_cast<std::ptrdiff_t>(run_end)));
    }
    if (!st.ok()) break;
    run_start = run_end;
  }
  plan->num_frozen_groups = copier->num_row_groups();
  if (st.ok() && tail) st = append_all(&*tail);
  if (st.ok()) st = append_all(&head);
  if (!st.ok()) {
    (void)copier->Abort();
    return st.WithContextParts("writing checkpoint ", info.path);
  }
  plan->num_row_groups = copier->num_row_groups();
  const int64_t num_rows = copier->num_rows();
  SILT_ASSIGN_OR_RETURN_CTX(info.size_in_bytes, copier->Close(), "writing checkpoint ", info.path);
  // The previous checkpoint is never read again by this writer (the next
  // one copies from this one): its pages leave the page cache now, so that
  // the table's checkpoints (each the size of the table state, written every
  // few seconds by a fast stream) do not fill the machine's memory.
  if (prev) fs::DropCachedPages(fs, prev->path);
  info.num_actions = num_rows;
  info.num_add_files = snapshot.num_files();
  info.file_actions_encoded = static_cast<int64_t>(pending.size());
  plan->file_size = info.size_in_bytes;
  plan->tail.reserve(pending.size() - num_freeze);
  for (size_t i = num_freeze; i < pending.size(); ++i) plan->tail.push_back(*pending[i]);
  plan->state_elided_since = snapshot.elided_since();
  plan->schema = schema;
  plan->state_paths.reserve(snapshot.files().size());
  for (const AddFile& add : snapshot.files()) plan->state_paths.push_back(add.path);
  if (num_rows != head_info.num_actions + snapshot.num_files()) {
    return Status::Internal("checkpoint ", info.path, " holds ", num_rows, " rows, expected ",
                            head_info.num_actions + snapshot.num_files());
  }

  Result<std::string> head_last =
      mem->ReadFile(fs::JoinPath(head_table->log_path(), "_last_checkpoint"));
  SILT_RETURN_NOT_OK(checkpoint_writer_internal::WriteClassicLastCheckpoint(
      fs, table->log_path(), info, head_last.ok() ? CheckpointSchemaJson(*head_last) : ""));
  table->set_classic_checkpoint_plan(std::move(plan));
  return info;
}

std::shared_ptr<ClassicCheckpointPlan> DeltaTable::classic_checkpoint_plan() const {
  std::lock_guard<std::mutex> lock(sidecar_plan_mu_);
  return classic_plan_;
}

void DeltaTable::set_classic_checkpoint_plan(std::shared_ptr<ClassicCheckpointPlan> plan) {
  std::lock_guard<std::mutex> lock(sidecar_plan_mu_);
  classic_plan_ = std::move(plan);
}

SnapshotPtr DeltaTable::ElideClassicCheckpointedFiles(SnapshotPtr snapshot) const {
  if (!elide_checkpointed_files_ || snapshot == nullptr) return snapshot;
  // `state` without its files, to be set: `state` itself when this is its
  // only reference, created non-const by replay (nobody observes it being
  // emptied), else a copy of everything but the files (no tombstones to
  // copy).
  auto without_files = [](SnapshotPtr state) {
    const int64_t elided_since = state->elided_since_;
    const int64_t elided_files = state->elided_files_;
    std::shared_ptr<Snapshot> out;
    if (state.use_count() == 1) {
      out = std::const_pointer_cast<Snapshot>(std::move(state));
    } else {
      out = std::const_pointer_cast<Snapshot>(state->WithFiles({}));
    }
    out->elided_since_ = elided_since;
    out->elided_files_ = elided_files;
    return out;
  };
  const std::shared_ptr<ClassicCheckpointPlan> plan = classic_checkpoint_plan();
  if (plan == nullptr || plan->version > snapshot->version() ||
      plan->version < snapshot->elided_since() || plan->table_id != snapshot->metadata().id ||
      !snapshot->tombstones().empty()) {
    return snapshot;
  }
  if (plan->version > snapshot->elided_since()) {
    if (plan->state_elided_since != snapshot->elided_since()) return snapshot;
    const int64_t total = snapshot->num_files();
    // The files the state holds that the checkpoint does not: those added
    // after plan->version (blind appends since, none removed). Both lists are
    // sorted by path.
    std::vector<AddFile> since;
    const std::vector<std::string>& held = plan->state_paths;
    size_t j = 0;
    for (const AddFile& add : snapshot->files_) {
      while (j < held.size() && held[j] < add.path) ++j;
      if (j < held.size() && held[j] == add.path) continue;
      since.push_back(add);
    }
    if (snapshot->files_.size() - since.size() != held.size()) {
      return snapshot;  // not the state the checkpoint was written from
    }
    std::shared_ptr<Snapshot> elided = without_files(std::move(snapshot));
    elided->elided_files_ = total - static_cast<int64_t>(since.size());
    elided->elided_since_ = plan->version;
    elided->files_ = std::move(since);
    snapshot = std::move(elided);
  }

  // Staging (decision 190): the state holds as many files since the
  // checkpoint as a frozen group, and the plan describes exactly the files
  // it elides. Only while no checkpoint waits or runs: that one reads the
  // plan, and was given a state whose elided files the plan must still match.
  if (static_cast<int64_t>(snapshot->files_.size()) < kClassicStageAdds ||
      snapshot->elided_files_ !=
          plan->num_frozen_adds + static_cast<int64_t>(plan->tail.size()) + plan->num_staged_adds ||
      plan->schema == nullptr) {
    return snapshot;
  }
  if (checkpoint_worker_ != nullptr && checkpoint_worker_->Busy()) return snapshot;
  for (const AddFile& add : snapshot->files_) {
    if (add.deletion_vector) return snapshot;
  }
  if (plan->staged_fs == nullptr) plan->staged_fs = fs::MakeMemoryFileSystem();
  const std::string staged_file =
      "/staged-" + std::to_string(plan->staged_files.size()) + ".parquet";
  std::vector<const AddFile*> adds;
  adds.reserve(snapshot->files_.size());
  for (const AddFile& add : snapshot->files_) adds.push_back(&add);
  Status st =
      WriteAddRows(plan->staged_fs.get(), staged_file, plan->schema, adds, plan->write_stats);
  if (!st.ok()) {
    // The files stay in the state; the next checkpoint encodes them.
    SILT_LOG_WARN("delta", "staging ", adds.size(), " adds of ", path_, " since version ",
                  plan->version, " failed: ", st.ToString());
    plan->staged_fs->DeleteFile(staged_file).IgnoreError("a partly written memory file");
    return snapshot;
  }
  const int64_t num_staged = static_cast<int64_t>(adds.size());
  adds.clear();
  {
    std::lock_guard<std::mutex> lock(sidecar_plan_mu_);
    plan->staged_files.push_back(staged_file);
    plan->num_staged_adds += num_staged;
  }
  std::shared_ptr<Snapshot> staged = without_files(std::move(snapshot));
  staged->elided_files_ += num_staged;
  staged->files_.clear();
  staged->files_.shrink_to_fit();
  return staged;
}

}  // namespace silt::delta
