// MERGE sources named in a statement (expr::TableReference): a Delta table
// (delta.`PATH`, its latest snapshot), Parquet files (parquet.`PATH`: one
// file, or the *.parquet files of a directory, as Spark reads a directory),
// or a parenthesised SELECT over one of those. A SELECT over a Delta table
// runs as `silt sql` runs it (query/query.h); over Parquet files it takes
// a select list and WHERE only.
//
// Thread safety: one thread.
#pragma once

#include <memory>

#include "silt/base/result.h"
#include "silt/dml/dml.h"
#include "silt/expr/eval_options.h"
#include "silt/expr/parse/dml_statement.h"

namespace silt::dml {

// Reads the whole source into memory. Errors: NotFound for a missing path;
// NotSupported for json.`PATH` and for GROUP BY / HAVING / ORDER BY /
// LIMIT over Parquet; the reader's and the query's errors.
Result<std::unique_ptr<RowSource>> OpenStatementSource(const expr::TableReference& ref,
                                                       const expr::EvalOptions& options = {});

}  // namespace silt::dml
