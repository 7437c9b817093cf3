// MakeSource: the one place that maps a job's source format to its Source
// implementation, kept apart from the interface so sources do not include
// each other.
#pragma once

#include <memory>

#include "silt/base/result.h"
#include "silt/stream/job.h"
#include "silt/stream/source/source.h"

namespace silt::stream {

// Builds the source for `spec` (formats: generator, json, text, kafka,
// eventhubs, delta, mqtt).
// Errors: InvalidArgument naming the option ("source.options.maxFilesPerTrigger: ...").
Result<std::unique_ptr<Source>> MakeSource(const SourceSpec& spec, const SourceContext& context);

}  // namespace silt::stream
