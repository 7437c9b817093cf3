#include "silt/stream/source/delta_source.h"

#include <re2/re2.h>

#include <algorithm>
#include <limits>

#include "silt/base/json_writer.h"
#include "silt/base/logging.h"
#include "silt/base/strings.h"
#include "silt/delta/change_feed.h"
#include "silt/delta/log_cleanup.h"
#include "silt/delta/protocol.h"
#include "silt/expr/value/time_zone.h"
#include "silt/stream/json_internal.h"
#include "silt/stream/options_internal.h"
#include "silt/stream/source/delta_source_internal.h"

namespace silt::stream {

namespace {

constexpr int64_t kEndIndex = internal::kDeltaEndIndex;
// delta-spark's serialized index versions.
constexpr int64_t kSourceVersion1 = 1;
constexpr int64_t kSourceVersion3 = 3;
constexpr int64_t kBaseIndexV3 = -100;
constexpr int64_t kMetadataChangeIndex = -20;
constexpr int64_t kPostMetadataChangeIndex = -19;
constexpr int64_t kDefaultMaxFiles = internal::kDeltaDefaultMaxFiles;
constexpr int64_t kUnlimitedFiles = internal::kDeltaUnlimitedFiles;
// Parsed commits kept for later batches; beyond this they are re-read.
constexpr size_t kMaxCachedCommits = 512;

bool HasScheme(std::string_view path) { return path.find("://") != std::string_view::npos; }

// Spark's AdmissionLimits: a file is admitted while there is capacity
// before taking it, so the file that crosses a limit is still taken and a
// batch has at least one file; version boundaries are always admitted.
struct Admission {
  bool limited = false;
  int64_t files_to_take = 0;
  int64_t bytes_to_take = 0;

  bool Admit(bool is_file, int64_t size) {
    if (!limited || !is_file) return true;
    const bool admit = files_to_take > 0 && bytes_to_take > 0;
    files_to_take -= 1;
    bytes_to_take -= size;
    return admit;
  }
};

// Spark's DeltaSourceSnapshot order.
void SortSnapshotFiles(std::vector<delta::AddFile>* files) {
  std::sort(files->begin(), files->end(), [](const delta::AddFile& a, const delta::AddFile& b) {
    return a.modification_time != b.modification_time ? a.modification_time < b.modification_time
                                                      : a.path < b.path;
  });
}

// Spark's SchemaUtils.isReadCompatible(existing, read,
// forbidTightenNullability = true): `read` can read data written with
// `existing`.
bool NullabilityCompatible(bool existing_nullable, bool read_nullable) {
  return read_nullable || !existing_nullable;
}

bool StructReadCompatible(const columnar::DataType& existing, const columnar::DataType& read);

bool TypeReadCompatible(const columnar::DataType& existing, const columnar::DataType& read) {
  using columnar::TypeId;
  if (existing.id() == TypeId::kStruct && read.id() == TypeId::kStruct) {
    return StructReadCompatible(existing, read);
  }
  if (existing.id() == TypeId::kArray && read.id() == TypeId::kArray) {
    return NullabilityCompatible(existing.contains_null(), read.contains_null()) &&
           TypeReadCompatible(*existing.element_type(), *read.element_type());
  }
  if (existing.id() == TypeId::kMap && read.id() == TypeId::kMap) {
    return NullabilityCompatible(existing.value_contains_null(), read.value_contains_null()) &&
           TypeReadCompatible(*existing.key_type(), *read.key_type()) &&
           TypeReadCompatible(*existing.value_type(), *read.value_type());
  }
  if (existing.is_nested() || read.is_nested()) return false;
  return existing.Equals(read);
}

bool StructReadCompatible(const columnar::DataType& existing, const columnar::DataType& read) {
  // Every column of the data must be in the read schema (a column the
  // stream does not have would be lost).
  for (const columnar::Field& field : existing.fields()) {
    if (read.FieldIndex(field.name) < 0) return false;
  }
  for (const columnar::Field& read_field : read.fields()) {
    int idx = existing.FieldIndex(read_field.name);
    if (idx < 0) continue;  // a column the data lacks reads as null
    const columnar::Field& field = existing.field(idx);
    if (field.name != read_field.name ||
        !NullabilityCompatible(field.nullable, read_field.nullable) ||
        !TypeReadCompatible(*field.type, *read_field.type)) {
      return false;
    }
  }
  return true;
}

bool SamePartitionColumns(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return a == b;
}

// Spark's StructType.treeString, as its schema-change message prints it.
void AppendTree(const columnar::DataType& type, const std::string& prefix, std::string* out);

std::string TypeName(const columnar::DataType& type) {
  switch (type.id()) {
    case columnar::TypeId::kStruct: return "struct";
    case columnar::TypeId::kArray: return "array";
    case columnar::TypeId::kMap: return "map";
    default: return type.JsonTypeName();
  }
}

void AppendField(std::string_view name, const columnar::DataType& type, std::string_view suffix,
                 const std::string& prefix, std::string* out) {
  *out += prefix + "-- " + std::string(name) + ": " + TypeName(type) + std::string(suffix) + "\n";
  AppendTree(type, prefix + "    |", out);
}

void AppendTree(const columnar::DataType& type, const std::string& prefix, std::string* out) {
  switch (type.id()) {
    case columnar::TypeId::kStruct:
      for (const columnar::Field& field : type.fields()) {
        AppendField(field.name, *field.type,
                    field.nullable ? " (nullable = true)" : " (nullable = false)", prefix, out);
      }
      break;
    case columnar::TypeId::kArray:
      AppendField("element", *type.element_type(),
                  type.contains_null() ? " (containsNull = true)" : " (containsNull = false)",
                  prefix, out);
      break;
    case columnar::TypeId::kMap:
      AppendField("key", *type.key_type(), "", prefix, out);
      AppendField("value", *type.value_type(),
                  type.value_contains_null() ? " (valueContainsNull = true)"
                                             : " (valueContainsNull = false)",
                  prefix, out);
      break;
    default: break;
  }
}

std::string TreeString(const columnar::DataType& schema) {
  std::string out = "root\n";
  AppendTree(schema, " |", &out);
  return out;
}

// "<operation> (Map(k -> v, ...))", as delta-spark names a commit in its
// data-update error.
std::optional<std::string> DescribeOperation(const std::optional<std::string>& commit_info) {
  if (!commit_info) return std::nullopt;
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  if (parser.parse(*commit_info).get_object().get(object)) return std::nullopt;
  std::string_view operation;
  if (object.at_key("operation").get_string().get(operation)) return std::nullopt;
  std::string params = "Map(";
  simdjson::dom::object parameters;
  if (!object.at_key("operationParameters").get_object().get(parameters)) {
    bool first = true;
    for (auto [key, value] : parameters) {
      if (!first) params += ", ";
      first = false;
      params += std::string(key) + " -> ";
      std::string_view text;
      if (!value.get_string().get(text)) {
        params += std::string(text);
      } else {
        params += simdjson::minify(value);
      }
    }
  }
  params += ")";
  return std::string(operation) + " (" + params + ")";
}

}  // namespace

Status internal::DeltaMissingVersionError(int64_t expected, int64_t found,
                                          const std::string& table_path) {
  return Status::Corruption(
      "[DELTA_MISSING_FILES_UNEXPECTED_VERSION] The stream from your Delta table was "
      "expecting process data from version ",
      expected, ",\nbut the earliest available version in the _delta_log directory is ", found,
      ". The files\nin the transaction log may have been deleted due to log cleanup. In "
      "order to avoid losing\ndata, we recommend that you restart your stream with a new "
      "checkpoint location and to\nincrease your delta.logRetentionDuration setting, if you "
      "have explicitly set it below 30\ndays.\nIf you would like to ignore the missed data "
      "and continue your stream from where it left\noff, you can set the "
      ".option(\"failOnDataLoss\", \"false\") as part\nof your readStream statement. (Delta "
      "source ",
      table_path, ")");
}

std::string DeltaSourceOffset::ToJson() const {
  JsonWriter w;
  w.BeginObject();
  w.Member("sourceVersion", kSourceVersion1);
  w.Member("reservoirId", reservoir_id);
  w.Member("reservoirVersion", reservoir_version);
  w.Member("index", index);
  w.Member("isStartingVersion", is_initial_snapshot);
  w.EndObject();
  return w.Take();
}

Result<DeltaSourceOffset> DeltaSourceOffset::Parse(std::string_view json) {
  std::string where = "Delta source offset '" + std::string(json.substr(0, 300)) + "'";
  simdjson::dom::parser parser;
  Result<simdjson::dom::object> parsed = internal::ParseJsonObject(parser, json, where);
  if (!parsed.ok()) return Status::InvalidArgument(parsed.status().message());
  simdjson::dom::object object = *parsed;
  SILT_ASSIGN_OR_RETURN(std::optional<int64_t> source_version,
                        internal::GetOptionalInt(object, "sourceVersion", where));
  SILT_ASSIGN_OR_RETURN(std::optional<std::string> id,
                        internal::GetOptionalString(object, "reservoirId", where));
  SILT_ASSIGN_OR_RETURN(std::optional<int64_t> version,
                        internal::GetOptionalInt(object, "reservoirVersion", where));
  SILT_ASSIGN_OR_RETURN(std::optional<int64_t> index,
                        internal::GetOptionalInt(object, "index", where));
  bool starting = false;
  simdjson::dom::element flag;
  if (!object.at_key("isStartingVersion").get(flag) && flag.get_bool().get(starting)) {
    return Status::InvalidArgument(where, ": \"isStartingVersion\" must be true or false");
  }
  if (!source_version || !id || !version || !index) {
    return Status::InvalidArgument(
        where,
        ": expected sourceVersion, reservoirId, reservoirVersion and index (a "
        "DeltaSourceOffset)");
  }
  if (*source_version < kSourceVersion1 || *source_version == 2) {
    return Status::InvalidArgument(where, ": invalid sourceVersion ", *source_version);
  }
  if (*source_version > kSourceVersion3) {
    return Status::InvalidArgument(where, ": sourceVersion ", *source_version,
                                   " is newer than the highest silt reads (", kSourceVersion3, ")");
  }
  if (*index == kMetadataChangeIndex || *index == kPostMetadataChangeIndex) {
    return Status::NotSupported(where,
                                ": a schema-change index written by delta-spark's schema "
                                "tracking (schemaTrackingLocation), which silt does not support");
  }
  DeltaSourceOffset out;
  out.reservoir_id = std::move(*id);
  out.reservoir_version = *version;
  out.index = *index == kBaseIndexV3 ? kBaseIndex : *index;
  out.is_initial_snapshot = starting;
  if (out.index < kBaseIndex || out.reservoir_version < 0) {
    return Status::InvalidArgument(where, ": invalid reservoirVersion/index");
  }
  return out;
}

Result<DeltaSourceOptions> DeltaSourceOptions::FromSpec(const SourceSpec& spec) {
  internal::OptionReader reader(spec.options, spec.key_path + ".options");
  SILT_RETURN_NOT_OK(reader.CheckNames({
      .what = "Delta source",
      .honoured = {"path", "startingVersion", "startingTimestamp", "maxFilesPerTrigger",
                   "maxBytesPerTrigger", "ignoreDeletes", "ignoreChanges", "ignoreFileDeletion",
                   "skipChangeCommits", "excludeRegex", "failOnDataLoss", "readChangeFeed",
                   "readChangeData"},
      // Schema tracking is delta-spark's schema log; ending bounds are
      // batch-only options.
      .unsupported = {{"schemaTrackingLocation", ""},
                      {"schemaLocation", ""},
                      {"streamingSourceTrackingId", ""},
                      {"endingVersion", ""},
                      {"endingTimestamp", ""},
                      {"versionAsOf", ""},
                      {"timestampAsOf", ""}},
  }));
  if (!spec.schema_ddl.empty()) {
    return Status::InvalidArgument(spec.key_path,
                                   ".schema: the Delta source reads the table's own schema "
                                   "(Delta does not support specifying the schema at read time)");
  }
  DeltaSourceOptions out;
  std::optional<std::string> path = reader.Get("path");
  if (!path || path->empty()) {
    return Status::InvalidArgument(reader.KeyPath("path"), ": required (the Delta table to read)");
  }
  out.path = fs::NormalizePath(*path);
  if (std::optional<std::string> version = reader.Get("startingVersion")) {
    if (EqualsIgnoreCase(*version, "latest")) {
      out.starting_latest = true;
    } else {
      Result<std::optional<int64_t>> v = reader.GetInt("startingVersion", 0);
      if (!v.ok()) {
        return Status::InvalidArgument(reader.KeyPath("startingVersion"),
                                       ": must be 'latest' or a version >= 0, got '", *version,
                                       "'");
      }
      out.starting_version = **v;
    }
  }
  out.starting_timestamp = reader.Get("startingTimestamp");
  if (out.starting_timestamp && (out.starting_version || out.starting_latest)) {
    return Status::InvalidArgument(reader.KeyPath("startingTimestamp"),
                                   ": startingVersion and startingTimestamp cannot both be set");
  }
  SILT_ASSIGN_OR_RETURN(out.max_files_per_trigger, reader.GetInt("maxFilesPerTrigger", 1));
  if (std::optional<std::string> bytes = reader.Get("maxBytesPerTrigger")) {
    Result<int64_t> parsed = ParseByteSize(*bytes);
    if (!parsed.ok()) {
      return Status::InvalidArgument(reader.KeyPath("maxBytesPerTrigger"),
                                     ": must be a size configuration such as '10g', got '", *bytes,
                                     "'");
    }
    out.max_bytes_per_trigger = *parsed;
  }
  auto flag = [&](std::string_view name, bool* value) -> Status {
    SILT_ASSIGN_OR_RETURN(std::optional<bool> v, reader.GetBool(name));
    if (v) *value = *v;
    return Status::OK();
  };
  SILT_RETURN_NOT_OK(flag("ignoreDeletes", &out.ignore_deletes));
  SILT_RETURN_NOT_OK(flag("ignoreChanges", &out.ignore_changes));
  SILT_RETURN_NOT_OK(flag("ignoreFileDeletion", &out.ignore_file_deletion));
  SILT_RETURN_NOT_OK(flag("skipChangeCommits", &out.skip_change_commits));
  SILT_RETURN_NOT_OK(flag("failOnDataLoss", &out.fail_on_data_loss));
  bool legacy_change_feed = false;
  SILT_RETURN_NOT_OK(flag("readChangeFeed", &out.read_change_feed));
  SILT_RETURN_NOT_OK(flag("readChangeData", &legacy_change_feed));
  out.read_change_feed = out.read_change_feed || legacy_change_feed;
  out.exclude_regex = reader.Get("excludeRegex");
  if (out.exclude_regex) {
    re2::RE2 regex(*out.exclude_regex, re2::RE2::Quiet);
    if (!regex.ok()) {
      return Status::InvalidArgument(reader.KeyPath("excludeRegex"), ": invalid regex '",
                                     *out.exclude_regex, "': ", regex.error());
    }
  }
  return out;
}

DeltaSource::DeltaSource(DeltaSourceOptions options, const SourceContext& context)
    : options_(std::move(options)), context_(context) {}

DeltaSource::~DeltaSource() = default;

Result<std::unique_ptr<DeltaSource>> DeltaSource::Make(DeltaSourceOptions options,
                                                       const SourceContext& context) {
  auto source = std::unique_ptr<DeltaSource>(new DeltaSource(std::move(options), context));
  const std::string& path = source->options_.path;
  source->fs_ = context.data_fs;
  if (source->fs_ == nullptr) {
    SILT_ASSIGN_OR_RETURN(source->fs_, fs::FileSystemForPath(path));
  }
  SILT_ASSIGN_OR_RETURN(source->table_, delta::DeltaTable::Open(source->fs_, path));
  Result<delta::SnapshotPtr> latest = source->table_->LatestSnapshot();
  if (!latest.ok()) {
    if (latest.status().IsNotFound()) {
      return Status::NotFound("source.options.path: '", path, "' is not a Delta table");
    }
    return latest.status().WithContextParts("Delta source ", path);
  }
  source->init_snapshot_ = *latest;
  source->table_schema_ = source->init_snapshot_->schema();
  if (source->table_schema_ == nullptr || source->table_schema_->num_fields() == 0) {
    return Status::InvalidArgument("source.options.path: Delta table ", path,
                                   " has no schema: write data into it or create it with one");
  }
  source->schema_ = source->options_.read_change_feed
                        ? delta::ChangeFeedSchema(source->table_schema_)
                        : source->table_schema_;
  source->table_id_ = source->init_snapshot_->metadata().id;
  if (source->options_.exclude_regex) {
    source->exclude_ = std::make_unique<re2::RE2>(*source->options_.exclude_regex, re2::RE2::Quiet);
  }
  if (source->options_.starting_timestamp) {
    Result<expr::TimeZonePtr> zone = expr::TimeZone::Load(context.session_time_zone);
    if (!zone.ok()) {
      return Status::InvalidArgument("spark.sql.session.timeZone: ", zone.status().message());
    }
    if (!expr::ParseTimestampInZone(*source->options_.starting_timestamp, **zone)) {
      return Status::InvalidArgument("source.options.startingTimestamp: '",
                                     *source->options_.starting_timestamp,
                                     "' is not a valid timestamp");
    }
  }
  return source;
}

std::string DeltaSource::Description() const {
  // Hadoop's Path of a local table prints as file:/abs/path.
  return "DeltaSource[" + (HasScheme(options_.path) ? options_.path : "file:" + options_.path) +
         "]";
}

Result<DeltaSourceOffset> DeltaSource::ParseOwnOffset(std::string_view json) const {
  SILT_ASSIGN_OR_RETURN(DeltaSourceOffset offset, DeltaSourceOffset::Parse(json));
  if (offset.reservoir_id != table_id_) {
    return Status::InvalidArgument(
        "[DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE] The streaming query was reading from an "
        "unexpected Delta table (id = '",
        table_id_, "'). It used to read from another Delta table (id = '", offset.reservoir_id,
        "') according to checkpoint. This may happen when you changed the code to read from a "
        "new table or you deleted and re-created a table. Please revert your change or delete "
        "your streaming query checkpoint to restart from scratch. (source.options.path: ",
        options_.path, ")");
  }
  return offset;
}

Status DeltaSource::Restore(const std::optional<std::string>& last_planned) {
  restored_start_.reset();
  if (last_planned && *last_planned != "-" && !last_planned->empty()) {
    SILT_ASSIGN_OR_RETURN(restored_start_, ParseOwnOffset(*last_planned));
  }
  return Status::OK();
}

Result<std::optional<int64_t>> DeltaSource::StartingVersion() {
  if (starting_version_known_) return starting_version_;
  std::optional<int64_t> version;
  if (options_.starting_latest || options_.starting_version) {
    SILT_ASSIGN_OR_RETURN(std::vector<int64_t> versions, table_->ListVersions());
    const int64_t latest = versions.empty() ? init_snapshot_->version()
                                            : std::max(versions.back(), init_snapshot_->version());
    if (options_.starting_latest) {
      version = latest + 1;
    } else {
      const int64_t earliest = versions.empty() ? latest : versions.front();
      const int64_t wanted = *options_.starting_version;
      if (wanted < earliest || wanted > latest) {
        return Status::InvalidArgument(
            "source.options.startingVersion: Cannot time travel Delta table to version ", wanted,
            ". Available versions: [", earliest, ", ", latest, "].");
      }
      version = wanted;
    }
  } else if (options_.starting_timestamp) {
    SILT_ASSIGN_OR_RETURN(expr::TimeZonePtr zone, expr::TimeZone::Load(context_.session_time_zone));
    std::optional<int64_t> micros = expr::ParseTimestampInZone(*options_.starting_timestamp, *zone);
    if (!micros) {
      return Status::InvalidArgument("source.options.startingTimestamp: '",
                                     *options_.starting_timestamp, "' is not a valid timestamp");
    }
    // java.sql.Timestamp.getTime: milliseconds, rounded down.
    const int64_t wanted_ms = *micros >= 0 ? *micros / 1000 : -((-*micros + 999) / 1000);
    SILT_ASSIGN_OR_RETURN(delta::LogFileTimes times,
                          delta::ListLogFileTimes(fs_.get(), table_->log_path()));
    // delta-spark's getStartingVersionFromTimestamp: the first commit at or
    // after the timestamp (the earliest when it is before them all).
    for (const delta::LogFileTimes::Commit& commit : times.commits) {
      if (commit.monotonic_time_ms >= wanted_ms) {
        version = commit.version;
        break;
      }
    }
    if (!version) {
      const int64_t last_ms = times.commits.empty() ? 0 : times.commits.back().monotonic_time_ms;
      return Status::InvalidArgument(
          "source.options.startingTimestamp: [DELTA_TIMESTAMP_GREATER_THAN_COMMIT] The provided "
          "timestamp (",
          *options_.starting_timestamp, ") is after the latest version available to this table (",
          options_.path, "). Please use a timestamp before or at ",
          FormatTimestampMillisUtc(last_ms * 1000), ".");
    }
  }
  starting_version_ = version;
  starting_version_known_ = true;
  return starting_version_;
}

Result<std::shared_ptr<const delta::CommitActions>> DeltaSource::Commit(int64_t version) {
  auto it = commits_.find(version);
  if (it != commits_.end()) return it->second;
  Result<delta::CommitActions> read = table_->ReadCommit(version);
  if (!read.ok()) {
    return read.status().WithContextParts("Delta source ", options_.path);
  }
  auto commit = std::make_shared<const delta::CommitActions>(std::move(*read));
  if (commits_.size() < kMaxCachedCommits) commits_[version] = commit;
  return commit;
}

Result<const std::vector<delta::AddFile>*> DeltaSource::SnapshotFiles(int64_t version) {
  if (snapshot_files_version_ == version) return &snapshot_files_;
  delta::SnapshotPtr snapshot = init_snapshot_;
  if (version != init_snapshot_->version()) {
    Result<delta::SnapshotPtr> at = table_->SnapshotAt(version);
    if (!at.ok()) {
      return at.status().WithContextParts(
          "[DELTA_LOG_FILE_NOT_FOUND_FOR_STREAMING_SOURCE] the Delta source needs the snapshot of ",
          options_.path, " at version ", version,
          " and cannot rebuild it. If you never deleted it, it's likely your query is lagging "
          "behind. Please delete its checkpoint to restart from scratch. To avoid this happening "
          "again, you can update your retention policy of your Delta table");
    }
    snapshot = *at;
  }
  snapshot_files_ = snapshot->files();
  SortSnapshotFiles(&snapshot_files_);
  snapshot_files_version_ = version;
  return &snapshot_files_;
}

Status DeltaSource::CheckSchemaChange(const delta::Metadata& metadata, int64_t version) const {
  if (metadata.schema == nullptr) return Status::OK();
  const delta::Metadata& init = init_snapshot_->metadata();
  const bool compatible = StructReadCompatible(*metadata.schema, *table_schema_) &&
                          SamePartitionColumns(metadata.partition_columns, init.partition_columns);
  if (compatible) return Status::OK();
  const bool starting_options = options_.starting_version || options_.starting_latest ||
                                options_.starting_timestamp.has_value();
  return Status::Conflict(
      starting_options ? "[DELTA_SCHEMA_CHANGED_WITH_STARTING_OPTIONS]"
                       : "[DELTA_SCHEMA_CHANGED_WITH_VERSION]",
      " Detected schema change in version ", version,
      ":\nstreaming source schema: ", TreeString(*schema_), "\ndata file schema: ",
      TreeString(options_.read_change_feed ? *delta::ChangeFeedSchema(metadata.schema)
                                           : *metadata.schema),
      "\nPlease try restarting the query. If this issue repeats across query restarts without\n"
      "making progress, you have made an incompatible schema change and need to start your\n"
      "query from scratch using a new checkpoint directory.",
      starting_options
          ? Status::Concat(
                " If the issue persists after\nchanging to a new checkpoint directory, you may "
                "need to change the existing\n'startingVersion' or 'startingTimestamp' option to "
                "start from a version newer than\n",
                version, " with a new checkpoint directory.")
          : std::string(),
      " (Delta source ", options_.path, ")");
}

Result<bool> DeltaSource::ValidateCommit(const delta::CommitActions& commit,
                                         const std::optional<DeltaSourceOffset>& batch_end) {
  const int64_t version = commit.version;
  // A batch that ends at the start of this version does not read it.
  if (batch_end && batch_end->reservoir_version == version &&
      batch_end->index == DeltaSourceOffset::kBaseIndex) {
    return false;
  }
  const bool allow_changes =
      options_.ignore_changes || options_.ignore_file_deletion || options_.skip_change_commits;
  const bool allow_deletes = allow_changes || options_.ignore_deletes;
  bool seen_add = false;
  for (const delta::AddFile& add : commit.adds) seen_add = seen_add || add.data_change;
  std::optional<std::string> removed;
  for (const delta::RemoveFile& remove : commit.removes) {
    if (remove.data_change) {
      removed = remove.path;
      break;
    }
  }
  if (commit.metadata) SILT_RETURN_NOT_OK(CheckSchemaChange(*commit.metadata, version));
  if (commit.protocol) {
    Status gate = delta::CheckReadSupported(
        *commit.protocol, commit.metadata ? *commit.metadata : init_snapshot_->metadata());
    if (!gate.ok()) {
      return gate.WithContextParts("Delta source ", options_.path, " version ", version);
    }
  }
  if (!removed) return false;
  if (seen_add && !allow_changes) {
    std::string what = DescribeOperation(commit.commit_info_json).value_or(*removed);
    return Status::NotSupported(
        "[DELTA_SOURCE_TABLE_IGNORE_CHANGES] Detected a data update (for example ", what,
        ") in the source table at version ", version,
        ". This is currently not supported. If this is going to happen regularly and you are "
        "okay to skip changes, set the option 'skipChangeCommits' to 'true'. If you would like "
        "the data update to be reflected, please restart this query with a fresh checkpoint "
        "directory. The source table can be found at path ",
        options_.path, ".");
  }
  if (!seen_add && !allow_deletes) {
    return Status::NotSupported(
        "[DELTA_SOURCE_IGNORE_DELETE] Detected deleted data (for example ", *removed,
        ") from streaming source at version ", version,
        ". This is currently not supported. If you'd like to ignore deletes, set the option "
        "'ignoreDeletes' to 'true'. The source table can be found at path ",
        options_.path, ".");
  }
  return options_.skip_change_commits;
}

Status DeltaSource::WalkChanges(int64_t from_version, int64_t from_index, bool initial,
                                const std::optional<DeltaSourceOffset>& bound,
                                const std::optional<DeltaSourceOffset>& batch_end,
                                const ChangeVisitor& visit) {
  bool stopped = false;
  // Spark's filter (after the start) and takeWhile (up to the bound), then
  // the caller's visitor. Returns false once the walk must stop.
  auto emit = [&](const Change& change) -> Result<bool> {
    if (!(change.version > from_version || change.index > from_index)) return true;
    if (bound && !(change.version < bound->reservoir_version ||
                   (change.version == bound->reservoir_version && change.index <= bound->index))) {
      stopped = true;
      return false;
    }
    SILT_ASSIGN_OR_RETURN(bool more, visit(change));
    if (!more) stopped = true;
    return more;
  };
  int64_t first_commit = from_version;
  if (initial) {
    SILT_ASSIGN_OR_RETURN(const std::vector<delta::AddFile>* files, SnapshotFiles(from_version));
    SILT_ASSIGN_OR_RETURN(bool more,
                          emit({from_version, DeltaSourceOffset::kBaseIndex, ChangeKind::kBase}));
    for (size_t file_idx = 0; more && file_idx < files->size(); ++file_idx) {
      SILT_ASSIGN_OR_RETURN(more, emit({from_version, static_cast<int64_t>(file_idx),
                                        ChangeKind::kFile, &(*files)[file_idx]}));
    }
    if (more) {
      SILT_ASSIGN_OR_RETURN(more, emit({from_version, kEndIndex, ChangeKind::kEnd}));
    }
    if (!more) return Status::OK();
    first_commit = from_version + 1;
  }
  SILT_ASSIGN_OR_RETURN(std::vector<int64_t> versions, table_->ListVersions());
  int64_t last_seen = first_commit - 1;
  for (int64_t version : versions) {
    if (version < first_commit) continue;
    if (options_.fail_on_data_loss && version > last_seen + 1) {
      return internal::DeltaMissingVersionError(last_seen + 1, version, options_.path);
    }
    last_seen = version;
    SILT_ASSIGN_OR_RETURN(std::shared_ptr<const delta::CommitActions> commit, Commit(version));
    SILT_ASSIGN_OR_RETURN(bool skip, ValidateCommit(*commit, batch_end));
    SILT_ASSIGN_OR_RETURN(bool more,
                          emit({version, DeltaSourceOffset::kBaseIndex, ChangeKind::kBase}));
    int64_t index = 0;
    if (!skip) {
      for (size_t add_idx = 0; more && add_idx < commit->adds.size(); ++add_idx) {
        const delta::AddFile& add = commit->adds[add_idx];
        if (!add.data_change) continue;
        SILT_ASSIGN_OR_RETURN(more, emit({version, index++, ChangeKind::kFile, &add}));
      }
    }
    if (more) {
      SILT_ASSIGN_OR_RETURN(more, emit({version, kEndIndex, ChangeKind::kEnd}));
    }
    if (!more || stopped) return Status::OK();
  }
  return Status::OK();
}

Result<std::optional<DeltaSourceOffset>> DeltaSource::NextOffset(
    const std::optional<DeltaSourceOffset>& start, bool limited,
    const std::optional<DeltaSourceOffset>& bound) {
  int64_t from_version = 0;
  int64_t from_index = DeltaSourceOffset::kBaseIndex;
  bool initial = false;
  if (start) {
    from_version = start->reservoir_version;
    from_index = start->index;
    initial = start->is_initial_snapshot;
  } else {
    SILT_ASSIGN_OR_RETURN(std::optional<int64_t> starting, StartingVersion());
    if (starting) {
      from_version = *starting;
    } else {
      from_version = init_snapshot_->version();
      initial = true;
    }
    if (from_version < 0) return std::optional<DeltaSourceOffset>();
  }
  if (options_.read_change_feed) {
    return NextCdcOffset(start, from_version, from_index, initial, limited, bound);
  }
  Admission admission;
  admission.limited = limited;
  if (limited) {
    admission.files_to_take = options_.max_files_per_trigger.value_or(
        options_.max_bytes_per_trigger ? kUnlimitedFiles : kDefaultMaxFiles);
    admission.bytes_to_take =
        options_.max_bytes_per_trigger.value_or(std::numeric_limits<int64_t>::max());
  }
  std::optional<Change> last;
  SILT_RETURN_NOT_OK(WalkChanges(from_version, from_index, initial, bound, std::nullopt,
                                 [&](const Change& change) -> Result<bool> {
                                   const bool is_file = change.kind == ChangeKind::kFile;
                                   if (!admission.Admit(is_file, is_file ? change.add->size : 0)) {
                                     return false;
                                   }
                                   last = change;
                                   last->add = nullptr;
                                   return true;
                                 }));
  if (!last) return start;
  return std::optional<DeltaSourceOffset>(OffsetAfter(
      last->version, last->index, last->kind == ChangeKind::kEnd, from_version, initial));
}

DeltaSourceOffset DeltaSource::OffsetAfter(int64_t version, int64_t index, bool is_end,
                                           int64_t from_version, bool initial) const {
  DeltaSourceOffset out;
  out.reservoir_id = table_id_;
  if (is_end) {
    // After the last file of a version: the start of the next one.
    out.reservoir_version = version + 1;
    out.index = DeltaSourceOffset::kBaseIndex;
    out.is_initial_snapshot = false;
  } else {
    out.reservoir_version = version;
    out.index = index;
    out.is_initial_snapshot = version == from_version && initial;
  }
  return out;
}

Status DeltaSource::PrepareForAvailableNow() {
  available_now_ = true;
  SILT_ASSIGN_OR_RETURN(available_now_end_, NextOffset(restored_start_, false, std::nullopt));
  return Status::OK();
}

Result<std::optional<std::string>> DeltaSource::LatestOffset(
    const std::optional<std::string>& start_json, const ReadLimit& limit) {
  std::optional<DeltaSourceOffset> start;
  if (start_json && *start_json != "-" && !start_json->empty()) {
    SILT_ASSIGN_OR_RETURN(start, ParseOwnOffset(*start_json));
  }
  if (available_now_ && !available_now_end_) return std::optional<std::string>();
  SILT_ASSIGN_OR_RETURN(std::optional<DeltaSourceOffset> next,
                        NextOffset(start, !limit.all_available, available_now_end_));
  // Commits before the planned start are never read again.
  if (start) commits_.erase(commits_.begin(), commits_.lower_bound(start->reservoir_version));
  if (!next || (start && *next == *start)) return std::optional<std::string>();
  return std::optional<std::string>(next->ToJson());
}

Result<std::unique_ptr<BatchReader>> DeltaSource::GetBatch(
    const std::optional<std::string>& start_json, const std::string& end_json) {
  SILT_ASSIGN_OR_RETURN(DeltaSourceOffset end, ParseOwnOffset(end_json));
  std::optional<DeltaSourceOffset> start;
  if (start_json && *start_json != "-" && !start_json->empty()) {
    SILT_ASSIGN_OR_RETURN(start, ParseOwnOffset(*start_json));
  }
  if (start && *start == end) return std::unique_ptr<BatchReader>(new internal::EmptyBatchReader());
  // Spark's extractStartingState.
  int64_t from_version = 0;
  int64_t from_index = DeltaSourceOffset::kBaseIndex;
  bool initial = false;
  if (start) {
    from_version = start->reservoir_version;
    from_index = start->index;
    initial = start->is_initial_snapshot;
  } else {
    SILT_ASSIGN_OR_RETURN(std::optional<int64_t> starting, StartingVersion());
    if (starting) {
      from_version = *starting;
    } else if (end.is_initial_snapshot) {
      from_version = end.reservoir_version;
      initial = true;
    } else {
      if (end.reservoir_version <= 0) {
        return Status::InvalidArgument("Delta source ", options_.path,
                                       ": invalid reservoirVersion in the first end offset ",
                                       end_json);
      }
      // The snapshot just before the end's version, read whole: its index
      // positions are still those the end offset counted.
      from_version = end.reservoir_version - 1;
      initial = true;
    }
  }
  if (options_.read_change_feed) return GetCdcBatch(from_version, from_index, initial, end);
  std::vector<delta::AddFile> files;
  SILT_RETURN_NOT_OK(
      WalkChanges(from_version, from_index, initial, end, end, [&](const Change& change) {
        if (change.kind != ChangeKind::kFile) return Result<bool>(true);
        if (exclude_ != nullptr && re2::RE2::PartialMatch(change.add->path, *exclude_)) {
          return Result<bool>(true);
        }
        files.push_back(*change.add);
        files.back().stats.reset();
        return Result<bool>(true);
      }));
  if (files.empty()) return std::unique_ptr<BatchReader>(new internal::EmptyBatchReader());
  int64_t deleted_rows = 0;
  for (const delta::AddFile& add : files) {
    if (add.deletion_vector) deleted_rows += add.deletion_vector->cardinality;
  }
  Result<std::unique_ptr<delta::TableScan>> scan =
      delta::TableScan::Make(fs_, options_.path, init_snapshot_->WithFiles(std::move(files)));
  if (!scan.ok()) return scan.status().WithContextParts("Delta source ", options_.path);
  return std::unique_ptr<BatchReader>(
      new internal::RechunkedBatchReader<delta::TableScan>(std::move(*scan), deleted_rows));
}

}  // namespace silt::stream
