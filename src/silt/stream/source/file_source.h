// FileStreamSource (format: json | text): new files in a directory become
// batches, as Spark's file source does.
//
// Discovery: every file under `path` (recursively) whose path components do
// not start with '_' or '.', not seen before, ordered by modification time
// then path (newest first with latestFirst), at most maxFilesPerTrigger per
// batch (unlimited by default).
//
// Spark's file-source log under the checkpoint's sources/<i>/ records which
// files each planned batch takes. It is written before offsets/N, so a crash
// between the two leaves files that the next batch picks up (and no file is
// read twice):
//   sources/<i>/<K>          v1\n{"path":"file:///abs/in/a.json","timestamp":<mtime
//   ms>,"batchId":K}... sources/<i>/<K>.compact  every 10th entry ((K+1) % 10 == 0): all entries so
//   far
// The offset is {"logOffset":K}; a batch reads the files of log entries in
// (start, end].
//
// json: one JSON document per line (blank lines skipped), decoded with the
// user's schema (required, Spark DDL) through json::JsonDecoder with the
// same reading options as from_json (expr/function/json/json_options.h:
// the allow* parser switches, date/time patterns, timeZone, and the
// session's spark.sql.legacy.timeParserPolicy). A line holding a JSON array
// gives one row per element, as Spark's reader does (none for [], and one
// bad row when an element is not an object). Modes:
//   PERMISSIVE (default) malformed line (not a JSON object) -> row of NULLs;
//                        its raw text goes to the columnNameOfCorruptRecord
//                        column (default _corrupt_record) only when that
//                        column is in the schema, as in Spark;
//   DROPMALFORMED        malformed lines are dropped; a WARN names the count
//                        and file;
//   FAILFAST             the batch fails naming file and line number.
// A bad record is also one with a field of the wrong type (Spark's partial
// result: in PERMISSIVE the field is NULL, the others kept, and the line
// goes to the corrupt-record column), dropped or failed by the other modes
// as in Spark. A date/time text Spark fails the query on
// (INCONSISTENT_BEHAVIOR_CROSS_VERSION) fails the batch in every mode.
// text: one row per line, a single string column `value`.
//
// Thread safety: one query thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "silt/json/json_decoder.h"
#include "silt/stream/source/source.h"

namespace silt::stream {

// One entry of Spark's file-source log.
struct FileLogEntry {
  std::string path;  // URI as stored ("file:///abs/path", "memory://x/y")
  int64_t timestamp_ms = 0;
  int64_t batch_id = 0;
};

// Spark's FileStreamSourceLog compact interval default.
inline constexpr int64_t kFileSourceCompactInterval = 10;

// "v1\n" + one JSON line per entry, no trailing newline.
std::string SerializeFileLog(const std::vector<FileLogEntry>& entries);
Result<std::vector<FileLogEntry>> ParseFileLog(std::string_view text, std::string_view source);
// The URI stored in the log for a file-system path: local paths become
// "file://" + percent-encoded path; URIs are kept as they are.
std::string FilePathToLogUri(const std::string& path);
// The inverse; also accepts Hadoop's "file:/abs/path".
std::string LogUriToFilePath(std::string_view uri);

enum class FileFormat { kJson, kText };
enum class ParseMode { kPermissive, kDropMalformed, kFailFast };

struct FileSourceOptions {
  FileFormat format = FileFormat::kJson;
  std::string path;  // normalized directory
  std::optional<int64_t> max_files_per_trigger;
  ParseMode mode = ParseMode::kPermissive;
  std::string corrupt_record_column = "_corrupt_record";
  bool latest_first = false;
  columnar::SchemaPtr schema;  // user schema (json) or `value STRING` (text)
  // The JSON reading options given (allow*, dateFormat, timestampFormat,
  // timestampNTZFormat, enableDateTimeParsingFallback, timeZone, locale), as
  // expr::JsonReadOptions reads them for from_json.
  std::vector<std::pair<std::string, std::string>> json_read_options;

  // Errors: InvalidArgument naming the key (missing path, schema, bad mode).
  static Result<FileSourceOptions> FromSpec(const SourceSpec& spec);
};

class FileSource final : public Source {
 public:
  static Result<std::unique_ptr<FileSource>> Make(FileSourceOptions options,
                                                  const SourceContext& context);

  const columnar::SchemaPtr& schema() const override { return options_.schema; }
  std::string Description() const override;
  Status Restore(const std::optional<std::string>& last_planned) override;
  Status PrepareForAvailableNow() override;
  Result<std::optional<std::string>> LatestOffset(const std::optional<std::string>& start,
                                                  const ReadLimit& limit) override;
  // Whole files spread over up to `max_parts` readers (in turn, so each
  // reader's files keep the log's order).
  Result<BatchParts> GetBatchParts(const std::optional<std::string>& start, const std::string& end,
                                   int max_parts) override;
  Result<std::unique_ptr<BatchReader>> GetBatch(const std::optional<std::string>& start,
                                                const std::string& end) override;

  // {"logOffset":N}; also accepts a bare number, as Spark does.
  static std::string OffsetJson(int64_t log_offset);
  static Result<int64_t> ParseOffset(std::string_view json);

 private:
  FileSource(FileSourceOptions options, const SourceContext& context, fs::FileSystemPtr data_fs);
  // Files under the directory that are not hidden and not yet in the log.
  Result<std::vector<fs::FileInfo>> ListNewFiles();
  Status AppendLog(const std::vector<fs::FileInfo>& files);
  // The files of the batch (start, end]: paths to read and their log URIs.
  struct FileList {
    std::vector<std::string> paths;
    std::vector<std::string> uris;
  };
  Result<FileList> BatchFiles(const std::optional<std::string>& start, const std::string& end);

  FileSourceOptions options_;
  SourceContext context_;
  fs::FileSystemPtr data_fs_;
  // Reads zone-less timestamp text in the session time zone.
  json::JsonDecodeOptions decode_options_;
  // Every entry of the log by log batch id, and the set of file paths seen.
  std::map<int64_t, std::vector<FileLogEntry>> entries_;
  std::set<std::string> seen_;
  int64_t current_log_offset_ = -1;
  std::optional<std::set<std::string>> available_now_files_;
};

}  // namespace silt::stream
