// The process's metrics registry: what `silt run` serves on /metrics, and
// where the modules below the query (fs, kafka) count what only they see.
//
//   silt_retries_total{component, operation}  a request tried again after a
//       transient failure: component "s3" (operation: the HTTP method) or
//       "kafka" (list_topics, query_watermarks, offsets_for_times)
//
// Thread safety: as Registry. The registry lives until the process exits.
#pragma once

#include <string_view>

#include "silt/metrics/registry.h"

namespace silt::metrics {

Registry& DefaultRegistry();

// Counts one retry in DefaultRegistry()'s silt_retries_total.
void CountRetry(std::string_view component, std::string_view operation);

}  // namespace silt::metrics
