#include "silt/delta/change_feed.h"

#include <simdjson.h>

#include <algorithm>
#include <deque>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "silt/columnar/builder.h"
#include "silt/delta/column_mapping.h"
#include "silt/delta/deletion_vector.h"
#include "silt/delta/history.h"
#include "silt/delta/partition_utils.h"
#include "silt/delta/table_properties.h"

namespace silt::delta {

namespace {

using columnar::ColumnPtr;
using columnar::RecordBatch;
using columnar::RecordBatchPtr;

constexpr const char* kChangeType = "_change_type";

}  // namespace

columnar::SchemaPtr ChangeFeedSchema(const columnar::SchemaPtr& table_schema) {
  std::vector<columnar::Field> fields = table_schema->fields();
  fields.push_back({kChangeType, columnar::DataType::String(), true});
  fields.push_back({"_commit_version", columnar::DataType::Long(), true});
  fields.push_back({"_commit_timestamp", columnar::DataType::Timestamp(), true});
  return columnar::DataType::Struct(std::move(fields));
}

bool ChangeDataFeedEnabled(const Metadata& metadata) {
  std::optional<std::string> v =
      GetTableProperty(metadata.configuration, "delta.enableChangeDataFeed");
  if (!v) return false;
  std::string lower = *v;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "true";
}

Status MissingChangeDataError(int64_t start, int64_t end, int64_t version,
                              const std::string& table_path) {
  return Status::InvalidArgument(
      "[DELTA_MISSING_CHANGE_DATA] Error getting change data for range [", start, " , ", end,
      "] as change data was not recorded for version [", version,
      "]. If you've enabled change data feed on this table, use `DESCRIBE HISTORY` to see "
      "when it was first enabled. Otherwise, to start recording change data, use `ALTER "
      "TABLE table_name SET TBLPROPERTIES (delta.enableChangeDataFeed=true)`. (Delta table ",
      table_path, ")");
}

namespace {

ColumnPtr ConstantString(std::string_view value, int64_t rows) {
  columnar::ColumnBuilder b(columnar::DataType::String());
  b.Reserve(rows);
  for (int64_t i = 0; i < rows; ++i) b.AppendString(value);
  return b.Finish();
}

ColumnPtr ConstantInt64(const columnar::TypePtr& type, int64_t value, int64_t rows) {
  columnar::ColumnBuilder b(type);
  b.Reserve(rows);
  for (int64_t i = 0; i < rows; ++i) b.Append<int64_t>(value);
  return b.Finish();
}

// A file action as the AddFile a scan reads.
AddFile FileOf(const std::string& path, const PartitionValues& partition_values,
               const std::optional<DeletionVectorDescriptor>& dv) {
  AddFile f;
  f.path = path;
  f.partition_values = partition_values;
  f.deletion_vector = dv;
  return f;
}

}  // namespace

namespace {

using columnar::DataType;
using columnar::TypeId;

// {physical path: logical name} of every struct field at any depth, the
// path going through array elements and map keys and values as
// "element", "key", "value". Without column mapping the physical name is
// the logical one (what enabling column mapping assigns).
void CollectPhysicalPaths(const DataType& type, bool mapped, std::vector<std::string>* prefix,
                          std::map<std::vector<std::string>, std::string>* out) {
  switch (type.id()) {
    case TypeId::kStruct:
      for (const columnar::Field& field : type.fields()) {
        std::string physical = mapped ? PhysicalName(field) : field.name;
        if (physical.empty()) physical = field.name;
        prefix->push_back(std::move(physical));
        (*out)[*prefix] = field.name;
        CollectPhysicalPaths(*field.type, mapped, prefix, out);
        prefix->pop_back();
      }
      return;
    case TypeId::kArray:
      prefix->push_back("element");
      CollectPhysicalPaths(*type.element_type(), mapped, prefix, out);
      prefix->pop_back();
      return;
    case TypeId::kMap:
      prefix->push_back("key");
      CollectPhysicalPaths(*type.key_type(), mapped, prefix, out);
      prefix->back() = "value";
      CollectPhysicalPaths(*type.value_type(), mapped, prefix, out);
      prefix->pop_back();
      return;
    default: return;
  }
}

bool MappingOn(const Metadata& metadata) {
  Result<ColumnMappingMode> mode = ColumnMappingModeOf(metadata.configuration);
  return !mode.ok() || *mode != ColumnMappingMode::kNone;
}

// delta-spark's DeltaColumnMapping.hasNoColumnMappingSchemaChanges: data
// written under `old_md` reads by physical names under `new_md`.
bool NoColumnMappingSchemaChange(const Metadata& new_md, const Metadata& old_md) {
  const bool new_on = MappingOn(new_md), old_on = MappingOn(old_md);
  if (!new_on) return !old_on;  // reading across a downgrade is refused
  if (new_md.partition_columns != old_md.partition_columns) return false;
  std::map<std::vector<std::string>, std::string> now, before;
  std::vector<std::string> prefix;
  if (new_md.schema != nullptr) CollectPhysicalPaths(*new_md.schema, true, &prefix, &now);
  if (old_md.schema != nullptr) CollectPhysicalPaths(*old_md.schema, old_on, &prefix, &before);
  for (const auto& [path, name] : before) {
    auto it = now.find(path);
    if (it == now.end() || it->second != name) return false;  // dropped or renamed
  }
  return true;
}

bool TypeReadCompatible(const DataType& existing, const DataType& read);

// delta-spark's SchemaUtils.isReadCompatible with forbidTightenNullability
// and exact names: every existing field is in `read` (case-insensitively,
// with the same spelling), no nullable field became non-nullable, types
// unchanged; new fields are fine.
bool StructReadCompatible(const DataType& existing, const DataType& read) {
  for (const columnar::Field& field : existing.fields()) {
    const int index = read.FieldIndex(field.name);
    if (index < 0) return false;
    const columnar::Field& now = read.field(index);
    if (now.name != field.name) return false;
    if (field.nullable && !now.nullable) return false;
    if (!TypeReadCompatible(*field.type, *now.type)) return false;
  }
  return true;
}

bool TypeReadCompatible(const DataType& existing, const DataType& read) {
  if (existing.id() == TypeId::kNull) return true;
  if (existing.id() != read.id()) return false;
  switch (existing.id()) {
    case TypeId::kStruct: return StructReadCompatible(existing, read);
    case TypeId::kArray:
      return (read.contains_null() || !existing.contains_null()) &&
             TypeReadCompatible(*existing.element_type(), *read.element_type());
    case TypeId::kMap:
      return (read.value_contains_null() || !existing.value_contains_null()) &&
             TypeReadCompatible(*existing.key_type(), *read.key_type()) &&
             TypeReadCompatible(*existing.value_type(), *read.value_type());
    default: return existing.Equals(read);
  }
}

}  // namespace

Status CheckChangeFeedReadSchema(const Metadata& read, int64_t read_version,
                                 const Metadata& metadata, int64_t metadata_version,
                                 bool is_schema_change, int64_t start, int64_t end,
                                 const std::string& table_path) {
  // The read schema is never older than the metadata here (the ending
  // version's schema), so the metadata's data must read with it.
  const bool compatible = NoColumnMappingSchemaChange(read, metadata) &&
                          (metadata.schema == nullptr || read.schema == nullptr ||
                           StructReadCompatible(*metadata.schema, *read.schema));
  if (compatible) return Status::OK();
  const std::string schema_json = read.schema != nullptr ? read.schema_string : "";
  if (is_schema_change) {
    return Status::NotSupported(
        "[DELTA_CHANGE_DATA_FEED_INCOMPATIBLE_SCHEMA_CHANGE] Retrieving table changes between "
        "version ",
        start, " and ", end,
        " failed because of an incompatible schema change. Your read schema is ", schema_json,
        " at version ", read_version, ", but we found an incompatible schema change at version ",
        metadata_version, ". If possible, please query table changes separately from version ",
        start, " to ", metadata_version, " - 1, and from version ", metadata_version, " to ", end,
        ". (Delta table ", table_path, ")");
  }
  return Status::NotSupported(
      "[DELTA_CHANGE_DATA_FEED_INCOMPATIBLE_DATA_SCHEMA] Retrieving table changes between "
      "version ",
      start, " and ", end, " failed because of an incompatible data schema. Your read schema is ",
      schema_json, " at version ", read_version,
      ", but we found an incompatible data schema at version ", metadata_version,
      " (a column renamed or dropped since; the changes are read with the ending version's "
      "schema). (Delta table ",
      table_path, ")");
}

bool IsNoChangeMerge(const std::optional<std::string>& commit_info_json) {
  if (!commit_info_json) return false;
  simdjson::dom::parser parser;
  simdjson::dom::object info;
  if (parser.parse(*commit_info_json).get_object().get(info)) return false;
  std::string_view operation;
  if (info.at_key("operation").get_string().get(operation) || operation != "MERGE") return false;
  simdjson::dom::object metrics;
  if (info.at_key("operationMetrics").get_object().get(metrics)) return false;
  // A missing metric means "not known to have changed nothing".
  for (const char* name :
       {"numTargetRowsInserted", "numTargetRowsUpdated", "numTargetRowsDeleted"}) {
    std::string_view value;
    if (metrics.at_key(name).get_string().get(value) || value != "0") return false;
  }
  return true;
}

struct ChangeFeedReader::State {
  DeltaTable* table = nullptr;
  SnapshotPtr end_snapshot;
  columnar::SchemaPtr schema;          // the output
  columnar::SchemaPtr cdc_schema;      // table columns + _change_type
  std::vector<CommitChanges> commits;  // the range, in order
  size_t next_commit = 0;
  std::deque<RecordBatchPtr> pending;

  // Every row of `file` read with `schema` (the table's, or cdc_schema).
  Result<RecordBatchPtr> ReadFile(const AddFile& file, const columnar::SchemaPtr& read_schema) {
    SnapshotPtr one = end_snapshot->WithFilesAndSchema({file}, read_schema);
    SILT_ASSIGN_OR_RETURN(auto scan,
                          TableScan::Make(table->file_system(), table->path(), one, ScanOptions{}));
    std::vector<RecordBatchPtr> batches;
    while (true) {
      SILT_ASSIGN_OR_RETURN(RecordBatchPtr batch, scan->Next());
      if (batch == nullptr) break;
      if (batch->num_rows > 0) batches.push_back(std::move(batch));
    }
    if (batches.empty()) return RecordBatchPtr();
    return columnar::ConcatBatches(batches);
  }

  // `rows` (table columns, or table columns + _change_type when
  // `change_type` is empty) with the change columns appended.
  void Emit(const RecordBatchPtr& rows, std::string_view change_type, const CommitChanges& c) {
    if (rows == nullptr || rows->num_rows == 0) return;
    auto out = std::make_shared<RecordBatch>();
    out->schema = schema;
    out->num_rows = rows->num_rows;
    out->columns = rows->columns;
    if (!change_type.empty()) out->columns.push_back(ConstantString(change_type, rows->num_rows));
    out->columns.push_back(ConstantInt64(columnar::DataType::Long(), c.version, rows->num_rows));
    out->columns.push_back(
        ConstantInt64(columnar::DataType::Timestamp(), c.timestamp_ms * 1000, rows->num_rows));
    pending.push_back(std::move(out));
  }

  void SetSchemas() {
    std::vector<columnar::Field> fields = end_snapshot->schema()->fields();
    // Column-mapped change data files hold _change_type under its own name.
    fields.push_back(HiddenColumn(kChangeType, columnar::DataType::String()));
    cdc_schema = columnar::DataType::Struct(std::move(fields));
    schema = ChangeFeedSchema(end_snapshot->schema());
  }

  Status Expand(const CommitChanges& c) {
    if (!c.cdc_files.empty()) {
      for (const AddCdcFile& cdc : c.cdc_files) {
        SILT_ASSIGN_OR_RETURN_CTX(
            RecordBatchPtr rows,
            ReadFile(FileOf(cdc.path, cdc.partition_values, std::nullopt), cdc_schema),
            "reading change data file ", cdc.path, " of version ", c.version);
        Emit(rows, "", c);
      }
      return Status::OK();
    }
    std::map<std::string, const RemoveFile*> removed;
    for (const RemoveFile& r : c.removes) removed[r.path] = &r;
    std::map<std::string, bool> paired;
    for (const AddFile& add : c.adds) {
      auto it = removed.find(add.path);
      if (it == removed.end()) {
        SILT_ASSIGN_OR_RETURN_CTX(RecordBatchPtr rows, ReadFile(add, end_snapshot->schema()),
                                  "reading data file ", add.path, " of version ", c.version);
        Emit(rows, "insert", c);
        continue;
      }
      // The same data file with a new deletion vector.
      paired[add.path] = true;
      const RemoveFile& remove = *it->second;
      std::vector<uint64_t> before, after;
      fs::FileSystem* fs = table->file_system().get();
      if (remove.deletion_vector) {
        SILT_ASSIGN_OR_RETURN(before,
                              LoadDeletionVector(fs, table->path(), *remove.deletion_vector));
      }
      if (add.deletion_vector) {
        SILT_ASSIGN_OR_RETURN(after, LoadDeletionVector(fs, table->path(), *add.deletion_vector));
      }
      std::vector<uint64_t> deleted, revived;
      std::set_difference(after.begin(), after.end(), before.begin(), before.end(),
                          std::back_inserter(deleted));
      std::set_difference(before.begin(), before.end(), after.begin(), after.end(),
                          std::back_inserter(revived));
      if (deleted.empty() && revived.empty()) continue;
      SILT_ASSIGN_OR_RETURN_CTX(
          RecordBatchPtr all,
          ReadFile(FileOf(add.path, add.partition_values, std::nullopt), end_snapshot->schema()),
          "reading data file ", add.path, " of version ", c.version);
      if (all == nullptr) continue;
      auto take = [&](const std::vector<uint64_t>& rows) {
        std::vector<int64_t> indices;
        for (uint64_t r : rows) {
          if (static_cast<int64_t>(r) < all->num_rows) indices.push_back(static_cast<int64_t>(r));
        }
        return columnar::TakeBatch(*all, indices);
      };
      if (!deleted.empty()) Emit(take(deleted), "delete", c);
      if (!revived.empty()) Emit(take(revived), "insert", c);
    }
    for (const RemoveFile& r : c.removes) {
      if (paired.count(r.path) > 0) continue;
      SILT_ASSIGN_OR_RETURN_CTX(
          RecordBatchPtr rows,
          ReadFile(FileOf(r.path, r.partition_values, r.deletion_vector), end_snapshot->schema()),
          "reading removed data file ", r.path, " of version ", c.version);
      Emit(rows, "delete", c);
    }
    return Status::OK();
  }
};

ChangeFeedReader::ChangeFeedReader(std::unique_ptr<State> state) : state_(std::move(state)) {}
ChangeFeedReader::~ChangeFeedReader() = default;

const columnar::SchemaPtr& ChangeFeedReader::schema() const { return state_->schema; }

Result<std::unique_ptr<ChangeFeedReader>> ChangeFeedReader::Make(DeltaTable* table,
                                                                 const ChangeFeedOptions& options) {
  auto state = std::make_unique<State>();
  state->table = table;
  SILT_ASSIGN_OR_RETURN(SnapshotPtr latest, table->LatestSnapshot());
  const int64_t start = options.starting_version;
  if (start < 0) {
    return Status::InvalidArgument("the starting version of the change data feed of ",
                                   table->path(), " is negative (", start, ")");
  }
  if (start > latest->version()) {
    return Status::InvalidArgument(
        "Provided Start version(", start,
        ") for reading change data is invalid. Start version cannot be greater than the latest "
        "version of the table(",
        latest->version(), ") (Delta table ", table->path(), ")");
  }
  const int64_t end =
      std::min(options.ending_version.value_or(latest->version()), latest->version());
  if (end < start) {
    return Status::InvalidArgument("[DELTA_INVALID_CDC_RANGE] CDC range from start ", start,
                                   " to end ", end, " was invalid. End cannot be before start ",
                                   "(Delta table ", table->path(), ")");
  }
  if (end == latest->version()) {
    state->end_snapshot = latest;
  } else {
    SILT_ASSIGN_OR_RETURN(state->end_snapshot, table->SnapshotAt(end));
  }
  std::optional<Metadata> metadata;
  if (start > 0) {
    SILT_ASSIGN_OR_RETURN(SnapshotPtr before, table->SnapshotAt(start - 1));
    metadata = before->metadata();
  }
  // delta-spark checks the schemas of a column-mapped table's range
  // against the read (ending version's) schema; a table that never had
  // column mapping keeps silt's reading.
  const Metadata& read = state->end_snapshot->metadata();
  bool check_schemas = MappingOn(read) || MappingOn(latest->metadata());
  std::optional<Metadata> start_metadata;
  std::vector<CommitActions> commits;
  for (int64_t v = start; v <= end; ++v) {
    SILT_ASSIGN_OR_RETURN(CommitActions c, table->ReadCommit(v));
    if (c.metadata) metadata = c.metadata;
    if (!metadata || !ChangeDataFeedEnabled(*metadata)) {
      return MissingChangeDataError(start, end, v, table->path());
    }
    if (v == start) {
      start_metadata = metadata;
      check_schemas = check_schemas || MappingOn(*metadata);
    } else if (c.metadata && check_schemas) {
      SILT_RETURN_NOT_OK(
          CheckChangeFeedReadSchema(read, end, *c.metadata, v, true, start, end, table->path()));
    }
    commits.push_back(std::move(c));
  }
  if (check_schemas && start_metadata) {
    SILT_RETURN_NOT_OK(CheckChangeFeedReadSchema(read, end, *start_metadata, start, false, start,
                                                 end, table->path()));
  }
  SILT_ASSIGN_OR_RETURN(std::vector<HistoryEntry> history, ReadHistory(table));
  std::map<int64_t, int64_t> timestamps_ms;
  for (const HistoryEntry& h : history) timestamps_ms[h.version] = h.timestamp_ms;
  for (CommitActions& c : commits) {
    CommitChanges changes;
    changes.version = c.version;
    changes.timestamp_ms = timestamps_ms[c.version];
    if (!c.cdc_files.empty()) {
      changes.cdc_files = std::move(c.cdc_files);
    } else if (!IsNoChangeMerge(c.commit_info_json)) {
      for (AddFile& add : c.adds) {
        if (add.data_change) changes.adds.push_back(std::move(add));
      }
      for (RemoveFile& remove : c.removes) {
        if (remove.data_change) changes.removes.push_back(std::move(remove));
      }
    }
    state->commits.push_back(std::move(changes));
  }

  state->SetSchemas();
  return std::unique_ptr<ChangeFeedReader>(new ChangeFeedReader(std::move(state)));
}

std::unique_ptr<ChangeFeedReader> ChangeFeedReader::MakeForChanges(
    DeltaTable* table, SnapshotPtr read_snapshot, std::vector<CommitChanges> changes) {
  auto state = std::make_unique<State>();
  state->table = table;
  state->end_snapshot = std::move(read_snapshot);
  state->commits = std::move(changes);
  state->SetSchemas();
  return std::unique_ptr<ChangeFeedReader>(new ChangeFeedReader(std::move(state)));
}

Result<RecordBatchPtr> ChangeFeedReader::Next() {
  State& s = *state_;
  while (s.pending.empty() && s.next_commit < s.commits.size()) {
    SILT_RETURN_NOT_OK(s.Expand(s.commits[s.next_commit]));
    ++s.next_commit;
  }
  if (s.pending.empty()) return RecordBatchPtr();
  RecordBatchPtr out = std::move(s.pending.front());
  s.pending.pop_front();
  return out;
}

}  // namespace silt::delta
