#include "silt/stream/checkpoint/checkpoint.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "silt/base/json_writer.h"
#include "silt/base/logging.h"
#include "silt/base/uuid.h"
#include "silt/stream/json_internal.h"

namespace silt::stream {

namespace {

constexpr std::string_view kMetadataFile = "metadata";
constexpr std::string_view kOffsetsDir = "offsets";
constexpr std::string_view kCommitsDir = "commits";
constexpr std::string_view kSourcesDir = "sources";

// Spark's metadata-log file names are plain decimal batch ids.
std::optional<int64_t> ParseBatchFileName(std::string_view name) {
  if (name.empty() || name.size() > 18) return std::nullopt;
  int64_t v = 0;
  for (char c : name) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) {
      lines.push_back(text.substr(pos));
      break;
    }
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  for (std::string_view& line : lines) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  }
  // A trailing newline (written by other tools) is not an extra entry.
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

// Checks the "v<N>" header line. Errors name the file.
Status CheckVersion(std::string_view line, int max_supported, std::string_view source,
                    int* version) {
  if (line.size() < 2 || line[0] != 'v') {
    return Status::Corruption(source, ": line 1: expected a log version like 'v1', got '",
                              line.substr(0, 40), "'");
  }
  std::optional<int64_t> v = ParseBatchFileName(line.substr(1));
  if (!v || *v < 1) {
    return Status::Corruption(source, ": line 1: invalid log version '", line.substr(0, 40), "'");
  }
  if (*v > max_supported) {
    return Status::NotSupported("log version v", *v, " in ", source, " (silt reads up to v",
                                max_supported, "; the checkpoint was written by a newer Spark)");
  }
  *version = static_cast<int>(*v);
  return Status::OK();
}

}  // namespace

namespace {

// Spark 3.5's relevantSQLConfs with their default values, in the order
// Spark's json4s serialization emits them.
constexpr std::pair<std::string_view, std::string_view> kOffsetConfs[] = {
    {"spark.sql.streaming.stateStore.providerClass",
     "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"},
    {"spark.sql.streaming.join.stateFormatVersion", "2"},
    {"spark.sql.streaming.stateStore.compression.codec", "lz4"},
    {"spark.sql.streaming.stateStore.rocksdb.formatVersion", "5"},
    {"spark.sql.streaming.statefulOperator.useStrictDistribution", "true"},
    {"spark.sql.streaming.flatMapGroupsWithState.stateFormatVersion", "2"},
    {"spark.sql.streaming.multipleWatermarkPolicy", "min"},
    {"spark.sql.streaming.aggregation.stateFormatVersion", "2"},
    {"spark.sql.shuffle.partitions", "200"},
};

}  // namespace

bool IsOffsetConfKey(std::string_view key) {
  for (const auto& [name, value] : kOffsetConfs) {
    if (name == key) return true;
  }
  return false;
}

std::string OffsetConfJson(const std::map<std::string, std::string>& job_conf) {
  JsonWriter w;
  w.BeginObject();
  for (const auto& [key, default_value] : kOffsetConfs) {
    auto it = job_conf.find(std::string(key));
    w.Member(key, it == job_conf.end() ? default_value : std::string_view(it->second));
  }
  w.EndObject();
  return w.Take();
}

const std::string& DefaultOffsetConfJson() {
  static const std::string kConf = OffsetConfJson({});
  return kConf;
}

std::string SerializeOffsetSeq(const OffsetSeq& seq) {
  JsonWriter w;
  w.BeginObject();
  w.Member("batchWatermarkMs", seq.batch_watermark_ms);
  w.Member("batchTimestampMs", seq.batch_timestamp_ms);
  w.Key("conf");
  w.Raw(seq.conf_json.empty() ? std::string_view("{}") : std::string_view(seq.conf_json));
  w.EndObject();
  std::string out = "v1\n";
  out += w.str();
  for (const std::string& offset : seq.source_offsets) {
    out += '\n';
    out += offset.empty() ? std::string("-") : offset;
  }
  return out;
}

Result<OffsetSeq> ParseOffsetSeq(std::string_view text, int64_t batch_id, std::string_view source) {
  std::vector<std::string_view> lines = SplitLines(text);
  if (lines.empty()) return Status::Corruption(source, ": empty offset log file");
  int version = 0;
  SILT_RETURN_NOT_OK(CheckVersion(lines[0], 1, source, &version));
  OffsetSeq seq;
  seq.batch_id = batch_id;
  // Very old Spark logs may leave the metadata line empty.
  if (lines.size() >= 2 && !lines[1].empty()) {
    simdjson::dom::parser parser;
    std::string where = std::string(source) + ": line 2";
    SILT_ASSIGN_OR_RETURN(simdjson::dom::object meta,
                          internal::ParseJsonObject(parser, lines[1], where));
    SILT_ASSIGN_OR_RETURN(std::optional<int64_t> watermark,
                          internal::GetOptionalInt(meta, "batchWatermarkMs", where));
    SILT_ASSIGN_OR_RETURN(std::optional<int64_t> timestamp,
                          internal::GetOptionalInt(meta, "batchTimestampMs", where));
    seq.batch_watermark_ms = watermark.value_or(0);
    seq.batch_timestamp_ms = timestamp.value_or(0);
    simdjson::dom::element conf;
    if (!meta.at_key("conf").get(conf)) {
      if (!conf.is_object()) return Status::Corruption(where, ": \"conf\" must be an object");
      seq.conf_json = simdjson::minify(conf);
    }
  }
  for (size_t line_idx = 2; line_idx < lines.size(); ++line_idx) {
    std::string_view line = lines[line_idx];
    if (line.empty()) {
      return Status::Corruption(source, ": line ", static_cast<int64_t>(line_idx + 1),
                                ": empty source offset (a source without offset is '-')");
    }
    seq.source_offsets.emplace_back(line);
  }
  return seq;
}

std::string SerializeCommitMark(const CommitMark& mark) {
  JsonWriter w;
  w.BeginObject();
  w.Member("nextBatchWatermarkMs", mark.next_batch_watermark_ms);
  w.EndObject();
  return "v1\n" + w.Take();
}

Result<CommitMark> ParseCommitMark(std::string_view text, int64_t batch_id,
                                   std::string_view source) {
  std::vector<std::string_view> lines = SplitLines(text);
  if (lines.empty()) return Status::Corruption(source, ": empty commit log file");
  int version = 0;
  SILT_RETURN_NOT_OK(CheckVersion(lines[0], 2, source, &version));
  CommitMark mark;
  mark.batch_id = batch_id;
  if (lines.size() >= 2 && !lines[1].empty()) {
    simdjson::dom::parser parser;
    std::string where = std::string(source) + ": line 2";
    SILT_ASSIGN_OR_RETURN(simdjson::dom::object meta,
                          internal::ParseJsonObject(parser, lines[1], where));
    SILT_ASSIGN_OR_RETURN(std::optional<int64_t> watermark,
                          internal::GetOptionalInt(meta, "nextBatchWatermarkMs", where));
    mark.next_batch_watermark_ms = watermark.value_or(0);
  }
  return mark;
}

Result<std::unique_ptr<CheckpointDir>> CheckpointDir::Open(fs::FileSystemPtr fs, std::string path) {
  if (fs == nullptr) return Status::InvalidArgument("checkpoint: no file system given");
  if (path.empty()) return Status::InvalidArgument("checkpoint location is empty");
  return std::unique_ptr<CheckpointDir>(new CheckpointDir(std::move(fs), std::move(path)));
}

std::string CheckpointDir::SourceDir(int source_index) const {
  return fs::JoinPath(fs::JoinPath(path_, kSourcesDir), std::to_string(source_index));
}

std::string CheckpointDir::StateOperatorDir(int operator_id) const {
  return fs::JoinPath(fs::JoinPath(path_, "state"), std::to_string(operator_id));
}

std::string CheckpointDir::StateDir(int operator_id, int partition_id) const {
  return fs::JoinPath(StateOperatorDir(operator_id), std::to_string(partition_id));
}

Status CheckpointDir::CheckStateOperators(const std::vector<int>& job_operators,
                                          std::string_view marker) {
  const std::string state_dir = fs::JoinPath(path_, "state");
  Result<std::vector<fs::FileInfo>> operators = fs_->ListDir(state_dir);
  if (!operators.ok()) {
    if (operators.status().IsNotFound()) return Status::OK();
    return operators.status().WithContextParts("checkpoint ", path_);
  }
  for (const fs::FileInfo& entry : *operators) {
    const std::string name(fs::BaseName(entry.path));
    SILT_ASSIGN_OR_RETURN(std::vector<fs::FileInfo> files, fs_->ListRecursive(entry.path));
    // Crash leftovers are removed at start; they say nothing about the owner.
    std::erase_if(files,
                  [](const fs::FileInfo& f) { return f.is_dir || f.path.ends_with(".tmp"); });
    if (files.empty()) continue;
    std::optional<int64_t> id = ParseBatchFileName(name);
    const std::string marker_path = fs::JoinPath(entry.path, std::string(marker));
    const bool silts = id && std::any_of(files.begin(), files.end(), [&](const fs::FileInfo& f) {
                         return f.path == marker_path;
                       });
    if (!silts) {
      return Status::InvalidArgument(
          "checkpoint ", path_, ": ", entry.path, " holds state that silt did not write (",
          files.front().path,
          "; Spark's state store files, for instance); silt continues the offsets of a Spark "
          "query's checkpoint but not the state of its stateful operators: give the job a new "
          "checkpointLocation");
    }
    if (std::find(job_operators.begin(), job_operators.end(), *id) == job_operators.end()) {
      return Status::InvalidArgument(
          "checkpoint ", path_, ": ", entry.path, " holds the state of stateful operator ", *id,
          ", but the job has ",
          job_operators.empty() ? std::string("no stateful step")
                                : std::to_string(job_operators.size()) + " stateful step(s)",
          "; a job whose stateful steps changed needs a new checkpointLocation");
    }
  }
  return Status::OK();
}

Result<std::string> CheckpointDir::ReadQueryId() {
  std::string file = fs::JoinPath(path_, kMetadataFile);
  SILT_ASSIGN_OR_RETURN(std::string text, fs_->ReadFile(file));
  simdjson::dom::parser parser;
  SILT_ASSIGN_OR_RETURN(simdjson::dom::object meta, internal::ParseJsonObject(parser, text, file));
  SILT_ASSIGN_OR_RETURN(std::optional<std::string> id,
                        internal::GetOptionalString(meta, "id", file));
  if (!id || id->empty()) return Status::Corruption(file, ": no query \"id\"");
  return *id;
}

Result<std::string> CheckpointDir::GetOrCreateQueryId() {
  Result<std::string> existing = ReadQueryId();
  if (existing.ok() || !existing.status().IsNotFound()) return existing;
  return CreateQueryId(NewUuid());
}

Result<std::string> CheckpointDir::CreateQueryId(const std::string& id) {
  JsonWriter w;
  w.BeginObject();
  w.Member("id", id);
  w.EndObject();
  std::string file = fs::JoinPath(path_, kMetadataFile);
  Status put = fs_->PutIfAbsent(file, w.str());
  // Another starter won the race: its id is the query's id.
  if (put.IsAlreadyExists()) return ReadQueryId();
  SILT_RETURN_NOT_OK_CTX(put, "creating ", file);
  return id;
}

namespace {

Result<std::vector<int64_t>> ListBatchIds(fs::FileSystem* fs, const std::string& dir) {
  SILT_ASSIGN_OR_RETURN(std::vector<fs::FileInfo> entries, fs->ListDir(dir));
  std::vector<int64_t> ids;
  for (const fs::FileInfo& info : entries) {
    if (info.is_dir) continue;
    if (std::optional<int64_t> id = ParseBatchFileName(fs::BaseName(info.path))) {
      ids.push_back(*id);
    }
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace

Result<std::optional<int64_t>> CheckpointDir::LatestOffsetBatch() {
  SILT_ASSIGN_OR_RETURN(std::vector<int64_t> ids,
                        ListBatchIds(fs_.get(), fs::JoinPath(path_, kOffsetsDir)));
  if (ids.empty()) return std::optional<int64_t>();
  return std::optional<int64_t>(ids.back());
}

Result<std::optional<int64_t>> CheckpointDir::LatestCommitBatch() {
  SILT_ASSIGN_OR_RETURN(std::vector<int64_t> ids,
                        ListBatchIds(fs_.get(), fs::JoinPath(path_, kCommitsDir)));
  if (ids.empty()) return std::optional<int64_t>();
  return std::optional<int64_t>(ids.back());
}

Result<OffsetSeq> CheckpointDir::ReadOffsets(int64_t batch_id) {
  std::string file = fs::JoinPath(fs::JoinPath(path_, kOffsetsDir), std::to_string(batch_id));
  SILT_ASSIGN_OR_RETURN(std::string text, fs_->ReadFile(file));
  return ParseOffsetSeq(text, batch_id, file);
}

Result<CommitMark> CheckpointDir::ReadCommit(int64_t batch_id) {
  std::string file = fs::JoinPath(fs::JoinPath(path_, kCommitsDir), std::to_string(batch_id));
  SILT_ASSIGN_OR_RETURN(std::string text, fs_->ReadFile(file));
  return ParseCommitMark(text, batch_id, file);
}

Status CheckpointDir::WriteOffsets(const OffsetSeq& seq) {
  std::string file = fs::JoinPath(fs::JoinPath(path_, kOffsetsDir), std::to_string(seq.batch_id));
  Status put = fs_->PutIfAbsent(file, SerializeOffsetSeq(seq));
  if (put.IsAlreadyExists()) {
    return Status::AlreadyExists(file,
                                 " already exists: another query may be using this checkpoint");
  }
  return put.WithContextParts("writing ", file);
}

Result<std::optional<CommitMark>> CheckpointDir::RecoverLatestCommit() {
  const std::string dir = fs::JoinPath(path_, kCommitsDir);
  SILT_ASSIGN_OR_RETURN(std::vector<int64_t> ids, ListBatchIds(fs_.get(), dir));
  for (auto it = ids.rbegin(); it != ids.rend(); ++it) {
    Result<CommitMark> mark = ReadCommit(*it);
    if (mark.ok()) return std::optional<CommitMark>(*mark);
    if (!mark.status().IsCorruption()) return mark.status();
    const std::string file = fs::JoinPath(dir, std::to_string(*it));
    SILT_LOG_WARN("stream", "checkpoint ", path_, ": ", mark.status().message(),
                  "; deleting it (commits/ files are not synced, so a crash of the machine can "
                  "leave one empty or cut short) and re-running from the table's record");
    Status deleted = fs_->DeleteFile(file);
    if (!deleted.ok() && !deleted.IsNotFound()) return deleted.WithContextParts("deleting ", file);
  }
  return std::optional<CommitMark>();
}

Status CheckpointDir::WriteCommit(const CommitMark& mark, bool durable) {
  std::string file = fs::JoinPath(fs::JoinPath(path_, kCommitsDir), std::to_string(mark.batch_id));
  // Not synced (decision 157): exactly-once rests on offsets/N and the
  // sink's commit, both durable before this is written; a commits/N lost to
  // a crash of the machine makes the restart re-run batch N, which the sink
  // skips by its txn, as Spark's own (unsynced) commit log does.
  const std::string text = SerializeCommitMark(mark);
  Status put = durable ? fs_->PutIfAbsent(file, text) : fs_->PutIfAbsentUnsynced(file, text);
  if (put.IsAlreadyExists()) {
    return Status::AlreadyExists(file,
                                 " already exists: another query may be using this checkpoint");
  }
  return put.WithContextParts("writing ", file);
}

Result<std::vector<BatchInfo>> CheckpointDir::ListBatches() {
  SILT_ASSIGN_OR_RETURN(std::vector<int64_t> offsets,
                        ListBatchIds(fs_.get(), fs::JoinPath(path_, kOffsetsDir)));
  SILT_ASSIGN_OR_RETURN(std::vector<int64_t> commits,
                        ListBatchIds(fs_.get(), fs::JoinPath(path_, kCommitsDir)));
  std::map<int64_t, BatchInfo> batches;
  for (int64_t id : offsets) {
    BatchInfo& info = batches[id];
    info.batch_id = id;
    SILT_ASSIGN_OR_RETURN(info.offsets, ReadOffsets(id));
  }
  for (int64_t id : commits) {
    BatchInfo& info = batches[id];
    info.batch_id = id;
    SILT_ASSIGN_OR_RETURN(info.commit, ReadCommit(id));
  }
  std::vector<BatchInfo> out;
  out.reserve(batches.size());
  for (auto& [id, info] : batches) out.push_back(std::move(info));
  return out;
}

Result<int64_t> CheckpointDir::RemoveOrphanedTemps() {
  SILT_ASSIGN_OR_RETURN(std::vector<fs::FileInfo> temps, fs_->ListOrphanedTemps(path_));
  if (temps.empty()) return int64_t{0};
  std::vector<std::string> paths;
  for (fs::FileInfo& info : temps) paths.push_back(std::move(info.path));
  SILT_RETURN_NOT_OK(fs_->DeleteFiles(paths).WithContextParts("checkpoint ", path_));
  return static_cast<int64_t>(paths.size());
}

Status CheckpointDir::Purge(int64_t threshold) {
  if (threshold <= purged_below_) return Status::OK();
  for (std::string_view sub : {kOffsetsDir, kCommitsDir}) {
    std::string dir = fs::JoinPath(path_, sub);
    std::vector<int64_t> ids;
    if (purged_below_ < 0) {
      SILT_ASSIGN_OR_RETURN(ids, ListBatchIds(fs_.get(), dir));
    } else {
      for (int64_t id = purged_below_; id < threshold; ++id) ids.push_back(id);
    }
    for (int64_t id : ids) {
      if (id >= threshold) break;
      Status st = fs_->DeleteFile(fs::JoinPath(dir, std::to_string(id)));
      if (!st.ok() && !st.IsNotFound()) return st.WithContextParts("purging ", dir);
    }
  }
  purged_below_ = threshold;
  return Status::OK();
}

}  // namespace silt::stream
