// QueryRunner::Open (query/runner_internal.h): the source, the transforms
// and the sinks built and bound from the job, then the checkpoint opened,
// locked and (on a first run) created.
#include <algorithm>
#include <charconv>
#include <map>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>

#include "silt/base/logging.h"
#include "silt/base/strings.h"
#include "silt/base/uuid.h"
#include "silt/fs/s3_file_system.h"
#include "silt/stream/query/runner_internal.h"
#include "silt/stream/source/source_factory.h"

namespace silt::stream::query_internal {

namespace {

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

// Sets `*out` from the Spark conf `key` when the job sets it (true or
// false, any case); leaves it when not. Errors: InvalidArgument for any
// other value.
Status BoolConf(const std::map<std::string, std::string>& conf, std::string_view key, bool* out) {
  auto it = conf.find(std::string(key));
  if (it == conf.end()) return Status::OK();
  if (!EqualsIgnoreCase(it->second, "true") && !EqualsIgnoreCase(it->second, "false")) {
    return Status::InvalidArgument(key, ": expected true or false, got '", it->second, "'");
  }
  *out = EqualsIgnoreCase(it->second, "true");
  return Status::OK();
}

bool IsLocalPath(const std::string& normalized) {
  return normalized.find("://") == std::string::npos;
}

}  // namespace

void QueryRunner::WarnInertSparkConf() const {
  for (const auto& [key, value] : job_.spark_conf) {
    if (key == "spark.sql.session.timeZone" || key == "spark.sql.ansi.enabled" ||
        key == kCheckCorrectnessConf || key == kAllowMultipleConf || IsOffsetConfKey(key) ||
        IsStateStoreConfKey(key)) {
      continue;
    }
    SILT_LOG_WARN("stream", key, ": Spark conf without effect in silt; ignored");
  }
}

Status QueryRunner::Open() {
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
  SILT_RETURN_NOT_OK(BoolConf(job_.spark_conf, kCheckCorrectnessConf, &stateful.check_correctness));
  SILT_RETURN_NOT_OK(BoolConf(job_.spark_conf, kAllowMultipleConf, &stateful.allow_multiple));
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

// A groupBy step emits its keys first, by name. The last stateful step
// makes the rows the sink sees.
Result<std::vector<std::string>> QueryRunner::GroupKeyColumns() const {
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

Status QueryRunner::MakeQuerySink() {
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

}  // namespace silt::stream::query_internal
