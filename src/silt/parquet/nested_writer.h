// NestedFieldWriter: writes one top-level struct, array or map field as the
// Parquet leaf columns Spark writes for it (see ParquetElementsForField),
// computing each leaf's repetition and definition levels.
//
// Per slice of rows, one recursive walk over the field's values appends
// levels (and the positions of defined leaf values) to per-leaf buffers
// reused between slices; each leaf's ColumnWriter then encodes them with
// its typed loops. The walk makes plain (non-virtual) calls per value.
//
// Thread safety: one writer per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/parquet/column_writer.h"
#include "silt/parquet/file_writer.h"
#include "silt/parquet/parquet_schema.h"

namespace silt::parquet {

class NestedFieldWriter {
 public:
  // REQUIRES: field.type is nested. Errors: NotSupported naming the field
  // when a leaf type cannot be written (void, empty struct).
  static Result<std::unique_ptr<NestedFieldWriter>> Make(const columnar::Field& field,
                                                         const WriterOptions& options);

  // The field's schema elements in depth-first order.
  const std::vector<SchemaElement>& schema_elements() const { return elements_; }
  // The leaf writers, in column-chunk order.
  const std::vector<std::unique_ptr<ColumnWriter>>& leaves() const { return leaves_; }

  // Encodes rows [offset, offset + length) of `column` (of the field's type).
  Status Write(const columnar::Column& column, int64_t offset, int64_t length);

  int64_t buffered_bytes() const;
  // Statistics as Delta needs them: the field's null count, no bounds.
  ColumnStats FileStats() const;

 private:
  struct LeafBuffer {
    std::vector<int16_t> def;
    std::vector<int16_t> rep;
    std::vector<int64_t> indices;  // rows of `column` holding defined values
    const columnar::Column* column = nullptr;
  };

  NestedFieldWriter(columnar::Field field, std::vector<SchemaElement> elements,
                    std::shared_ptr<const LevelNode> levels,
                    std::vector<std::unique_ptr<ColumnWriter>> leaves);

  void Emit(const LevelNode& node, const columnar::Column& column, int64_t row, int16_t rep,
            int parent_def);
  void EmitEmpty(const LevelNode& node, int16_t def, int16_t rep);

  const columnar::Field field_;
  const std::vector<SchemaElement> elements_;
  const std::shared_ptr<const LevelNode> levels_;
  std::vector<std::unique_ptr<ColumnWriter>> leaves_;
  std::vector<LeafBuffer> buffers_;
  int64_t null_count_ = 0;
};

}  // namespace silt::parquet
