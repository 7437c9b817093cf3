#include "silt/delta/history.h"

#include <simdjson.h>

#include "silt/delta/log_cleanup.h"

namespace silt::delta {

Result<std::vector<HistoryEntry>> ReadHistory(DeltaTable* table, std::optional<int64_t> limit) {
  SILT_ASSIGN_OR_RETURN(LogFileTimes times,
                        ListLogFileTimes(table->file_system().get(), table->log_path()));
  if (times.commits.empty()) {
    return Status::NotFound(table->path(), " is not a Delta table (no commits in ",
                            table->log_path(), ")");
  }
  std::vector<HistoryEntry> out;
  simdjson::dom::parser parser;
  for (auto it = times.commits.rbegin(); it != times.commits.rend(); ++it) {
    if (limit && static_cast<int64_t>(out.size()) >= *limit) break;
    SILT_ASSIGN_OR_RETURN(CommitActions commit, table->ReadCommit(it->version));
    HistoryEntry entry;
    entry.version = it->version;
    entry.timestamp_ms = it->monotonic_time_ms;
    entry.commit_info_json = commit.commit_info_json;
    if (commit.commit_info_json) {
      const std::string& text = *commit.commit_info_json;
      simdjson::dom::element root;
      if (parser.parse(text.data(), text.size(), true).get(root) == simdjson::SUCCESS) {
        std::string_view s;
        if (root["operation"].get_string().get(s) == simdjson::SUCCESS) entry.operation = s;
        if (root["engineInfo"].get_string().get(s) == simdjson::SUCCESS) entry.engine_info = s;
        int64_t n = 0;
        if (root["readVersion"].get_int64().get(n) == simdjson::SUCCESS) entry.read_version = n;
        if (root["inCommitTimestamp"].get_int64().get(n) == simdjson::SUCCESS) {
          entry.timestamp_ms = n;
        }
        bool b = false;
        if (root["isBlindAppend"].get_bool().get(b) == simdjson::SUCCESS) {
          entry.is_blind_append = b;
        }
      }
    }
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace silt::delta
