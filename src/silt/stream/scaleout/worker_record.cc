#include "silt/stream/scaleout/worker_record.h"

#include <algorithm>
#include <charconv>

#include "silt/base/json_writer.h"
#include "silt/base/logging.h"
#include "silt/stream/json_internal.h"

namespace silt::stream {

std::string PartitionAppId(std::string_view app_id, const kafka::TopicPartition& tp) {
  return Status::Concat(app_id, ":", tp.topic, ":", tp.partition);
}

std::optional<kafka::TopicPartition> ParsePartitionAppId(std::string_view app_id,
                                                         std::string_view txn_app_id) {
  if (txn_app_id.size() <= app_id.size() + 1 || !txn_app_id.starts_with(app_id) ||
      txn_app_id[app_id.size()] != ':') {
    return std::nullopt;
  }
  std::string_view rest = txn_app_id.substr(app_id.size() + 1);
  const size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  std::string_view topic = rest.substr(0, colon);
  std::string_view number = rest.substr(colon + 1);
  if (topic.find(':') != std::string_view::npos || number.empty()) return std::nullopt;
  int32_t partition = 0;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), partition);
  if (ec != std::errc() || end != number.data() + number.size() || partition < 0) {
    return std::nullopt;
  }
  return kafka::TopicPartition{std::string(topic), partition};
}

std::vector<TablePartitionOffset> TablePartitionOffsets(const delta::Snapshot& snapshot,
                                                        std::string_view app_id) {
  std::vector<TablePartitionOffset> out;
  for (const auto& [id, txn] : snapshot.txns()) {
    std::optional<kafka::TopicPartition> tp = ParsePartitionAppId(app_id, id);
    if (tp) out.push_back({std::move(*tp), txn.version, txn.last_updated});
  }
  std::sort(out.begin(), out.end(),
            [](const TablePartitionOffset& a, const TablePartitionOffset& b) {
              return a.partition < b.partition;
            });
  return out;
}

std::string ScaleOutInfoPath(const std::string& checkpoint) {
  return fs::JoinPath(checkpoint, "scaleout.json");
}

std::string WorkersDir(const std::string& checkpoint) {
  return fs::JoinPath(checkpoint, "workers");
}

std::string ScaleOutInfoToJson(const ScaleOutInfo& info) {
  JsonWriter w;
  w.BeginObject();
  w.Member("mode", "consumerGroup");
  w.Member("appId", info.app_id);
  w.Member("groupId", info.group_id);
  w.Member("table", info.table);
  w.Member("subscription", info.subscription);
  w.EndObject();
  return w.Take();
}

Result<ScaleOutInfo> ScaleOutInfoFromJson(std::string_view json, std::string_view where) {
  simdjson::dom::parser parser;
  SILT_ASSIGN_OR_RETURN(simdjson::dom::object object,
                        internal::ParseJsonObject(parser, json, where));
  ScaleOutInfo info;
  auto get = [&](const char* key, std::string* out) -> Status {
    SILT_ASSIGN_OR_RETURN(std::optional<std::string> value,
                          internal::GetOptionalString(object, key, where));
    if (!value) return Status::Corruption(where, ": \"", key, "\" is missing");
    *out = std::move(*value);
    return Status::OK();
  };
  SILT_RETURN_NOT_OK(get("appId", &info.app_id));
  SILT_RETURN_NOT_OK(get("groupId", &info.group_id));
  SILT_RETURN_NOT_OK(get("table", &info.table));
  SILT_RETURN_NOT_OK(get("subscription", &info.subscription));
  return info;
}

void WritePartitionsJson(const std::vector<WorkerRecord::Partition>& partitions, JsonWriter* w) {
  w->BeginArray();
  for (const WorkerRecord::Partition& p : partitions) {
    w->BeginObject();
    w->Member("topic", p.partition.topic);
    w->Member("partition", static_cast<int64_t>(p.partition.partition));
    w->Key("nextOffset");
    if (p.next_offset) {
      w->Int(*p.next_offset);
    } else {
      w->Null();
    }
    w->EndObject();
  }
  w->EndArray();
}

std::string WorkerRecordToJson(const WorkerRecord& record) {
  JsonWriter w;
  w.BeginObject();
  w.Member("workerId", record.worker_id);
  w.Member("host", record.host);
  w.Member("pid", record.pid);
  w.Member("memberId", record.member_id);
  w.Member("runId", record.run_id);
  w.Member("startedAt", record.started_ms);
  w.Member("updatedAt", record.updated_ms);
  w.Member("state", record.state);
  w.Key("partitions");
  WritePartitionsJson(record.partitions, &w);
  w.Member("batches", record.batches);
  w.Member("rows", record.rows);
  w.Member("discarded", record.discarded);
  w.EndObject();
  return w.Take();
}

Result<WorkerRecord> WorkerRecordFromJson(std::string_view json, std::string_view where) {
  simdjson::dom::parser parser;
  SILT_ASSIGN_OR_RETURN(simdjson::dom::object object,
                        internal::ParseJsonObject(parser, json, where));
  WorkerRecord record;
  auto text = [&](const char* key, std::string* out) -> Status {
    SILT_ASSIGN_OR_RETURN(std::optional<std::string> value,
                          internal::GetOptionalString(object, key, where));
    if (value) *out = std::move(*value);
    return Status::OK();
  };
  auto number = [&](const char* key, int64_t* out) -> Status {
    SILT_ASSIGN_OR_RETURN(std::optional<int64_t> value,
                          internal::GetOptionalInt(object, key, where));
    if (value) *out = *value;
    return Status::OK();
  };
  SILT_RETURN_NOT_OK(text("workerId", &record.worker_id));
  if (record.worker_id.empty()) return Status::Corruption(where, ": \"workerId\" is missing");
  SILT_RETURN_NOT_OK(text("host", &record.host));
  SILT_RETURN_NOT_OK(number("pid", &record.pid));
  SILT_RETURN_NOT_OK(text("memberId", &record.member_id));
  SILT_RETURN_NOT_OK(text("runId", &record.run_id));
  SILT_RETURN_NOT_OK(number("startedAt", &record.started_ms));
  SILT_RETURN_NOT_OK(number("updatedAt", &record.updated_ms));
  SILT_RETURN_NOT_OK(text("state", &record.state));
  SILT_RETURN_NOT_OK(number("batches", &record.batches));
  SILT_RETURN_NOT_OK(number("rows", &record.rows));
  SILT_RETURN_NOT_OK(number("discarded", &record.discarded));
  simdjson::dom::array partitions;
  if (object["partitions"].get_array().get(partitions) == simdjson::SUCCESS) {
    for (simdjson::dom::element element : partitions) {
      simdjson::dom::object entry;
      std::string_view topic;
      int64_t partition = 0;
      if (element.get_object().get(entry) || entry["topic"].get_string().get(topic) ||
          entry["partition"].get_int64().get(partition)) {
        return Status::Corruption(where, ": bad entry in \"partitions\"");
      }
      WorkerRecord::Partition p;
      p.partition = {std::string(topic), static_cast<int32_t>(partition)};
      int64_t next = 0;
      if (entry["nextOffset"].get_int64().get(next) == simdjson::SUCCESS) p.next_offset = next;
      record.partitions.push_back(std::move(p));
    }
  }
  return record;
}

std::string WorkerRecordFileName(std::string_view worker_id) {
  std::string name;
  name.reserve(worker_id.size() + 5);
  for (char c : worker_id) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '-' || c == '_' || c == '.' || c == '@';
    name += plain ? c : '_';
  }
  if (name.empty() || name[0] == '.') name.insert(name.begin(), '_');
  return name + ".json";
}

Result<std::vector<WorkerRecord>> ReadWorkerRecords(fs::FileSystem* fs,
                                                    const std::string& checkpoint) {
  SILT_ASSIGN_OR_RETURN(std::vector<fs::FileInfo> files, fs->ListDir(WorkersDir(checkpoint)));
  std::vector<WorkerRecord> out;
  for (const fs::FileInfo& file : files) {
    if (!file.path.ends_with(".json")) continue;
    Result<std::string> text = fs->ReadFile(file.path);
    Result<WorkerRecord> record =
        text.ok() ? WorkerRecordFromJson(*text, file.path) : Result<WorkerRecord>(text.status());
    if (!record.ok()) {
      SILT_LOG_WARN("stream", "skipping worker record ", file.path, ": ",
                    record.status().ToString());
      continue;
    }
    out.push_back(std::move(*record));
  }
  std::sort(out.begin(), out.end(),
            [](const WorkerRecord& a, const WorkerRecord& b) { return a.worker_id < b.worker_id; });
  return out;
}

}  // namespace silt::stream
