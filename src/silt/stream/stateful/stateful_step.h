// StatefulStep: a stateful transform step as its checkpoint records it, and
// the one factory that builds its operator (for the query, and for
// `silt state`, which decodes state rows without the job file).
//
// File: <checkpoint>/state/<operator>/_metadata/silt-operator.json, written
// before the operator's first state commit (docs/format/state-store.md):
//   {"version":1,"operatorId":0,"operatorName":"stateStoreSave",
//    "step":{"kind":"groupBy","keys":[...],"agg":[...],"columns":[...]},
//    "inputSchema":<Spark schema JSON>,"watermark":{"column":"ts",
//    "delayMs":10000}|null,"outputMode":"append","stateSchema":<schema>}
//
// On restart the job's step must match the recorded one (kind, keys,
// aggregates, columns, and the schema of the state rows): state written by
// one aggregation cannot be read as another's, so a changed step is refused
// with both versions named, as Spark refuses an incompatible state schema.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "silt/base/result.h"
#include "silt/columnar/types.h"
#include "silt/expr/eval_options.h"
#include "silt/fs/file_system.h"
#include "silt/stream/job.h"
#include "silt/stream/stateful/stateful_operator.h"

namespace silt::stream {

struct StatefulStep {
  int operator_id = 0;
  TransformStep step;  // kind, exprs (keys or columns), aggs, key_path
  columnar::SchemaPtr input_schema;
  std::optional<WatermarkColumn> watermark;
  OutputMode output_mode = OutputMode::kAppend;
};

bool IsStatefulStepKind(const std::string& kind);

// Builds the step's operator over `store` (null: only DecodeState and the
// schemas may be used). Errors: as MakeStatefulAggregate / MakeDeduplicate.
Result<std::unique_ptr<StatefulOperator>> MakeStatefulOperator(
    const StatefulStep& step, const expr::EvalOptions& options,
    std::unique_ptr<state::StateStore> store);

std::string StatefulStepToJson(const StatefulStep& step, const StatefulOperator& op);
// `source` names the file in errors (Corruption).
Result<StatefulStep> StatefulStepFromJson(std::string_view json, std::string_view source);

// Where an operator's step record lives, relative to its operator dir.
inline constexpr std::string_view kStatefulStepFile = "_metadata/silt-operator.json";

// `<operator_dir>/_metadata/silt-operator.json`.
std::string StatefulStepFile(const std::string& operator_dir);

// Writes the file when absent; when present, checks the job's step against
// it. Errors: InvalidArgument naming the file and what differs.
Status RecordOrCheckStatefulStep(const fs::FileSystemPtr& fs, const std::string& operator_dir,
                                 const StatefulStep& step, const StatefulOperator& op);
// NotFound when the operator has no such file.
Result<StatefulStep> ReadStatefulStep(const fs::FileSystemPtr& fs, const std::string& operator_dir);

}  // namespace silt::stream
