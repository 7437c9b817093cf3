// The driver of the PySpark export: ExportPySpark runs one Exporter.
#include "silt/stream/pyspark_export.h"

#include "silt/stream/export/exporter_internal.h"

namespace silt::stream {

namespace pyspark {

Exporter::Exporter(const JobSpec& job, const PySparkExportOptions& options)
    : job_(job), options_(options), raw_(options.raw_yaml) {}

Result<std::string> Exporter::Run() {
  if (job_.maintenance) return RunMaintenance();
  SILT_RETURN_NOT_OK(CheckJob());
  SILT_RETURN_NOT_OK(Session());
  SILT_RETURN_NOT_OK(Source());
  SILT_RETURN_NOT_OK(Transforms());
  SILT_RETURN_NOT_OK(Sink());
  return Assemble();
}

}  // namespace pyspark

Result<std::string> ExportPySpark(const JobSpec& job, const PySparkExportOptions& options) {
  return pyspark::Exporter(job, options).Run();
}

}  // namespace silt::stream
