// Reading a checkpoint's state without running the query, for
// `silt state` and `silt checkpoint` (Spark's `statestore` and
// `state-metadata` data sources): which stateful operators it holds, which
// state versions each can load, and the rows of one version decoded as the
// operator reads them.
//
// Versions: state version V is the state after batch V-1 (Spark's
// numbering), so the state after the last committed batch N is N+1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/fs/file_system.h"
#include "silt/stream/stateful/stateful_step.h"

namespace silt::stream {

struct StateOperatorInfo {
  int operator_id = 0;
  std::string operator_name;  // "stateStoreSave", "dedupe", ...
  std::string dir;            // <checkpoint>/state/<operator>
  StatefulStep step;
  std::vector<int64_t> versions;  // loadable state versions, ascending
};

// Every `<checkpoint>/state/<N>` with a recorded step, by operator id.
// Errors: Corruption naming a damaged metadata file.
Result<std::vector<StateOperatorInfo>> ListStateOperators(const fs::FileSystemPtr& fs,
                                                          const std::string& checkpoint);

struct StateRows {
  columnar::RecordBatchPtr rows;  // DecodeState's columns
  int64_t bytes = 0;              // keys and values, as stored
};

// The rows of state `version` of `op` (partition 0). Errors: NotFound when
// the version cannot be loaded; Corruption from the files or the rows.
Result<StateRows> ReadStateRows(const fs::FileSystemPtr& fs, const StateOperatorInfo& op,
                                int64_t version);

}  // namespace silt::stream
