#include "silt/base/logging.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "silt/base/clock.h"
#include "silt/base/json_writer.h"

namespace silt {
namespace {

LogLevel LevelFromEnv() {
  const char* env = std::getenv("SILT_LOG_LEVEL");
  if (env == nullptr) return LogLevel::kInfo;
  if (std::strcmp(env, "debug") == 0) return LogLevel::kDebug;
  if (std::strcmp(env, "warn") == 0) return LogLevel::kWarn;
  if (std::strcmp(env, "error") == 0) return LogLevel::kError;
  if (std::strcmp(env, "off") == 0) return LogLevel::kOff;
  return LogLevel::kInfo;
}

std::atomic<int>& LevelSlot() {
  static std::atomic<int> level{static_cast<int>(LevelFromEnv())};
  return level;
}

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "DEBUG";
    case LogLevel::kInfo: return "INFO ";
    case LogLevel::kWarn: return "WARN ";
    case LogLevel::kError: return "ERROR";
    case LogLevel::kOff: return "OFF  ";
  }
  return "?";
}

std::atomic<int> g_format{static_cast<int>(LogFormat::kText)};
std::atomic<int64_t> g_batch_id{-1};

std::mutex& QueryIdMutex() {
  static std::mutex mutex;
  return mutex;
}
std::string& QueryId() {
  static std::string id;
  return id;
}

const char* JsonLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kError: return "error";
    case LogLevel::kOff: return "off";
  }
  return "?";
}

std::string JsonLine(LogLevel level, std::string_view component, std::string_view message) {
  JsonWriter w;
  w.BeginObject();
  w.Member("time", FormatTimestampMillisUtc(SystemClock().NowMicros()));
  w.Member("level", JsonLevelName(level));
  w.Member("component", component);
  {
    std::lock_guard<std::mutex> lock(QueryIdMutex());
    if (QueryId().empty()) {
      w.Member("queryId", nullptr);
    } else {
      w.Member("queryId", QueryId());
    }
  }
  const int64_t batch = g_batch_id.load();
  if (batch < 0) {
    w.Member("batchId", nullptr);
  } else {
    w.Member("batchId", batch);
  }
  w.Member("message", message);
  w.EndObject();
  std::string line = w.Take();
  line += '\n';
  return line;
}

}  // namespace

void SetLogFormat(LogFormat format) { g_format.store(static_cast<int>(format)); }
LogFormat GetLogFormat() { return static_cast<LogFormat>(g_format.load()); }

void SetLogQueryId(std::string_view query_id) {
  std::lock_guard<std::mutex> lock(QueryIdMutex());
  QueryId().assign(query_id);
}
void SetLogBatchId(int64_t batch_id) { g_batch_id.store(batch_id); }

void SetLogLevel(LogLevel level) { LevelSlot().store(static_cast<int>(level)); }
LogLevel GetLogLevel() { return static_cast<LogLevel>(LevelSlot().load()); }
bool LogEnabled(LogLevel level) { return static_cast<int>(level) >= LevelSlot().load(); }

void LogLine(LogLevel level, std::string_view component, std::string_view message) {
  if (GetLogFormat() == LogFormat::kJson) {
    std::string json = JsonLine(level, component, message);
    ssize_t ignored = ::write(STDERR_FILENO, json.data(), json.size());
    (void)ignored;
    return;
  }
  std::string line = FormatTimestampMillisUtc(SystemClock().NowMicros());
  line += ' ';
  line += LevelName(level);
  line += ' ';
  line.append(component);
  line += ": ";
  line.append(message);
  line += '\n';
  // One write per line keeps concurrent lines whole.
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

}  // namespace silt
