// Delta log actions (PROTOCOL.md "Actions") as plain structs, with parsing
// from and serialization to the commit-file JSON lines.
//
// Readers ignore unknown actions and fields; `raw` keeps each action's JSON
// so that tools (silt log) can show fields silt does not model.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/types.h"

namespace silt::delta {

// Partition values keep the log's string form; nullopt is a null value
// (JSON null, "" or a missing key all read as null).
using PartitionValues = std::vector<std::pair<std::string, std::optional<std::string>>>;

struct Protocol {
  int32_t min_reader_version = 1;
  int32_t min_writer_version = 2;
  std::optional<std::vector<std::string>> reader_features;
  std::optional<std::vector<std::string>> writer_features;
};

struct Metadata {
  std::string id;
  std::optional<std::string> name;
  std::optional<std::string> description;
  std::string format_provider = "parquet";
  std::string schema_string;
  columnar::SchemaPtr schema;  // parsed from schema_string
  std::vector<std::string> partition_columns;
  std::map<std::string, std::string> configuration;
  std::optional<int64_t> created_time;
};

// A deletion vector (PROTOCOL.md "Deletion Vectors"): rows of a data file
// that are logically deleted, stored inline ('i'), in a file next to the
// table named by a UUID ('u') or at an absolute path ('p').
struct DeletionVectorDescriptor {
  std::string storage_type;
  std::string path_or_inline_dv;
  std::optional<int64_t> offset;
  int64_t size_in_bytes = 0;
  int64_t cardinality = 0;
  std::optional<int64_t> max_row_index;

  // storageType + pathOrInlineDv (+ "@" offset): what tells two deletion
  // vectors of one file apart in log reconciliation.
  std::string UniqueId() const;
};

struct AddFile {
  std::string path;  // as in the log: URI-encoded, relative to the table root
  PartitionValues partition_values;
  int64_t size = 0;
  int64_t modification_time = 0;
  bool data_change = true;
  std::optional<std::string> stats;  // JSON text
  std::map<std::string, std::string> tags;
  std::optional<DeletionVectorDescriptor> deletion_vector;
  // Row tracking (PROTOCOL.md "Row Tracking"): the default generated row id
  // of the file's first row, and the version that first added the file.
  std::optional<int64_t> base_row_id;
  std::optional<int64_t> default_row_commit_version;
  // The clustering implementation that clustered the file ("liquid").
  std::optional<std::string> clustering_provider;
};

// A change data file (PROTOCOL.md "Add CDC File"): rows of the change data
// feed under `_change_data/`, with their `_change_type`.
struct AddCdcFile {
  std::string path;  // as in the log, relative to the table root
  PartitionValues partition_values;
  int64_t size = 0;
  bool data_change = false;
};

struct RemoveFile {
  std::string path;
  std::optional<int64_t> deletion_timestamp;
  bool data_change = true;
  bool extended_file_metadata = false;
  PartitionValues partition_values;
  std::optional<int64_t> size;
  std::optional<DeletionVectorDescriptor> deletion_vector;
  // delta-spark writes the removed file's numRecords here ({"numRecords":N}).
  std::optional<std::string> stats;
  // The removed add's row tracking fields, carried over.
  std::optional<int64_t> base_row_id;
  std::optional<int64_t> default_row_commit_version;
};

// A metadata domain (PROTOCOL.md "Domain Metadata"): named configuration
// text; `removed` makes the action a tombstone of the domain. Domains named
// "delta.*" belong to table features (delta.rowTracking, delta.clustering).
struct DomainMetadata {
  std::string domain;
  std::string configuration;
  bool removed = false;
};

struct Txn {
  std::string app_id;
  int64_t version = 0;
  std::optional<int64_t> last_updated;
};

// All actions of one commit file, in file order per kind.
// Which list of a CommitActions a file action is in.
enum class FileActionKind : uint8_t { kAdd, kRemove, kCdc };

struct CommitActions {
  int64_t version = -1;
  std::optional<Protocol> protocol;
  std::optional<Metadata> metadata;
  std::vector<AddFile> adds;
  std::vector<RemoveFile> removes;
  std::vector<Txn> txns;
  std::vector<AddCdcFile> cdc_files;  // also listed in other_action_keys
  std::vector<DomainMetadata> domain_metadata;
  // The add, remove and cdc actions in file order, as (list, index in it):
  // delta-spark's streaming change feed numbers a commit's adds and removes
  // together in log order. Filled by ParseCommit.
  std::vector<std::pair<FileActionKind, int32_t>> file_action_order;
  std::optional<std::string> commit_info_json;  // the commitInfo object as JSON text
  // commitInfo.inCommitTimestamp when present, else commitInfo.timestamp (ms).
  std::optional<int64_t> commit_timestamp_ms;
  // Every line's JSON, verbatim, in file order (for display).
  std::vector<std::string> raw_lines;
  // Actions silt does not model (cdc, domainMetadata, ...), by key.
  std::vector<std::string> other_action_keys;
};

// Parses one commit file's text. `source` names it in errors (path).
// Errors: Corruption naming the source, the line number and the problem.
Result<CommitActions> ParseCommit(std::string_view text, std::string_view source);

// Serializes the actions as delta-spark does: commitInfo first, then
// protocol, metaData, txn, add, cdc, remove, domainMetadata; one JSON object
// per line, each line ending in '\n'.
std::string SerializeCommit(const CommitActions& actions);

// "00000000000000000042.json"
std::string CommitFileName(int64_t version);
// Parses a commit file name back to its version; nullopt if not one.
std::optional<int64_t> ParseCommitFileName(std::string_view name);

}  // namespace silt::delta
