// silt history TABLE [--limit N] [--format table|json]: the commitInfo of
// each version, newest first, as DESCRIBE HISTORY shows it (version,
// timestamp, operation, parameters, readVersion, isBlindAppend, metrics,
// engine). json prints one object per version: {"version", "timestamp",
// "commitInfo"} with commitInfo verbatim (null when the commit has none).

#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "silt/base/json_writer.h"
#include "silt/cli/command.h"
#include "silt/cli/json_view.h"
#include "silt/cli/table_util.h"
#include "silt/delta/history.h"

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

class HistoryCommand final : public Command {
 public:
  explicit HistoryCommand(CLI::App* app) {
    sub_ = app->add_subcommand("history", "Show the commit history of a Delta table, newest first");
    sub_->add_option("table", table_path_, "Table path")->required();
    sub_->add_option("--limit", limit_, "Only the newest N versions")->check(CLI::PositiveNumber);
    sub_->add_option("--format", format_, "Output format")
        ->check(CLI::IsMember({"table", "json"}))
        ->capture_default_str();
  }

  CLI::App* subcommand() const override { return sub_; }

  Status Run() override {
    SILT_ASSIGN_OR_RETURN(auto table, OpenExistingTable(table_path_));
    std::optional<int64_t> limit;
    if (limit_ > 0) limit = limit_;
    SILT_ASSIGN_OR_RETURN(std::vector<delta::HistoryEntry> history,
                          delta::ReadHistory(table.get(), limit));
    std::string out;
    if (format_ == "json") {
      for (const delta::HistoryEntry& entry : history) {
        JsonWriter w;
        w.BeginObject();
        w.Member("version", entry.version);
        w.Member("timestamp", entry.timestamp_ms);
        w.Key("commitInfo");
        if (entry.commit_info_json) {
          w.Raw(*entry.commit_info_json);
        } else {
          w.Null();
        }
        w.EndObject();
        out += w.Take() + "\n";
      }
    } else {
      out += fmt::format("{:<8} {:<24} {:<20} {:<6} {:<6} {}\n", "version", "timestamp",
                         "operation", "read", "blind", "parameters / metrics");
      for (const delta::HistoryEntry& entry : history) {
        std::string details;
        if (entry.commit_info_json) {
          auto info = JsonObjectView::Parse(*entry.commit_info_json);
          if (info.has_value()) {
            auto params = info->GetObjectEntries("operationParameters");
            auto metrics = info->GetObjectEntries("operationMetrics");
            details = JoinEntries(params);
            if (!metrics.empty()) {
              if (!details.empty()) details += "; ";
              details += JoinEntries(metrics);
            }
          }
        }
        out += fmt::format(
            "{:<8} {:<24} {:<20} {:<6} {:<6} {}\n", entry.version,
            FormatMillisUtc(entry.timestamp_ms),
            entry.operation.empty() ? std::string("-") : entry.operation,
            entry.read_version ? std::to_string(*entry.read_version) : std::string("-"),
            entry.is_blind_append ? (*entry.is_blind_append ? "true" : "false") : "-", details);
      }
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    return Status::OK();
  }

 private:
  CLI::App* sub_ = nullptr;
  std::string table_path_;
  int64_t limit_ = 0;
  std::string format_ = "table";
};

}  // namespace

std::unique_ptr<Command> AddHistoryCommand(CLI::App* app) {
  return std::make_unique<HistoryCommand>(app);
}

}  // namespace silt::cli
