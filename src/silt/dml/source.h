// MERGE sources named in a statement (expr::TableReference): a Delta table
// (delta.`PATH`, its latest snapshot), Parquet files (parquet.`PATH`: one
// file, or the *.parquet files of a directory, as Spark reads a directory),
// JSON lines (json.`PATH`: a file or a directory's *.json files, schema
// inferred as Spark's JsonInferSchema does with its defaults), or a
// parenthesised SELECT over one of those. A SELECT over a Delta table runs
// as `silt sql` runs it (query/query.h); over files it takes a select list
// and WHERE only.
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
// InvalidArgument for a JSON line that is not an object (naming the line);
// NotSupported for GROUP BY / HAVING / ORDER BY / LIMIT over files; the
// reader's and the query's errors.
Result<std::unique_ptr<RowSource>> OpenStatementSource(const expr::TableReference& ref,
                                                       const expr::EvalOptions& options = {});

}  // namespace silt::dml
