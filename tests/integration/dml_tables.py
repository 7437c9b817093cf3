"""The rows and schemas of the DML differential tests' base tables
(test_dml_spark.py, test_cdf_spark.py), so both build the same tables."""


def plain_rows(n=40):
    """(id, name, v, d) rows with NULL names and values sprinkled in."""
    rows = []
    for i in range(n):
        name = None if i % 9 == 4 else f"n{i % 20}"
        v = None if i % 7 == 3 else (i * 13) % 70
        rows.append((i, name, v, float(i) / 4))
    return rows


def schemas():
    """(plain, partitioned) Spark schemas: id/name/v/d and id/v/p."""
    from pyspark.sql.types import (DoubleType, IntegerType, LongType, StringType, StructField,
                                   StructType)

    plain = StructType([StructField("id", LongType()), StructField("name", StringType()),
                        StructField("v", IntegerType()), StructField("d", DoubleType())])
    parted = StructType([StructField("id", LongType()), StructField("v", IntegerType()),
                         StructField("p", StringType())])
    return plain, parted
