#include "silt/stream/scaleout/worker.h"

#include <unistd.h>

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <optional>

#include "silt/base/logging.h"
#include "silt/base/uuid.h"
#include "silt/delta/table.h"
#include "silt/fs/s3_file_system.h"
#include "silt/kafka/group_consumer.h"
#include "silt/stream/ops/failing_record.h"
#include "silt/stream/ops/transform.h"
#include "silt/stream/scaleout/worker_record.h"
#include "silt/stream/sink/delta_sink.h"
#include "silt/stream/source/kafka_source.h"

namespace silt::stream {

namespace {

using kafka::TopicPartition;

// How long one Poll waits for records: the latency of a stop request and of
// a batch deadline while nothing arrives.
constexpr int64_t kPollSliceMs = 100;

std::string HostName() {
  char name[256] = {0};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

// The Kafka record rows as a Source describes them, for AddFailingRecord:
// a transform error names the topic, partition and offset of the record.
class RecordDescriber final : public Source {
 public:
  RecordDescriber(columnar::SchemaPtr schema, std::string description)
      : schema_(std::move(schema)), description_(std::move(description)) {}
  const columnar::SchemaPtr& schema() const override { return schema_; }
  std::string Description() const override { return description_; }
  Status Restore(const std::optional<std::string>&) override { return Unused(); }
  Status PrepareForAvailableNow() override { return Unused(); }
  Result<std::optional<std::string>> LatestOffset(const std::optional<std::string>&,
                                                  const ReadLimit&) override {
    return Unused();
  }
  Result<std::unique_ptr<BatchReader>> GetBatch(const std::optional<std::string>&,
                                                const std::string&) override {
    return Unused();
  }
  std::string DescribeRow(const columnar::RecordBatch& chunk, int64_t row) const override {
    columnar::ColumnPtr topic = chunk.GetColumn("topic");
    columnar::ColumnPtr partition = chunk.GetColumn("partition");
    columnar::ColumnPtr offset = chunk.GetColumn("offset");
    if (topic == nullptr || partition == nullptr || offset == nullptr || row < 0 ||
        row >= chunk.num_rows) {
      return {};
    }
    return Status::Concat("Kafka topic ", topic->StringValue(row), " partition ",
                          partition->Value<int32_t>(row), " offset ", offset->Value<int64_t>(row));
  }

 private:
  static Status Unused() { return Status::Internal("a scale-out worker plans no source batches"); }
  columnar::SchemaPtr schema_;
  std::string description_;
};

class Worker {
 public:
  Worker(const JobSpec& job, const QueryOptions& options)
      : job_(job),
        options_(options),
        clock_(options.clock ? options.clock : &SystemClock()),
        records_(std::make_unique<kafka::RecordColumns>(false)) {}

  ~Worker() {
    // The consumer's callbacks point into this object: leave the group
    // before anything else goes.
    if (consumer_ != nullptr) consumer_->Close().IgnoreError("leaving the consumer group");
  }

  Result<QueryResult> Run() {
    SILT_RETURN_NOT_OK(Open());
    QueryResult result;
    result.query_id = query_id_;
    SILT_LOG_INFO("stream", "scale-out worker ", worker_id_, " (run ", run_id_,
                  ") joining Kafka consumer group ", group_id_, "; table ", sink_->target(),
                  ", offsets as txn appIds ", app_id_, ":<topic>:<partition>");
    if (options_.listener) {
      options_.listener->OnQueryStarted(query_id_, run_id_, source_->Description(),
                                        sink_->Description());
    }
    WriteRecord(true);
    Status st = Status::OK();
    while (!StopRequested()) {
      if (job_.max_batches && result.batches_run >= *job_.max_batches) break;
      st = RunBatch(&result);
      if (!st.ok()) break;
    }
    // Leaving hands the partitions to the others at once (no session
    // timeout to wait out); the record says this worker stopped.
    Status closed = consumer_->Close();
    owned_.clear();
    WriteRecord(true, st.ok() ? "stopped" : "failed");
    SILT_RETURN_NOT_OK(st);
    SILT_RETURN_NOT_OK_CTX(closed, "leaving Kafka consumer group ", group_id_);
    return result;
  }

 private:
  struct Owned {
    // The next offset the table records for the partition (txn.version);
    // nullopt until a commit of this job records one.
    std::optional<int64_t> recorded;
    // Where the partition started when the table recorded nothing.
    int64_t start = 0;
  };

  bool StopRequested() const { return options_.stop_flag != nullptr && options_.stop_flag->load(); }

  Status Open() {
    SILT_RETURN_NOT_OK(fs::SetS3Settings(job_.storage_s3));
    const ScaleOutSpec& spec = *job_.scale_out;
    SILT_ASSIGN_OR_RETURN(kafka_, KafkaSourceOptions::FromSpec(job_.source));
    records_ = std::make_unique<kafka::RecordColumns>(kafka_.include_headers);
    app_id_ = spec.app_id;
    group_id_ = spec.group_id;
    if (group_id_.empty() && kafka_.properties.count("group.id")) {
      group_id_ = kafka_.properties.at("group.id");
    }
    if (group_id_.empty()) group_id_ = "silt-" + app_id_;
    worker_id_ = spec.worker_id.empty()
                     ? Status::Concat(HostName(), "-", static_cast<int64_t>(getpid()))
                     : spec.worker_id;
    query_id_ = app_id_;
    run_id_ = NewUuid();
    started_ms_ = clock_->NowMicros() / 1000;

    // The transform and the sink are bound before the worker joins the
    // group, so a bad job fails without taking partitions from the others.
    columnar::SchemaPtr input = kafka::RecordSchema(kafka_.include_headers);
    source_ = std::make_unique<RecordDescriber>(input, SubscriptionDescription());
    SILT_ASSIGN_OR_RETURN(eval_options_, EvalOptionsForJob(job_, *clock_));
    Result<std::unique_ptr<Transform>> transform =
        Transform::Make(job_.transforms, input, eval_options_);
    if (!transform.ok()) return transform.status().WithContextParts("scaleOut");
    transform_ = std::move(*transform);
    SILT_ASSIGN_OR_RETURN(sink_, DeltaSink::Make(job_.sink, transform_->output_schema(), query_id_,
                                                 options_.file_system, clock_));
    fs::FileSystemPtr table_fs = options_.file_system;
    if (table_fs == nullptr) {
      SILT_ASSIGN_OR_RETURN(table_fs, fs::FileSystemForPath(sink_->target()));
    }
    SILT_ASSIGN_OR_RETURN(table_, delta::DeltaTable::Open(table_fs, sink_->target()));
    SILT_RETURN_NOT_OK(OpenCheckpoint());

    kafka::GroupConsumerConfig config;
    config.properties = kafka_.properties;
    config.properties["group.id"] = group_id_;
    config.properties.emplace("client.id", worker_id_);
    config.request_timeout_ms = 30'000;
    if (kafka_.strategy == KafkaSourceOptions::Strategy::kSubscribePattern) {
      // librdkafka takes a subscription starting with '^' as a regex; RE2
      // (librdkafka's too) matches it against the whole name when anchored.
      config.topics = {"^(" + kafka_.pattern + ")$"};
    } else {
      config.topics = kafka_.topics;
    }
    config.on_assigned = [this](const std::vector<TopicPartition>& partitions) {
      return OnAssigned(partitions);
    };
    config.on_revoked = [this](const std::vector<TopicPartition>& partitions, bool lost) {
      OnRevoked(partitions, lost);
    };
    SILT_ASSIGN_OR_RETURN(consumer_, kafka::MakeRdKafkaGroupConsumer(std::move(config)));
    return Status::OK();
  }

  std::string SubscriptionDescription() const {
    if (kafka_.strategy == KafkaSourceOptions::Strategy::kSubscribePattern) {
      return "KafkaV2[SubscribePattern[" + kafka_.pattern + "]]";
    }
    std::string topics;
    for (const std::string& t : kafka_.topics) topics += (topics.empty() ? "" : ",") + t;
    return "KafkaV2[Subscribe[" + topics + "]]";
  }

  // The checkpoint of a scale-out job holds the workers' records only; it
  // must not be a single query's checkpoint, nor another scale-out job's.
  Status OpenCheckpoint() {
    checkpoint_path_ = fs::NormalizePath(job_.checkpoint_location);
    checkpoint_fs_ = options_.file_system;
    if (checkpoint_fs_ == nullptr) {
      SILT_ASSIGN_OR_RETURN(checkpoint_fs_, fs::FileSystemForPath(checkpoint_path_));
    }
    SILT_ASSIGN_OR_RETURN(std::vector<fs::FileInfo> offsets,
                          checkpoint_fs_->ListDir(fs::JoinPath(checkpoint_path_, "offsets")));
    if (!offsets.empty()) {
      return Status::InvalidArgument(
          "checkpointLocation: ", checkpoint_path_,
          " is the checkpoint of a single query (it has offsets/); a scaleOut job keeps its "
          "offsets in the table and needs a checkpointLocation of its own for the workers' "
          "records");
    }
    ScaleOutInfo info;
    info.app_id = app_id_;
    info.group_id = group_id_;
    info.table = sink_->target();
    if (kafka_.strategy == KafkaSourceOptions::Strategy::kSubscribePattern) {
      info.subscription = "subscribePattern: " + kafka_.pattern;
    } else {
      std::string topics;
      for (const std::string& t : kafka_.topics) topics += (topics.empty() ? "" : ",") + t;
      info.subscription = "subscribe: " + topics;
    }
    const std::string path = ScaleOutInfoPath(checkpoint_path_);
    Result<std::string> existing = checkpoint_fs_->ReadFile(path);
    if (existing.ok()) {
      SILT_ASSIGN_OR_RETURN(ScaleOutInfo recorded, ScaleOutInfoFromJson(*existing, path));
      if (recorded.app_id != info.app_id || recorded.table != info.table) {
        return Status::InvalidArgument(
            "checkpointLocation: ", checkpoint_path_, " belongs to the scale-out job with appId ",
            recorded.app_id, " writing ", recorded.table, "; this job has appId ", info.app_id,
            " and writes ", info.table, " (give it a checkpointLocation of its own)");
      }
      if (recorded.group_id == info.group_id && recorded.subscription == info.subscription) {
        return Status::OK();
      }
    } else if (!existing.status().IsNotFound()) {
      return existing.status().WithContextParts("checkpointLocation");
    }
    SILT_RETURN_NOT_OK_CTX(checkpoint_fs_->WriteFile(path, ScaleOutInfoToJson(info)), "writing ",
                           path);
    return Status::OK();
  }

  // The newest state of the table (null while it does not exist).
  Result<delta::SnapshotPtr> LatestTable() {
    if (table_snapshot_ != nullptr) {
      SILT_ASSIGN_OR_RETURN(table_snapshot_, table_->Update(std::move(table_snapshot_)));
      return table_snapshot_;
    }
    SILT_ASSIGN_OR_RETURN(bool exists, table_->Exists());
    if (!exists) return delta::SnapshotPtr();
    SILT_ASSIGN_OR_RETURN(table_snapshot_, table_->LatestSnapshot());
    return table_snapshot_;
  }

  std::optional<int64_t> RecordedOffset(const delta::SnapshotPtr& snapshot,
                                        const TopicPartition& tp) const {
    if (snapshot == nullptr) return std::nullopt;
    return snapshot->TxnVersion(PartitionAppId(app_id_, tp));
  }

  // startingOffsets (or startingTimestamp...) for a partition the table
  // records nothing for yet. Partitions the JSON form does not name start
  // at their earliest offset, as Spark starts partitions it discovers.
  Result<int64_t> ResolveStart(const TopicPartition& tp) {
    auto watermark = [&](bool high) -> Result<int64_t> {
      SILT_ASSIGN_OR_RETURN(kafka::Watermarks marks, consumer_->QueryWatermarks(tp));
      return high ? marks.high : marks.low;
    };
    switch (kafka_.start) {
      case KafkaSourceOptions::Start::kEarliest: return watermark(false);
      case KafkaSourceOptions::Start::kLatest: return watermark(true);
      case KafkaSourceOptions::Start::kOffsets: {
        auto it = kafka_.starting_offsets.find(tp);
        if (it == kafka_.starting_offsets.end() || it->second == -2) return watermark(false);
        if (it->second == -1) return watermark(true);
        return it->second;
      }
      case KafkaSourceOptions::Start::kTimestamp:
      case KafkaSourceOptions::Start::kTimestampPerPartition: {
        int64_t ts = kafka_.starting_timestamp_ms;
        if (kafka_.start == KafkaSourceOptions::Start::kTimestampPerPartition) {
          auto it = kafka_.starting_timestamps.find(tp);
          if (it == kafka_.starting_timestamps.end()) return watermark(false);
          ts = it->second;
        }
        SILT_ASSIGN_OR_RETURN(std::vector<std::optional<int64_t>> found,
                              consumer_->OffsetsForTimes({tp}, ts));
        if (!found.empty() && found[0]) return *found[0];
        if (!kafka_.starting_timestamp_strategy_latest) {
          return Status::InvalidArgument(
              kafka_.key_path, ": no offset in partition ", tp.ToString(),
              " has a timestamp at or after ", ts,
              " (set startingOffsetsByTimestampStrategy to latest to start at the end)");
        }
        return watermark(true);
      }
      case KafkaSourceOptions::Start::kResolver: break;
    }
    return Status::Internal("unknown Kafka starting offsets mode");
  }

  // The group gave this worker `partitions`: each starts where the table
  // says (a revoked partition's next owner reads the table, not the group).
  Result<std::map<TopicPartition, int64_t>> OnAssigned(
      const std::vector<TopicPartition>& partitions) {
    Result<delta::SnapshotPtr> snapshot = LatestTable();
    if (!snapshot.ok()) {
      return snapshot.status().WithContextParts(
          "reading the offsets of newly assigned Kafka "
          "partitions from table ",
          sink_->target());
    }
    std::map<TopicPartition, int64_t> starts;
    std::string described;
    for (const TopicPartition& tp : partitions) {
      Owned owned;
      owned.recorded = RecordedOffset(*snapshot, tp);
      int64_t start = 0;
      if (owned.recorded) {
        start = *owned.recorded;
        if (!kafka_.fail_on_data_loss) {
          SILT_ASSIGN_OR_RETURN(kafka::Watermarks marks, consumer_->QueryWatermarks(tp));
          if (start < marks.low) {
            SILT_LOG_WARN("stream", "Kafka partition ", tp.ToString(), ": offsets ", start, " to ",
                          marks.low - 1,
                          " were deleted before they were read (failOnDataLoss=false: "
                          "continuing at ",
                          marks.low, ")");
            start = marks.low;
          }
        }
      } else {
        Result<int64_t> resolved = ResolveStart(tp);
        if (!resolved.ok()) {
          return resolved.status().WithContextParts("starting Kafka partition ", tp.ToString());
        }
        start = *resolved;
      }
      owned.start = start;
      owned_[tp] = owned;
      if (in_batch_) batch_from_[tp] = start;
      starts[tp] = start;
      described += Status::Concat(described.empty() ? "" : ", ", tp.ToString(), "@", start,
                                  owned.recorded ? "" : " (startingOffsets)");
    }
    SILT_LOG_INFO("stream", "worker ", worker_id_, " now reads ", described);
    assignment_changed_ = true;
    group_dirty_ = true;
    return starts;
  }

  // Partitions leave this worker: a batch holding records of one of them
  // must not be committed (their next owner starts from the table).
  void OnRevoked(const std::vector<TopicPartition>& partitions, bool lost) {
    std::string described;
    for (const TopicPartition& tp : partitions) {
      if (in_batch_) {
        auto from = batch_from_.find(tp);
        auto position = consumer_->positions().find(tp);
        if (from != batch_from_.end() && position != consumer_->positions().end() &&
            position->second.next != from->second) {
          batch_revoked_ = true;
        }
        batch_from_.erase(tp);
      }
      owned_.erase(tp);
      described += (described.empty() ? "" : ", ") + tp.ToString();
    }
    SILT_LOG_INFO("stream", "worker ", worker_id_, lost ? " lost " : " gave up ", described);
    assignment_changed_ = true;
  }

  bool AllAtEnd() const {
    for (const auto& [tp, position] : consumer_->positions()) {
      if (!position.at_end) return false;
    }
    return true;
  }

  std::string OwnedOffsetsJson() const {
    KafkaOffsets offsets;
    for (const auto& [tp, owned] : owned_) {
      if (owned.recorded) offsets[tp] = *owned.recorded;
    }
    return KafkaOffsetsToJson(offsets);
  }

  // The sink's batch starts with the first rows to write, or at the
  // commit: an idle worker touches the table not at all.
  Status EnsureBegun() {
    if (batch_begun_) return Status::OK();
    Result<bool> began = sink_->Begin(batch_id_);
    if (!began.ok()) {
      return began.status().WithContextParts("batch ", batch_id_, ": opening table ",
                                             sink_->target());
    }
    transform_->StartBatch();
    batch_begun_ = true;
    if (options_.listener) options_.listener->OnBatchStarted(batch_id_);
    return Status::OK();
  }

  // Transforms and writes the records read so far.
  Status Flush(const expr::EvalContext& ctx) {
    if (records_->num_rows() == 0) return Status::OK();
    columnar::RecordBatchPtr raw = records_->Finish();
    SILT_RETURN_NOT_OK(EnsureBegun());
    input_rows_ += raw->num_rows;
    Result<columnar::RecordBatchPtr> out = transform_->Process(raw, ctx);
    if (!out.ok()) {
      return AddFailingRecord(out.status(), *transform_, *source_, raw, ctx)
          .WithContextParts("batch ", batch_id_, ": transform");
    }
    if (*out == nullptr || (*out)->num_rows == 0) return Status::OK();
    output_rows_ += (*out)->num_rows;
    Status st = sink_->Write(**out);
    if (!st.ok()) {
      return st.WithContextParts("batch ", batch_id_, ": writing to ", sink_->target());
    }
    return Status::OK();
  }

  // After a discarded batch: every owned partition goes back to what the
  // table records (which another worker may have moved).
  Status Resync() {
    records_->Finish();
    SILT_ASSIGN_OR_RETURN_CTX(delta::SnapshotPtr snapshot, LatestTable(), "re-reading table ",
                              sink_->target(), " after a discarded batch");
    std::map<TopicPartition, int64_t> seeks;
    for (auto& [tp, owned] : owned_) {
      owned.recorded = RecordedOffset(snapshot, tp);
      seeks[tp] = owned.recorded ? *owned.recorded : owned.start;
    }
    SILT_RETURN_NOT_OK(consumer_->Seek(seeks));
    group_dirty_ = true;
    return Status::OK();
  }

  void AbortBatch() {
    if (batch_begun_) sink_->Abort();
    batch_begun_ = false;
    in_batch_ = false;
    batch_revoked_ = false;
    batch_from_.clear();
  }

  // Commits the table's offsets of the owned partitions to the group (for
  // lag tools; never read back). Best effort: retried after the next batch.
  void CommitGroupOffsets() {
    KafkaOffsets offsets;
    for (const auto& [tp, owned] : owned_) {
      if (owned.recorded) offsets[tp] = *owned.recorded;
    }
    if (offsets.empty()) {
      group_dirty_ = false;
      return;
    }
    Status st = consumer_->CommitOffsets(offsets);
    if (st.ok()) {
      group_dirty_ = false;
      return;
    }
    group_dirty_ = true;
    SILT_LOG_DEBUG("stream", "committing offsets to Kafka group ", group_id_,
                   " (retried after the next batch): ", st.ToString());
  }

  void WriteRecord(bool force, const char* state = "running") {
    const int64_t now = clock_->MonotonicMicros();
    if (!force && !assignment_changed_ && now - last_record_mono_ < kRecordIntervalMicros) return;
    last_record_mono_ = now;
    WorkerRecord record;
    record.worker_id = worker_id_;
    record.host = HostName();
    record.pid = static_cast<int64_t>(getpid());
    // The group's name for this member (kept after it left the group).
    if (consumer_ != nullptr) {
      std::string member = consumer_->member_id();
      if (!member.empty()) member_id_ = std::move(member);
    }
    record.member_id = member_id_;
    record.run_id = run_id_;
    record.started_ms = started_ms_;
    record.updated_ms = clock_->NowMicros() / 1000;
    record.state = state;
    for (const auto& [tp, owned] : owned_) record.partitions.push_back({tp, owned.recorded});
    record.batches = batches_;
    record.rows = rows_;
    record.discarded = discarded_;
    const std::string path =
        fs::JoinPath(WorkersDir(checkpoint_path_), WorkerRecordFileName(worker_id_));
    Status st = checkpoint_fs_->WriteFile(path, WorkerRecordToJson(record));
    if (!st.ok()) SILT_LOG_WARN("stream", "writing worker record ", path, ": ", st.ToString());
  }

  // Progress of a batch (or, with nothing committed, of an assignment
  // change), as the single-query loop reports it.
  void ReportProgress(int64_t trigger_wall, int64_t trigger_mono, const std::string& start_json,
                      int64_t table_version, int64_t commit_micros,
                      const ProgressDurations& durations_in) {
    BatchProgress progress;
    ProgressDurations durations = durations_in;
    durations.trigger_execution = (clock_->MonotonicMicros() - trigger_mono) / 1000;
    progress.batch_id = batch_id_;
    progress.num_input_rows = input_rows_;
    progress.num_output_rows = table_version >= 0 ? output_rows_ : 0;
    progress.duration_ms = durations.trigger_execution;
    progress.table_version = table_version;
    progress.start_offset_json = start_json;
    progress.end_offset_json = OwnedOffsetsJson();
    progress.sink_commit_micros = commit_micros;
    QueryProgress& record = progress.record;
    record.id = query_id_;
    record.run_id = run_id_;
    if (!job_.name.empty()) record.name = job_.name;
    record.timestamp_micros = trigger_wall;
    record.batch_id = batch_id_;
    record.batch_duration = durations.trigger_execution;
    record.num_input_rows = input_rows_;
    const double rows = static_cast<double>(input_rows_);
    const double input_seconds =
        !last_trigger_mono_ ? std::numeric_limits<double>::infinity()
                            : static_cast<double>(trigger_mono - *last_trigger_mono_) / 1e6;
    record.input_rows_per_second = rows / input_seconds;
    record.processed_rows_per_second =
        rows / (static_cast<double>(std::max<int64_t>(durations.trigger_execution, 1)) / 1000.0);
    record.duration_ms = durations;
    SourceProgress source;
    source.description = source_->Description();
    source.start_offset = start_json;
    source.end_offset = progress.end_offset_json;
    source.num_input_rows = input_rows_;
    source.input_rows_per_second = record.input_rows_per_second;
    source.processed_rows_per_second = record.processed_rows_per_second;
    record.sources.push_back(std::move(source));
    record.sink.description = sink_->Description();
    record.sink.num_output_rows = progress.num_output_rows;
    progress.json = ProgressToJson(record);
    last_trigger_mono_ = trigger_mono;
    if (options_.on_progress) options_.on_progress(progress);
    if (options_.listener) options_.listener->OnBatchCompleted(progress);
  }

  // One batch: read (transforming and writing as chunks fill), then commit
  // the rows with the compare-and-set txns of the partitions they came
  // from. A batch with nothing to record commits nothing.
  Status RunBatch(QueryResult* result) {
    const int64_t trigger_wall = clock_->NowMicros();
    const int64_t trigger_mono = clock_->MonotonicMicros();
    const bool processing_time =
        job_.trigger.kind == TriggerKind::kProcessingTime && job_.trigger.interval_micros > 0;
    const int64_t boundary = processing_time ? (trigger_wall / job_.trigger.interval_micros + 1) *
                                                   job_.trigger.interval_micros
                                             : 0;
    const std::string start_json = OwnedOffsetsJson();
    in_batch_ = true;
    batch_revoked_ = false;
    batch_begun_ = false;
    input_rows_ = 0;
    output_rows_ = 0;
    batch_from_.clear();
    for (const auto& [tp, position] : consumer_->positions()) batch_from_[tp] = position.next;

    expr::EvalContext ctx;
    // current_timestamp() is the batch's start, as in Spark.
    ctx.current_timestamp_micros = trigger_wall;
    const std::optional<int64_t> cap = kafka_.max_offsets_per_trigger;
    int64_t read = 0;
    Status st = Status::OK();
    ProgressDurations durations;
    while (true) {
      int64_t want = columnar::kTargetBatchRows - records_->num_rows();
      if (cap) want = std::min(want, *cap - read);
      Result<int64_t> got =
          consumer_->Poll(records_.get(), std::max<int64_t>(want, 0), kPollSliceMs);
      if (!got.ok()) {
        st = got.status().WithContextParts("batch ", batch_id_, ": reading Kafka");
        break;
      }
      read += *got;
      if (records_->num_rows() >= columnar::kTargetBatchRows ||
          records_->bytes() >= kafka::RecordColumns::kMaxChunkBytes) {
        st = Flush(ctx);
        if (!st.ok()) break;
      }
      if (batch_revoked_) break;
      if (consumer_->TakeRebalanced()) break;
      if ((cap && read >= *cap) || StopRequested()) break;
      if (processing_time) {
        if (clock_->NowMicros() >= boundary) break;
      } else if (AllAtEnd() || clock_->MonotonicMicros() - trigger_mono >= kMaxReadMicros) {
        break;
      }
    }
    if (st.ok() && !batch_revoked_) st = Flush(ctx);
    durations.get_batch = (clock_->MonotonicMicros() - trigger_mono) / 1000;
    if (!st.ok()) {
      AbortBatch();
      return st;
    }
    if (batch_revoked_) {
      SILT_LOG_INFO("stream", "batch ", batch_id_, " discarded: partitions it read were revoked; ",
                    "the others go back to the table's offsets");
      AbortBatch();
      ++discarded_;
      return Resync();
    }

    // One compare-and-set txn per partition the batch moved, and per
    // partition whose start the table does not record yet.
    std::vector<delta::CommitRequest::ExpectedTxn> txns;
    const int64_t now_ms = clock_->NowMicros() / 1000;
    for (const auto& [tp, owned] : owned_) {
      auto position = consumer_->positions().find(tp);
      if (position == consumer_->positions().end()) continue;
      const int64_t until = position->second.next;
      if (owned.recorded && *owned.recorded == until) continue;
      txns.push_back({delta::Txn{PartitionAppId(app_id_, tp), until, now_ms}, owned.recorded});
    }
    if (txns.empty()) {
      AbortBatch();
      if (options_.listener) {
        // The lag gauges follow the partitions this worker holds now.
        if (assignment_changed_) options_.listener->OnOffsetsChanged(OwnedOffsetsJson());
        options_.listener->OnNoNewData();
      }
      Housekeeping();
      return Status::OK();
    }
    st = EnsureBegun();
    if (!st.ok()) {
      AbortBatch();
      return st;
    }
    const int64_t commit_start = clock_->MonotonicMicros();
    sink_->SetPartitionTxns(txns, {{"siltWorker", worker_id_}, {"siltAppId", app_id_}});
    Result<SinkBatchResult> committed = sink_->Commit();
    const int64_t commit_micros = clock_->MonotonicMicros() - commit_start;
    durations.add_batch = commit_micros / 1000;
    batch_begun_ = false;
    in_batch_ = false;
    batch_from_.clear();
    if (!committed.ok()) {
      sink_->Abort();
      if (committed.status().IsConflict()) {
        SILT_LOG_INFO("stream", "batch ", batch_id_, " discarded: ", committed.status().message());
        ++discarded_;
        return Resync();
      }
      return committed.status().WithContextParts("batch ", batch_id_, ": committing to ",
                                                 sink_->target());
    }
    for (const delta::CommitRequest::ExpectedTxn& txn : txns) {
      std::optional<TopicPartition> tp = ParsePartitionAppId(app_id_, txn.txn.app_id);
      auto it = tp ? owned_.find(*tp) : owned_.end();
      if (it != owned_.end()) it->second.recorded = txn.txn.version;
    }
    const int64_t t0 = clock_->MonotonicMicros();
    CommitGroupOffsets();
    durations.commit_offsets = (clock_->MonotonicMicros() - t0) / 1000;
    ++batches_;
    rows_ += output_rows_;
    ++result->batches_run;
    result->rows_written += output_rows_;
    ReportProgress(trigger_wall, trigger_mono, start_json, committed->table_version, commit_micros,
                   durations);
    ++batch_id_;
    Housekeeping();
    return Status::OK();
  }

  // After each batch: group offsets still owed, and the worker record.
  void Housekeeping() {
    if (group_dirty_) CommitGroupOffsets();
    WriteRecord(false);
    assignment_changed_ = false;
  }

  const JobSpec& job_;
  const QueryOptions& options_;
  Clock* clock_;
  KafkaSourceOptions kafka_;
  std::string app_id_;
  std::string group_id_;
  std::string worker_id_;
  std::string query_id_;
  std::string run_id_;
  std::string member_id_;
  int64_t started_ms_ = 0;
  expr::EvalOptions eval_options_;
  std::unique_ptr<Source> source_;
  std::unique_ptr<Transform> transform_;
  std::unique_ptr<DeltaSink> sink_;
  std::unique_ptr<delta::DeltaTable> table_;
  delta::SnapshotPtr table_snapshot_;
  std::string checkpoint_path_;
  fs::FileSystemPtr checkpoint_fs_;
  std::unique_ptr<kafka::GroupConsumer> consumer_;

  std::map<TopicPartition, Owned> owned_;
  std::unique_ptr<kafka::RecordColumns> records_;
  // The current batch.
  int64_t batch_id_ = 0;
  bool in_batch_ = false;
  bool batch_begun_ = false;
  bool batch_revoked_ = false;
  std::map<TopicPartition, int64_t> batch_from_;
  int64_t input_rows_ = 0;
  int64_t output_rows_ = 0;
  std::optional<int64_t> last_trigger_mono_;

  bool assignment_changed_ = false;
  bool group_dirty_ = false;
  int64_t last_record_mono_ = 0;
  int64_t batches_ = 0;
  int64_t rows_ = 0;
  int64_t discarded_ = 0;
};

}  // namespace

Result<QueryResult> RunScaleOutWorker(const JobSpec& job, const QueryOptions& options) {
  if (!job.scale_out) return Status::InvalidArgument("scaleOut: the job has no scaleOut key");
  Worker worker(job, options);
  return worker.Run();
}

}  // namespace silt::stream
