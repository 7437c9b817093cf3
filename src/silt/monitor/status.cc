#include "silt/monitor/status.h"

#include <cmath>
#include <cstdio>

#include "silt/base/clock.h"
#include "silt/base/json_writer.h"
#include "silt/base/status.h"

namespace silt::monitor {

namespace {

std::string Rate(double value) {
  if (!std::isfinite(value)) return "";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", value);
  return buf;
}

std::string Count(int64_t value) { return std::to_string(value); }

constexpr const char* kStyle =
    "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}"
    "h1{font-size:1.4em;margin:0 0 .3em}h2{font-size:1.1em;margin:1.2em 0 .4em}"
    "table{border-collapse:collapse}td,th{padding:.2em .7em;border-bottom:1px solid #ddd;"
    "text-align:right}th{background:#f4f4f4}td.l,th.l{text-align:left}"
    ".ok{color:#0a7d28;font-weight:bold}.bad{color:#b00020;font-weight:bold}"
    ".tiles{display:flex;gap:1em;flex-wrap:wrap}.tile{border:1px solid #ddd;border-radius:6px;"
    "padding:.5em 1em;min-width:9em}.tile b{display:block;font-size:1.5em}"
    "pre{white-space:pre-wrap;background:#fff4f4;border:1px solid #f0c0c0;padding:.5em}"
    ".muted{color:#777}";

}  // namespace

std::string EscapeHtml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string StatusToJson(const QueryStatus& status) {
  JsonWriter w;
  w.BeginObject();
  w.Member("id", status.id);
  w.Member("runId", status.run_id);
  if (status.name.empty()) {
    w.Member("name", nullptr);
  } else {
    w.Member("name", status.name);
  }
  w.Member("state", QueryStateName(status.state));
  w.Key("status");
  w.BeginObject();
  w.Member("message", status.message);
  w.Member("isDataAvailable", status.is_data_available);
  w.Member("isTriggerActive", status.is_trigger_active);
  w.EndObject();
  w.Key("health");
  w.BeginObject();
  w.Member("healthy", status.health.healthy);
  w.Member("reason", status.health.reason);
  w.EndObject();
  w.Key("lastError");
  if (status.last_error.empty()) {
    w.Null();
  } else {
    w.BeginObject();
    w.Member("message", status.last_error);
    w.Member("timestamp", FormatTimestampMillisUtc(status.last_error_micros));
    w.EndObject();
  }
  w.Key("kafkaLag");
  w.BeginArray();
  for (const LagRow& row : status.lag) {
    w.BeginObject();
    w.Member("topic", row.topic);
    w.Member("partition", row.partition);
    w.Member("committedOffset", row.committed_offset);
    w.Member("endOffset", row.end_offset);
    w.Member("lag", row.lag);
    w.EndObject();
  }
  w.EndArray();
  w.Key("recentProgress");
  w.BeginArray();
  for (const std::string& progress : status.recent_progress_json) w.Raw(progress);
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::string StatusPageHtml(const QueryStatus& status, int refresh_seconds) {
  std::string title = status.name.empty() ? status.id : status.name;
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  h += Status::Concat("<meta http-equiv=\"refresh\" content=\"", refresh_seconds, "\">");
  h += "<title>silt: " + EscapeHtml(title) + "</title><style>";
  h += kStyle;
  h += "</style></head><body>\n";
  h += "<h1>silt query " + EscapeHtml(title) + "</h1>\n";
  h += "<p class=\"muted\">id <code>" + EscapeHtml(status.id) + "</code>, run <code>" +
       EscapeHtml(status.run_id) + "</code><br>source " + EscapeHtml(status.source) + "<br>sink " +
       EscapeHtml(status.sink) + "</p>\n";

  h += std::string("<p id=\"health\" class=\"") + (status.health.healthy ? "ok" : "bad") + "\">" +
       (status.health.healthy ? "healthy" : "unhealthy") + ": " + EscapeHtml(status.health.reason) +
       "</p>\n";
  h += "<p id=\"state\">state " + std::string(QueryStateName(status.state)) + " &mdash; " +
       EscapeHtml(status.message) + "</p>\n";

  // Tiles: rows per second of the last batch, the average over the recent
  // ones, total lag.
  double last_rate = 0;
  int64_t recent_rows = 0;
  int64_t recent_ms = 0;
  if (!status.batches.empty()) {
    last_rate = status.batches.back().processed_rows_per_second;
    for (const BatchRow& row : status.batches) {
      recent_rows += row.input_rows;
      recent_ms += row.duration_ms;
    }
  }
  int64_t total_lag = 0;
  for (const LagRow& row : status.lag) total_lag += row.lag;
  h += "<div class=\"tiles\">";
  h += "<div class=\"tile\">rows/s (last batch)<b id=\"rate\">" +
       (status.batches.empty() ? std::string("&ndash;") : Rate(last_rate)) + "</b></div>";
  h += "<div class=\"tile\">rows/s (recent)<b id=\"recent-rate\">" +
       (recent_ms > 0
            ? Rate(static_cast<double>(recent_rows) * 1000.0 / static_cast<double>(recent_ms))
            : std::string("&ndash;")) +
       "</b></div>";
  h += "<div class=\"tile\">Kafka lag<b id=\"total-lag\">" +
       (status.lag_micros == 0 ? std::string("&ndash;") : Count(total_lag)) + "</b></div>";
  h += "<div class=\"tile\">batches shown<b>" + Count(static_cast<int64_t>(status.batches.size())) +
       "</b></div>";
  h += "</div>\n";

  h += "<h2>Last error</h2>\n";
  if (status.last_error.empty()) {
    h += "<p id=\"last-error\" class=\"muted\">none</p>\n";
  } else {
    h += "<pre id=\"last-error\">" + FormatTimestampMillisUtc(status.last_error_micros) + " " +
         EscapeHtml(status.last_error) + "</pre>\n";
  }

  h += "<h2>Kafka lag</h2>\n";
  if (status.lag_micros == 0) {
    h += "<p id=\"lag\" class=\"muted\">not known yet (Kafka sources only)</p>\n";
  } else {
    h += "<table id=\"lag\"><tr><th class=\"l\">topic</th><th>partition</th><th>committed "
         "offset</th><th>end offset</th><th>lag</th></tr>\n";
    for (const LagRow& row : status.lag) {
      h += "<tr><td class=\"l\">" + EscapeHtml(row.topic) + "</td><td>" +
           std::to_string(row.partition) + "</td><td>" + std::to_string(row.committed_offset) +
           "</td><td>" + std::to_string(row.end_offset) + "</td><td class=\"lag\">" +
           std::to_string(row.lag) + "</td></tr>\n";
    }
    h += "</table>\n<p class=\"muted\">fetched " + FormatTimestampMillisUtc(status.lag_micros) +
         "</p>\n";
  }

  h += "<h2>Recent batches</h2>\n";
  h += "<table id=\"batches\"><tr><th>batch</th><th class=\"l\">trigger time</th><th>input "
       "rows</th><th>output rows</th><th>duration ms</th><th>input rows/s</th><th>processed "
       "rows/s</th><th>table version</th></tr>\n";
  for (auto it = status.batches.rbegin(); it != status.batches.rend(); ++it) {
    const BatchRow& row = *it;
    std::string version = row.skipped_duplicate    ? "skipped (already committed)"
                          : row.table_version >= 0 ? std::to_string(row.table_version)
                                                   : "&ndash;";
    h += "<tr class=\"batch\"><td>" + std::to_string(row.batch_id) + "</td><td class=\"l\">" +
         FormatTimestampMillisUtc(row.timestamp_micros) + "</td><td>" + Count(row.input_rows) +
         "</td><td>" + Count(row.output_rows) + "</td><td>" + std::to_string(row.duration_ms) +
         "</td><td>" + Rate(row.input_rows_per_second) + "</td><td>" +
         Rate(row.processed_rows_per_second) + "</td><td>" + version + "</td></tr>\n";
  }
  h += "</table>\n";
  h += "<p class=\"muted\">JSON: <a href=\"/status\">/status</a> &middot; metrics: <a "
       "href=\"/metrics\">/metrics</a> &middot; health: <a href=\"/healthz\">/healthz</a></p>\n";
  h += "</body></html>\n";
  return h;
}

}  // namespace silt::monitor
