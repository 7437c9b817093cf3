#include "silt/stream/sink/sink.h"

#include "silt/stream/sink/delta_sink.h"
#include "silt/stream/sink/kafka_sink.h"

namespace silt::stream {

Result<std::unique_ptr<Sink>> MakeSink(const SinkSpec& spec, const SinkContext& context) {
  if (spec.format == "kafka") {
    SILT_ASSIGN_OR_RETURN(std::unique_ptr<KafkaSink> sink, KafkaSink::Make(spec, context.schema));
    return std::unique_ptr<Sink>(std::move(sink));
  }
  if (spec.format == "delta") {
    SILT_ASSIGN_OR_RETURN(std::unique_ptr<DeltaSink> sink,
                          DeltaSink::Make(spec, context.schema, context.query_id,
                                          context.file_system, context.clock));
    return std::unique_ptr<Sink>(std::move(sink));
  }
  return Status::NotSupported("sink.format: '", spec.format,
                              "' (silt writes Delta tables; use format delta)");
}

}  // namespace silt::stream
