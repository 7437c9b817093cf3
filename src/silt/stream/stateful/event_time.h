// Event time between steps, as Spark tracks it: withWatermark marks its
// column with the delay in the column's metadata (EventTimeWatermark's
// delayKey, "spark.watermarkDelayMs": <ms>), and the mark travels with the
// column through references and aliases, into window() / session_window() /
// window_time() results and through a stateful step's group keys. A
// stateful step's event time is the first marked column of its input
// (Spark's WatermarkSupport.findEventTimeColumn); an aggregation's is its
// first marked group key. So a second stateful step finds the event time
// the first one passes on (e.g. the `window` column of a windowed count)
// without naming the withWatermark step's column.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "silt/columnar/types.h"
#include "silt/expr/parse/ast.h"

namespace silt::stream {

// The column withWatermark set, as seen by a stateful step: its name in the
// step's input and the delay its mark carries.
struct WatermarkColumn {
  std::string name;
  int64_t delay_ms = 0;
};

// The delay in a field's metadata JSON, or nullopt without the mark.
std::optional<int64_t> WatermarkDelayOf(std::string_view metadata_json);

// `metadata_json` with the delay set (delay_ms) or removed (nullopt); other
// keys are kept, and a new mark goes in front, as Spark's MetadataBuilder
// adds it.
std::string WithWatermarkDelay(const std::string& metadata_json, std::optional<int64_t> delay_ms);

// The first marked column of `schema`, or nullopt.
std::optional<WatermarkColumn> EventTimeColumn(const columnar::Schema& schema);

// The mark an expression's result carries over `input`: that of the column
// it names (bare or aliased), and for window(c, ...), session_window(c, ...)
// and window_time(c) that of c; nullopt for anything else.
std::optional<int64_t> ExpressionWatermarkDelay(const expr::Node& node,
                                                const columnar::Schema& input);

}  // namespace silt::stream
