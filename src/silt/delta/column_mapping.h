// Delta column mapping on the write side (PROTOCOL.md "Column Mapping";
// table property delta.columnMapping.mode = none | name | id): every field
// of the logical schema, at any depth, carries delta.columnMapping.id and
// delta.columnMapping.physicalName in its metadata; data files hold the
// physical names, with the ids as Parquet field ids, and add.partitionValues
// and add.stats are keyed by physical names. New fields get the next ids
// above delta.columnMapping.maxColumnId and physical names "col-<uuid>", as
// delta-spark assigns them.
//
// TableScan (scan.cc) is the read side.
//
// Thread safety: pure functions (AssignColumnMapping draws random UUIDs).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/types.h"
#include "silt/delta/table.h"
#include "silt/delta/table_properties.h"

namespace silt::delta {

enum class ColumnMappingMode { kNone, kName, kId };

inline constexpr std::string_view kColumnMappingModeKey = "delta.columnMapping.mode";
inline constexpr std::string_view kColumnMappingMaxIdKey = "delta.columnMapping.maxColumnId";
inline constexpr std::string_view kColumnMappingIdKey = "delta.columnMapping.id";
inline constexpr std::string_view kPhysicalNameKey = "delta.columnMapping.physicalName";

// The table's mode (none when the property is unset; the value compares
// case-insensitively, as delta-spark's). Errors: NotSupported naming the
// value when it is none of none, name, id.
Result<ColumnMappingMode> ColumnMappingModeOf(const TableConfiguration& configuration);

// The physical name of a field of a column-mapped schema (partition_utils.h
// PhysicalName gives "" when there is none). Errors:
// Corruption naming the column when its metadata lacks the name.
Result<std::string> RequiredPhysicalName(const columnar::Field& field);

// A column writers add beside the table's (a change data file's
// _change_type, the materialized row-tracking columns): nullable, with
// `name` as its physical name and no id, so PhysicalSchema writes it under
// its own name without a Parquet field id, as delta-spark writes them.
columnar::Field HiddenColumn(std::string name, columnar::TypePtr type);

// The schema data files of a column-mapped table are written with:
// every struct field (top-level, in structs, in array elements and map
// keys and values) renamed to its physical name, with metadata
// {"parquet.field.id": <delta.columnMapping.id>} so the Parquet writer
// puts the id on its schema element, as delta-spark writes in both modes.
// Errors: Corruption naming the column (dotted logical path) that lacks an
// id or a physical name.
Result<columnar::SchemaPtr> PhysicalSchema(const columnar::Schema& logical);

// The largest delta.columnMapping.id in `schema`, at any depth (0 when
// none). Errors: Corruption for an id that is not an integer.
Result<int64_t> MaxColumnId(const columnar::Schema& schema);

// The id new fields are numbered above: the larger of the table's
// delta.columnMapping.maxColumnId and MaxColumnId(schema), so a maximum a
// writer failed to raise cannot lead to a reused id. Errors: Corruption
// when the property is not an integer.
Result<int64_t> MaxColumnIdInUse(const TableConfiguration& configuration,
                                 const columnar::Schema& schema);

// `schema` with its column-mapping metadata settled: a field that `table`
// (the table's current schema; null for a new table) has at the same path
// (names matched case-insensitively) keeps the table's id and physical
// name; every other field gets the next id above *max_column_id (which is
// advanced) and a physical name "col-<uuid>", whatever its metadata says
// (a schema read from another mapped table carries that table's ids),
// parents before their children in field order, as delta-spark numbers
// them. Returns `schema` itself when no field got a new id and none
// needed the table's. Errors: Corruption naming the column when a field of
// `table` lacks its id or physical name, or for field metadata that is not
// a JSON object.
Result<columnar::SchemaPtr> AssignColumnMapping(const columnar::SchemaPtr& schema,
                                                const columnar::Schema* table,
                                                int64_t* max_column_id);

// A new table's schema under column mapping, as delta-spark creates it:
// when `configuration` sets delta.columnMapping.mode to name or id, every
// field at any depth gets an id (1, 2, ... parents before children) and a
// "col-<uuid>" physical name, and `configuration` gets
// delta.columnMapping.maxColumnId; otherwise `schema` is returned as it is.
// Used by every writer that creates a table (the append and merge sinks).
// Errors: NotSupported for an unknown mode; Corruption for field metadata
// that is not a JSON object.
Result<columnar::SchemaPtr> MapNewTableSchema(const columnar::SchemaPtr& schema,
                                              TableConfiguration* configuration);

// TableWriter::Make (table.h), with `column_mapping` for a table in name
// or id mode: `schema`'s fields carry their ids and physical names, and
// the files are written with the physical schema (PhysicalSchema), their
// partition values and statistics keyed by physical names, under random
// two-character directories when the table is partitioned, as delta-spark
// writes them. Keys of options.parquet.column_encodings / bloom_filters
// name logical columns. Errors: those of TableWriter::Make; Corruption
// naming a column without its mapping metadata.
Result<std::unique_ptr<TableWriter>> MakeTableWriter(fs::FileSystemPtr fs, std::string table_path,
                                                     columnar::SchemaPtr schema,
                                                     std::vector<std::string> partition_columns,
                                                     TableWriterOptions options,
                                                     bool column_mapping);

// The column paths (names from the top level, as written) an expression
// reads: the caller parses CHECK constraints and generation expressions
// for the ALTERs below (delta/ does not parse expressions). It may name
// more than the expression reads, never fewer.
using ExpressionColumns =
    std::function<Result<std::vector<std::vector<std::string>>>(const std::string& expression)>;

// ALTER TABLE ... RENAME COLUMN on a column-mapped table (name or id
// mode), as delta-spark 4.4 does it: one commit (operation "RENAME COLUMN",
// parameters oldColumnPath and newColumnPath) whose metaData renames the
// field (`path`: the field's names from the top level, case-insensitive),
// keeping its id and physical name, so no data file changes; a renamed
// partition column is renamed in partitionColumns too, and
// delta.dataSkippingStatsColumns, when set, is rewritten with the new name
// (as Spark rewrites it: comma-joined, no spaces). A clustering column is
// renamed like any other (the clustering domain names physical columns).
// `expression_columns` finds what CHECK constraints and generated columns
// read; a column one of them reads (the column, a field below it, or a
// struct above it) is refused. Returns the version committed. Errors:
// NotSupported "[DELTA_UNSUPPORTED_RENAME_COLUMN]" without column mapping;
// InvalidArgument "[DELTA_COLUMN_NOT_FOUND]" for a column that does not
// exist, "[DELTA_DUPLICATE_COLUMNS_FOUND]" for a new name its struct
// already has, "[DELTA_CONSTRAINT_DEPENDENT_COLUMN_CHANGE]" /
// "[DELTA_GENERATED_COLUMNS_DEPENDENT_COLUMN_CHANGE]" naming the
// constraints or generated columns that read it; NotSupported when the
// table has CHECK constraints or generated columns and
// `expression_columns` is empty; the errors of `expression_columns`; what
// Commit returns.
Result<int64_t> RenameColumn(DeltaTable* table, const std::vector<std::string>& path,
                             const std::string& new_name,
                             const ExpressionColumns& expression_columns = nullptr);

// ALTER TABLE ... DROP COLUMN[S] on a column-mapped table: one commit
// (operation "DROP COLUMNS", parameter columns as a JSON array of the
// paths as written) whose metaData lacks the fields; the files keep their
// values, which readers no longer see. delta.dataSkippingStatsColumns, when
// set, loses the dropped columns and the fields below them. Returns the
// version committed. Errors: NotSupported "[DELTA_UNSUPPORTED_DROP_COLUMN]"
// without column mapping; InvalidArgument for a column that does not
// exist, a partition column ("[DELTA_UNSUPPORTED_DROP_PARTITION_COLUMN]"),
// a clustering column ("[DELTA_UNSUPPORTED_DROP_CLUSTERING_COLUMN]"), a
// column a CHECK constraint or generated column reads (as RenameColumn),
// or when no column (or no field of a struct) would remain; NotSupported
// as RenameColumn; what Commit returns.
Result<int64_t> DropColumns(DeltaTable* table, const std::vector<std::vector<std::string>>& paths,
                            const ExpressionColumns& expression_columns = nullptr);

}  // namespace silt::delta
