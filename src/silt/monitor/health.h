// When a streaming query counts as healthy, for `/healthz`.
//
// A query is healthy while it runs and makes progress: it completed a batch,
// or its trigger asked the source and found nothing new (an idle query is
// alive), within `timeout`. It is unhealthy when it has stopped (finished or
// failed), or when neither happened for longer than `timeout` — a broker
// that does not answer, storage that hangs, a batch that takes too long.
// Before the first trigger, the time since the query started counts.
//
// Thread safety: plain values and a pure function.
#pragma once

#include <cstdint>
#include <string>

namespace silt::monitor {

enum class QueryState { kStarting, kRunning, kStopped, kFailed };

struct HealthInputs {
  QueryState state = QueryState::kStarting;
  // Monotonic microseconds: when the query started, and when it last made
  // progress (a completed batch or a trigger without new data); 0: never.
  int64_t started_micros = 0;
  int64_t last_progress_micros = 0;
  int64_t timeout_micros = 0;
};

struct Health {
  bool healthy = false;
  // Why, for a person: "batch 12 completed 3 s ago", "no batch completed
  // and no trigger finished for 65 s (timeout 60 s)", "query stopped".
  std::string reason;
};

Health EvaluateHealth(const HealthInputs& inputs, int64_t now_micros);

std::string_view QueryStateName(QueryState state);

}  // namespace silt::monitor
