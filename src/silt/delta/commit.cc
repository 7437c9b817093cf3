// Optimistic commits (PROTOCOL.md "Optimistic Concurrency Control",
// FORMATS.md A11/A12): write <version>.json with put-if-absent; when another
// writer got there first, read what it committed, decide whether our actions
// still apply on top of it, and retry at the next version.

#include <simdjson.h>

#include <set>

#include "silt/base/clock.h"
#include "silt/base/json_writer.h"
#include "silt/base/logging.h"
#include "silt/base/utf8.h"
#include "silt/base/uuid.h"
#include "silt/base/version.h"
#include "silt/delta/checkpoint_writer.h"
#include "silt/delta/data_skipping.h"
#include "silt/delta/partition_utils.h"
#include "silt/delta/post_commit.h"
#include "silt/delta/protocol.h"
#include "silt/delta/row_tracking.h"
#include "silt/delta/stats.h"
#include "silt/delta/table.h"
#include "silt/delta/table_properties.h"

namespace silt::delta {

using post_commit_internal::PostCommitAdvanced;
using post_commit_internal::PostCommitInline;

namespace {

// Bounded so that a writer that keeps losing (a hot table, or a bug in
// another writer) eventually reports it instead of spinning. Every lost
// attempt means another writer made progress, so a busy table with a few
// concurrent appenders needs more than a handful.
constexpr int kMaxCommitAttempts = 100;

int64_t NowMillis() { return SystemClock().NowMicros() / 1000; }

// A string field of a winner's commitInfo, for messages and for recognising
// our own commit; empty when absent.
std::string CommitInfoField(const CommitActions& commit, std::string_view key) {
  if (!commit.commit_info_json) return "";
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  const std::string& text = *commit.commit_info_json;
  if (parser.parse(text.data(), text.size(), true).get(root) != simdjson::SUCCESS) return "";
  std::string_view value;
  if (root[key].get_string().get(value) != simdjson::SUCCESS) return "";
  return std::string(value);
}

std::string DescribeWinner(const CommitActions& winner) {
  std::string operation = CommitInfoField(winner, "operation");
  if (operation.empty()) return Status::Concat("version ", winner.version);
  return Status::Concat("version ", winner.version, " (", operation, ")");
}

// `in_commit_timestamp`, when set, is written first and as the timestamp too
// (delta-spark's order when in-commit timestamps are enabled).
std::string BuildCommitInfo(const CommitRequest& request, std::optional<int64_t> read_version,
                            const std::string& txn_id, int64_t now_ms,
                            std::optional<int64_t> in_commit_timestamp) {
  JsonWriter w;
  w.BeginObject();
  if (in_commit_timestamp) {
    w.Member("inCommitTimestamp", *in_commit_timestamp);
    now_ms = *in_commit_timestamp;
  }
  w.Member("timestamp", now_ms);
  w.Member("operation", request.operation);
  w.Key("operationParameters");
  w.BeginObject();
  for (const auto& [key, value] : request.operation_parameters) {
    w.Member(key, value);
  }
  for (const auto& [key, value] : request.operation_parameters_json) {
    w.Key(key);
    w.Raw(value);
  }
  w.EndObject();
  if (read_version) {
    w.Member("readVersion", *read_version);
  }
  w.Member("isolationLevel", request.isolation_level);
  w.Member("isBlindAppend", request.is_blind_append);

  // delta-spark's write metrics, derived from the files unless the caller
  // gave them; caller-provided extra metrics follow.
  int64_t rows = 0;
  int64_t bytes = 0;
  for (const AddFile& add : request.adds) {
    bytes += add.size;
    if (add.stats) rows += StatsNumRecords(*add.stats).value_or(0);
  }
  std::vector<std::pair<std::string, std::string>> metrics;
  if (request.derive_write_metrics) {
    metrics = {{"numFiles", std::to_string(request.adds.size())},
               {"numOutputRows", std::to_string(rows)},
               {"numOutputBytes", std::to_string(bytes)}};
    for (auto& [key, value] : metrics) {
      auto it = request.operation_metrics.find(key);
      if (it != request.operation_metrics.end()) value = it->second;
    }
  }
  for (const auto& [key, value] : request.operation_metrics) {
    if (!request.derive_write_metrics ||
        (key != "numFiles" && key != "numOutputRows" && key != "numOutputBytes")) {
      metrics.emplace_back(key, value);
    }
  }
  w.Key("operationMetrics");
  w.BeginObject();
  for (const auto& [key, value] : metrics) {
    w.Member(key, value);
  }
  w.EndObject();
  if (!request.tags.empty()) {
    w.Key("tags");
    w.BeginObject();
    for (const auto& [key, value] : request.tags) w.Member(key, value);
    w.EndObject();
  }
  w.Member("engineInfo", std::string("silt/") + SILT_VERSION_STRING);
  w.Member("txnId", txn_id);
  static const std::set<std::string> kStandard = {"timestamp",
                                                  "operation",
                                                  "operationParameters",
                                                  "readVersion",
                                                  "isolationLevel",
                                                  "isBlindAppend",
                                                  "operationMetrics",
                                                  "engineInfo",
                                                  "txnId",
                                                  "inCommitTimestamp",
                                                  "tags"};
  for (const auto& [key, value] : request.commit_info_extra) {
    if (kStandard.count(key) == 0) w.Member(key, value);
  }
  w.EndObject();
  return w.Take();
}

// Fills what a caller may leave out of a metaData action (id, createdTime,
// the schema in one of its two forms) and checks what Delta requires of it.
Result<Metadata> CompleteMetadata(Metadata m, const std::string& table_path) {
  if (m.id.empty()) m.id = NewUuid();
  if (!m.created_time) m.created_time = NowMillis();
  if (m.format_provider.empty()) m.format_provider = "parquet";
  if (m.schema_string.empty() && m.schema) m.schema_string = columnar::SchemaToJson(*m.schema);
  if (!m.schema && !m.schema_string.empty()) {
    SILT_ASSIGN_OR_RETURN_CTX(m.schema, columnar::SchemaFromJson(m.schema_string),
                              "schema of Delta table ", table_path);
  }
  if (!m.schema) return Status::InvalidArgument("Delta table ", table_path, " needs a schema");
  // delta.feature.<name> = supported only asks for a protocol feature
  // (ProtocolForNewTable); delta-spark does not keep it as a property.
  std::erase_if(m.configuration, [](const auto& entry) {
    return entry.first.rfind(kFeaturePropertyPrefix, 0) == 0;
  });
  // Enabling row tracking names its hidden materialized columns.
  SILT_ASSIGN_OR_RETURN(bool row_tracking, EnableRowTracking(m.configuration));
  if (row_tracking) AddMaterializedRowTrackingColumnNames(&m.configuration);
  for (const std::string& column : m.partition_columns) {
    if (m.schema->FieldIndex(column) < 0) {
      return Status::InvalidArgument("partition column '", column,
                                     "' is not in the schema of Delta table ", table_path);
    }
  }
  return m;
}

enum class Outcome { kRebase, kAlreadyCommitted, kDuplicate };

std::string ExpectedText(const std::optional<int64_t>& expected) {
  return expected ? Status::Concat("version ", *expected) : std::string("no txn");
}

// CommitRequest::expected_txns against the state the commit is made on.
Status CheckExpectedTxns(const std::string& table_path, const Snapshot* read_snapshot,
                         const CommitRequest& request) {
  for (const CommitRequest::ExpectedTxn& expected : request.expected_txns) {
    std::optional<int64_t> found;
    if (read_snapshot != nullptr) found = read_snapshot->TxnVersion(expected.txn.app_id);
    if (found == expected.expected) continue;
    return Status::Conflict("concurrent transaction: Delta table ", table_path,
                            read_snapshot != nullptr
                                ? Status::Concat(" (version ", read_snapshot->version(), ")")
                                : std::string(" (not created yet)"),
                            " records ", ExpectedText(found), " for txn '", expected.txn.app_id,
                            "' while this commit expected ", ExpectedText(expected.expected),
                            " (another writer advanced the same input partition)");
  }
  return Status::OK();
}

// commitInfo.isBlindAppend of a winner (false when absent or unreadable:
// the stricter reading).
bool WinnerIsBlindAppend(const CommitActions& commit) {
  if (!commit.commit_info_json) return false;
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  const std::string& text = *commit.commit_info_json;
  if (parser.parse(text.data(), text.size(), true).get(root) != simdjson::SUCCESS) return false;
  bool value = false;
  if (root["isBlindAppend"].get_bool().get(value) != simdjson::SUCCESS) return false;
  return value;
}

std::string DescribePartition(const PartitionValues& values) {
  if (values.empty()) return "the table (unpartitioned)";
  std::string out = "partition [";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ", ";
    out += values[i].first + "=" + values[i].second.value_or("null");
  }
  return out + "]";
}

// delta-spark's ConflictChecker for an operation that read the table
// (CommitRequest::read_set), after the txn checks.
Result<Outcome> CheckReadSetWinner(const std::string& table_path, const CommitActions& winner,
                                   const CommitActions& ours, const CommitRequest& request,
                                   const Metadata& metadata) {
  const CommitRequest::ReadSet& read = *request.read_set;
  const std::string retry = ". Please try the operation again.";
  if (winner.protocol) {
    return Status::Conflict("ProtocolChangedException: the protocol version of Delta table ",
                            table_path, " has been changed by a concurrent update (",
                            DescribeWinner(winner), ")", retry);
  }
  if (winner.metadata) {
    return Status::Conflict("MetadataChangedException: the metadata of Delta table ", table_path,
                            " has been changed by a concurrent update (", DescribeWinner(winner),
                            ")", retry);
  }
  const bool winner_blind = WinnerIsBlindAppend(winner);
  if (read.isolation_level == "Serializable" || !winner_blind) {
    std::vector<FileSkipper> skippers;
    for (const columnar::Conjunction& c : read.predicates) {
      skippers.push_back(FileSkipper::Make(metadata, c));
    }
    for (const AddFile& add : winner.adds) {
      if (!add.data_change) continue;
      bool seen = read.whole_table;
      for (size_t i = 0; i < skippers.size() && !seen; ++i) {
        seen = skippers[i].Decide(add) == SkipDecision::kKeep;
      }
      if (seen) {
        return Status::Conflict("ConcurrentAppendException: files were added to ",
                                DescribePartition(add.partition_values), " of Delta table ",
                                table_path, " by a concurrent update (", DescribeWinner(winner),
                                ")", retry);
      }
    }
  }
  std::set<std::string> read_files;
  for (const std::string& f : read.files) {
    SILT_ASSIGN_OR_RETURN(std::string key, ResolveDataFilePath(table_path, f));
    read_files.insert(std::move(key));
  }
  std::set<std::string> our_removes;
  for (const RemoveFile& r : ours.removes) {
    SILT_ASSIGN_OR_RETURN(std::string key, ResolveDataFilePath(table_path, r.path));
    our_removes.insert(std::move(key));
  }
  for (const RemoveFile& r : winner.removes) {
    SILT_ASSIGN_OR_RETURN(std::string key, ResolveDataFilePath(table_path, r.path));
    if (read_files.count(key) != 0) {
      return Status::Conflict(
          "ConcurrentDeleteReadException: this transaction attempted to read "
          "file ",
          r.path, " of Delta table ", table_path, ", which was deleted by a concurrent update (",
          DescribeWinner(winner), ")", retry);
    }
    if (our_removes.count(key) != 0) {
      return Status::Conflict(
          "ConcurrentDeleteDeleteException: this transaction attempted to "
          "delete file ",
          r.path, " of Delta table ", table_path, ", which was deleted by a concurrent update (",
          DescribeWinner(winner), ")", retry);
    }
  }
  return Outcome::kRebase;
}

// Decides what a commit that lost the race for `winner.version` does next,
// following delta-spark's ConflictChecker for the operations silt performs.
Result<Outcome> CheckWinner(const std::string& table_path, const CommitActions& winner,
                            const CommitActions& ours, const std::string& our_txn_id,
                            const CommitRequest& request, bool new_table,
                            const Metadata* metadata) {
  // A put-if-absent that succeeded remotely but reported failure (a retried
  // request) leaves our own commit as the "winner".
  if (CommitInfoField(winner, "txnId") == our_txn_id) return Outcome::kAlreadyCommitted;
  for (const Txn& txn : winner.txns) {
    for (const CommitRequest::ExpectedTxn& expected : request.expected_txns) {
      if (txn.app_id != expected.txn.app_id) continue;
      if (expected.expected && txn.version == *expected.expected) continue;
      return Status::Conflict("concurrent transaction: ", DescribeWinner(winner), " of ",
                              table_path, " moved txn '", txn.app_id, "' to version ", txn.version,
                              " while this commit expected ", ExpectedText(expected.expected),
                              " (another writer advanced the same input partition)");
    }
  }
  if (request.txn) {
    for (const Txn& txn : winner.txns) {
      if (txn.app_id != request.txn->app_id) continue;
      if (txn.version >= request.txn->version) return Outcome::kDuplicate;
      return Status::Conflict(request.read_set ? "ConcurrentTransactionException: " : "",
                              "concurrent transaction: ", DescribeWinner(winner), " of ",
                              table_path, " recorded txn version ", txn.version,
                              " for application '", txn.app_id,
                              "' while this commit records version ", request.txn->version,
                              " (two writers share the application id)");
    }
  }
  if (new_table) {
    return Status::Conflict("Delta table ", table_path,
                            " was created concurrently by another writer (", DescribeWinner(winner),
                            ")");
  }
  if (request.read_set && metadata != nullptr) {
    return CheckReadSetWinner(table_path, winner, ours, request, *metadata);
  }
  if (winner.protocol) {
    return Status::Conflict("concurrent protocol change: ", DescribeWinner(winner), " of ",
                            table_path, " changed the table protocol");
  }
  if (winner.metadata) {
    return Status::Conflict("concurrent metadata change: ", DescribeWinner(winner), " of ",
                            table_path, " changed the table metadata (schema or properties)");
  }
  if (!ours.removes.empty()) {
    std::set<std::string> our_removes;
    for (const RemoveFile& r : ours.removes) {
      SILT_ASSIGN_OR_RETURN(std::string key, ResolveDataFilePath(table_path, r.path));
      our_removes.insert(std::move(key));
    }
    for (const RemoveFile& r : winner.removes) {
      SILT_ASSIGN_OR_RETURN(std::string key, ResolveDataFilePath(table_path, r.path));
      if (our_removes.count(key) != 0) {
        return Status::Conflict("concurrent delete: ", DescribeWinner(winner), " of ", table_path,
                                " removed file ", r.path, " which this commit also removes");
      }
    }
  }
  bool we_change_data = false;
  for (const AddFile& a : ours.adds) we_change_data |= a.data_change;
  for (const RemoveFile& r : ours.removes) we_change_data |= r.data_change;
  if (!request.is_blind_append && we_change_data) {
    bool winner_changes_data = false;
    for (const AddFile& a : winner.adds) winner_changes_data |= a.data_change;
    for (const RemoveFile& r : winner.removes) winner_changes_data |= r.data_change;
    if (winner_changes_data) {
      return Status::Conflict("concurrent data change: ", DescribeWinner(winner), " of ",
                              table_path,
                              " added or removed data that this commit (not a blind append) "
                              "read");
    }
  }
  return Outcome::kRebase;
}

Status CheckUtf8(std::string_view text) {
  if (IsValidUtf8(text)) return Status::OK();
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!IsValidUtf8(line)) {
      return Status::InvalidArgument(
          "refusing to write a commit that is not valid UTF-8 (in the action starting ",
          ReplaceInvalidUtf8(line.substr(0, 60)), ")");
    }
    start = end + 1;
  }
  return Status::InvalidArgument("refusing to write a commit that is not valid UTF-8");
}

}  // namespace

namespace {

// Commit's body. With `advance` (CommitAndAdvance), a commit that lands right
// after `read_snapshot` leaves the state at its version in *advance, built
// from `read_snapshot` (moved in when the caller handed over the only
// reference) plus the commit's own text; otherwise *advance gets
// `read_snapshot` back.
Result<CommitResult> CommitImpl(DeltaTable* table, SnapshotPtr read_snapshot,
                                const CommitRequest& request, SnapshotPtr* advance) {
  if (table == nullptr) return Status::InvalidArgument("Commit needs a table");
  const std::string& table_path = table->path();
  const bool new_table = read_snapshot == nullptr;

  CommitActions actions;
  if (new_table) {
    if (!request.new_metadata) {
      return Status::InvalidArgument("creating Delta table ", table_path,
                                     " needs its metadata (schema and partition columns)");
    }
    SILT_ASSIGN_OR_RETURN(Metadata metadata, CompleteMetadata(*request.new_metadata, table_path));
    Protocol protocol = request.new_protocol.value_or(Protocol());
    SILT_RETURN_NOT_OK_CTX(CheckWriteSupported(protocol, metadata, request.honoured_features),
                           "creating Delta table ", table_path);
    actions.protocol = std::move(protocol);
    actions.metadata = std::move(metadata);
  } else {
    const Protocol& protocol = request.new_protocol.value_or(read_snapshot->protocol());
    Metadata current = read_snapshot->metadata();
    if (request.new_metadata) {
      Metadata metadata = *request.new_metadata;
      // A metadata update keeps the table's identity unless told otherwise.
      if (metadata.id.empty()) metadata.id = current.id;
      if (!metadata.created_time) metadata.created_time = current.created_time;
      SILT_ASSIGN_OR_RETURN(current, CompleteMetadata(std::move(metadata), table_path));
      actions.metadata = current;
    }
    SILT_RETURN_NOT_OK_CTX(CheckWriteSupported(protocol, current, request.honoured_features),
                           "writing to Delta table ", table_path);
    if (request.new_protocol) actions.protocol = *request.new_protocol;
    if (request.txn) {
      std::optional<int64_t> recorded = read_snapshot->TxnVersion(request.txn->app_id);
      if (recorded && *recorded >= request.txn->version) {
        const int64_t read = read_snapshot->version();
        if (advance != nullptr) *advance = std::move(read_snapshot);
        return CommitResult{read, true};
      }
    }
    auto append_only = current.configuration.find("delta.appendOnly");
    if (append_only != current.configuration.end() && append_only->second == "true") {
      for (const RemoveFile& r : request.removes) {
        if (r.data_change) {
          return Status::InvalidArgument("Delta table ", table_path,
                                         " is append-only (delta.appendOnly = true); this "
                                         "commit would remove data file ",
                                         r.path);
        }
      }
    }
  }
  SILT_RETURN_NOT_OK(CheckExpectedTxns(table_path, read_snapshot.get(), request));
  if (request.txn) {
    Txn txn = *request.txn;
    if (!txn.last_updated) txn.last_updated = NowMillis();
    actions.txns.push_back(std::move(txn));
  }
  for (const CommitRequest::ExpectedTxn& expected : request.expected_txns) {
    Txn txn = expected.txn;
    if (!txn.last_updated) txn.last_updated = NowMillis();
    actions.txns.push_back(std::move(txn));
  }
  actions.cdc_files = request.cdc_files;
  actions.removes = request.removes;
  // The table's metaData and protocol as of the new version (winners that
  // change them make this commit conflict, so they cannot go stale while
  // retrying).
  const Metadata* committed_metadata =
      actions.metadata ? &*actions.metadata : &read_snapshot->metadata();
  const Protocol& committed_protocol =
      actions.protocol ? *actions.protocol : read_snapshot->protocol();
  const std::string txn_id = NewUuid();
  std::optional<int64_t> read_version;
  if (!new_table) read_version = read_snapshot->version();

  // In-commit timestamps: each commit's is later than the previous one's
  // (and, for the commit that enables them, than that commit file's time).
  SILT_ASSIGN_OR_RETURN(const bool in_commit_timestamps,
                        EnableInCommitTimestamps(committed_metadata->configuration));
  if (in_commit_timestamps && !SupportsWriterFeature(committed_protocol, "inCommitTimestamp")) {
    return Status::NotSupported("Delta table ", table_path,
                                ": delta.enableInCommitTimestamps = true needs the "
                                "inCommitTimestamp writer feature in the table protocol");
  }
  bool enabling_in_commit_timestamps = false;
  std::optional<int64_t> previous_commit_ms;
  if (!new_table) {
    previous_commit_ms = read_snapshot->timestamp_ms();
    if (in_commit_timestamps) {
      SILT_ASSIGN_OR_RETURN(bool had,
                            EnableInCommitTimestamps(read_snapshot->metadata().configuration));
      enabling_in_commit_timestamps = !had;
    }
    if (enabling_in_commit_timestamps) {
      Result<fs::FileInfo> info = table->file_system()->GetFileInfo(
          fs::JoinPath(table->log_path(), CommitFileName(read_snapshot->version())));
      if (info.ok()) {
        previous_commit_ms = std::max(*previous_commit_ms, info->modification_time_ms);
      }
    }
  }
  // Row tracking: fresh row ids above the high-water mark the commit lands on.
  SILT_ASSIGN_OR_RETURN(const bool assign_row_ids,
                        AssignsRowIds(committed_protocol, *committed_metadata));
  int64_t row_id_high_water_mark = -1;
  if (assign_row_ids && !new_table) {
    SILT_ASSIGN_OR_RETURN_CTX(
        row_id_high_water_mark,
        RowIdHighWaterMark(read_snapshot->FindDomain(std::string(kRowTrackingDomain))),
        "Delta table ", table_path);
  }
  int64_t commit_time_ms = 0;
  // The commit's text for `version`: what depends on the version and on the
  // commits before it (in-commit timestamp, row ids) is made anew when a
  // lost race moves the commit to a later version.
  auto prepare = [&](int64_t version) -> Result<std::string> {
    const int64_t now_ms = NowMillis();
    std::optional<int64_t> in_commit_timestamp;
    if (in_commit_timestamps) {
      in_commit_timestamp = previous_commit_ms ? std::max(now_ms, *previous_commit_ms + 1) : now_ms;
    }
    commit_time_ms = in_commit_timestamp.value_or(now_ms);
    if (enabling_in_commit_timestamps) {
      TableConfiguration& conf = actions.metadata->configuration;
      conf[std::string(kInCommitTimestampEnablementVersion)] = std::to_string(version);
      conf[std::string(kInCommitTimestampEnablementTimestamp)] =
          std::to_string(*in_commit_timestamp);
    }
    actions.adds = request.adds;
    actions.domain_metadata = request.domain_metadata;
    if (assign_row_ids) {
      SILT_ASSIGN_OR_RETURN_CTX(int64_t mark,
                                AssignRowIds(&actions.adds, row_id_high_water_mark, version),
                                "committing to Delta table ", table_path);
      if (mark > row_id_high_water_mark) actions.domain_metadata.push_back(RowTrackingDomain(mark));
    }
    actions.commit_info_json =
        BuildCommitInfo(request, read_version, txn_id, now_ms, in_commit_timestamp);
    std::string text = SerializeCommit(actions);
    // Readers (silt, delta-spark, delta-rs) refuse a commit that is not
    // UTF-8, and a version once written cannot be replaced: one bad byte
    // would make the table unreadable for good. Stats and partition values
    // never carry one; this guards whatever else might.
    SILT_RETURN_NOT_OK_CTX(CheckUtf8(text), "committing to Delta table ", table_path);
    return text;
  };
  // What a winner of the race for a version changes in what this commit
  // derives from the table: the previous commit's time, the row-id
  // high-water mark; and two commits touching the same other domain
  // conflict (PROTOCOL.md "Domain Metadata").
  auto absorb_winner = [&](const CommitActions& winner) -> Status {
    if (winner.commit_timestamp_ms) {
      previous_commit_ms = std::max(previous_commit_ms.value_or(*winner.commit_timestamp_ms),
                                    *winner.commit_timestamp_ms);
    }
    for (const DomainMetadata& domain : winner.domain_metadata) {
      if (domain.domain == kRowTrackingDomain) {
        SILT_ASSIGN_OR_RETURN(int64_t mark, RowIdHighWaterMark(&domain));
        row_id_high_water_mark = std::max(row_id_high_water_mark, mark);
        continue;
      }
      for (const DomainMetadata& ours : request.domain_metadata) {
        if (ours.domain == domain.domain) {
          return Status::Conflict("concurrent domain metadata change: ", DescribeWinner(winner),
                                  " of ", table_path, " changed metadata domain ", domain.domain,
                                  ", which this commit also changes");
        }
      }
    }
    return Status::OK();
  };
  const int64_t first_version = new_table ? 0 : read_snapshot->version() + 1;
  SILT_ASSIGN_OR_RETURN(std::string text, prepare(first_version));

  if (new_table) {
    SILT_RETURN_NOT_OK_CTX(table->file_system()->CreateDir(table->log_path()),
                           "creating Delta table ", table_path);
  }
  int64_t version = new_table ? 0 : read_snapshot->version() + 1;
  for (int attempt = 0; attempt < kMaxCommitAttempts; ++attempt) {
    std::string file = fs::JoinPath(table->log_path(), CommitFileName(version));
    Status st = table->file_system()->PutIfAbsent(file, text);
    if (st.ok()) {
      SnapshotPtr committed;
      if (advance != nullptr && version == (new_table ? 0 : read_snapshot->version() + 1)) {
        // The state at `version` is the read state plus exactly this commit.
        // It is applied from the text just written, parsed as any reader
        // parses it, so it cannot differ from re-reading the log.
        Result<CommitActions> written = ParseCommit(text, file);
        if (written.ok()) {
          written->version = version;
          const Metadata kept_metadata = *committed_metadata;
          Result<SnapshotPtr> next =
              table->ApplyCommit(std::move(read_snapshot), std::move(*written), commit_time_ms);
          if (next.ok()) {
            committed = std::move(*next);
          } else {
            SILT_LOG_WARN(
                "delta", "could not apply commit ", version, " of ", table_path,
                " in memory (the next batch re-reads the log): ", next.status().ToString());
          }
          // A classic checkpoint written in the background since the last
          // commit: drop its files before the next one is due (decision 161).
          committed = table->ElideClassicCheckpointedFiles(std::move(committed));
          const bool checkpointed = PostCommitAdvanced(table, committed, kept_metadata, version,
                                                       static_cast<int64_t>(text.size()));
          if (committed != nullptr && committed->files_elided() && !checkpointed) {
            // The next checkpoint builds on the last one written: without
            // this one, the state must be read whole again.
            committed = nullptr;
          }
          // After a V2 checkpoint, or a classic one in the incremental
          // layout, at this version, the writer's state drops the files it
          // holds (set_elide_checkpointed_files).
          *advance = table->ElideClassicCheckpointedFiles(
              table->ElideCheckpointedFiles(std::move(committed)));
          return CommitResult{version, false};
        }
      }
      PostCommitInline(table, read_snapshot, *committed_metadata, version);
      if (advance != nullptr) *advance = std::move(read_snapshot);
      return CommitResult{version, false};
    }
    if (!st.IsAlreadyExists()) {
      return st.WithContextParts("committing version ", version, " of Delta table ", table_path);
    }
    // Lost the race for `version`: examine every commit that got in first.
    SILT_ASSIGN_OR_RETURN_CTX(std::vector<int64_t> versions, table->ListVersions(),
                              "resolving a commit conflict on ", table_path);
    int64_t latest = versions.empty() ? version : std::max(version, versions.back());
    for (int64_t v = version; v <= latest; ++v) {
      SILT_ASSIGN_OR_RETURN_CTX(CommitActions winner, table->ReadCommit(v),
                                "resolving a commit conflict on ", table_path);
      SILT_ASSIGN_OR_RETURN(Outcome outcome, CheckWinner(table_path, winner, actions, txn_id,
                                                         request, new_table, committed_metadata));
      if (outcome == Outcome::kAlreadyCommitted) {
        PostCommitInline(table, read_snapshot, *committed_metadata, v);
        if (advance != nullptr) *advance = std::move(read_snapshot);
        return CommitResult{v, false};
      }
      if (outcome == Outcome::kDuplicate) {
        if (advance != nullptr) *advance = std::move(read_snapshot);
        return CommitResult{v, true};
      }
      SILT_RETURN_NOT_OK(absorb_winner(winner));
    }
    version = latest + 1;
    SILT_ASSIGN_OR_RETURN(text, prepare(version));
  }
  return Status::Conflict("gave up committing to Delta table ", table_path, " after ",
                          kMaxCommitAttempts,
                          " attempts: other writers committed first every time");
}

}  // namespace

Result<CommitResult> Commit(DeltaTable* table, const SnapshotPtr& read_snapshot,
                            const CommitRequest& request) {
  return CommitImpl(table, read_snapshot, request, nullptr);
}

Result<CommitResult> CommitAndAdvance(DeltaTable* table, SnapshotPtr* snapshot,
                                      const CommitRequest& request) {
  if (snapshot == nullptr) return Status::InvalidArgument("CommitAndAdvance needs a snapshot slot");
  SnapshotPtr read = std::move(*snapshot);
  return CommitImpl(table, std::move(read), request, snapshot);
}

}  // namespace silt::delta
