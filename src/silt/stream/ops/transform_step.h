// TransformStepImpl: one bound step of a Transform (transform.h). Internal to
// stream/ops: the steps are defined in transform.cc and static_join.cc.
//
// Apply runs once per chunk (one virtual call per chunk, not per row); the
// work inside is column-at-a-time.
#pragma once

#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/expr/expression.h"

namespace silt::stream {

class TransformStepImpl {
 public:
  virtual ~TransformStepImpl() = default;
  const columnar::SchemaPtr& output_schema() const { return output_schema_; }
  const std::string& key_path() const { return key_path_; }
  // Called at the start of every batch, before the batch's first Apply.
  virtual void StartBatch() {}
  virtual Result<columnar::RecordBatchPtr> Apply(const columnar::RecordBatchPtr& batch,
                                                 const expr::EvalContext& ctx) = 0;

  // How output rows relate to input rows, so the dead-letter table can trace
  // a bad row back to its source record: kSame (output row i is input row
  // i), kSubset (a filter: last_kept_rows() says which input rows remain),
  // kOther (explode, window expansion, join: not traced).
  enum class RowMapping : uint8_t { kSame, kSubset, kOther };
  virtual RowMapping row_mapping() const { return RowMapping::kOther; }
  // kSubset: the input rows the last Apply kept, ascending; null when it
  // kept every row.
  virtual const std::vector<int64_t>* last_kept_rows() const { return nullptr; }

 protected:
  columnar::SchemaPtr output_schema_;
  std::string key_path_;
};

}  // namespace silt::stream
