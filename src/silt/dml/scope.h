// Name resolution for DML expressions: the columns of a target table and,
// in MERGE, of a source, each reachable as `alias.col` or a bare `col`.
// Expressions are rewritten so that every column reference names a column
// of one flat "joined" schema (target columns, then source columns, under
// internal names), which the expr binder then resolves as usual; a batch of
// target rows (or of source rows) becomes a batch of that side's part of the
// schema by renaming only.
//
// Thread safety: immutable after construction.
#pragma once

#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/expr/parse/ast.h"

namespace silt::dml {

class Scope {
 public:
  static constexpr int kTarget = 0;
  static constexpr int kSource = 1;

  // `source` null for DELETE / UPDATE (one side).
  Scope(std::string target_alias, columnar::SchemaPtr target, std::string source_alias,
        columnar::SchemaPtr source);

  // Target columns, then source columns, named by InternalName.
  const columnar::SchemaPtr& joined_schema() const { return joined_; }
  // One side's part of the joined schema.
  const columnar::SchemaPtr& side_schema(int side) const { return side_[side]; }
  const columnar::SchemaPtr& user_schema(int side) const { return user_[side]; }
  int num_sides() const { return user_[kSource] ? 2 : 1; }

  static std::string InternalName(int side, int column);

  // `node` with its column references resolved. `sides` (may be null) gets
  // bit 1 << side set for each side referenced. Errors: InvalidArgument
  // "[UNRESOLVED_COLUMN] ..." / "[AMBIGUOUS_REFERENCE] ..." quoting the
  // reference and `context`; InvalidArgument for `*` inside an expression.
  Result<expr::NodePtr> Resolve(const expr::NodePtr& node, const std::string& context,
                                unsigned* sides) const;

  // What an assignment names (`col`, `alias.col`, `col.field...`,
  // `alias.col.field...`): the target column, as an index into the target
  // schema, and the nested field names after it (as typed; empty for the
  // column itself). Errors: InvalidArgument for an unknown column, naming
  // `context`.
  struct AssignedTarget {
    int column = -1;
    std::vector<std::string> fields;
  };
  Result<AssignedTarget> AssignedColumn(const std::vector<std::string>& column,
                                        const std::string& context) const;

  // `batch` (of the side's user schema) as a batch of side_schema(side).
  columnar::RecordBatchPtr AsSide(int side, const columnar::RecordBatchPtr& batch) const;

 private:
  std::string alias_[2];
  columnar::SchemaPtr user_[2];
  columnar::SchemaPtr side_[2];
  columnar::SchemaPtr joined_;
};

// The AND conjuncts of `node` (itself when it is not an AND).
void SplitConjuncts(const expr::NodePtr& node, std::vector<expr::NodePtr>* out);

// `node` with references to target columns (as Scope::Resolve wrote them)
// turned back into plain target column names, for the predicate extractor
// over the table schema. REQUIRES: `node` references the target only.
expr::NodePtr ToTargetNames(const expr::NodePtr& node, const columnar::Schema& target);

}  // namespace silt::dml
