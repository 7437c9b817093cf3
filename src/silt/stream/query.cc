#include "silt/stream/query.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>
#include <thread>

#include "silt/base/logging.h"
#include "silt/base/strings.h"
#include "silt/base/uuid.h"
#include "silt/fs/s3_file_system.h"
#include "silt/stream/checkpoint/checkpoint.h"
#include "silt/stream/checkpoint/checkpoint_lock.h"
#include "silt/stream/json_internal.h"
#include "silt/stream/ops/failing_record.h"
#include "silt/stream/ops/transform.h"
#include "silt/stream/progress.h"
#include "silt/stream/sink/dead_letter.h"
#include "silt/stream/sink/sink.h"
#include "silt/stream/source/source_factory.h"

namespace silt::stream {

namespace {

// Default trigger with nothing new: look again after Spark's
// spark.sql.streaming.pollingDelay (10 ms), so a record waits at most that long
// before its batch starts.
constexpr int64_t kPollMicros = 10'000;
constexpr int64_t kMaxSleepMicros = 100'000;  // stop flag latency during waits

// The state stores' settings from the job's Spark confs (Spark's names;
// sizes in MB as Spark takes them).
constexpr const char* kMinDeltasForSnapshot = "spark.sql.streaming.stateStore.minDeltasForSnapshot";
constexpr const char* kBlockCacheSizeMb = "spark.sql.streaming.stateStore.rocksdb.blockCacheSizeMB";
constexpr const char* kWriteBufferSizeMb =
    "spark.sql.streaming.stateStore.rocksdb.writeBufferSizeMB";
constexpr const char* kMaxWriteBufferNumber =
    "spark.sql.streaming.stateStore.rocksdb.maxWriteBufferNumber";
// Spark 3.5: a stateful step after an aggregation in complete or update mode
// is refused unless this is false (ops/transform.h).
constexpr std::string_view kCheckCorrectnessConf =
    "spark.sql.streaming.statefulOperator.checkCorrectness.enabled";
// Spark 3.5's watermark propagation between stateful steps (default true;
// ops/transform.h).
constexpr std::string_view kAllowMultipleConf =
    "spark.sql.streaming.statefulOperator.allowMultiple";

bool IsStateStoreConfKey(const std::string& key) {
  return key == kMinDeltasForSnapshot || key == kBlockCacheSizeMb || key == kWriteBufferSizeMb ||
         key == kMaxWriteBufferNumber;
}

Result<state::StateStoreOptions> StateStoreOptionsForJob(
    const std::map<std::string, std::string>& conf) {
  state::StateStoreOptions options;
  auto positive = [&](const char* key, int64_t* out) -> Status {
    auto it = conf.find(key);
    if (it == conf.end()) return Status::OK();
    int64_t value = 0;
    const std::string& text = it->second;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value <= 0) {
      return Status::InvalidArgument(key, ": expected a positive integer, got '", text, "'");
    }
    *out = value;
    return Status::OK();
  };
  SILT_RETURN_NOT_OK(positive(kMinDeltasForSnapshot, &options.snapshot_interval));
  int64_t mb = 0;
  SILT_RETURN_NOT_OK(positive(kBlockCacheSizeMb, &mb));
  if (mb > 0) options.block_cache_bytes = mb << 20;
  mb = 0;
  SILT_RETURN_NOT_OK(positive(kWriteBufferSizeMb, &mb));
  if (mb > 0) options.write_buffer_bytes = mb << 20;
  int64_t buffers = 0;
  SILT_RETURN_NOT_OK(positive(kMaxWriteBufferNumber, &buffers));
  if (buffers > 0) options.max_write_buffers = static_cast<int>(buffers);
  return options;
}

bool IsLocalPath(const std::string& normalized) {
  return normalized.find("://") == std::string::npos;
}

class QueryRunner {
 public:
  QueryRunner(const JobSpec& job, const QueryOptions& options)
      : job_(job), options_(options), clock_(options.clock ? options.clock : &SystemClock()) {}

  Result<QueryResult> Run() {
    SILT_RETURN_NOT_OK(Open());
    SILT_RETURN_NOT_OK(Restore());
    QueryResult result;
    result.query_id = query_id_;
    SILT_LOG_INFO("stream", "query ", query_id_, " (run ", run_id_, ") starting at batch ",
                  next_batch_id_, pending_ ? " (re-running the uncommitted batch)" : "",
                  "; checkpoint ", checkpoint_path_, ", table ", sink_->target());
    if (options_.listener) {
      options_.listener->OnQueryStarted(query_id_, run_id_, source_->Description(),
                                        sink_->Description());
    }
    const bool once = job_.trigger.kind == TriggerKind::kOnce;
    const bool available_now = job_.trigger.kind == TriggerKind::kAvailableNow;
    ReadLimit limit;
    limit.all_available = once;
    while (!StopRequested()) {
      if (job_.max_batches && result.batches_run >= *job_.max_batches) break;
      const int64_t trigger_wall = clock_->NowMicros();
      const int64_t trigger_mono = clock_->MonotonicMicros();
      ProgressDurations durations;
      OffsetSeq seq;
      if (pending_) {
        seq = std::move(*pending_);
        pending_.reset();
      } else {
        int64_t t0 = clock_->MonotonicMicros();
        Result<std::optional<std::string>> latest = source_->LatestOffset(start_offset_, limit);
        if (!latest.ok()) {
          return latest.status().WithContextParts("batch ", next_batch_id_,
                                                  ": planning the source offsets");
        }
        durations.latest_offset = (clock_->MonotonicMicros() - t0) / 1000;
        // Spark's no-data batch: nothing new, but the watermark moved far
        // enough for a stateful step to emit or evict; the batch re-records
        // the previous end offsets with the new watermark.
        std::optional<std::string> planned = *latest;
        if (!planned && !once && start_offset_ && transform_->WantsNoDataBatch(watermark_ms_)) {
          planned = *start_offset_;
        }
        if (!planned) {
          if (options_.listener) options_.listener->OnNoNewData();
          if (once || available_now) break;
          if (job_.trigger.kind == TriggerKind::kProcessingTime) {
            WaitForNextInterval(trigger_wall);
          } else {
            WaitUntilMono(clock_->MonotonicMicros() + kPollMicros);
          }
          continue;
        }
        seq.batch_id = next_batch_id_;
        seq.batch_watermark_ms = watermark_ms_;
        seq.batch_timestamp_ms = trigger_wall / 1000;
        seq.conf_json = conf_json_;
        seq.source_offsets = {*planned};
        t0 = clock_->MonotonicMicros();
        Status wal = checkpoint_->WriteOffsets(seq);
        if (!wal.ok()) {
          return wal.WithContextParts("batch ", seq.batch_id, ": writing offsets/", seq.batch_id);
        }
        durations.wal_commit = (clock_->MonotonicMicros() - t0) / 1000;
        if (seq.batch_id > kMinBatchesToRetain) {
          Status purge = checkpoint_->Purge(seq.batch_id - kMinBatchesToRetain);
          if (!purge.ok()) {
            SILT_LOG_WARN("stream", "purging old checkpoint files: ", purge.ToString());
          }
        }
      }
      BatchProgress progress;
      if (options_.listener) options_.listener->OnBatchStarted(seq.batch_id);
      SILT_RETURN_NOT_OK(RunBatch(seq, trigger_wall, trigger_mono, &durations, &progress));
      ++result.batches_run;
      result.rows_written += progress.skipped_duplicate ? 0 : progress.num_output_rows;
      if (options_.on_progress) options_.on_progress(progress);
      if (options_.listener) options_.listener->OnBatchCompleted(progress);
      if (once) break;
      if (job_.max_batches && result.batches_run >= *job_.max_batches) break;
      if (job_.trigger.kind == TriggerKind::kProcessingTime) WaitForNextInterval(trigger_wall);
    }
    return result;
  }

 private:
  bool StopRequested() const { return options_.stop_flag != nullptr && options_.stop_flag->load(); }

  // Sleeps on the injected clock in short slices so a stop request is seen
  // promptly.
  void WaitUntilMono(int64_t deadline) {
    while (!StopRequested()) {
      int64_t now = clock_->MonotonicMicros();
      if (now >= deadline) return;
      clock_->SleepMicros(std::min(kMaxSleepMicros, deadline - now));
    }
  }

  // processingTime: the next batch starts at the next multiple of the
  // interval after the trigger start (Spark's ProcessingTimeExecutor); a
  // batch that overran its interval is followed at once.
  void WaitForNextInterval(int64_t trigger_wall) {
    const int64_t interval = job_.trigger.interval_micros;
    if (interval <= 0) return;
    const int64_t next = (trigger_wall / interval + 1) * interval;
    while (!StopRequested()) {
      int64_t now = clock_->NowMicros();
      if (now >= next) return;
      clock_->SleepMicros(std::min(kMaxSleepMicros, next - now));
    }
  }

  // Spark restores the persisted confs of a checkpoint into the session,
  // over what the job sets, and warns; so does silt.
  void WarnCheckpointConfWins(std::string_view checkpoint_conf_json) const {
    simdjson::dom::parser parser;
    Result<simdjson::dom::object> conf =
        internal::ParseJsonObject(parser, checkpoint_conf_json, "offsets conf");
    if (!conf.ok()) return;
    for (const auto& [key, value] : job_.spark_conf) {
      if (!IsOffsetConfKey(key)) continue;
      Result<std::optional<std::string>> kept = internal::GetOptionalString(*conf, key, "conf");
      if (!kept.ok() || !*kept || **kept == value) continue;
      SILT_LOG_WARN("stream", key, ": the checkpoint's value ", **kept, " is used, not the job's ",
                    value, " (the checkpoint keeps the confs of its first run, as in Spark)");
    }
  }

  // spark.sql.streaming.multipleWatermarkPolicy as the batch records it
  // (the checkpoint's value wins, as every persisted conf).
  static bool MaxWatermarkPolicy(std::string_view conf_json) {
    simdjson::dom::parser parser;
    Result<simdjson::dom::object> conf = internal::ParseJsonObject(parser, conf_json, "conf");
    if (!conf.ok()) return false;
    Result<std::optional<std::string>> policy =
        internal::GetOptionalString(*conf, "spark.sql.streaming.multipleWatermarkPolicy", "conf");
    return policy.ok() && *policy && AsciiLower(**policy) == "max";
  }

  // spark.sql.* keys of the job file that silt neither honours nor records.
  void WarnInertSparkConf() const {
    for (const auto& [key, value] : job_.spark_conf) {
      if (key == "spark.sql.session.timeZone" || key == "spark.sql.ansi.enabled" ||
          key == kCheckCorrectnessConf || key == kAllowMultipleConf || IsOffsetConfKey(key) ||
          IsStateStoreConfKey(key)) {
        continue;
      }
      SILT_LOG_WARN("stream", key, ": Spark conf without effect in silt; ignored");
    }
  }

  Status Open() {
    WarnInertSparkConf();
    // The job's `storage.s3` settings reach every s3:// path opened below.
    SILT_RETURN_NOT_OK(fs::SetS3Settings(job_.storage_s3));
    checkpoint_path_ = fs::NormalizePath(job_.checkpoint_location);
    fs::FileSystemPtr checkpoint_fs = options_.file_system;
    if (checkpoint_fs == nullptr) {
      SILT_ASSIGN_OR_RETURN(checkpoint_fs, fs::FileSystemForPath(checkpoint_path_));
    }
    SILT_ASSIGN_OR_RETURN(checkpoint_, CheckpointDir::Open(checkpoint_fs, checkpoint_path_));

    // The source and the transforms are built and bound before anything is
    // written, so a bad job (unknown column, bad expression, bad schema)
    // fails without leaving a checkpoint or a table behind.
    SourceContext context;
    context.checkpoint_fs = checkpoint_fs;
    context.metadata_dir = checkpoint_->SourceDir(0);
    context.data_fs = options_.file_system;
    context.clock = clock_;
    context.session_time_zone = job_.session_time_zone;
    context.spark_conf = job_.spark_conf;
    SILT_ASSIGN_OR_RETURN(source_, MakeSource(job_.source, context));
    SILT_ASSIGN_OR_RETURN(eval_options_, EvalOptionsForJob(job_, *clock_));
    const expr::EvalOptions& eval_options = eval_options_;
    StatefulOptions stateful;
    SILT_ASSIGN_OR_RETURN(stateful.output_mode, ParseOutputMode(job_.sink.output_mode));
    if (auto it = job_.spark_conf.find(std::string(kCheckCorrectnessConf));
        it != job_.spark_conf.end()) {
      if (!EqualsIgnoreCase(it->second, "true") && !EqualsIgnoreCase(it->second, "false")) {
        return Status::InvalidArgument(kCheckCorrectnessConf, ": expected true or false, got '",
                                       it->second, "'");
      }
      stateful.check_correctness = EqualsIgnoreCase(it->second, "true");
    }
    if (auto it = job_.spark_conf.find(std::string(kAllowMultipleConf));
        it != job_.spark_conf.end()) {
      if (!EqualsIgnoreCase(it->second, "true") && !EqualsIgnoreCase(it->second, "false")) {
        return Status::InvalidArgument(kAllowMultipleConf, ": expected true or false, got '",
                                       it->second, "'");
      }
      stateful.allow_multiple = EqualsIgnoreCase(it->second, "true");
    }
    allow_multiple_ = stateful.allow_multiple;
    SILT_ASSIGN_OR_RETURN(state::StateStoreOptions store_options,
                          StateStoreOptionsForJob(job_.spark_conf));
    stateful.make_store = [this, checkpoint_fs, store_options](
                              int operator_id) -> Result<std::unique_ptr<state::StateStore>> {
      state::StateStoreOptions options = store_options;
      options.file_system = checkpoint_fs;
      options.dir = checkpoint_->StateDir(operator_id, 0);
      Result<std::unique_ptr<state::StateStore>> store = state::StateStore::Open(options);
      if (!store.ok()) return store.status().WithContextParts("state store ", options.dir);
      return store;
    };
    SILT_ASSIGN_OR_RETURN(
        transform_, Transform::Make(job_.transforms, source_->schema(), eval_options, &stateful));
    // State under state/ that no step of this job wrote (a Spark query's
    // state store, a removed step) cannot be continued: refused before
    // anything is written.
    std::vector<int> operator_ids;
    for (int index = 0; index < transform_->num_stateful(); ++index) {
      operator_ids.push_back(transform_->stateful_step(index).operator_id);
    }
    SILT_RETURN_NOT_OK(checkpoint_->CheckStateOperators(operator_ids, kStatefulStepFile));
    // `parallelism`: the parts of a batch (Kafka partitions, files) are read,
    // transformed and written on threads of their own, each part with its
    // own transform; a stateful step or dead letters keep the query thread
    // alone (their state and their per-row bookkeeping are the batch's).
    parallelism_ = job_.parallelism.value_or(
        static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    if (transform_->has_stateful() || job_.dead_letter.has_value()) parallelism_ = 1;
    for (int part = 1; part < parallelism_; ++part) {
      SILT_ASSIGN_OR_RETURN(std::unique_ptr<Transform> copy,
                            Transform::Make(job_.transforms, source_->schema(), eval_options));
      part_transforms_.push_back(std::move(copy));
    }

    // The sink checks its options and the table before the checkpoint is
    // created, with the query id the checkpoint will hold (its txn appId).
    Result<std::string> existing_id = checkpoint_->ReadQueryId();
    if (!existing_id.ok() && !existing_id.status().IsNotFound()) {
      return existing_id.status().WithContextParts("checkpoint ", checkpoint_path_);
    }
    query_id_ = existing_id.ok() ? *existing_id : NewUuid();
    run_id_ = NewUuid();
    SILT_RETURN_NOT_OK(MakeQuerySink());

    if (IsLocalPath(checkpoint_path_) && checkpoint_fs->name() == "local") {
      SILT_ASSIGN_OR_RETURN(lock_, CheckpointLock::Acquire(checkpoint_path_));
      // A killed run's half-written checkpoint files must not pile up.
      SILT_ASSIGN_OR_RETURN(int64_t removed, checkpoint_->RemoveOrphanedTemps());
      if (removed > 0) {
        SILT_LOG_INFO("stream", "checkpoint ", checkpoint_path_, ": removed ", removed,
                      " temp file(s) left by an interrupted run");
      }
    }
    if (!existing_id.ok()) {
      Result<std::string> id = checkpoint_->CreateQueryId(query_id_);
      if (!id.ok()) return id.status().WithContextParts("checkpoint ", checkpoint_path_);
      // Another starter created the checkpoint meanwhile: its id is the
      // query's, and the sink must commit under it.
      if (*id != query_id_) {
        query_id_ = *id;
        SILT_RETURN_NOT_OK(MakeQuerySink());
      }
    }
    // The id is final: log lines carry it from here on (--log-format json).
    SetLogQueryId(query_id_);
    for (int index = 0; index < transform_->num_stateful(); ++index) {
      const StatefulStep& step = transform_->stateful_step(index);
      Status recorded =
          RecordOrCheckStatefulStep(checkpoint_fs, checkpoint_->StateOperatorDir(step.operator_id),
                                    step, transform_->stateful_operator(index));
      if (!recorded.ok()) return recorded.WithContextParts("checkpoint ", checkpoint_path_);
    }
    return Status::OK();
  }

  // The output columns of the aggregation's group keys (SinkContext's
  // group_keys): a groupBy step emits its keys first, by name. The last
  // stateful step's, which makes the rows the sink sees.
  Result<std::vector<std::string>> GroupKeyColumns() const {
    std::vector<std::string> keys;
    if (!transform_->has_stateful()) return keys;
    const int last = transform_->num_stateful() - 1;
    const StatefulStep* step = &transform_->stateful_step(last);
    if (step->step.kind != "groupBy") return keys;
    if (step->step.sql_select) {
      if (job_.sink.output_mode == "update" && job_.sink.format == "delta" &&
          job_.sink.mode != "merge") {
        return Status::InvalidArgument(
            step->step.key_path,
            ": outputMode update on a Delta sink merges on the group keys of a groupBy step; "
            "write the aggregation as {groupBy: {keys: [...], agg: [...]}}, or use mode: merge "
            "with merge.on naming the keys");
      }
      return keys;
    }
    const columnar::SchemaPtr& schema = transform_->stateful_operator(last).output_schema();
    for (size_t i = 0; i < step->step.exprs.size() && static_cast<int>(i) < schema->num_fields();
         ++i) {
      keys.push_back(schema->field(static_cast<int>(i)).name);
    }
    return keys;
  }

  Status MakeQuerySink() {
    SinkContext sink_context;
    sink_context.schema = transform_->output_schema();
    sink_context.query_id = query_id_;
    sink_context.file_system = options_.file_system;
    sink_context.clock = clock_;
    sink_context.eval = eval_options_;
    sink_context.console_renderer = options_.console_renderer;
    SILT_ASSIGN_OR_RETURN(sink_context.group_keys, GroupKeyColumns());
    if (job_.sinks.empty()) {
      SILT_ASSIGN_OR_RETURN(sink_, MakeSink(job_.sink, sink_context));
    } else {
      SILT_ASSIGN_OR_RETURN(sink_, MakeSinks(job_.sinks, sink_context));
    }
    if (job_.dead_letter) {
      // An append-only Delta sink of its own: its txn{query id, batch id}
      // makes a re-run batch skip the dead letters it already committed.
      SinkContext dead_context = sink_context;
      dead_context.schema = DeadLetterSchema();
      dead_context.group_keys.clear();
      Result<std::unique_ptr<Sink>> dead = MakeSink(*job_.dead_letter, dead_context);
      if (!dead.ok()) return dead.status().WithContextParts("deadLetter");
      dead_sink_ = std::move(*dead);
      dead_letters_ = std::make_unique<DeadLetterBuilder>(query_id_);
    }
    return Status::OK();
  }

  // MicroBatchExecution.populateStartOffsets: resume after the last
  // committed batch, or re-run the last planned one that has no commit.
  Status Restore() {
    conf_json_ = OffsetConfJson(job_.spark_conf);
    SILT_ASSIGN_OR_RETURN(std::optional<int64_t> latest, checkpoint_->LatestOffsetBatch());
    std::optional<std::string> last_planned;
    if (latest) {
      SILT_ASSIGN_OR_RETURN(OffsetSeq last, checkpoint_->ReadOffsets(*latest));
      if (last.source_offsets.size() != 1) {
        return Status::InvalidArgument("checkpoint ", checkpoint_path_, " records ",
                                       static_cast<int64_t>(last.source_offsets.size()),
                                       " sources in offsets/", *latest,
                                       ", but the job has 1 source");
      }
      // The checkpoint's confs win, as Spark restores them into the session
      // (and, as Spark, say so when the job asks for another value).
      if (!last.conf_json.empty() && last.conf_json != "{}") {
        if (last.conf_json != conf_json_) WarnCheckpointConfWins(last.conf_json);
        conf_json_ = last.conf_json;
      }
      last_planned = last.source_offsets[0];
      // commits/ files are not synced (decision 157): the newest that reads
      // back whole counts, as if a torn one after it had never been written.
      SILT_ASSIGN_OR_RETURN(std::optional<CommitMark> last_commit,
                            checkpoint_->RecoverLatestCommit());
      std::optional<int64_t> committed;
      if (last_commit) committed = last_commit->batch_id;
      if (committed) {
        Status held = sink_->CheckHoldsCommitted(*committed);
        if (!held.ok()) return held.WithContextParts("checkpoint ", checkpoint_path_);
      }
      // (The dead-letter table is not checked: a batch without bad rows
      // commits nothing there, so its txn may rightly lag the checkpoint.)
      if (committed && *committed >= *latest) {
        next_batch_id_ = *latest + 1;
        start_offset_ = NoneIfDash(last.source_offsets[0]);
        watermark_ms_ = last.batch_watermark_ms;
        previous_watermark_ms_ = last.batch_watermark_ms;
        if (*committed == *latest) {
          watermark_ms_ = std::max(watermark_ms_, last_commit->next_batch_watermark_ms);
        }
      } else {
        if (committed && *committed < *latest - 1) {
          SILT_LOG_WARN("stream", "checkpoint ", checkpoint_path_, ": batches ", *committed + 1,
                        "..", *latest - 1, " have no commits entry; re-running batch ", *latest);
        }
        next_batch_id_ = *latest;
        if (*latest > 0) {
          Result<OffsetSeq> previous = checkpoint_->ReadOffsets(*latest - 1);
          if (!previous.ok()) {
            return previous.status().WithContextParts(
                "checkpoint ", checkpoint_path_, ": batch ", *latest - 1,
                " doesn't exist (needed as the start of uncommitted batch ", *latest, ")");
          }
          if (previous->source_offsets.size() != 1) {
            return Status::Corruption(
                "checkpoint ", checkpoint_path_, ": offsets/", *latest - 1, " records ",
                static_cast<int64_t>(previous->source_offsets.size()), " sources");
          }
          start_offset_ = NoneIfDash(previous->source_offsets[0]);
          previous_watermark_ms_ = previous->batch_watermark_ms;
        }
        watermark_ms_ = last.batch_watermark_ms;
        pending_ = std::move(last);
      }
    }
    SILT_RETURN_NOT_OK_CTX(source_->Restore(last_planned), "restoring the source");
    if (job_.trigger.kind == TriggerKind::kAvailableNow) {
      SILT_RETURN_NOT_OK_CTX(source_->PrepareForAvailableNow(), "preparing trigger availableNow");
    }
    return Status::OK();
  }

  static std::optional<std::string> NoneIfDash(const std::string& offset) {
    if (offset.empty() || offset == "-") return std::nullopt;
    return offset;
  }

  Status RunBatch(const OffsetSeq& seq, int64_t trigger_wall, int64_t trigger_mono,
                  ProgressDurations* durations, BatchProgress* progress) {
    const int64_t batch_id = seq.batch_id;
    const std::string& end = seq.source_offsets[0];
    std::string table = sink_->target();

    int64_t t0 = clock_->MonotonicMicros();
    // A no-data batch (its end is where the previous batch ended) reads
    // nothing.
    const bool no_data = start_offset_ && *start_offset_ == end;
    std::vector<std::unique_ptr<BatchReader>> readers;
    if (!no_data) {
      Result<std::vector<std::unique_ptr<BatchReader>>> opened =
          source_->GetBatchParts(start_offset_, end, parallelism_);
      if (!opened.ok()) {
        return opened.status().WithContextParts("batch ", batch_id, ": reading the source");
      }
      readers = std::move(*opened);
    }
    durations->get_batch = (clock_->MonotonicMicros() - t0) / 1000;

    t0 = clock_->MonotonicMicros();
    Result<bool> write = sink_->Begin(batch_id);
    if (!write.ok()) {
      return write.status().WithContextParts("batch ", batch_id, ": opening table ", table);
    }
    if (dead_sink_ != nullptr) {
      Result<bool> dead = dead_sink_->Begin(batch_id);
      if (!dead.ok()) {
        sink_->Abort();
        return dead.status().WithContextParts(
            "batch ", batch_id, ": opening the dead-letter table ", dead_sink_->target());
      }
      dead_letters_->StartBatch(batch_id, seq.batch_timestamp_ms * 1000);
    }
    transform_->StartBatch();
    for (const std::unique_ptr<Transform>& part : part_transforms_) part->StartBatch();
    StatefulBatch stateful_batch;
    stateful_batch.batch_id = batch_id;
    // Spark 3.5: rows are late against the previous batch's watermark;
    // with allowMultiple false, against this batch's (Spark before 3.4).
    stateful_batch.late_watermark_ms =
        allow_multiple_ ? previous_watermark_ms_ : seq.batch_watermark_ms;
    stateful_batch.eviction_watermark_ms = seq.batch_watermark_ms;
    stateful_batch.has_watermark = transform_->has_watermark();
    Status started = transform_->StartStatefulBatch(stateful_batch);
    if (!started.ok()) {
      AbortSinks();
      return started.WithContextParts("batch ", batch_id, ": loading the state");
    }
    expr::EvalContext ctx;
    // current_timestamp() is the batch's recorded time, so a re-run after a
    // crash produces the same values.
    ctx.current_timestamp_micros = seq.batch_timestamp_ms * 1000;
    // Dead-letter mode: kernels and the stateful step report bad rows here
    // instead of failing the batch (transform.h).
    ctx.row_errors = dead_sink_ != nullptr ? &chunk_errors_ : nullptr;
    int64_t input_rows = 0;
    int64_t output_rows = 0;
    Status st = Status::OK();
    // Several parts and a sink that writes parts: all at once.
    std::vector<std::unique_ptr<SinkPartWriter>> part_writers;
    if (readers.size() > 1 && *write && readers.size() <= part_transforms_.size() + 1) {
      for (size_t part = 0; part < readers.size() && st.ok(); ++part) {
        Result<std::unique_ptr<SinkPartWriter>> writer = sink_->OpenPartWriter();
        if (!writer.ok()) {
          st = writer.status().WithContextParts("batch ", batch_id, ": writing to ",
                                                sink_->target());
        } else if (*writer == nullptr) {
          part_writers.clear();
          break;
        } else {
          part_writers.push_back(std::move(*writer));
        }
      }
      if (st.ok() && !part_writers.empty()) {
        st = RunParts(readers, part_writers, ctx, batch_id, &input_rows, &output_rows);
        readers.clear();
      }
    }
    for (size_t reader_idx = 0; reader_idx < readers.size() && st.ok(); ++reader_idx) {
      BatchReader* reader = readers[reader_idx].get();
      while (true) {
        Result<columnar::RecordBatchPtr> raw = reader->Next();
        if (!raw.ok()) {
          st = raw.status().WithContextParts("batch ", batch_id, ": reading the source");
          break;
        }
        if (*raw == nullptr) {
          input_rows += reader->dropped_input_rows();
          break;
        }
        input_rows += (*raw)->num_rows;
        ctx.input_file_name = reader->input_file_name();
        chunk_errors_.Clear();
        Result<columnar::RecordBatchPtr> out = transform_->Process(*raw, ctx);
        if (!out.ok()) {
          expr::EvalContext plain = ctx;
          plain.row_errors = nullptr;
          st = AddFailingRecord(out.status(), *transform_, *source_, *raw, plain)
                   .WithContextParts("batch ", batch_id, ": transform");
          break;
        }
        if (!chunk_errors_.empty()) {
          st = WriteDeadLetters(**raw, chunk_errors_, ctx.input_file_name, batch_id);
          if (!st.ok()) break;
        }
        if (dead_sink_ != nullptr) {
          Result<columnar::RecordBatchPtr> accepted =
              RemoveRefusedRows(**raw, *out, ctx.input_file_name, batch_id);
          if (!accepted.ok()) {
            st = accepted.status();
            break;
          }
          *out = std::move(*accepted);
        }
        st = WriteRows(*out, batch_id, &output_rows);
        if (!st.ok()) break;
      }
    }
    if (st.ok() && transform_->has_stateful()) {
      ctx.input_file_name.clear();
      Result<columnar::RecordBatchPtr> emitted = transform_->FinishBatch(ctx);
      st = emitted.ok() ? WriteRows(*emitted, batch_id, &output_rows)
                        : emitted.status().WithContextParts("batch ", batch_id, ": transform");
      // The state of batch N is durable before the table commit, so a crash
      // in between re-runs N from the same state version.
      if (st.ok()) {
        st = transform_->CommitState();
        if (!st.ok()) st = st.WithContextParts("batch ", batch_id, ": committing the state");
      }
    }
    if (!st.ok()) {
      transform_->AbortState();
      AbortSinks();
      return st;
    }
    const int64_t commit_start = clock_->MonotonicMicros();
    // The dead letters commit first: a crash before the sink's commit
    // re-runs the batch, which then skips them (their txn is recorded) and
    // commits the good rows; commits/N follows both.
    std::optional<DeadLetterProgress> dead_progress;
    if (dead_sink_ != nullptr && dead_letters_->total() == 0) {
      // Nothing to keep: no commit (a re-run finds no bad rows either).
      dead_sink_->Abort();
      dead_progress = DeadLetterProgress();
      dead_progress->description = dead_sink_->Description();
    } else if (dead_sink_ != nullptr) {
      Result<SinkBatchResult> dead = dead_sink_->Commit();
      if (!dead.ok()) {
        AbortSinks();
        return dead.status().WithContextParts(
            "batch ", batch_id, ": committing the dead-letter table ", dead_sink_->target());
      }
      dead_progress = DeadLetterProgress();
      dead_progress->description = dead_sink_->Description();
      if (!dead->skipped_duplicate) {
        dead_progress->num_rows = dead_letters_->total();
        for (int kind = 0; kind < DeadLetterBuilder::kNumKinds; ++kind) {
          const auto k = static_cast<expr::RowErrorKind>(kind);
          if (dead_letters_->count(k) > 0) {
            dead_progress->by_reason.emplace_back(expr::RowErrorKindName(k),
                                                  dead_letters_->count(k));
          }
        }
      }
    }
    Result<SinkBatchResult> committed = sink_->Commit();
    progress->sink_commit_micros = clock_->MonotonicMicros() - commit_start;
    if (!committed.ok()) {
      sink_->Abort();
      return committed.status().WithContextParts("batch ", batch_id, ": committing to ", table);
    }
    durations->add_batch = (clock_->MonotonicMicros() - t0) / 1000;

    const int64_t next_watermark =
        transform_->AdvanceWatermark(seq.batch_watermark_ms, MaxWatermarkPolicy(seq.conf_json));
    t0 = clock_->MonotonicMicros();
    // Only now, with the table commit done (or known done), is the batch
    // marked complete.
    Status mark =
        checkpoint_->WriteCommit({batch_id, next_watermark}, source_->CommitDiscardsInput());
    if (!mark.ok()) {
      return mark.WithContextParts("batch ", batch_id, ": writing commits/", batch_id);
    }
    source_->OnBatchCommitted(end);
    durations->commit_offsets = (clock_->MonotonicMicros() - t0) / 1000;
    durations->trigger_execution = (clock_->MonotonicMicros() - trigger_mono) / 1000;

    progress->batch_id = batch_id;
    progress->num_input_rows = input_rows;
    progress->num_output_rows = committed->skipped_duplicate ? 0 : output_rows;
    progress->duration_ms = durations->trigger_execution;
    progress->table_version = committed->table_version;
    progress->skipped_duplicate = committed->skipped_duplicate;
    progress->start_offset_json = start_offset_.value_or("");
    progress->end_offset_json = end;
    progress->record = MakeProgress(seq, trigger_wall, trigger_mono, *durations, *progress);
    progress->record.dead_letters = std::move(dead_progress);
    progress->json = ProgressToJson(progress->record);

    start_offset_ = end;
    previous_watermark_ms_ = seq.batch_watermark_ms;
    watermark_ms_ = next_watermark;
    next_batch_id_ = batch_id + 1;
    last_trigger_mono_ = trigger_mono;
    return Status::OK();
  }

  void AbortSinks() {
    sink_->Abort();
    if (dead_sink_ != nullptr) dead_sink_->Abort();
  }

  // The chunk's bad rows (chunk_errors_, rows of `raw`) to the dead-letter
  // table, each with its place as the source describes it.
  Status WriteDeadLetters(const columnar::RecordBatch& raw, const expr::RowErrors& errors,
                          const std::string& input_file, int64_t batch_id) {
    std::vector<std::string> places;
    places.reserve(errors.size());
    for (int64_t row : errors.rows) places.push_back(source_->DescribeRow(raw, row));
    dead_letters_->Add(raw, errors, places, input_file);
    columnar::RecordBatchPtr rows = dead_letters_->Take();
    if (rows == nullptr) return Status::OK();
    Status st = dead_sink_->Write(*rows);
    if (!st.ok()) {
      return st.WithContextParts("batch ", batch_id, ": writing to the dead-letter table ",
                                 dead_sink_->target());
    }
    return Status::OK();
  }

  // The rows of `rows` (the transform's result for chunk `raw`) the sink
  // would refuse go to the dead-letter table under their source records;
  // returns the rest. Errors: InvalidArgument when some are refused but
  // the rows cannot be traced to source records (after an aggregation or
  // an explode), naming the first refusal.
  Result<columnar::RecordBatchPtr> RemoveRefusedRows(const columnar::RecordBatch& raw,
                                                     const columnar::RecordBatchPtr& rows,
                                                     const std::string& input_file,
                                                     int64_t batch_id) {
    if (rows == nullptr || rows->num_rows == 0) return rows;
    refused_.Clear();
    sink_->FindRefusedRows(*rows, &refused_);
    if (refused_.empty()) return rows;
    std::optional<const std::vector<int64_t>*> lineage = transform_->last_lineage();
    if (!lineage) {
      return Status::InvalidArgument(
          "batch ", batch_id, ": writing to ", sink_->target(), ": ", refused_.messages.front(),
          " (the rows come from an aggregation or explode and cannot be traced to source "
          "records for the dead-letter table)");
    }
    std::vector<uint8_t> refused_row(static_cast<size_t>(rows->num_rows), 0);
    expr::RowErrors dead;
    for (size_t err_idx = 0; err_idx < refused_.size(); ++err_idx) {
      const int64_t row = refused_.rows[err_idx];
      if (refused_row[static_cast<size_t>(row)] != 0) continue;
      refused_row[static_cast<size_t>(row)] = 1;
      const int64_t source_row = *lineage == nullptr ? row : (**lineage)[static_cast<size_t>(row)];
      dead.Add(source_row, refused_.kinds[err_idx], std::move(refused_.messages[err_idx]));
    }
    SILT_RETURN_NOT_OK(WriteDeadLetters(raw, dead, input_file, batch_id));
    std::vector<int64_t> keep;
    keep.reserve(static_cast<size_t>(rows->num_rows));
    for (int64_t row = 0; row < rows->num_rows; ++row) {
      if (refused_row[static_cast<size_t>(row)] == 0) keep.push_back(row);
    }
    return columnar::TakeBatch(*rows, keep);
  }

  // Writes one transform result (null or empty: nothing) to the sink.
  // The batch's parts, each read, transformed and written on its own thread
  // (the first on this one) through its own transform and sink part writer;
  // the first failure stops the others at their next chunk and is returned
  // as the serial loop would report it. The parts' event-time statistics
  // join the main transform's (the batch's watermark).
  Status RunParts(const std::vector<std::unique_ptr<BatchReader>>& readers,
                  const std::vector<std::unique_ptr<SinkPartWriter>>& writers,
                  const expr::EvalContext& ctx, int64_t batch_id, int64_t* input_rows,
                  int64_t* output_rows) {
    struct Outcome {
      Status status;
      bool transform_failed = false;
      columnar::RecordBatchPtr failed_chunk;
      std::string input_file;
      int64_t input_rows = 0;
      int64_t output_rows = 0;
    };
    const size_t num_parts = readers.size();
    std::vector<Outcome> outcomes(num_parts);
    std::atomic<bool> failed{false};
    auto transform_of = [&](size_t part) {
      return part == 0 ? transform_.get() : part_transforms_[part - 1].get();
    };
    auto run = [&](size_t part) {
      Outcome& out = outcomes[part];
      Transform* transform = transform_of(part);
      BatchReader* reader = readers[part].get();
      expr::EvalContext part_ctx = ctx;
      while (!failed.load(std::memory_order_relaxed)) {
        Result<columnar::RecordBatchPtr> raw = reader->Next();
        if (!raw.ok()) {
          out.status = raw.status().WithContextParts("batch ", batch_id, ": reading the source");
          break;
        }
        if (*raw == nullptr) {
          out.input_rows += reader->dropped_input_rows();
          out.status = writers[part]->Close();
          if (!out.status.ok()) {
            out.status =
                out.status.WithContextParts("batch ", batch_id, ": writing to ", sink_->target());
            break;
          }
          return;
        }
        out.input_rows += (*raw)->num_rows;
        part_ctx.input_file_name = reader->input_file_name();
        Result<columnar::RecordBatchPtr> processed = transform->Process(*raw, part_ctx);
        if (!processed.ok()) {
          out.status = processed.status();
          out.transform_failed = true;
          out.failed_chunk = *raw;
          out.input_file = part_ctx.input_file_name;
          break;
        }
        const columnar::RecordBatchPtr& rows = *processed;
        if (rows == nullptr || rows->num_rows == 0) continue;
        out.output_rows += rows->num_rows;
        out.status = writers[part]->Write(*rows);
        if (!out.status.ok()) {
          out.status =
              out.status.WithContextParts("batch ", batch_id, ": writing to ", sink_->target());
          break;
        }
      }
      failed.store(true, std::memory_order_relaxed);
    };
    std::vector<std::thread> threads;
    size_t started = 1;
    for (; started < num_parts; ++started) {
      try {
        threads.emplace_back(run, started);
      } catch (const std::system_error& e) {
        // No thread to be had: the remaining parts run here, after part 0.
        SILT_LOG_WARN("stream", "batch ", batch_id, ": could not start a thread (", e.what(),
                      "); the remaining parts run on the query thread");
        break;
      }
    }
    run(0);
    for (size_t part = started; part < num_parts; ++part) run(part);
    for (std::thread& thread : threads) thread.join();
    for (size_t part = 0; part < num_parts; ++part) {
      *input_rows += outcomes[part].input_rows;
      *output_rows += outcomes[part].output_rows;
      if (part > 0) transform_->MergeBatchStats(*transform_of(part));
    }
    for (size_t part = 0; part < num_parts; ++part) {
      Outcome& out = outcomes[part];
      if (out.status.ok()) continue;
      if (!out.transform_failed) return out.status;
      expr::EvalContext plain = ctx;
      plain.row_errors = nullptr;
      plain.input_file_name = out.input_file;
      return AddFailingRecord(out.status, *transform_of(part), *source_, out.failed_chunk, plain)
          .WithContextParts("batch ", batch_id, ": transform");
    }
    return Status::OK();
  }

  Status WriteRows(const columnar::RecordBatchPtr& rows, int64_t batch_id, int64_t* output_rows) {
    if (rows == nullptr || rows->num_rows == 0) return Status::OK();
    *output_rows += rows->num_rows;
    Status st = sink_->Write(*rows);
    if (!st.ok()) return st.WithContextParts("batch ", batch_id, ": writing to ", sink_->target());
    return Status::OK();
  }

  // Spark's StreamingQueryProgress of the batch just finished.
  QueryProgress MakeProgress(const OffsetSeq& seq, int64_t trigger_wall, int64_t trigger_mono,
                             const ProgressDurations& durations, const BatchProgress& batch) const {
    const double rows = static_cast<double>(batch.num_input_rows);
    // The first trigger has no previous one: Spark divides by infinity.
    const double input_seconds =
        !last_trigger_mono_ ? std::numeric_limits<double>::infinity()
                            : static_cast<double>(trigger_mono - *last_trigger_mono_) / 1e6;
    const double input_rate = rows / input_seconds;
    const double processed_rate =
        rows / (static_cast<double>(durations.trigger_execution) / 1000.0);

    QueryProgress progress;
    progress.id = query_id_;
    progress.run_id = run_id_;
    if (!job_.name.empty()) progress.name = job_.name;
    progress.timestamp_micros = trigger_wall;
    progress.batch_id = seq.batch_id;
    progress.batch_duration = durations.trigger_execution;
    progress.num_input_rows = batch.num_input_rows;
    progress.input_rows_per_second = input_rate;
    progress.processed_rows_per_second = processed_rate;
    progress.duration_ms = durations;
    if (transform_->has_watermark()) {
      EventTimeProgress event_time;
      if (std::optional<EventTimeStats> stats = transform_->batch_event_time_stats()) {
        event_time.stats = EventTimeStatsMs{
            static_cast<int64_t>(std::llround(stats->sum_ms / static_cast<double>(stats->count))),
            stats->max_ms, stats->min_ms};
      }
      event_time.watermark_ms = seq.batch_watermark_ms;
      progress.event_time = event_time;
    }
    progress.state_operators = transform_->state_progress();
    SourceProgress source;
    source.description = source_->Description();
    source.start_offset = start_offset_;
    source.end_offset = seq.source_offsets[0];
    source.latest_offset = source_->ReportLatestOffset();
    source.num_input_rows = batch.num_input_rows;
    source.input_rows_per_second = input_rate;
    source.processed_rows_per_second = processed_rate;
    progress.sources.push_back(std::move(source));
    progress.sink.description = sink_->Description();
    progress.sink.num_output_rows = batch.num_output_rows;
    progress.sink.sinks = sink_->ChildProgress();
    return progress;
  }

  const JobSpec& job_;
  const QueryOptions& options_;
  Clock* clock_;
  std::string checkpoint_path_;
  std::unique_ptr<CheckpointLock> lock_;
  std::unique_ptr<CheckpointDir> checkpoint_;
  std::string query_id_;
  std::string run_id_;
  std::unique_ptr<Source> source_;
  std::unique_ptr<Transform> transform_;
  // Threads per batch (the job's `parallelism`), and the transforms of the
  // parts beyond the first (RunParts).
  int parallelism_ = 1;
  std::vector<std::unique_ptr<Transform>> part_transforms_;
  std::unique_ptr<Sink> sink_;
  expr::EvalOptions eval_options_;
  // deadLetter: the table's sink, the batch's dead letters, and the error
  // vector of the chunk being processed.
  std::unique_ptr<Sink> dead_sink_;
  std::unique_ptr<DeadLetterBuilder> dead_letters_;
  expr::RowErrors chunk_errors_;
  expr::RowErrors refused_;

  std::string conf_json_;
  int64_t next_batch_id_ = 0;
  std::optional<std::string> start_offset_;
  int64_t watermark_ms_ = 0;
  // The watermark of the batch before the next one (offsets/N-1's): rows at
  // or below it are late for a stateful step (Spark 3.5's late-event rule).
  int64_t previous_watermark_ms_ = 0;
  // spark.sql.streaming.statefulOperator.allowMultiple (see Open).
  bool allow_multiple_ = true;
  std::optional<OffsetSeq> pending_;
  std::optional<int64_t> last_trigger_mono_;
};

}  // namespace

Result<QueryResult> RunQuery(const JobSpec& job, const QueryOptions& options) {
  QueryRunner runner(job, options);
  return runner.Run();
}

}  // namespace silt::stream
