#include "silt/stream/source/file_source.h"

#include <algorithm>
#include <cctype>

#include "silt/base/json_writer.h"
#include "silt/base/logging.h"
#include "silt/base/strings.h"
#include "silt/columnar/builder.h"
#include "silt/expr/eval_options.h"
#include "silt/expr/function/json/json_options.h"
#include "silt/expr/value/time_zone.h"
#include "silt/json/json_decoder.h"
#include "silt/stream/column_util_internal.h"
#include "silt/stream/json_internal.h"
#include "silt/stream/options_internal.h"

namespace silt::stream {

namespace {

constexpr std::string_view kCompactSuffix = ".compact";

bool HasScheme(std::string_view path) {
  size_t colon = path.find("://");
  if (colon == std::string_view::npos || colon == 0) return false;
  return std::all_of(path.begin(), path.begin() + static_cast<std::ptrdiff_t>(colon), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
  });
}

// Characters a URI path may carry unescaped (RFC 3986 pchar plus '/').
bool IsUriPathChar(unsigned char c) {
  return std::isalnum(c) || std::string_view("-._~!$&'()*+,;=:@/").find(static_cast<char>(c)) !=
                                std::string_view::npos;
}

std::optional<int64_t> ParseLogFileName(std::string_view name, bool* compact) {
  *compact = false;
  if (name.size() > kCompactSuffix.size() &&
      name.substr(name.size() - kCompactSuffix.size()) == kCompactSuffix) {
    name.remove_suffix(kCompactSuffix.size());
    *compact = true;
  }
  if (name.empty() || name.size() > 18) return std::nullopt;
  int64_t v = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

bool IsHiddenComponent(std::string_view relative) {
  size_t pos = 0;
  while (pos < relative.size()) {
    size_t slash = relative.find('/', pos);
    std::string_view part = relative.substr(
        pos, slash == std::string_view::npos ? std::string_view::npos : slash - pos);
    if (!part.empty() && (part[0] == '_' || part[0] == '.')) return true;
    if (slash == std::string_view::npos) break;
    pos = slash + 1;
  }
  return false;
}

// Splits a file's bytes into lines as Hadoop's LineReader does for Spark's
// text and JSON sources: "\n", "\r\n" and a lone "\r" end a line; a final
// line without an end counts, a trailing end adds no empty line.
void SplitLines(std::string_view text, std::vector<std::string_view>* lines) {
  lines->clear();
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string_view::npos ? text.size() : nl;
    std::string_view segment = text.substr(pos, end - pos);
    // Lone carriage returns inside the segment end lines too.
    for (size_t cr = segment.find('\r'); cr != std::string_view::npos && cr + 1 < segment.size();
         cr = segment.find('\r')) {
      lines->push_back(segment.substr(0, cr));
      segment.remove_prefix(cr + 1);
    }
    if (!segment.empty() && segment.back() == '\r') segment.remove_suffix(1);
    lines->push_back(segment);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
}

bool IsBlank(std::string_view line) { return TrimAscii(line).empty(); }

// Reads the files of one batch, a file at a time, and decodes their lines in
// chunks of at most kTargetBatchRows rows.
class FileBatchReader final : public BatchReader {
 public:
  // `files` are the paths to read; `uris` the same files as the source log
  // names them (what input_file_name() gives).
  FileBatchReader(const FileSourceOptions& options, const json::JsonDecodeOptions& decode_options,
                  fs::FileSystemPtr fs, std::vector<std::string> files,
                  std::vector<std::string> uris)
      : options_(options),
        decode_options_(decode_options),
        fs_(std::move(fs)),
        files_(std::move(files)),
        uris_(std::move(uris)) {}

  std::string_view input_file_name() const override { return current_uri_; }

  Status Init() {
    if (options_.format != FileFormat::kJson) return Status::OK();
    // The decoder sees the schema without the corrupt-record column, which
    // is filled from the decoder's raw-text output instead.
    std::vector<columnar::Field> data_fields;
    for (int i = 0; i < options_.schema->num_fields(); ++i) {
      const columnar::Field& field = options_.schema->field(i);
      if (field.name == options_.corrupt_record_column) {
        corrupt_index_ = i;
        source_child_.push_back(-1);
        continue;
      }
      source_child_.push_back(static_cast<int>(data_fields.size()));
      data_fields.push_back(field);
    }
    SILT_ASSIGN_OR_RETURN(decoder_, json::JsonDecoder::Make(columnar::DataType::Struct(data_fields),
                                                            decode_options_));
    return Status::OK();
  }

  Result<columnar::RecordBatchPtr> Next() override {
    while (true) {
      if (line_pos_ >= lines_.size()) {
        FinishFile();
        if (file_idx_ >= files_.size()) return columnar::RecordBatchPtr();
        current_uri_ = uris_[file_idx_];
        SILT_RETURN_NOT_OK(LoadFile(files_[file_idx_++]));
        continue;
      }
      chunk_.clear();
      chunk_lines_.clear();
      while (line_pos_ < lines_.size() &&
             static_cast<int64_t>(chunk_.size()) < columnar::kTargetBatchRows) {
        std::string_view line = lines_[line_pos_++];
        // Spark's JSON reader yields no row for a blank line; text keeps it.
        if (options_.format == FileFormat::kJson && IsBlank(line)) continue;
        chunk_.push_back(line);
        chunk_lines_.push_back(static_cast<int64_t>(line_pos_));
      }
      if (chunk_.empty()) continue;
      if (options_.format == FileFormat::kText) return TextBatch();
      SILT_ASSIGN_OR_RETURN(columnar::RecordBatchPtr batch, JsonBatch());
      if (batch->num_rows > 0) return batch;
    }
  }

 private:
  Status LoadFile(const std::string& path) {
    current_path_ = path;
    Result<std::string> content = fs_->ReadFile(path);
    if (!content.ok()) {
      return content.status().WithContextParts("reading '", path,
                                               "' (listed in the file-source log)");
    }
    content_ = std::move(*content);
    SplitLines(content_, &lines_);
    line_pos_ = 0;
    dropped_in_file_ = 0;
    return Status::OK();
  }

  void FinishFile() {
    if (dropped_in_file_ > 0) {
      SILT_LOG_WARN("stream", "DROPMALFORMED: dropped ", dropped_in_file_,
                    " malformed record(s) from '", current_path_, "'");
      dropped_in_file_ = 0;
    }
  }

  columnar::RecordBatchPtr TextBatch() {
    columnar::ColumnBuilder builder(columnar::DataType::String());
    builder.Reserve(static_cast<int64_t>(chunk_.size()));
    for (std::string_view line : chunk_) builder.AppendString(line);
    auto batch = std::make_shared<columnar::RecordBatch>();
    batch->schema = options_.schema;
    batch->num_rows = static_cast<int64_t>(chunk_.size());
    batch->columns.push_back(builder.Finish());
    return batch;
  }

  Result<columnar::RecordBatchPtr> JsonBatch() {
    const bool need_corrupt = corrupt_index_ >= 0 || options_.mode != ParseMode::kPermissive;
    columnar::ColumnPtr corrupt;
    json::DecodeStats stats;
    // A line holding a JSON array gives a row per element (none for []):
    // source_rows_ maps each decoded row to its line in chunk_.
    Result<columnar::ColumnPtr> decoded_or =
        decoder_->DecodeViews(chunk_.data(), static_cast<int64_t>(chunk_.size()),
                              need_corrupt ? &corrupt : nullptr, &stats, &source_rows_);
    if (!decoded_or.ok()) {
      return decoded_or.status().WithContextParts("reading '", current_path_, "'");
    }
    columnar::ColumnPtr decoded = std::move(decoded_or).MoveValueUnsafe();
    const int64_t num_rows = decoded->length;
    // A bad record, for DROPMALFORMED and FAILFAST as for the corrupt-record
    // column, is one Spark's parser fails on: a line that is not a JSON
    // object, and also a field of the wrong type or out of its type's range
    // ("three" or 1.5 for a BIGINT, 3000000000 for an INT, "" for a number).
    // The decoder flags both kinds alike in its corrupt-record output.
    std::vector<int64_t> malformed;
    if (options_.mode != ParseMode::kPermissive &&
        (stats.malformed_rows > 0 || stats.partial_rows > 0)) {
      for (int64_t row_idx = 0; row_idx < num_rows; ++row_idx) {
        if (corrupt->IsValid(row_idx)) malformed.push_back(row_idx);
      }
    }
    if (!malformed.empty() && options_.mode == ParseMode::kFailFast) {
      const size_t line_idx = static_cast<size_t>(source_rows_[static_cast<size_t>(malformed[0])]);
      return Status::Corruption(
          "malformed JSON record (not a JSON object, or a field of the "
          "wrong type or out of range) in '",
          current_path_, "' at line ", chunk_lines_[line_idx], " (mode FAILFAST): '",
          chunk_[line_idx].substr(0, 200), "'");
    }
    auto batch = std::make_shared<columnar::RecordBatch>();
    batch->schema = options_.schema;
    batch->num_rows = num_rows;
    for (int i = 0; i < options_.schema->num_fields(); ++i) {
      if (i == corrupt_index_) {
        batch->columns.push_back(corrupt);
        continue;
      }
      batch->columns.push_back(
          internal::StructFieldWithParentNulls(*decoded, source_child_[static_cast<size_t>(i)]));
    }
    if (malformed.empty()) return columnar::RecordBatchPtr(batch);
    // DROPMALFORMED.
    std::vector<int64_t> keep;
    keep.reserve(static_cast<size_t>(num_rows));
    size_t next_bad = 0;
    for (int64_t row_idx = 0; row_idx < num_rows; ++row_idx) {
      if (next_bad < malformed.size() && malformed[next_bad] == row_idx) {
        ++next_bad;
        continue;
      }
      keep.push_back(row_idx);
    }
    dropped_in_file_ += static_cast<int64_t>(malformed.size());
    return columnar::TakeBatch(*batch, keep);
  }

  const FileSourceOptions& options_;
  const json::JsonDecodeOptions& decode_options_;
  fs::FileSystemPtr fs_;
  std::vector<std::string> files_;
  std::vector<std::string> uris_;
  size_t file_idx_ = 0;
  std::string current_path_;
  std::string current_uri_;
  std::string content_;
  std::vector<std::string_view> lines_;
  size_t line_pos_ = 0;
  std::vector<std::string_view> chunk_;
  std::vector<int64_t> chunk_lines_;
  std::vector<int64_t> source_rows_;
  int64_t dropped_in_file_ = 0;
  std::unique_ptr<json::JsonDecoder> decoder_;
  int corrupt_index_ = -1;
  std::vector<int> source_child_;
};

}  // namespace

std::string SerializeFileLog(const std::vector<FileLogEntry>& entries) {
  std::string out = "v1";
  JsonWriter w;
  for (const FileLogEntry& entry : entries) {
    w.Clear();
    w.BeginObject();
    w.Member("path", entry.path);
    w.Member("timestamp", entry.timestamp_ms);
    w.Member("batchId", entry.batch_id);
    w.EndObject();
    out += '\n';
    out += w.str();
  }
  return out;
}

Result<std::vector<FileLogEntry>> ParseFileLog(std::string_view text, std::string_view source) {
  std::vector<std::string_view> lines;
  SplitLines(text, &lines);
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  if (lines.empty() || lines[0] != "v1") {
    return Status::Corruption(source, ": expected file-source log version 'v1' on line 1");
  }
  std::vector<FileLogEntry> entries;
  simdjson::dom::parser parser;
  for (size_t line_idx = 1; line_idx < lines.size(); ++line_idx) {
    std::string where =
        std::string(source) + ": line " + std::to_string(static_cast<int64_t>(line_idx + 1));
    SILT_ASSIGN_OR_RETURN(simdjson::dom::object object,
                          internal::ParseJsonObject(parser, lines[line_idx], where));
    SILT_ASSIGN_OR_RETURN(std::optional<std::string> path,
                          internal::GetOptionalString(object, "path", where));
    SILT_ASSIGN_OR_RETURN(std::optional<int64_t> timestamp,
                          internal::GetOptionalInt(object, "timestamp", where));
    SILT_ASSIGN_OR_RETURN(std::optional<int64_t> batch_id,
                          internal::GetOptionalInt(object, "batchId", where));
    if (!path || !batch_id) return Status::Corruption(where, ": entry needs path and batchId");
    entries.push_back({std::move(*path), timestamp.value_or(0), *batch_id});
  }
  return entries;
}

std::string FilePathToLogUri(const std::string& path) {
  if (HasScheme(path)) return path;
  std::string out = "file://";
  static const char kHex[] = "0123456789ABCDEF";
  for (char ch : path) {
    auto c = static_cast<unsigned char>(ch);
    if (IsUriPathChar(c)) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string LogUriToFilePath(std::string_view uri) {
  std::string_view rest;
  if (uri.substr(0, 5) == "file:") {
    rest = uri.substr(5);
    if (rest.substr(0, 11) == "//localhost") rest.remove_prefix(11);
    // "file:///a", "file:/a" and "file://a"-less forms all mean "/a".
    while (rest.size() >= 2 && rest[0] == '/' && rest[1] == '/') rest.remove_prefix(1);
  } else {
    return std::string(uri);
  }
  std::string out;
  out.reserve(rest.size());
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '%' && i + 2 < rest.size() &&
        std::isxdigit(static_cast<unsigned char>(rest[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(rest[i + 2]))) {
      out.push_back(static_cast<char>(std::stoi(std::string(rest.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(rest[i]);
    }
  }
  return out;
}

Result<FileSourceOptions> FileSourceOptions::FromSpec(const SourceSpec& spec) {
  internal::OptionReader reader(spec.options, spec.key_path + ".options");
  // Spark 3.5's file-source and JSON/text data-source options. Parsing
  // options silt does not implement are refused unless set to Spark's
  // default, since each changes what a record turns into.
  SILT_RETURN_NOT_OK(reader.CheckNames({
      .what = spec.format == "text" ? "text source" : "json source",
      .honoured = {"path", "maxFilesPerTrigger", "mode", "columnNameOfCorruptRecord", "latestFirst",
                   "allowComments", "allowUnquotedFieldNames", "allowSingleQuotes",
                   "allowNumericLeadingZeros", "allowBackslashEscapingAnyCharacter",
                   "allowUnquotedControlChars", "allowNonNumericNumbers", "dateFormat",
                   "timestampFormat", "timestampNTZFormat", "enableDateTimeParsingFallback",
                   "timeZone", "locale"},
      // Schema inference only (silt needs a schema), the write side, and
      // codecs silt detects from the file name.
      .inert = {"samplingRatio", "ignoreNullFields", "compression", "codec", "primitivesAsString",
                "prefersDecimal", "dropFieldIfAllNull", "inferTimestamp"},
      .unsupported = {{"multiLine", "false"},
                      {"wholetext", "false"},
                      {"encoding", "UTF-8"},
                      {"charset", "UTF-8"},
                      {"lineSep", ""},
                      {"maxFileAge", ""},
                      {"fileNameOnly", "false"},
                      {"pathGlobFilter", ""},
                      {"recursiveFileLookup", "false"},
                      {"modifiedBefore", ""},
                      {"modifiedAfter", ""},
                      {"cleanSource", "off"},
                      {"sourceArchiveDir", ""},
                      {"maxBytesPerTrigger", ""}},
  }));
  FileSourceOptions out;
  out.format = spec.format == "text" ? FileFormat::kText : FileFormat::kJson;
  std::optional<std::string> path = reader.Get("path");
  if (!path || path->empty()) {
    return Status::InvalidArgument(reader.KeyPath("path"),
                                   ": required (the directory to watch for new files)");
  }
  out.path = fs::NormalizePath(*path);
  SILT_ASSIGN_OR_RETURN(out.max_files_per_trigger, reader.GetInt("maxFilesPerTrigger", 1));
  if (std::optional<std::string> mode = reader.Get("mode")) {
    if (internal::EqualsIgnoreCase(*mode, "PERMISSIVE")) {
      out.mode = ParseMode::kPermissive;
    } else if (internal::EqualsIgnoreCase(*mode, "DROPMALFORMED")) {
      out.mode = ParseMode::kDropMalformed;
    } else if (internal::EqualsIgnoreCase(*mode, "FAILFAST")) {
      out.mode = ParseMode::kFailFast;
    } else {
      return Status::InvalidArgument(reader.KeyPath("mode"),
                                     ": expected PERMISSIVE, "
                                     "DROPMALFORMED or FAILFAST, got '",
                                     *mode, "'");
    }
  }
  if (std::optional<std::string> name = reader.Get("columnNameOfCorruptRecord")) {
    out.corrupt_record_column = *name;
  }
  SILT_ASSIGN_OR_RETURN(std::optional<bool> latest_first, reader.GetBool("latestFirst"));
  out.latest_first = latest_first.value_or(false);

  if (out.format == FileFormat::kText) {
    if (spec.schema_ddl.empty()) {
      out.schema = columnar::DataType::Struct({{"value", columnar::DataType::String(), true}});
    } else {
      Result<columnar::SchemaPtr> schema = columnar::ParseDdlSchema(spec.schema_ddl);
      if (!schema.ok()) {
        return Status::InvalidArgument(spec.key_path, ".schema: ", schema.status().message());
      }
      if ((*schema)->num_fields() != 1 ||
          (*schema)->field(0).type->id() != columnar::TypeId::kString) {
        return Status::InvalidArgument(spec.key_path,
                                       ".schema: the text source has one STRING column "
                                       "(default `value STRING`)");
      }
      out.schema = *schema;
    }
    return out;
  }
  // The JSON reading options (from_json's, expr/function/json/json_options.h),
  // checked now so that a bad pattern or flag fails the job before it runs;
  // FileSource::Make applies them with the session's settings.
  expr::JsonReadOptions check{expr::EvalOptions()};
  for (const auto& [key, value] : spec.options) {
    const std::string where = reader.KeyPath(key) + ":";
    Result<bool> applied = check.Set(key, value, where);
    if (!applied.ok()) return applied.status();
    if (*applied) out.json_read_options.emplace_back(key, value);
  }
  if (spec.schema_ddl.empty()) {
    return Status::InvalidArgument(spec.key_path,
                                   ".schema: required for the json source (Spark DDL, e.g. "
                                   "'device_id STRING, power DOUBLE')");
  }
  Result<columnar::SchemaPtr> schema = columnar::ParseDdlSchema(spec.schema_ddl);
  if (!schema.ok()) {
    return Status::InvalidArgument(spec.key_path, ".schema: ", schema.status().message());
  }
  out.schema = *schema;
  int corrupt = out.schema->FieldIndex(out.corrupt_record_column);
  if (corrupt >= 0) {
    const columnar::Field& field = out.schema->field(corrupt);
    if (field.type->id() != columnar::TypeId::kString || !field.nullable) {
      return Status::InvalidArgument(spec.key_path, ".schema: the corrupt-record column '",
                                     field.name, "' must be a nullable STRING");
    }
    // The decoder matches names exactly; use the schema's spelling.
    out.corrupt_record_column = field.name;
  }
  return out;
}

FileSource::FileSource(FileSourceOptions options, const SourceContext& context,
                       fs::FileSystemPtr data_fs)
    : options_(std::move(options)), context_(context), data_fs_(std::move(data_fs)) {}

Result<std::unique_ptr<FileSource>> FileSource::Make(FileSourceOptions options,
                                                     const SourceContext& context) {
  fs::FileSystemPtr data_fs = context.data_fs;
  if (data_fs == nullptr) {
    SILT_ASSIGN_OR_RETURN(data_fs, fs::FileSystemForPath(options.path));
  }
  if (context.checkpoint_fs == nullptr || context.metadata_dir.empty()) {
    return Status::InvalidArgument("file source: no checkpoint directory for its file log");
  }
  Result<expr::TimeZonePtr> zone = expr::TimeZone::Load(context.session_time_zone);
  if (!zone.ok()) {
    return Status::InvalidArgument("spark.sql.session.timeZone: ", zone.status().message());
  }
  // The session's zone and datetime confs, then the source's JSON options,
  // as Spark's JSONOptions reads them.
  expr::EvalOptions session;
  session.session_zone = *zone;
  SILT_RETURN_NOT_OK(expr::ApplyDateTimeSparkConf(context.spark_conf, &session));
  expr::JsonReadOptions read_options(session);
  for (const auto& [key, value] : options.json_read_options) {
    SILT_RETURN_NOT_OK(read_options.Set(key, value, "source.options." + key + ":").status());
  }
  auto source = std::unique_ptr<FileSource>(new FileSource(std::move(options), context, data_fs));
  source->decode_options_ = read_options.decode_options();
  // Spark's JSON file reader: each element of a top-level array is a row
  // (SPARK-3308), and the bytes are read by Jackson's byte parser.
  source->decode_options_.file_reader = true;
  return source;
}

std::string FileSource::Description() const {
  return "FileStreamSource[" + FilePathToLogUri(options_.path) + "]";
}

std::string FileSource::OffsetJson(int64_t log_offset) {
  JsonWriter w;
  w.BeginObject();
  w.Member("logOffset", log_offset);
  w.EndObject();
  return w.Take();
}

Result<int64_t> FileSource::ParseOffset(std::string_view json) {
  std::string where = "file source offset '" + std::string(json) + "'";
  simdjson::dom::parser parser;
  SILT_ASSIGN_OR_RETURN(simdjson::dom::element element, internal::ParseJson(parser, json, where));
  int64_t value = 0;
  if (!element.get_int64().get(value)) return value;
  simdjson::dom::object object;
  if (element.get_object().get(object) || object.at_key("logOffset").get_int64().get(value)) {
    return Status::InvalidArgument(where, ": expected {\"logOffset\":<n>}");
  }
  return value;
}

Status FileSource::Restore(const std::optional<std::string>& last_planned) {
  entries_.clear();
  seen_.clear();
  current_log_offset_ = -1;
  fs::FileSystem* cfs = context_.checkpoint_fs.get();
  SILT_ASSIGN_OR_RETURN(std::vector<fs::FileInfo> listing, cfs->ListDir(context_.metadata_dir));
  // Spark's allFiles(): the newest compact file holds every entry up to it;
  // later batches are in their own files.
  std::map<int64_t, std::pair<std::string, bool>> files;
  int64_t latest_compact = -1;
  for (const fs::FileInfo& info : listing) {
    if (info.is_dir) continue;
    bool compact = false;
    std::optional<int64_t> id = ParseLogFileName(fs::BaseName(info.path), &compact);
    if (!id) continue;
    files[*id] = {info.path, compact};
    if (compact) latest_compact = std::max(latest_compact, *id);
  }
  for (const auto& [id, file] : files) {
    if (id < latest_compact) continue;
    SILT_ASSIGN_OR_RETURN(std::string text, cfs->ReadFile(file.first));
    SILT_ASSIGN_OR_RETURN(std::vector<FileLogEntry> entries, ParseFileLog(text, file.first));
    for (FileLogEntry& entry : entries) {
      seen_.insert(LogUriToFilePath(entry.path));
      entries_[entry.batch_id].push_back(std::move(entry));
    }
    current_log_offset_ = std::max(current_log_offset_, id);
  }
  if (last_planned && *last_planned != "-") {
    SILT_ASSIGN_OR_RETURN(int64_t planned, ParseOffset(*last_planned));
    if (planned > current_log_offset_) {
      return Status::Corruption("offsets refer to file-source log entry ", planned, " but ",
                                context_.metadata_dir, " only goes up to ", current_log_offset_);
    }
  }
  return Status::OK();
}

Result<std::vector<fs::FileInfo>> FileSource::ListNewFiles() {
  SILT_ASSIGN_OR_RETURN(std::vector<fs::FileInfo> listing, data_fs_->ListRecursive(options_.path));
  std::vector<fs::FileInfo> out;
  for (fs::FileInfo& info : listing) {
    if (info.is_dir) continue;
    std::string_view relative = info.path;
    if (relative.size() > options_.path.size() &&
        relative.substr(0, options_.path.size()) == options_.path) {
      relative.remove_prefix(options_.path.size());
    }
    while (!relative.empty() && relative.front() == '/') relative.remove_prefix(1);
    if (IsHiddenComponent(relative)) continue;
    if (seen_.count(info.path) > 0) continue;
    out.push_back(std::move(info));
  }
  std::sort(out.begin(), out.end(), [](const fs::FileInfo& a, const fs::FileInfo& b) {
    return a.modification_time_ms != b.modification_time_ms
               ? a.modification_time_ms < b.modification_time_ms
               : a.path < b.path;
  });
  if (options_.latest_first) std::reverse(out.begin(), out.end());
  return out;
}

Status FileSource::AppendLog(const std::vector<fs::FileInfo>& files) {
  const int64_t log_id = current_log_offset_ + 1;
  std::vector<FileLogEntry> added;
  for (const fs::FileInfo& info : files) {
    added.push_back({FilePathToLogUri(info.path), info.modification_time_ms, log_id});
  }
  const bool compact = (log_id + 1) % kFileSourceCompactInterval == 0;
  std::vector<FileLogEntry> content;
  if (compact) {
    for (const auto& [id, entries] : entries_) {
      content.insert(content.end(), entries.begin(), entries.end());
    }
  }
  content.insert(content.end(), added.begin(), added.end());
  std::string name = std::to_string(log_id) + (compact ? std::string(kCompactSuffix) : "");
  std::string file = fs::JoinPath(context_.metadata_dir, name);
  Status put = context_.checkpoint_fs->PutIfAbsent(file, SerializeFileLog(content));
  if (put.IsAlreadyExists()) {
    return Status::AlreadyExists(file,
                                 " already exists: another query may be using this checkpoint");
  }
  SILT_RETURN_NOT_OK_CTX(put, "writing file-source log ", file);
  for (const fs::FileInfo& info : files) seen_.insert(info.path);
  entries_[log_id] = std::move(added);
  current_log_offset_ = log_id;
  return Status::OK();
}

Status FileSource::PrepareForAvailableNow() {
  SILT_ASSIGN_OR_RETURN(std::vector<fs::FileInfo> files, ListNewFiles());
  available_now_files_.emplace();
  for (const fs::FileInfo& info : files) available_now_files_->insert(info.path);
  return Status::OK();
}

Result<std::optional<std::string>> FileSource::LatestOffset(const std::optional<std::string>& start,
                                                            const ReadLimit& limit) {
  int64_t begin = -1;
  if (start && *start != "-") {
    SILT_ASSIGN_OR_RETURN(begin, ParseOffset(*start));
  }
  if (begin > current_log_offset_) {
    return Status::Corruption("file source: start offset ", begin, " is past the log's last entry ",
                              current_log_offset_, " in ", context_.metadata_dir);
  }
  // Entries planned before a crash that left no offsets/N: take them first.
  if (current_log_offset_ > begin) {
    return std::optional<std::string>(OffsetJson(current_log_offset_));
  }
  SILT_ASSIGN_OR_RETURN(std::vector<fs::FileInfo> files, ListNewFiles());
  if (available_now_files_) {
    std::erase_if(files, [&](const fs::FileInfo& info) {
      return available_now_files_->count(info.path) == 0;
    });
  }
  if (!limit.all_available && options_.max_files_per_trigger &&
      static_cast<int64_t>(files.size()) > *options_.max_files_per_trigger) {
    files.resize(static_cast<size_t>(*options_.max_files_per_trigger));
  }
  if (files.empty()) return std::optional<std::string>();
  SILT_RETURN_NOT_OK(AppendLog(files));
  return std::optional<std::string>(OffsetJson(current_log_offset_));
}

Result<BatchParts> FileSource::GetBatchParts(const std::optional<std::string>& start,
                                             const std::string& end, int max_parts) {
  SILT_ASSIGN_OR_RETURN(FileList files, BatchFiles(start, end));
  const size_t num_parts = std::max<size_t>(
      1, std::min(files.paths.size(), static_cast<size_t>(std::max(max_parts, 1))));
  std::vector<FileList> groups(num_parts);
  for (size_t idx = 0; idx < files.paths.size(); ++idx) {
    groups[idx % num_parts].paths.push_back(std::move(files.paths[idx]));
    groups[idx % num_parts].uris.push_back(std::move(files.uris[idx]));
  }
  BatchParts parts;
  for (FileList& group : groups) {
    auto reader = std::make_unique<FileBatchReader>(options_, decode_options_, data_fs_,
                                                    std::move(group.paths), std::move(group.uris));
    SILT_RETURN_NOT_OK(reader->Init());
    parts.readers.push_back(std::move(reader));
  }
  parts.threads = parts.readers.size();
  return parts;
}

Result<FileSource::FileList> FileSource::BatchFiles(const std::optional<std::string>& start,
                                                    const std::string& end) {
  int64_t begin = -1;
  if (start && *start != "-") {
    SILT_ASSIGN_OR_RETURN(begin, ParseOffset(*start));
  }
  SILT_ASSIGN_OR_RETURN(int64_t stop, ParseOffset(end));
  if (stop > current_log_offset_) {
    return Status::Corruption("file source: end offset ", stop, " is past the log's last entry ",
                              current_log_offset_, " in ", context_.metadata_dir);
  }
  FileList out;
  for (auto it = entries_.upper_bound(begin); it != entries_.end() && it->first <= stop; ++it) {
    for (const FileLogEntry& entry : it->second) {
      out.paths.push_back(LogUriToFilePath(entry.path));
      out.uris.push_back(entry.path);
    }
  }
  return out;
}

Result<std::unique_ptr<BatchReader>> FileSource::GetBatch(const std::optional<std::string>& start,
                                                          const std::string& end) {
  SILT_ASSIGN_OR_RETURN(FileList files, BatchFiles(start, end));
  auto reader = std::make_unique<FileBatchReader>(options_, decode_options_, data_fs_,
                                                  std::move(files.paths), std::move(files.uris));
  SILT_RETURN_NOT_OK(reader->Init());
  return std::unique_ptr<BatchReader>(std::move(reader));
}

}  // namespace silt::stream
