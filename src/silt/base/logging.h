// Minimal leveled logging to stderr. Lines look like
//   2026-11-29T14:20:01.123Z INFO  stream: batch 3 committed
// or, with SetLogFormat(LogFormat::kJson) (`silt run --log-format json`), one
// JSON object per line:
//   {"time":"2026-11-29T14:20:01.123Z","level":"info","component":"stream",
//    "queryId":"<uuid>","batchId":3,"message":"batch 3 committed"}
// where queryId and batchId are the process's log context (null when not
// set). The level is process-wide (SetLogLevel) and defaults to kInfo; the
// SILT_LOG_LEVEL environment variable (debug|info|warn|error) overrides it at
// first use.
//
// Thread safety: Log() may be called from any thread; each line is written
// with one write so lines never interleave.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "silt/base/status.h"

namespace silt {

enum class LogLevel : int { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };

void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
bool LogEnabled(LogLevel level);
void LogLine(LogLevel level, std::string_view component, std::string_view message);

enum class LogFormat { kText, kJson };
void SetLogFormat(LogFormat format);
LogFormat GetLogFormat();

// The log context JSON lines carry: the running query's id and batch
// (-1: none). Process-wide, as one process runs one query.
void SetLogQueryId(std::string_view query_id);
void SetLogBatchId(int64_t batch_id);

template <typename... Args>
void Log(LogLevel level, std::string_view component, Args&&... args) {
  if (!LogEnabled(level)) return;
  LogLine(level, component, Status::Concat(std::forward<Args>(args)...));
}

}  // namespace silt

#define SILT_LOG_DEBUG(component, ...) ::silt::Log(::silt::LogLevel::kDebug, component, __VA_ARGS__)
#define SILT_LOG_INFO(component, ...) ::silt::Log(::silt::LogLevel::kInfo, component, __VA_ARGS__)
#define SILT_LOG_WARN(component, ...) ::silt::Log(::silt::LogLevel::kWarn, component, __VA_ARGS__)
#define SILT_LOG_ERROR(component, ...) ::silt::Log(::silt::LogLevel::kError, component, __VA_ARGS__)
