#include "silt/stream/source/source_factory.h"

#include "silt/kafka/rdkafka_consumer.h"
#include "silt/stream/source/delta_source.h"
#include "silt/stream/source/eventhubs_source.h"
#include "silt/stream/source/file_source.h"
#include "silt/stream/source/generator_source.h"
#include "silt/stream/source/kafka_source.h"
#include "silt/stream/source/mqtt_source.h"

namespace silt::stream {

Result<std::unique_ptr<Source>> MakeSource(const SourceSpec& spec, const SourceContext& context) {
  if (spec.format == "generator") {
    SILT_ASSIGN_OR_RETURN(GeneratorOptions options, GeneratorOptions::FromSpec(spec));
    SILT_ASSIGN_OR_RETURN(std::unique_ptr<GeneratorSource> source,
                          GeneratorSource::Make(std::move(options), context.clock));
    return std::unique_ptr<Source>(std::move(source));
  }
  if (spec.format == "json" || spec.format == "text") {
    SILT_ASSIGN_OR_RETURN(FileSourceOptions options, FileSourceOptions::FromSpec(spec));
    SILT_ASSIGN_OR_RETURN(std::unique_ptr<FileSource> source,
                          FileSource::Make(std::move(options), context));
    return std::unique_ptr<Source>(std::move(source));
  }
  if (spec.format == "kafka") {
    SILT_ASSIGN_OR_RETURN(KafkaSourceOptions options, KafkaSourceOptions::FromSpec(spec));
    kafka::ConsumerConfig config;
    config.properties = options.properties;
    config.fetch_offset_num_retries = options.fetch_offset_num_retries;
    config.fetch_offset_retry_interval_ms = options.fetch_offset_retry_interval_ms;
    SILT_ASSIGN_OR_RETURN(std::unique_ptr<kafka::Consumer> consumer,
                          kafka::MakeRdKafkaConsumer(config));
    SILT_ASSIGN_OR_RETURN(std::unique_ptr<KafkaSource> source,
                          KafkaSource::Make(std::move(options), context, std::move(consumer)));
    source->set_consumer_factory([config] { return kafka::MakeRdKafkaConsumer(config); });
    return std::unique_ptr<Source>(std::move(source));
  }
  if (spec.format == "eventhubs") {
    SILT_ASSIGN_OR_RETURN(EventHubsSourceOptions options, EventHubsSourceOptions::FromSpec(spec));
    kafka::ConsumerConfig config;
    config.properties = options.kafka.properties;
    config.fetch_offset_num_retries = options.kafka.fetch_offset_num_retries;
    config.fetch_offset_retry_interval_ms = options.kafka.fetch_offset_retry_interval_ms;
    SILT_ASSIGN_OR_RETURN(std::unique_ptr<kafka::Consumer> consumer,
                          kafka::MakeRdKafkaConsumer(config));
    SILT_ASSIGN_OR_RETURN(std::unique_ptr<EventHubsSource> source,
                          EventHubsSource::Make(std::move(options), context, std::move(consumer)));
    return std::unique_ptr<Source>(std::move(source));
  }
  if (spec.format == "delta") {
    SILT_ASSIGN_OR_RETURN(DeltaSourceOptions options, DeltaSourceOptions::FromSpec(spec));
    SILT_ASSIGN_OR_RETURN(std::unique_ptr<DeltaSource> source,
                          DeltaSource::Make(std::move(options), context));
    return std::unique_ptr<Source>(std::move(source));
  }
  if (spec.format == "mqtt") {
    SILT_ASSIGN_OR_RETURN(MqttSourceOptions options, MqttSourceOptions::FromSpec(spec));
    return MakeMqttSource(std::move(options), context);
  }
  return Status::InvalidArgument(
      spec.key_path, ".format: unknown source format '", spec.format,
      "'; expected one of generator, json, text, kafka, eventhubs, delta, mqtt");
}

}  // namespace silt::stream
