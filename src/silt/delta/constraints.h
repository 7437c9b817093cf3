// CHECK constraints and column invariants of a Delta table (PROTOCOL.md
// "Check Constraints", "Column Invariants"; the checkConstraints and
// invariants writer features):
//
//   - `delta.constraints.<name>` table properties: a Spark SQL boolean
//     expression over the row every row written must satisfy;
//   - `delta.invariants` field metadata (legacy writer version 2): a JSON
//     string {"expression": {"expression": "<SQL>"}} on a column or nested
//     field, the same kind of rule.
//
// A row violates a rule whose expression is FALSE or NULL, as delta-spark
// checks. Evaluating is the writer's (delta/ does not bind SQL): dml/
// (write_rules.h) does it for DML, the streaming sinks and ALTER TABLE ADD
// CONSTRAINT.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"
#include "silt/delta/actions.h"

namespace silt::delta {

inline constexpr std::string_view kConstraintPrefix = "delta.constraints.";
inline constexpr std::string_view kInvariantsKey = "delta.invariants";

struct Constraint {
  // The CHECK constraint's name as the property spells it, or for an
  // invariant "EXPRESSION(<expression>)" as delta-spark names it.
  std::string name;
  std::string expression;  // Spark SQL text
};

// The table's CHECK constraints (property order) then its column
// invariants (schema order, depth first). Errors: Corruption naming the
// column for a delta.invariants value that is not the JSON described above.
Result<std::vector<Constraint>> TableConstraints(const Metadata& metadata);

// The CHECK constraints only.
std::vector<Constraint> CheckConstraints(const Metadata& metadata);

}  // namespace silt::delta
