// silt log TABLE [VERSION]: pretty-prints the commits of a table's
// _delta_log, one block per version (text) or one JSON object per version
// holding the raw actions (json).

#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "silt/base/json_writer.h"
#include "silt/cli/command.h"
#include "silt/cli/json_view.h"
#include "silt/cli/table_util.h"
#include "silt/delta/actions.h"
#include "silt/delta/table.h"
#include "silt/fs/file_system.h"

namespace silt::cli {

namespace {

std::string JoinEntries(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string out;
  for (const auto& [key, value] : entries) {
    if (!out.empty()) out += ", ";
    out += key + "=" + value;
  }
  return out;
}

std::string JoinList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    out += items[i];
  }
  return out + "]";
}

std::string FormatPartitionValues(const delta::PartitionValues& values) {
  std::string out;
  for (const auto& [name, value] : values) {
    if (!out.empty()) out += ", ";
    out += name + "=" + (value.has_value() ? *value : std::string("NULL"));
  }
  return out;
}

std::string FormatSchema(const columnar::Schema& schema) {
  std::string out;
  for (const auto& field : schema.fields()) {
    if (!out.empty()) out += ", ";
    out += field.name + " " + field.type->ToDdl();
    if (!field.nullable) out += " NOT NULL";
  }
  return out;
}

class LogCommand final : public Command {
 public:
  explicit LogCommand(CLI::App* app) {
    sub_ = app->add_subcommand("log", "Show the commits of a Delta table's transaction log");
    sub_->add_option("table", table_path_, "Table path")->required();
    sub_->add_option("version", version_, "Only this version")->check(CLI::NonNegativeNumber);
    sub_->add_option("--format", format_, "Output format")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
  }

  CLI::App* subcommand() const override { return sub_; }

  Status Run() override {
    SILT_ASSIGN_OR_RETURN(auto table, OpenExistingTable(table_path_));
    std::vector<int64_t> versions;
    if (version_ >= 0) {
      versions.push_back(version_);
    } else {
      SILT_ASSIGN_OR_RETURN(versions, table->ListVersions());
    }
    for (int64_t version : versions) {
      SILT_ASSIGN_OR_RETURN(delta::CommitActions commit, table->ReadCommit(version));
      SILT_ASSIGN_OR_RETURN(int64_t timestamp_ms, CommitTimestamp(table.get(), commit));
      std::string out =
          format_ == "json" ? FormatJson(commit, timestamp_ms) : FormatText(commit, timestamp_ms);
      std::fwrite(out.data(), 1, out.size(), stdout);
    }
    return Status::OK();
  }

 private:
  // commitInfo.timestamp, else the commit file's modification time.
  static Result<int64_t> CommitTimestamp(delta::DeltaTable* table,
                                         const delta::CommitActions& commit) {
    if (commit.commit_info_json.has_value()) {
      auto info = JsonObjectView::Parse(*commit.commit_info_json);
      if (info.has_value()) {
        if (auto ts = info->GetInt("timestamp"); ts.has_value()) return *ts;
      }
    }
    SILT_ASSIGN_OR_RETURN(fs::FileInfo file_info,
                          table->file_system()->GetFileInfo(fs::JoinPath(
                              table->log_path(), delta::CommitFileName(commit.version))));
    return file_info.modification_time_ms;
  }

  static std::string FormatJson(const delta::CommitActions& commit, int64_t timestamp_ms) {
    JsonWriter writer;
    writer.BeginObject();
    writer.Member("version", commit.version);
    writer.Member("timestamp", timestamp_ms);
    writer.Key("actions");
    writer.BeginArray();
    for (const std::string& line : commit.raw_lines) writer.Raw(line);
    writer.EndArray();
    writer.EndObject();
    return writer.Take() + "\n";
  }

  static std::string FormatText(const delta::CommitActions& commit, int64_t timestamp_ms) {
    std::string out =
        fmt::format("version {}  {}\n", commit.version, FormatMillisUtc(timestamp_ms));
    if (commit.commit_info_json.has_value()) {
      auto info = JsonObjectView::Parse(*commit.commit_info_json);
      if (info.has_value()) {
        out += fmt::format("  operation: {}\n", info->GetString("operation").value_or("(none)"));
        auto params = info->GetObjectEntries("operationParameters");
        if (!params.empty()) out += fmt::format("    parameters: {}\n", JoinEntries(params));
        auto metrics = info->GetObjectEntries("operationMetrics");
        if (!metrics.empty()) out += fmt::format("    metrics: {}\n", JoinEntries(metrics));
        if (auto read_version = info->GetInt("readVersion"); read_version.has_value()) {
          out += fmt::format("    readVersion: {}\n", *read_version);
        }
        std::optional<std::string> engine = info->GetString("engineInfo");
        if (!engine.has_value()) engine = info->GetString("clientVersion");
        if (engine.has_value()) out += fmt::format("    engine: {}\n", *engine);
      }
    }
    for (const delta::Txn& txn : commit.txns) {
      out += fmt::format("  txn: appId={} version={}", txn.app_id, txn.version);
      if (txn.last_updated.has_value()) {
        out += fmt::format(" lastUpdated={}", FormatMillisUtc(*txn.last_updated));
      }
      out += '\n';
    }
    if (commit.protocol.has_value()) {
      const delta::Protocol& protocol = *commit.protocol;
      out += fmt::format("  protocol: minReaderVersion={} minWriterVersion={}",
                         protocol.min_reader_version, protocol.min_writer_version);
      if (protocol.reader_features.has_value()) {
        out += " readerFeatures=" + JoinList(*protocol.reader_features);
      }
      if (protocol.writer_features.has_value()) {
        out += " writerFeatures=" + JoinList(*protocol.writer_features);
      }
      out += '\n';
    }
    if (commit.metadata.has_value()) {
      const delta::Metadata& metadata = *commit.metadata;
      out += fmt::format("  metaData: id={}\n", metadata.id);
      if (metadata.name.has_value()) out += fmt::format("    name: {}\n", *metadata.name);
      if (metadata.schema != nullptr) {
        out += fmt::format("    schema: {}\n", FormatSchema(*metadata.schema));
      }
      out += fmt::format("    partitionColumns: {}\n", JoinList(metadata.partition_columns));
      if (!metadata.configuration.empty()) {
        std::vector<std::pair<std::string, std::string>> conf(metadata.configuration.begin(),
                                                              metadata.configuration.end());
        out += fmt::format("    configuration: {}\n", JoinEntries(conf));
      }
      if (metadata.created_time.has_value()) {
        out += fmt::format("    createdTime: {}\n", FormatMillisUtc(*metadata.created_time));
      }
    }
    for (const delta::AddFile& add : commit.adds) {
      out += fmt::format("  add: {}\n", add.path);
      if (!add.partition_values.empty()) {
        out +=
            fmt::format("    partitionValues: {}\n", FormatPartitionValues(add.partition_values));
      }
      out += fmt::format("    size: {} bytes, modificationTime: {}, dataChange: {}\n", add.size,
                         FormatMillisUtc(add.modification_time), add.data_change);
      if (add.stats.has_value()) out += fmt::format("    stats: {}\n", *add.stats);
      if (add.base_row_id.has_value() || add.default_row_commit_version.has_value()) {
        out += fmt::format(
            "    baseRowId: {}, defaultRowCommitVersion: {}\n",
            add.base_row_id ? std::to_string(*add.base_row_id) : "-",
            add.default_row_commit_version ? std::to_string(*add.default_row_commit_version) : "-");
      }
      if (add.clustering_provider.has_value()) {
        out += fmt::format("    clusteringProvider: {}\n", *add.clustering_provider);
      }
    }
    for (const delta::RemoveFile& remove : commit.removes) {
      out += fmt::format("  remove: {}\n", remove.path);
      if (!remove.partition_values.empty()) {
        out += fmt::format("    partitionValues: {}\n",
                           FormatPartitionValues(remove.partition_values));
      }
      std::string details = fmt::format("dataChange: {}", remove.data_change);
      if (remove.size.has_value())
        details = fmt::format("size: {} bytes, ", *remove.size) + details;
      if (remove.deletion_timestamp.has_value()) {
        details +=
            fmt::format(", deletionTimestamp: {}", FormatMillisUtc(*remove.deletion_timestamp));
      }
      out += fmt::format("    {}\n", details);
    }
    for (const delta::DomainMetadata& domain : commit.domain_metadata) {
      out += fmt::format("  domainMetadata: {}{}\n    configuration: {}\n", domain.domain,
                         domain.removed ? " (removed)" : "", domain.configuration);
    }
    if (!commit.other_action_keys.empty()) {
      out += fmt::format("  other actions: {}\n", JoinList(commit.other_action_keys));
    }
    out += '\n';
    return out;
  }

  CLI::App* sub_ = nullptr;
  std::string table_path_;
  int64_t version_ = -1;
  std::string format_ = "text";
};

}  // namespace

std::unique_ptr<Command> AddLogCommand(CLI::App* app) { return std::make_unique<LogCommand>(app); }

}  // namespace silt::cli
