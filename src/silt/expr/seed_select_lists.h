// Test-only: the seed job's transform (DESIGN.md §3) as its two select
// lists, shared by seed_select_test.cc and the seed timing tool
// (seed_select_timing.cc) so that both evaluate the same job.
#pragma once

#include <string>
#include <vector>

namespace silt::expr::seed {

// from_json of the Kafka record's value.
inline constexpr const char* kFirstSelect =
    "from_json(CAST(value AS STRING), 'device_id STRING NOT NULL, device_type STRING NOT NULL, "
    "ingested_at STRING NOT NULL, payload STRING') AS e";

// The columns of the job's output, from the parsed `e`.
inline const std::vector<std::string> kSecondSelect = {
    "e.device_id",
    "e.device_type",
    "to_timestamp(e.ingested_at) AS event_time",
    "CAST(get_json_object(e.payload, '$.linkquality') AS INT) AS linkquality",
    "CAST(get_json_object(e.payload, '$.contact') AS BOOLEAN) AS contact",
    "CAST(get_json_object(e.payload, '$.battery') AS INT) AS battery",
    "CAST(get_json_object(e.payload, '$.power') AS DOUBLE) AS power",
    "CAST(get_json_object(e.payload, '$.voltage') AS DOUBLE) AS voltage",
    "CAST(get_json_object(e.payload, '$.current') AS DOUBLE) AS current",
    "CAST(get_json_object(e.payload, '$.energy') AS DOUBLE) AS energy",
    "get_json_object(e.payload, '$.state') AS plug_state",
    "e.payload AS raw_payload",
    "current_timestamp() AS processed_at",
};

}  // namespace silt::expr::seed
