#include "silt/base/logging.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "silt/base/clock.h"

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

}  // namespace

void SetLogLevel(LogLevel level) { LevelSlot().store(static_cast<int>(level)); }
LogLevel GetLogLevel() { return static_cast<LogLevel>(LevelSlot().load()); }
bool LogEnabled(LogLevel level) { return static_cast<int>(level) >= LevelSlot().load(); }

void LogLine(LogLevel level, std::string_view component, std::string_view message) {
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
