#include "silt/monitor/health.h"

#include <algorithm>

#include "silt/base/status.h"

namespace silt::monitor {

namespace {

std::string Seconds(int64_t micros) {
  const int64_t tenths = micros / 100'000;
  return Status::Concat(tenths / 10, ".", tenths % 10, " s");
}

}  // namespace

std::string_view QueryStateName(QueryState state) {
  switch (state) {
    case QueryState::kStarting: return "starting";
    case QueryState::kRunning: return "running";
    case QueryState::kStopped: return "stopped";
    case QueryState::kFailed: return "failed";
  }
  return "unknown";
}

Health EvaluateHealth(const HealthInputs& inputs, int64_t now_micros) {
  if (inputs.state == QueryState::kStopped) return {false, "the query has stopped"};
  if (inputs.state == QueryState::kFailed) return {false, "the query has failed"};
  const bool progressed = inputs.last_progress_micros > 0;
  const int64_t since = progressed ? inputs.last_progress_micros : inputs.started_micros;
  const int64_t quiet = std::max<int64_t>(0, now_micros - since);
  if (quiet > inputs.timeout_micros) {
    return {false, Status::Concat(progressed ? "no batch or trigger completed for "
                                             : "no trigger completed since the start ",
                                  Seconds(quiet), " (healthTimeout ",
                                  Seconds(inputs.timeout_micros), ")")};
  }
  return {true, progressed ? Status::Concat("last progress ", Seconds(quiet), " ago")
                           : Status::Concat("starting, ", Seconds(quiet), " since the start")};
}

}  // namespace silt::monitor
