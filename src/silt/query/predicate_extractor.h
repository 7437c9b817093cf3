// Extracts the simple column predicates of a filter expression that storage
// can test against metadata (columnar/predicate.h): the conjuncts of the
// top-level AND chain that have the shape
//
//   column op literal | literal op column      (op: = == < <= > >= <=>)
//   column [NOT] IN (literal, ...)             (NOT IN is left out)
//   column IS [NOT] NULL
//   column BETWEEN lo AND hi                   (parsed as >= AND <=)
//
// where `column` is a top-level column compared at its own type (a
// comparison Spark evaluates after casting the column — e.g. an INT column
// against 2.5 — is left out, since casting the literal down could change
// the answer) and the literal side folds to a constant. Anything else (OR,
// NOT, functions of columns) is left out, which only weakens pruning.
//
// Thread safety: pure function.
#pragma once

#include <string>

#include "silt/base/result.h"
#include "silt/columnar/predicate.h"
#include "silt/expr/eval_options.h"
#include "silt/expr/parse/ast.h"

namespace silt::query {

// `filter` is a parsed boolean expression over `schema`. Errors: none for
// shapes it cannot use (they are skipped); Internal only for a failure to
// evaluate a constant.
Result<columnar::Conjunction> ExtractConjunction(const expr::Node& filter,
                                                 const columnar::SchemaPtr& schema,
                                                 const expr::EvalOptions& options = {});

// "day = 2024-03-02", "id IN (1, 2)", "name IS NULL": a predicate for
// `--explain`, values in their SQL text form.
std::string DescribePredicate(const columnar::ColumnPredicate& predicate);

}  // namespace silt::query
