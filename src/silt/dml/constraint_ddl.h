// ALTER TABLE ... ADD CONSTRAINT name CHECK (expr) and DROP CONSTRAINT
// [IF EXISTS] name on Delta tables, as delta-spark 4 runs them: the
// constraint is the table property delta.constraints.<name> (the name
// lower-cased); ADD first checks every existing row, and upgrades the
// protocol to support checkConstraints (writer version 3, or the feature
// listed on a writer version 7 table). One metadata commit each, with
// delta-spark's operation and operationParameters.
//
// Thread safety: one call at a time per table object; concurrent writers
// from other processes are resolved by the commit's conflict rules.
#pragma once

#include <string>

#include "silt/base/status.h"
#include "silt/delta/table.h"
#include "silt/expr/eval_options.h"

namespace silt::dml {

// Errors: InvalidArgument "[DELTA_CONSTRAINT_ALREADY_EXISTS] ..." when the
// table has a constraint of that name (any case); the binder's error, or
// InvalidArgument when the expression is not BOOLEAN; InvalidArgument
// "[DELTA_NEW_CHECK_CONSTRAINT_VIOLATION] N rows in delta.`P` violate the
// new CHECK constraint (expr)" when existing rows do not satisfy it
// (FALSE or NULL); the scan's and commit's errors.
Status AddCheckConstraint(delta::DeltaTable* table, const std::string& name,
                          const std::string& expression, const expr::EvalOptions& eval = {});

// Errors: InvalidArgument "[DELTA_CONSTRAINT_DOES_NOT_EXIST] ..." when
// there is no such constraint and !if_exists (with IF EXISTS a commit
// records existed = false, as delta-spark's does); the commit's errors.
Status DropCheckConstraint(delta::DeltaTable* table, const std::string& name, bool if_exists);

}  // namespace silt::dml
