// silt checkpoint DIR: shows a streaming checkpoint directory (Spark's
// layout): the query id, each batch's offsets and commit, and what a restart
// would do. For a scale-out job's checkpoint (scaleout.json): its workers,
// the partitions each holds, and each partition's offset in the table.

#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "silt/base/json_writer.h"
#include "silt/cli/command.h"
#include "silt/cli/json_view.h"
#include "silt/cli/scaleout_view.h"
#include "silt/cli/table_util.h"
#include "silt/fs/file_system.h"
#include "silt/stream/checkpoint/checkpoint.h"
#include "silt/stream/stateful/state_reader.h"

namespace silt::cli {

namespace {

// One stateful operator at the state version of the last committed batch.
struct OperatorSummary {
  int operator_id = 0;
  std::string name;
  std::string step;  // the job-file step, as recorded
  std::optional<int64_t> version;
  int64_t rows = 0;
  int64_t bytes = 0;
};

struct Summary {
  std::optional<int64_t> last_committed;
  std::optional<int64_t> watermark_ms;  // for the next batch
  std::vector<OperatorSummary> operators;
  // offsets/N without commits/N: batch N re-runs with the same offsets.
  std::optional<int64_t> rerun;
  int64_t next_batch = 0;
};

Summary Summarize(const std::vector<stream::BatchInfo>& batches) {
  Summary summary;
  for (const auto& batch : batches) {
    if (batch.commit.has_value()) {
      summary.last_committed = batch.batch_id;
      summary.watermark_ms = batch.commit->next_batch_watermark_ms;
    }
  }
  if (!batches.empty()) {
    const auto& last = batches.back();
    if (last.offsets.has_value() && !last.commit.has_value()) summary.rerun = last.batch_id;
    summary.next_batch = summary.rerun.value_or(last.batch_id + 1);
  }
  return summary;
}

// An offset as JSON: parsed JSON is embedded, Spark's "-" (no offset yet) is
// null, anything else a string.
void WriteOffset(const std::string& offset, JsonWriter* writer) {
  if (offset == "-") {
    writer->Null();
  } else if (IsValidJson(offset)) {
    writer->Raw(offset);
  } else {
    writer->String(offset);
  }
}

class CheckpointCommand final : public Command {
 public:
  explicit CheckpointCommand(CLI::App* app) {
    sub_ = app->add_subcommand("checkpoint", "Show a streaming query's checkpoint directory");
    sub_->add_option("dir", dir_, "Checkpoint directory (the job's checkpointLocation)")
        ->required();
    sub_->add_option("--format", format_, "Output format")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
  }

  CLI::App* subcommand() const override { return sub_; }

  Status Run() override {
    // A scale-out job's checkpoint holds the workers' records, not batches.
    SILT_ASSIGN_OR_RETURN(std::optional<std::string> scale_out,
                          ScaleOutCheckpointView(dir_, format_));
    if (scale_out) {
      std::fwrite(scale_out->data(), 1, scale_out->size(), stdout);
      return Status::OK();
    }
    SILT_ASSIGN_OR_RETURN(OpenedCheckpoint opened, OpenExistingCheckpoint(dir_));
    const std::string& path = opened.path;
    const fs::FileSystemPtr& file_system = opened.file_system;
    const std::string& query_id = opened.query_id;
    SILT_ASSIGN_OR_RETURN(std::vector<stream::BatchInfo> batches, opened.checkpoint->ListBatches());
    Summary summary = Summarize(batches);
    SILT_ASSIGN_OR_RETURN(std::vector<stream::StateOperatorInfo> operators,
                          stream::ListStateOperators(file_system, path));
    for (const stream::StateOperatorInfo& op : operators) {
      OperatorSummary entry;
      entry.operator_id = op.operator_id;
      entry.name = op.operator_name;
      entry.step = op.step.step.kind;
      for (size_t i = 0; i < op.step.step.exprs.size(); ++i) {
        entry.step += (i == 0 ? " " : ", ") + op.step.step.exprs[i];
      }
      if (!op.step.step.aggs.empty()) entry.step += ":";
      for (size_t i = 0; i < op.step.step.aggs.size(); ++i) {
        entry.step += (i == 0 ? " " : ", ") + op.step.step.aggs[i];
      }
      if (summary.last_committed) {
        entry.version = *summary.last_committed + 1;
        SILT_ASSIGN_OR_RETURN(stream::StateRows rows,
                              stream::ReadStateRows(file_system, op, *entry.version));
        entry.rows = rows.rows->num_rows;
        entry.bytes = rows.bytes;
      }
      summary.operators.push_back(std::move(entry));
    }
    std::string out = format_ == "json" ? FormatJson(path, query_id, batches, summary)
                                        : FormatText(path, query_id, batches, summary);
    std::fwrite(out.data(), 1, out.size(), stdout);
    return Status::OK();
  }

 private:
  static std::string FormatText(const std::string& path, const std::string& query_id,
                                const std::vector<stream::BatchInfo>& batches,
                                const Summary& summary) {
    std::string out = fmt::format("checkpoint: {}\nquery id:   {}\n\n", path, query_id);
    for (const auto& batch : batches) {
      out += fmt::format("batch {}\n", batch.batch_id);
      if (batch.offsets.has_value()) {
        const stream::OffsetSeq& seq = *batch.offsets;
        for (size_t source_idx = 0; source_idx < seq.source_offsets.size(); ++source_idx) {
          out +=
              fmt::format("  offsets[source {}]: {}\n", source_idx, seq.source_offsets[source_idx]);
        }
        out += fmt::format("  batch timestamp: {} ({} ms)\n",
                           FormatMillisUtc(seq.batch_timestamp_ms), seq.batch_timestamp_ms);
        out += fmt::format("  batch watermark: {}\n", FormatWatermark(seq.batch_watermark_ms));
      } else {
        out += "  offsets: (missing)\n";
      }
      if (batch.commit.has_value()) {
        out += fmt::format("  committed: yes (next batch watermark: {})\n",
                           FormatWatermark(batch.commit->next_batch_watermark_ms));
      } else {
        out += "  committed: no\n";
      }
    }
    if (!batches.empty()) out += '\n';
    out += "summary:\n";
    out += fmt::format("  batches: {}\n", batches.size());
    if (summary.last_committed.has_value()) {
      out += fmt::format("  last committed batch: {}\n", *summary.last_committed);
    } else {
      out += "  last committed batch: none\n";
    }
    if (summary.rerun.has_value()) {
      out += fmt::format(
          "  batch to re-run: {} (offsets written, no commit: a restart re-runs it with the same "
          "offsets)\n",
          *summary.rerun);
    } else {
      out += "  batch to re-run: none\n";
    }
    out += fmt::format("  next batch: {}\n", summary.next_batch);
    for (const OperatorSummary& op : summary.operators) {
      out += fmt::format("\nstate operator {}: {} ({})\n", op.operator_id, op.name, op.step);
      if (op.version) {
        out += fmt::format("  state version {} (after batch {}): {} rows, {} bytes\n", *op.version,
                           *op.version - 1, op.rows, op.bytes);
      } else {
        out += "  no committed state\n";
      }
      out += fmt::format("  watermark: {}\n", FormatWatermark(summary.watermark_ms.value_or(0)));
    }
    return out;
  }

  static std::string FormatWatermark(int64_t ms) {
    if (ms == 0) return "0";
    return fmt::format("{} ({} ms)", FormatMillisUtc(ms), ms);
  }

  static std::string FormatJson(const std::string& path, const std::string& query_id,
                                const std::vector<stream::BatchInfo>& batches,
                                const Summary& summary) {
    JsonWriter writer;
    writer.BeginObject();
    writer.Member("checkpoint", path);
    writer.Member("queryId", query_id);
    writer.Key("batches");
    writer.BeginArray();
    for (const auto& batch : batches) {
      writer.BeginObject();
      writer.Member("batchId", batch.batch_id);
      if (batch.offsets.has_value()) {
        const stream::OffsetSeq& seq = *batch.offsets;
        writer.Member("batchWatermarkMs", seq.batch_watermark_ms);
        writer.Member("batchTimestampMs", seq.batch_timestamp_ms);
        writer.Key("conf");
        WriteOffset(seq.conf_json, &writer);
        writer.Key("offsets");
        writer.BeginArray();
        for (const std::string& offset : seq.source_offsets) WriteOffset(offset, &writer);
        writer.EndArray();
      }
      writer.Member("committed", batch.commit.has_value());
      if (batch.commit.has_value()) {
        writer.Member("nextBatchWatermarkMs", batch.commit->next_batch_watermark_ms);
      }
      writer.EndObject();
    }
    writer.EndArray();
    writer.Key("lastCommittedBatch");
    if (summary.last_committed.has_value()) {
      writer.Int(*summary.last_committed);
    } else {
      writer.Null();
    }
    writer.Key("batchToRerun");
    if (summary.rerun.has_value()) {
      writer.Int(*summary.rerun);
    } else {
      writer.Null();
    }
    writer.Member("nextBatch", summary.next_batch);
    writer.Key("stateOperators");
    writer.BeginArray();
    for (const OperatorSummary& op : summary.operators) {
      writer.BeginObject();
      writer.Member("operatorId", static_cast<int64_t>(op.operator_id));
      writer.Member("operatorName", op.name);
      writer.Key("stateVersion");
      if (op.version) {
        writer.Int(*op.version);
      } else {
        writer.Null();
      }
      writer.Member("numRows", op.rows);
      writer.Member("bytes", op.bytes);
      writer.Member("watermarkMs", summary.watermark_ms.value_or(0));
      writer.EndObject();
    }
    writer.EndArray();
    writer.EndObject();
    return writer.Take() + "\n";
  }

  CLI::App* sub_ = nullptr;
  std::string dir_;
  std::string format_ = "text";
};

}  // namespace

std::unique_ptr<Command> AddCheckpointCommand(CLI::App* app) {
  return std::make_unique<CheckpointCommand>(app);
}

}  // namespace silt::cli
