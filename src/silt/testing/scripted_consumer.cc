#include "silt/testing/scripted_consumer.h"

#include <algorithm>

namespace silt::testing {

struct ScriptedCluster::State {
  struct Partition {
    int64_t low = 0;
    std::vector<Record> records;  // records[i] has offset i
  };
  std::map<std::string, std::vector<Partition>> topics;
  Status next_error;
  std::map<kafka::TopicPartition, int64_t> committed;
  int64_t assign_calls = 0;

  Status TakeError() {
    Status st = next_error;
    next_error = Status::OK();
    return st;
  }
  Partition* Find(const kafka::TopicPartition& tp) {
    auto it = topics.find(tp.topic);
    if (it == topics.end() || tp.partition < 0 ||
        tp.partition >= static_cast<int32_t>(it->second.size())) {
      return nullptr;
    }
    return &it->second[static_cast<size_t>(tp.partition)];
  }
};

namespace {

class ScriptedConsumer final : public kafka::Consumer {
 public:
  ScriptedConsumer(std::shared_ptr<ScriptedCluster::State> state, std::string group)
      : state_(std::move(state)), group_(std::move(group)) {}

  Result<std::vector<kafka::TopicInfo>> ListTopics() override {
    SILT_RETURN_NOT_OK(state_->TakeError());
    std::vector<kafka::TopicInfo> out;
    for (const auto& [name, partitions] : state_->topics) {
      out.push_back({name, static_cast<int32_t>(partitions.size())});
    }
    return out;
  }

  Result<kafka::Watermarks> QueryWatermarks(const kafka::TopicPartition& tp) override {
    SILT_RETURN_NOT_OK(state_->TakeError());
    ScriptedCluster::State::Partition* partition = state_->Find(tp);
    if (partition == nullptr) return Status::NotFound("unknown partition ", tp.ToString());
    return kafka::Watermarks{partition->low, static_cast<int64_t>(partition->records.size())};
  }

  Result<std::vector<std::optional<int64_t>>> OffsetsForTimes(
      const std::vector<kafka::TopicPartition>& partitions, int64_t timestamp_ms) override {
    SILT_RETURN_NOT_OK(state_->TakeError());
    std::vector<std::optional<int64_t>> out;
    for (const kafka::TopicPartition& tp : partitions) {
      ScriptedCluster::State::Partition* partition = state_->Find(tp);
      if (partition == nullptr) return Status::NotFound("unknown partition ", tp.ToString());
      std::optional<int64_t> found;
      for (int64_t offset = partition->low;
           offset < static_cast<int64_t>(partition->records.size()); ++offset) {
        if (partition->records[static_cast<size_t>(offset)].timestamp_ms >= timestamp_ms) {
          found = offset;
          break;
        }
      }
      out.push_back(found);
    }
    return out;
  }

  Status Assign(const std::vector<kafka::OffsetRange>& ranges) override {
    SILT_RETURN_NOT_OK(state_->TakeError());
    ++state_->assign_calls;
    ranges_.clear();
    for (const kafka::OffsetRange& range : ranges) {
      if (range.from < range.until) ranges_.push_back({range, range.from});
    }
    return Status::OK();
  }

  Result<int64_t> Poll(kafka::RecordColumns* out, int64_t max_records, int64_t) override {
    SILT_RETURN_NOT_OK(state_->TakeError());
    int64_t appended = 0;
    for (Cursor& cursor : ranges_) {
      ScriptedCluster::State::Partition* partition = state_->Find(cursor.range.partition);
      if (partition == nullptr) continue;
      if (cursor.next < cursor.range.until && cursor.next < partition->low) {
        return Status::NotFound("Kafka partition ", cursor.range.partition.ToString(), ": offset ",
                                cursor.next, " is no longer available (deleted by retention?)");
      }
      const int64_t end =
          std::min(cursor.range.until, static_cast<int64_t>(partition->records.size()));
      for (; cursor.next < end && appended < max_records; ++cursor.next, ++appended) {
        const ScriptedCluster::Record& record =
            partition->records[static_cast<size_t>(cursor.next)];
        out->Append(record.key, record.value, cursor.range.partition.topic,
                    cursor.range.partition.partition, cursor.next, record.timestamp_ms, 0);
        if (out->include_headers()) {
          if (record.headers.empty()) {
            out->NoHeaders();
          } else {
            for (const auto& [name, value] : record.headers) out->AddHeader(name, value);
            out->EndHeaders();
          }
        }
      }
    }
    return appended;
  }

  bool AssignmentDone() const override {
    for (const Cursor& cursor : ranges_) {
      if (cursor.next < cursor.range.until) return false;
    }
    return true;
  }

  Status CommitOffsets(const std::map<kafka::TopicPartition, int64_t>& offsets) override {
    SILT_RETURN_NOT_OK(state_->TakeError());
    if (group_.empty()) return Status::InvalidArgument("committing Kafka offsets needs a group");
    for (const auto& [tp, offset] : offsets) state_->committed[tp] = offset;
    return Status::OK();
  }

 private:
  struct Cursor {
    kafka::OffsetRange range;
    int64_t next;
  };
  std::shared_ptr<ScriptedCluster::State> state_;
  std::string group_;
  std::vector<Cursor> ranges_;
};

}  // namespace

ScriptedCluster::ScriptedCluster() : state_(std::make_shared<State>()) {}

void ScriptedCluster::CreateTopic(const std::string& topic, int32_t partitions) {
  std::vector<State::Partition>& list = state_->topics[topic];
  if (static_cast<int32_t>(list.size()) < partitions) list.resize(static_cast<size_t>(partitions));
}

int64_t ScriptedCluster::Append(const std::string& topic, int32_t partition, Record record) {
  State::Partition& p = state_->topics.at(topic).at(static_cast<size_t>(partition));
  p.records.push_back(std::move(record));
  return static_cast<int64_t>(p.records.size()) - 1;
}

void ScriptedCluster::DeleteBefore(const std::string& topic, int32_t partition, int64_t offset) {
  State::Partition& p = state_->topics.at(topic).at(static_cast<size_t>(partition));
  p.low = std::max(p.low, std::min(offset, static_cast<int64_t>(p.records.size())));
}

void ScriptedCluster::FailNextCall(Status status) { state_->next_error = std::move(status); }

const std::map<kafka::TopicPartition, int64_t>& ScriptedCluster::committed() const {
  return state_->committed;
}

int64_t ScriptedCluster::assign_calls() const { return state_->assign_calls; }

std::unique_ptr<kafka::Consumer> ScriptedCluster::NewConsumer(std::string group) {
  return std::make_unique<ScriptedConsumer>(state_, std::move(group));
}

}  // namespace silt::testing
