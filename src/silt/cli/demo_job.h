// The job `silt demo` runs: the text of examples/sensor-demo.yaml, compiled
// into the binary at build time (demo_job.cc.in), so the demo and the example
// cannot drift apart.
//
// The text is a job file template: its paths and sizes come from the
// environment variables the demo sets before parsing it (${SILT_DEMO_DIR},
// ${SILT_DEMO_ROWS_PER_BATCH}, ${SILT_DEMO_TOTAL_ROWS}, each with a default).
//
// Thread safety: returns a view of static storage.
#pragma once

#include <string_view>

namespace silt::cli {

std::string_view DemoJobYaml();

}  // namespace silt::cli
