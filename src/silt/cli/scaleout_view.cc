#include "silt/cli/scaleout_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "silt/base/clock.h"
#include "silt/base/json_writer.h"
#include "silt/cli/json_view.h"
#include "silt/cli/table_util.h"
#include "silt/fs/file_system.h"
#include "silt/stream/scaleout/worker_record.h"

namespace silt::cli {

namespace {

// How many of the newest commits `silt describe` reads to find who wrote
// each partition's offset last.
constexpr int64_t kMaxCommitsForWriters = 100;

struct PartitionRow {
  kafka::TopicPartition partition;
  std::optional<int64_t> table_offset;
  std::optional<int64_t> updated_ms;
  std::string owner;  // a live worker's id; empty: none
};

std::string OffsetText(const std::optional<int64_t>& offset) {
  return offset ? std::to_string(*offset) : std::string("-");
}

}  // namespace

Result<std::optional<std::string>> ScaleOutCheckpointView(const std::string& dir,
                                                          const std::string& format) {
  const std::string path = fs::NormalizePath(dir);
  SILT_ASSIGN_OR_RETURN(fs::FileSystemPtr file_system, fs::FileSystemForPath(path));
  const std::string info_path = stream::ScaleOutInfoPath(path);
  Result<std::string> text = file_system->ReadFile(info_path);
  if (!text.ok()) {
    if (text.status().IsNotFound()) return std::optional<std::string>();
    return text.status();
  }
  SILT_ASSIGN_OR_RETURN(stream::ScaleOutInfo info, stream::ScaleOutInfoFromJson(*text, info_path));
  SILT_ASSIGN_OR_RETURN(std::vector<stream::WorkerRecord> records,
                        stream::ReadWorkerRecords(file_system.get(), path));
  const int64_t now_ms = SystemClock().NowMicros() / 1000;
  auto live = [&](const stream::WorkerRecord& record) {
    return record.state == "running" &&
           now_ms - record.updated_ms <= stream::kStaleRecordMicros / 1000;
  };

  // The table's offsets, and each partition's owner among the live workers
  // (the newest record wins while a handover is under way).
  std::map<kafka::TopicPartition, PartitionRow> rows;
  std::string table_error;
  Result<std::unique_ptr<delta::DeltaTable>> table = delta::DeltaTable::OpenExisting(info.table);
  std::optional<int64_t> table_version;
  if (table.ok()) {
    Result<delta::SnapshotPtr> snapshot = (*table)->LatestSnapshot();
    if (snapshot.ok()) {
      table_version = (*snapshot)->version();
      for (const stream::TablePartitionOffset& offset :
           stream::TablePartitionOffsets(**snapshot, info.app_id)) {
        PartitionRow& row = rows[offset.partition];
        row.partition = offset.partition;
        row.table_offset = offset.next_offset;
        row.updated_ms = offset.updated_ms;
      }
    } else {
      table_error = snapshot.status().ToString();
    }
  } else {
    table_error = table.status().ToString();
  }
  std::map<kafka::TopicPartition, int64_t> owner_updated;
  for (const stream::WorkerRecord& record : records) {
    if (!live(record)) continue;
    for (const stream::WorkerRecord::Partition& p : record.partitions) {
      PartitionRow& row = rows[p.partition];
      row.partition = p.partition;
      auto seen = owner_updated.find(p.partition);
      if (seen != owner_updated.end() && seen->second >= record.updated_ms) continue;
      owner_updated[p.partition] = record.updated_ms;
      row.owner = record.worker_id;
    }
  }

  if (format == "json") {
    JsonWriter w;
    w.BeginObject();
    w.Member("checkpoint", path);
    w.Member("mode", "consumerGroup");
    w.Member("appId", info.app_id);
    w.Member("groupId", info.group_id);
    w.Member("table", info.table);
    w.Member("subscription", info.subscription);
    w.Key("tableVersion");
    if (table_version) {
      w.Int(*table_version);
    } else {
      w.Null();
    }
    if (!table_error.empty()) w.Member("tableError", table_error);
    w.Key("workers");
    w.BeginArray();
    for (const stream::WorkerRecord& record : records) {
      w.BeginObject();
      w.Member("workerId", record.worker_id);
      w.Member("host", record.host);
      w.Member("pid", record.pid);
      w.Member("memberId", record.member_id);
      w.Member("state", record.state);
      w.Member("live", live(record));
      w.Member("startedAt", record.started_ms);
      w.Member("updatedAt", record.updated_ms);
      w.Member("batches", record.batches);
      w.Member("rows", record.rows);
      w.Member("discarded", record.discarded);
      w.Key("partitions");
      stream::WritePartitionsJson(record.partitions, &w);
      w.EndObject();
    }
    w.EndArray();
    w.Key("partitions");
    w.BeginArray();
    for (const auto& [tp, row] : rows) {
      w.BeginObject();
      w.Member("topic", tp.topic);
      w.Member("partition", static_cast<int64_t>(tp.partition));
      w.Key("nextOffset");
      if (row.table_offset) {
        w.Int(*row.table_offset);
      } else {
        w.Null();
      }
      w.Key("owner");
      if (row.owner.empty()) {
        w.Null();
      } else {
        w.String(row.owner);
      }
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    return std::optional<std::string>(w.Take() + "\n");
  }

  std::string out;
  out +=
      fmt::format("checkpoint:   {} (scale-out workers, no offsets: the table holds them)\n", path);
  out += fmt::format("mode:         consumerGroup\n");
  out += fmt::format("group:        {}\n", info.group_id);
  out += fmt::format("appId:        {} (txn appIds {}:<topic>:<partition>)\n", info.app_id,
                     info.app_id);
  out += fmt::format("source:       {}\n", info.subscription);
  out += fmt::format("table:        {}{}\n", info.table,
                     table_version ? fmt::format(" (version {})", *table_version)
                                   : fmt::format(" ({})", table_error));
  out += fmt::format("\nworkers ({} live of {} recorded):\n",
                     std::count_if(records.begin(), records.end(), live), records.size());
  for (const stream::WorkerRecord& record : records) {
    const int64_t age_s = std::max<int64_t>(0, (now_ms - record.updated_ms) / 1000);
    std::string state = live(record) ? "live" : record.state == "running" ? "gone" : record.state;
    out += fmt::format(
        "  {}  {}, pid {} on {}, updated {} ({} s ago); {} batches, {} rows, {} "
        "discarded\n",
        record.worker_id, state, record.pid, record.host, FormatMillisUtc(record.updated_ms), age_s,
        record.batches, record.rows, record.discarded);
    if (!live(record)) continue;
    std::string partitions;
    for (const stream::WorkerRecord::Partition& p : record.partitions) {
      if (!partitions.empty()) partitions += ", ";
      partitions += fmt::format("{}@{}", p.partition.ToString(), OffsetText(p.next_offset));
    }
    out += fmt::format("    partitions: {}\n", partitions.empty() ? "(none)" : partitions);
  }
  out += "\npartitions (next offset as the table records it):\n";
  out += fmt::format("  {:<30} {:>14}  {}\n", "topic-partition", "next offset", "held by");
  for (const auto& [tp, row] : rows) {
    out += fmt::format("  {:<30} {:>14}  {}\n", tp.ToString(), OffsetText(row.table_offset),
                       row.owner.empty() ? "(no live worker)" : row.owner);
  }
  return std::optional<std::string>(std::move(out));
}

Result<std::string> TxnView(delta::DeltaTable* table, const delta::Snapshot& snapshot,
                            const std::string& format) {
  // Txns of scale-out workers, grouped by their appId prefix; the rest
  // (single queries: one txn per query id) as they are.
  struct Group {
    std::string app_id;
    std::vector<stream::TablePartitionOffset> partitions;
  };
  std::map<std::string, Group> groups;
  std::vector<const delta::Txn*> others;
  for (const auto& [id, txn] : snapshot.txns()) {
    // "<appId>:<topic>:<partition>": the prefix is everything before the
    // last two ':'s.
    const size_t last = id.rfind(':');
    const size_t middle =
        last == std::string::npos || last == 0 ? std::string::npos : id.rfind(':', last - 1);
    std::optional<kafka::TopicPartition> tp;
    std::string prefix;
    if (middle != std::string::npos && middle > 0) {
      prefix = id.substr(0, middle);
      tp = stream::ParsePartitionAppId(prefix, id);
    }
    if (!tp) {
      others.push_back(&txn);
      continue;
    }
    Group& group = groups[prefix];
    group.app_id = prefix;
    group.partitions.push_back({std::move(*tp), txn.version, txn.last_updated});
  }
  // Who committed each partition last: commitInfo.siltWorker of the
  // newest commit recording its txn, within the newest commits.
  std::map<std::string, std::string> writer_of;  // txn appId -> worker
  size_t wanted = 0;
  for (const auto& [prefix, group] : groups) wanted += group.partitions.size();
  for (int64_t v = snapshot.version(), read = 0;
       v >= 0 && read < kMaxCommitsForWriters && writer_of.size() < wanted; --v, ++read) {
    Result<delta::CommitActions> commit = table->ReadCommit(v);
    if (!commit.ok()) break;  // cleaned up: older commits are in checkpoints only
    std::string worker;
    if (commit->commit_info_json) {
      if (auto info = JsonObjectView::Parse(*commit->commit_info_json)) {
        worker = info->GetString("siltWorker").value_or("");
      }
    }
    for (const delta::Txn& txn : commit->txns) {
      writer_of.emplace(txn.app_id, worker.empty() ? "?" : worker);
    }
  }
  if (format == "json") {
    JsonWriter w;
    w.BeginArray();
    for (auto& [prefix, group] : groups) {
      std::sort(group.partitions.begin(), group.partitions.end(),
                [](const auto& a, const auto& b) { return a.partition < b.partition; });
      for (const stream::TablePartitionOffset& p : group.partitions) {
        w.BeginObject();
        const std::string id = stream::PartitionAppId(prefix, p.partition);
        w.Member("appId", id);
        w.Member("scaleOutAppId", prefix);
        w.Member("topic", p.partition.topic);
        w.Member("partition", static_cast<int64_t>(p.partition.partition));
        w.Member("nextOffset", p.next_offset);
        if (p.updated_ms) w.Member("lastUpdated", *p.updated_ms);
        auto writer = writer_of.find(id);
        w.Key("lastWrittenBy");
        if (writer == writer_of.end()) {
          w.Null();
        } else {
          w.String(writer->second);
        }
        w.EndObject();
      }
    }
    for (const delta::Txn* txn : others) {
      w.BeginObject();
      w.Member("appId", txn->app_id);
      w.Member("version", txn->version);
      if (txn->last_updated) w.Member("lastUpdated", *txn->last_updated);
      w.EndObject();
    }
    w.EndArray();
    return w.Take();
  }
  std::string out;
  for (auto& [prefix, group] : groups) {
    std::sort(group.partitions.begin(), group.partitions.end(),
              [](const auto& a, const auto& b) { return a.partition < b.partition; });
    out += fmt::format("kafka offsets of scale-out appId {}:\n", prefix);
    out += fmt::format("  {:<30} {:>14}  {:<24}  {}\n", "topic-partition", "next offset",
                       "last updated", "last written by");
    for (const stream::TablePartitionOffset& p : group.partitions) {
      auto writer = writer_of.find(stream::PartitionAppId(prefix, p.partition));
      out += fmt::format("  {:<30} {:>14}  {:<24}  {}\n", p.partition.ToString(), p.next_offset,
                         p.updated_ms ? FormatMillisUtc(*p.updated_ms) : std::string("-"),
                         writer == writer_of.end()
                             ? fmt::format("(not in the newest {} commits)", kMaxCommitsForWriters)
                             : writer->second);
    }
  }
  if (!others.empty()) {
    out += "streaming queries (txn appId: last batch):\n";
    for (const delta::Txn* txn : others) {
      out += fmt::format("  {}: {}\n", txn->app_id, txn->version);
    }
  }
  return out;
}

}  // namespace silt::cli
