// QueryRunner::Restore (query/runner_internal.h): where a query resumes
// from its checkpoint, as Spark's MicroBatchExecution does.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include "silt/base/logging.h"
#include "silt/stream/json_internal.h"
#include "silt/stream/query/runner_internal.h"

namespace silt::stream::query_internal {

namespace {

std::optional<std::string> NoneIfDash(const std::string& offset) {
  if (offset.empty() || offset == "-") return std::nullopt;
  return offset;
}

}  // namespace

// Spark restores the persisted confs of a checkpoint into the session,
// over what the job sets, and warns; so does silt.
void QueryRunner::WarnCheckpointConfWins(std::string_view checkpoint_conf_json) const {
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

Status QueryRunner::Restore() {
  conf_json_ = OffsetConfJson(job_.spark_conf);
  SILT_ASSIGN_OR_RETURN(std::optional<int64_t> latest, checkpoint_->LatestOffsetBatch());
  std::optional<std::string> last_planned;
  if (latest) {
    SILT_ASSIGN_OR_RETURN(OffsetSeq last, checkpoint_->ReadOffsets(*latest));
    if (last.source_offsets.size() != 1) {
      return Status::InvalidArgument("checkpoint ", checkpoint_path_, " records ",
                                     static_cast<int64_t>(last.source_offsets.size()),
                                     " sources in offsets/", *latest, ", but the job has 1 source");
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
        SILT_LOG_WARN("stream", "checkpoint ", checkpoint_path_, ": batches ", *committed + 1, "..",
                      *latest - 1, " have no commits entry; re-running batch ", *latest);
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

}  // namespace silt::stream::query_internal
