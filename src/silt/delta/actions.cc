#include "silt/delta/actions.h"

#include <simdjson.h>

#include <charconv>
#include <cstdio>

#include "silt/base/json_writer.h"

namespace silt::delta {

namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

// Errors carry the file, the line and the action so that a user can find the
// offending line in `_delta_log` with a text editor.
class LineContext {
 public:
  LineContext(std::string_view source, int64_t line) : source_(source), line_(line) {}
  Status Error(std::string_view action, std::string_view problem) const {
    return Status::Corruption(Describe(action), ": ", problem);
  }
  std::string Describe(std::string_view action) const {
    return Status::Concat(source_, " line ", line_, ": ", action);
  }

 private:
  std::string_view source_;
  int64_t line_;
};

bool IsNull(const element& e) { return e.type() == element_type::NULL_VALUE; }

// Looks up `key`; nullptr-like (absent) when missing or JSON null, since the
// protocol treats both as "not set".
std::optional<element> Field(const object& obj, std::string_view key) {
  element value;
  if (obj.at_key(key).get(value) != simdjson::SUCCESS) return std::nullopt;
  if (IsNull(value)) return std::nullopt;
  return value;
}

Result<std::string> RequiredString(const object& obj, std::string_view key, std::string_view action,
                                   const LineContext& ctx) {
  auto value = Field(obj, key);
  std::string_view s;
  if (!value || value->get_string().get(s) != simdjson::SUCCESS) {
    return ctx.Error(action, Status::Concat("field '", key, "' is missing or not a string"));
  }
  return std::string(s);
}

Result<std::optional<std::string>> OptionalString(const object& obj, std::string_view key,
                                                  std::string_view action, const LineContext& ctx) {
  auto value = Field(obj, key);
  if (!value) return std::optional<std::string>();
  std::string_view s;
  if (value->get_string().get(s) != simdjson::SUCCESS) {
    return ctx.Error(action, Status::Concat("field '", key, "' is not a string"));
  }
  return std::optional<std::string>(std::string(s));
}

Result<std::optional<int64_t>> OptionalInt(const object& obj, std::string_view key,
                                           std::string_view action, const LineContext& ctx) {
  auto value = Field(obj, key);
  if (!value) return std::optional<int64_t>();
  int64_t v = 0;
  if (value->get_int64().get(v) != simdjson::SUCCESS) {
    return ctx.Error(action, Status::Concat("field '", key, "' is not an integer"));
  }
  return std::optional<int64_t>(v);
}

Result<int64_t> RequiredInt(const object& obj, std::string_view key, std::string_view action,
                            const LineContext& ctx) {
  SILT_ASSIGN_OR_RETURN(auto v, OptionalInt(obj, key, action, ctx));
  if (!v) return ctx.Error(action, Status::Concat("field '", key, "' is missing"));
  return *v;
}

Result<std::optional<bool>> OptionalBool(const object& obj, std::string_view key,
                                         std::string_view action, const LineContext& ctx) {
  auto value = Field(obj, key);
  if (!value) return std::optional<bool>();
  bool v = false;
  if (value->get_bool().get(v) != simdjson::SUCCESS) {
    return ctx.Error(action, Status::Concat("field '", key, "' is not a boolean"));
  }
  return std::optional<bool>(v);
}

// A string->string map. Values that are not strings are kept as their JSON
// text so that no information is lost; null values are dropped.
Result<std::map<std::string, std::string>> StringMap(const object& obj, std::string_view key,
                                                     std::string_view action,
                                                     const LineContext& ctx) {
  std::map<std::string, std::string> out;
  auto value = Field(obj, key);
  if (!value) return out;
  object map;
  if (value->get_object().get(map) != simdjson::SUCCESS) {
    return ctx.Error(action, Status::Concat("field '", key, "' is not an object"));
  }
  for (auto [k, v] : map) {
    if (IsNull(v)) continue;
    std::string_view s;
    if (v.get_string().get(s) == simdjson::SUCCESS) {
      out.emplace(std::string(k), std::string(s));
    } else {
      out.emplace(std::string(k), simdjson::minify(v));
    }
  }
  return out;
}

// partitionValues: JSON null and "" both mean a null value.
Result<PartitionValues> ParsePartitionValues(const object& obj, std::string_view action,
                                             const LineContext& ctx) {
  PartitionValues out;
  auto value = Field(obj, "partitionValues");
  if (!value) return out;
  object map;
  if (value->get_object().get(map) != simdjson::SUCCESS) {
    return ctx.Error(action, "field 'partitionValues' is not an object");
  }
  for (auto [k, v] : map) {
    std::optional<std::string> parsed;
    if (!IsNull(v)) {
      std::string_view s;
      if (v.get_string().get(s) != simdjson::SUCCESS) {
        return ctx.Error(action, Status::Concat("partition value of '", k, "' is not a string"));
      }
      if (!s.empty()) parsed = std::string(s);
    }
    out.emplace_back(std::string(k), std::move(parsed));
  }
  return out;
}

Result<std::vector<std::string>> StringArray(const element& value, std::string_view key,
                                             std::string_view action, const LineContext& ctx) {
  std::vector<std::string> out;
  array arr;
  if (value.get_array().get(arr) != simdjson::SUCCESS) {
    return ctx.Error(action, Status::Concat("field '", key, "' is not an array"));
  }
  for (element item : arr) {
    std::string_view s;
    if (item.get_string().get(s) != simdjson::SUCCESS) {
      return ctx.Error(action, Status::Concat("field '", key, "' has a non-string entry"));
    }
    out.emplace_back(s);
  }
  return out;
}

Result<Protocol> ParseProtocol(const object& obj, const LineContext& ctx) {
  constexpr std::string_view kAction = "protocol";
  Protocol p;
  SILT_ASSIGN_OR_RETURN(int64_t reader, RequiredInt(obj, "minReaderVersion", kAction, ctx));
  SILT_ASSIGN_OR_RETURN(int64_t writer, RequiredInt(obj, "minWriterVersion", kAction, ctx));
  p.min_reader_version = static_cast<int32_t>(reader);
  p.min_writer_version = static_cast<int32_t>(writer);
  if (auto v = Field(obj, "readerFeatures")) {
    SILT_ASSIGN_OR_RETURN(p.reader_features, StringArray(*v, "readerFeatures", kAction, ctx));
  }
  if (auto v = Field(obj, "writerFeatures")) {
    SILT_ASSIGN_OR_RETURN(p.writer_features, StringArray(*v, "writerFeatures", kAction, ctx));
  }
  return p;
}

Result<Metadata> ParseMetadata(const object& obj, const LineContext& ctx) {
  constexpr std::string_view kAction = "metaData";
  Metadata m;
  SILT_ASSIGN_OR_RETURN(m.id, RequiredString(obj, "id", kAction, ctx));
  SILT_ASSIGN_OR_RETURN(m.name, OptionalString(obj, "name", kAction, ctx));
  SILT_ASSIGN_OR_RETURN(m.description, OptionalString(obj, "description", kAction, ctx));
  if (auto format = Field(obj, "format")) {
    object format_obj;
    if (format->get_object().get(format_obj) != simdjson::SUCCESS) {
      return ctx.Error(kAction, "field 'format' is not an object");
    }
    SILT_ASSIGN_OR_RETURN(auto provider, OptionalString(format_obj, "provider", kAction, ctx));
    if (provider) m.format_provider = *provider;
  }
  // schemaString is required by the protocol, but some historical tables
  // (and Delta's own test tables) omit it; a snapshot without a schema is
  // reported when something needs the schema, not while parsing the log.
  SILT_ASSIGN_OR_RETURN(auto schema_string, OptionalString(obj, "schemaString", kAction, ctx));
  if (schema_string) {
    m.schema_string = std::move(*schema_string);
    // Keeps the schema parser's code: an unsupported type (variant) is
    // NotSupported, not Corruption.
    SILT_ASSIGN_OR_RETURN_CTX(m.schema, columnar::SchemaFromJson(m.schema_string),
                              ctx.Describe(kAction), ": schemaString");
  }
  if (auto cols = Field(obj, "partitionColumns")) {
    SILT_ASSIGN_OR_RETURN(m.partition_columns,
                          StringArray(*cols, "partitionColumns", kAction, ctx));
  }
  SILT_ASSIGN_OR_RETURN(m.configuration, StringMap(obj, "configuration", kAction, ctx));
  SILT_ASSIGN_OR_RETURN(m.created_time, OptionalInt(obj, "createdTime", kAction, ctx));
  return m;
}

Result<std::optional<DeletionVectorDescriptor>> ParseDeletionVector(const object& obj,
                                                                    std::string_view action,
                                                                    const LineContext& ctx) {
  auto value = Field(obj, "deletionVector");
  if (!value) return std::optional<DeletionVectorDescriptor>();
  object dv_obj;
  if (value->get_object().get(dv_obj) != simdjson::SUCCESS) {
    return ctx.Error(action, "field 'deletionVector' is not an object");
  }
  DeletionVectorDescriptor dv;
  SILT_ASSIGN_OR_RETURN(dv.storage_type, RequiredString(dv_obj, "storageType", action, ctx));
  SILT_ASSIGN_OR_RETURN(dv.path_or_inline_dv,
                        RequiredString(dv_obj, "pathOrInlineDv", action, ctx));
  SILT_ASSIGN_OR_RETURN(dv.offset, OptionalInt(dv_obj, "offset", action, ctx));
  SILT_ASSIGN_OR_RETURN(dv.size_in_bytes, RequiredInt(dv_obj, "sizeInBytes", action, ctx));
  SILT_ASSIGN_OR_RETURN(dv.cardinality, RequiredInt(dv_obj, "cardinality", action, ctx));
  SILT_ASSIGN_OR_RETURN(dv.max_row_index, OptionalInt(dv_obj, "maxRowIndex", action, ctx));
  return std::optional<DeletionVectorDescriptor>(std::move(dv));
}

Result<AddFile> ParseAdd(const object& obj, const LineContext& ctx) {
  constexpr std::string_view kAction = "add";
  AddFile a;
  SILT_ASSIGN_OR_RETURN(a.path, RequiredString(obj, "path", kAction, ctx));
  SILT_ASSIGN_OR_RETURN(a.partition_values, ParsePartitionValues(obj, kAction, ctx));
  SILT_ASSIGN_OR_RETURN(auto size, OptionalInt(obj, "size", kAction, ctx));
  a.size = size.value_or(0);
  SILT_ASSIGN_OR_RETURN(auto mtime, OptionalInt(obj, "modificationTime", kAction, ctx));
  a.modification_time = mtime.value_or(0);
  SILT_ASSIGN_OR_RETURN(auto data_change, OptionalBool(obj, "dataChange", kAction, ctx));
  a.data_change = data_change.value_or(true);
  SILT_ASSIGN_OR_RETURN(a.stats, OptionalString(obj, "stats", kAction, ctx));
  SILT_ASSIGN_OR_RETURN(a.tags, StringMap(obj, "tags", kAction, ctx));
  SILT_ASSIGN_OR_RETURN(a.deletion_vector, ParseDeletionVector(obj, kAction, ctx));
  SILT_ASSIGN_OR_RETURN(a.base_row_id, OptionalInt(obj, "baseRowId", kAction, ctx));
  SILT_ASSIGN_OR_RETURN(a.default_row_commit_version,
                        OptionalInt(obj, "defaultRowCommitVersion", kAction, ctx));
  SILT_ASSIGN_OR_RETURN(a.clustering_provider,
                        OptionalString(obj, "clusteringProvider", kAction, ctx));
  return a;
}

Result<RemoveFile> ParseRemove(const object& obj, const LineContext& ctx) {
  constexpr std::string_view kAction = "remove";
  RemoveFile r;
  SILT_ASSIGN_OR_RETURN(r.path, RequiredString(obj, "path", kAction, ctx));
  SILT_ASSIGN_OR_RETURN(r.deletion_timestamp, OptionalInt(obj, "deletionTimestamp", kAction, ctx));
  SILT_ASSIGN_OR_RETURN(auto data_change, OptionalBool(obj, "dataChange", kAction, ctx));
  r.data_change = data_change.value_or(true);
  SILT_ASSIGN_OR_RETURN(auto extended, OptionalBool(obj, "extendedFileMetadata", kAction, ctx));
  r.extended_file_metadata = extended.value_or(false);
  SILT_ASSIGN_OR_RETURN(r.partition_values, ParsePartitionValues(obj, kAction, ctx));
  SILT_ASSIGN_OR_RETURN(r.size, OptionalInt(obj, "size", kAction, ctx));
  SILT_ASSIGN_OR_RETURN(r.deletion_vector, ParseDeletionVector(obj, kAction, ctx));
  SILT_ASSIGN_OR_RETURN(r.stats, OptionalString(obj, "stats", kAction, ctx));
  SILT_ASSIGN_OR_RETURN(r.base_row_id, OptionalInt(obj, "baseRowId", kAction, ctx));
  SILT_ASSIGN_OR_RETURN(r.default_row_commit_version,
                        OptionalInt(obj, "defaultRowCommitVersion", kAction, ctx));
  return r;
}

Result<DomainMetadata> ParseDomainMetadata(const object& obj, const LineContext& ctx) {
  constexpr std::string_view kAction = "domainMetadata";
  DomainMetadata d;
  SILT_ASSIGN_OR_RETURN(d.domain, RequiredString(obj, "domain", kAction, ctx));
  SILT_ASSIGN_OR_RETURN(d.configuration, RequiredString(obj, "configuration", kAction, ctx));
  SILT_ASSIGN_OR_RETURN(auto removed, OptionalBool(obj, "removed", kAction, ctx));
  d.removed = removed.value_or(false);
  return d;
}

Result<AddCdcFile> ParseCdc(const object& obj, const LineContext& ctx) {
  constexpr std::string_view kAction = "cdc";
  AddCdcFile c;
  SILT_ASSIGN_OR_RETURN(c.path, RequiredString(obj, "path", kAction, ctx));
  SILT_ASSIGN_OR_RETURN(c.partition_values, ParsePartitionValues(obj, kAction, ctx));
  SILT_ASSIGN_OR_RETURN(auto size, OptionalInt(obj, "size", kAction, ctx));
  c.size = size.value_or(0);
  SILT_ASSIGN_OR_RETURN(auto data_change, OptionalBool(obj, "dataChange", kAction, ctx));
  c.data_change = data_change.value_or(false);
  return c;
}

Result<Txn> ParseTxn(const object& obj, const LineContext& ctx) {
  constexpr std::string_view kAction = "txn";
  Txn t;
  SILT_ASSIGN_OR_RETURN(t.app_id, RequiredString(obj, "appId", kAction, ctx));
  SILT_ASSIGN_OR_RETURN(t.version, RequiredInt(obj, "version", kAction, ctx));
  SILT_ASSIGN_OR_RETURN(t.last_updated, OptionalInt(obj, "lastUpdated", kAction, ctx));
  return t;
}

// The commitInfo object's own text. delta-spark writes each action as
// `{"commitInfo":{...}}`, so the object is the line minus that wrapper; this
// keeps numbers and key order exactly as written. Anything else falls back to
// simdjson's minified re-serialization.
std::string CommitInfoText(std::string_view line, const element& value) {
  constexpr std::string_view kPrefix = "{\"commitInfo\":";
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
  if (line.size() > kPrefix.size() + 1 && line.substr(0, kPrefix.size()) == kPrefix &&
      line.back() == '}') {
    std::string_view inner = line.substr(kPrefix.size(), line.size() - kPrefix.size() - 1);
    if (!inner.empty() && inner.front() == '{' && inner.back() == '}') return std::string(inner);
  }
  return simdjson::minify(value);
}

Status ParseCommitInfo(std::string_view line, const element& value, CommitActions* out,
                       const LineContext& ctx) {
  object obj;
  if (value.get_object().get(obj) != simdjson::SUCCESS) {
    return ctx.Error("commitInfo", "is not an object");
  }
  out->commit_info_json = CommitInfoText(line, value);
  // inCommitTimestamp, when present, is the commit's timestamp by definition;
  // a malformed timestamp is not worth failing the read for (commitInfo is
  // informational), so it is simply not used.
  for (std::string_view key : {"inCommitTimestamp", "timestamp"}) {
    auto ts = Field(obj, key);
    int64_t v = 0;
    if (ts && ts->get_int64().get(v) == simdjson::SUCCESS) {
      out->commit_timestamp_ms = v;
      break;
    }
  }
  return Status::OK();
}

Status ParseLine(std::string_view line, const element& root, CommitActions* out,
                 const LineContext& ctx) {
  object obj;
  if (root.get_object().get(obj) != simdjson::SUCCESS) {
    return ctx.Error("line", "is not a JSON object");
  }
  for (auto [key, value] : obj) {
    if (key == "commitInfo") {
      SILT_RETURN_NOT_OK(ParseCommitInfo(line, value, out, ctx));
      continue;
    }
    bool known = key == "add" || key == "remove" || key == "metaData" || key == "protocol" ||
                 key == "txn" || key == "domainMetadata";
    if (!known) {
      out->other_action_keys.emplace_back(key);
      object cdc;
      if (key == "cdc" && value.get_object().get(cdc) == simdjson::SUCCESS) {
        SILT_ASSIGN_OR_RETURN(auto file, ParseCdc(cdc, ctx));
        out->file_action_order.emplace_back(FileActionKind::kCdc,
                                            static_cast<int32_t>(out->cdc_files.size()));
        out->cdc_files.push_back(std::move(file));
      }
      continue;
    }
    object action;
    if (value.get_object().get(action) != simdjson::SUCCESS) {
      return ctx.Error(key, "is not an object");
    }
    if (key == "add") {
      SILT_ASSIGN_OR_RETURN(auto add, ParseAdd(action, ctx));
      out->file_action_order.emplace_back(FileActionKind::kAdd,
                                          static_cast<int32_t>(out->adds.size()));
      out->adds.push_back(std::move(add));
    } else if (key == "remove") {
      SILT_ASSIGN_OR_RETURN(auto remove, ParseRemove(action, ctx));
      out->file_action_order.emplace_back(FileActionKind::kRemove,
                                          static_cast<int32_t>(out->removes.size()));
      out->removes.push_back(std::move(remove));
    } else if (key == "metaData") {
      if (out->metadata) return ctx.Error(key, "a commit holds more than one metaData action");
      SILT_ASSIGN_OR_RETURN(out->metadata, ParseMetadata(action, ctx));
    } else if (key == "protocol") {
      if (out->protocol) return ctx.Error(key, "a commit holds more than one protocol action");
      SILT_ASSIGN_OR_RETURN(out->protocol, ParseProtocol(action, ctx));
    } else if (key == "domainMetadata") {
      SILT_ASSIGN_OR_RETURN(auto domain, ParseDomainMetadata(action, ctx));
      out->domain_metadata.push_back(std::move(domain));
    } else {
      SILT_ASSIGN_OR_RETURN(auto txn, ParseTxn(action, ctx));
      out->txns.push_back(std::move(txn));
    }
  }
  return Status::OK();
}

bool IsBlank(std::string_view line) {
  for (char c : line) {
    if (c != ' ' && c != '\t' && c != '\r') return false;
  }
  return true;
}

void WritePartitionValues(JsonWriter* w, const PartitionValues& values) {
  w->Key("partitionValues");
  w->BeginObject();
  for (const auto& [name, value] : values) {
    w->Key(name);
    if (value) {
      w->String(*value);
    } else {
      w->Null();
    }
  }
  w->EndObject();
}

void WriteStringMap(JsonWriter* w, const std::map<std::string, std::string>& map) {
  w->BeginObject();
  for (const auto& [k, v] : map) {
    w->Member(k, v);
  }
  w->EndObject();
}

void WriteStringArray(JsonWriter* w, const std::vector<std::string>& values) {
  w->BeginArray();
  for (const auto& v : values) w->String(v);
  w->EndArray();
}

// A file's deletion vector as delta-spark writes it in add and remove
// actions: a remove must carry the add's descriptor, since readers match the
// two by path and deletion vector id.
void WriteDeletionVector(JsonWriter* w, const DeletionVectorDescriptor& dv) {
  w->Key("deletionVector");
  w->BeginObject();
  w->Member("storageType", dv.storage_type);
  w->Member("pathOrInlineDv", dv.path_or_inline_dv);
  if (dv.offset) {
    w->Member("offset", *dv.offset);
  }
  w->Member("sizeInBytes", dv.size_in_bytes);
  w->Member("cardinality", dv.cardinality);
  if (dv.max_row_index) {
    w->Member("maxRowIndex", *dv.max_row_index);
  }
  w->EndObject();
}

void EndLine(JsonWriter* w, std::string* out) {
  *out += w->str();
  *out += '\n';
  w->Clear();
}

}  // namespace

Result<CommitActions> ParseCommit(std::string_view text, std::string_view source) {
  CommitActions out;
  // One padded copy of the whole file: every line is then followed by
  // readable bytes, so simdjson may parse lines in place.
  simdjson::padded_string padded(text);
  simdjson::dom::parser parser;
  const char* base = padded.data();
  size_t pos = 0;
  int64_t line_no = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    ++line_no;
    std::string_view line(base + pos, end - pos);
    pos = end + 1;
    if (IsBlank(line)) continue;
    if (line.back() == '\r') line.remove_suffix(1);
    LineContext ctx(source, line_no);
    element root;
    auto error = parser.parse(line.data(), line.size(), false).get(root);
    if (error != simdjson::SUCCESS) {
      return ctx.Error("line",
                       Status::Concat("invalid JSON (", simdjson::error_message(error), ")"));
    }
    out.raw_lines.emplace_back(line);
    SILT_RETURN_NOT_OK(ParseLine(line, root, &out, ctx));
  }
  return out;
}

std::string SerializeCommit(const CommitActions& actions) {
  std::string out;
  JsonWriter w;
  if (actions.commit_info_json) {
    w.BeginObject();
    w.Key("commitInfo");
    w.Raw(*actions.commit_info_json);
    w.EndObject();
    EndLine(&w, &out);
  }
  if (actions.protocol) {
    const Protocol& p = *actions.protocol;
    w.BeginObject();
    w.Key("protocol");
    w.BeginObject();
    w.Member("minReaderVersion", p.min_reader_version);
    w.Member("minWriterVersion", p.min_writer_version);
    if (p.reader_features) {
      w.Key("readerFeatures");
      WriteStringArray(&w, *p.reader_features);
    }
    if (p.writer_features) {
      w.Key("writerFeatures");
      WriteStringArray(&w, *p.writer_features);
    }
    w.EndObject();
    w.EndObject();
    EndLine(&w, &out);
  }
  if (actions.metadata) {
    const Metadata& m = *actions.metadata;
    w.BeginObject();
    w.Key("metaData");
    w.BeginObject();
    w.Member("id", m.id);
    if (m.name) {
      w.Member("name", *m.name);
    }
    if (m.description) {
      w.Member("description", *m.description);
    }
    w.Key("format");
    w.BeginObject();
    w.Member("provider", m.format_provider);
    w.Key("options");
    w.BeginObject();
    w.EndObject();
    w.EndObject();
    w.Member("schemaString", m.schema_string);
    w.Key("partitionColumns");
    WriteStringArray(&w, m.partition_columns);
    w.Key("configuration");
    WriteStringMap(&w, m.configuration);
    if (m.created_time) {
      w.Member("createdTime", *m.created_time);
    }
    w.EndObject();
    w.EndObject();
    EndLine(&w, &out);
  }
  for (const Txn& t : actions.txns) {
    w.BeginObject();
    w.Key("txn");
    w.BeginObject();
    w.Member("appId", t.app_id);
    w.Member("version", t.version);
    if (t.last_updated) {
      w.Member("lastUpdated", *t.last_updated);
    }
    w.EndObject();
    w.EndObject();
    EndLine(&w, &out);
  }
  for (const AddFile& a : actions.adds) {
    w.BeginObject();
    w.Key("add");
    w.BeginObject();
    w.Member("path", a.path);
    WritePartitionValues(&w, a.partition_values);
    w.Member("size", a.size);
    w.Member("modificationTime", a.modification_time);
    w.Member("dataChange", a.data_change);
    if (a.stats) {
      w.Member("stats", *a.stats);
    }
    if (!a.tags.empty()) {
      w.Key("tags");
      WriteStringMap(&w, a.tags);
    }
    if (a.deletion_vector) {
      WriteDeletionVector(&w, *a.deletion_vector);
    }
    if (a.base_row_id) {
      w.Member("baseRowId", *a.base_row_id);
    }
    if (a.default_row_commit_version) {
      w.Member("defaultRowCommitVersion", *a.default_row_commit_version);
    }
    if (a.clustering_provider) {
      w.Member("clusteringProvider", *a.clustering_provider);
    }
    w.EndObject();
    w.EndObject();
    EndLine(&w, &out);
  }
  for (const AddCdcFile& c : actions.cdc_files) {
    w.BeginObject();
    w.Key("cdc");
    w.BeginObject();
    w.Member("path", c.path);
    WritePartitionValues(&w, c.partition_values);
    w.Member("size", c.size);
    w.Member("dataChange", c.data_change);
    w.EndObject();
    w.EndObject();
    EndLine(&w, &out);
  }
  for (const RemoveFile& r : actions.removes) {
    w.BeginObject();
    w.Key("remove");
    w.BeginObject();
    w.Member("path", r.path);
    if (r.deletion_timestamp) {
      w.Member("deletionTimestamp", *r.deletion_timestamp);
    }
    w.Member("dataChange", r.data_change);
    // delta-spark writes extendedFileMetadata only when it is true (it is an
    // Option that is None for removes built without the add's metadata).
    if (r.extended_file_metadata) {
      w.Member("extendedFileMetadata", true);
    }
    if (r.extended_file_metadata || !r.partition_values.empty()) {
      WritePartitionValues(&w, r.partition_values);
    }
    if (r.size) {
      w.Member("size", *r.size);
    }
    if (r.deletion_vector) {
      WriteDeletionVector(&w, *r.deletion_vector);
    }
    if (r.stats) {
      w.Member("stats", *r.stats);
    }
    if (r.base_row_id) {
      w.Member("baseRowId", *r.base_row_id);
    }
    if (r.default_row_commit_version) {
      w.Member("defaultRowCommitVersion", *r.default_row_commit_version);
    }
    w.EndObject();
    w.EndObject();
    EndLine(&w, &out);
  }
  for (const DomainMetadata& d : actions.domain_metadata) {
    w.BeginObject();
    w.Key("domainMetadata");
    w.BeginObject();
    w.Member("domain", d.domain);
    w.Member("configuration", d.configuration);
    w.Member("removed", d.removed);
    w.EndObject();
    w.EndObject();
    EndLine(&w, &out);
  }
  return out;
}

std::string DeletionVectorDescriptor::UniqueId() const {
  std::string id = storage_type + path_or_inline_dv;
  if (offset) id += "@" + std::to_string(*offset);
  return id;
}

std::string CommitFileName(int64_t version) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%020lld.json", static_cast<long long>(version));
  return buf;
}

std::optional<int64_t> ParseCommitFileName(std::string_view name) {
  constexpr size_t kDigits = 20;
  constexpr std::string_view kSuffix = ".json";
  if (name.size() != kDigits + kSuffix.size() || name.substr(kDigits) != kSuffix) {
    return std::nullopt;
  }
  int64_t version = 0;
  auto [ptr, ec] = std::from_chars(name.data(), name.data() + kDigits, version);
  if (ec != std::errc() || ptr != name.data() + kDigits || version < 0) return std::nullopt;
  return version;
}

}  // namespace silt::delta
