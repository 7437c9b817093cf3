#include "silt/stream/sink/sink.h"

#include "silt/stream/sink/console_sink.h"
#include "silt/stream/sink/delta_merge_sink.h"
#include "silt/stream/sink/delta_sink.h"
#include "silt/stream/sink/kafka_sink.h"
#include "silt/stream/sink/multi_sink.h"

namespace silt::stream {

Result<std::unique_ptr<Sink>> MakeSink(const SinkSpec& spec, const SinkContext& context) {
  if (spec.format == "kafka") {
    SILT_ASSIGN_OR_RETURN(std::unique_ptr<KafkaSink> sink, KafkaSink::Make(spec, context.schema));
    return std::unique_ptr<Sink>(std::move(sink));
  }
  if (spec.format == "console") {
    SILT_ASSIGN_OR_RETURN(std::unique_ptr<ConsoleSink> sink, ConsoleSink::Make(spec, context));
    return std::unique_ptr<Sink>(std::move(sink));
  }
  if (spec.format == "delta") {
    const bool update_groups = spec.output_mode == "update" && !context.group_keys.empty();
    if (spec.mode == "merge" || update_groups) {
      SILT_ASSIGN_OR_RETURN(std::unique_ptr<DeltaMergeSink> sink,
                            DeltaMergeSink::Make(spec, context, context.group_keys));
      return std::unique_ptr<Sink>(std::move(sink));
    }
    SinkSpec append = spec;
    if (append.output_mode == "update") append.output_mode = "append";
    SILT_ASSIGN_OR_RETURN(std::unique_ptr<DeltaSink> sink,
                          DeltaSink::Make(append, context.schema, context.query_id,
                                          context.file_system, context.clock, context.eval));
    return std::unique_ptr<Sink>(std::move(sink));
  }
  return Status::NotSupported(spec.key_path, ".format: '", spec.format,
                              "' (silt's sinks: delta, kafka, console)");
}

Result<std::unique_ptr<Sink>> MakeSinks(const std::vector<SinkSpec>& specs,
                                        const SinkContext& context) {
  SILT_ASSIGN_OR_RETURN(
      std::unique_ptr<MultiSink> sink,
      MultiSink::Make(specs, context, [](const SinkSpec& spec, const SinkContext& child) {
        return MakeSink(spec, child);
      }));
  return std::unique_ptr<Sink>(std::move(sink));
}

}  // namespace silt::stream
