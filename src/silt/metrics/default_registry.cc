#include "silt/metrics/default_registry.h"

#include <string>

namespace silt::metrics {

namespace {

CounterFamily& Retries(Registry& registry) {
  return registry.AddCounter(
      "silt_retries_total",
      "Requests tried again after a transient failure, by component (s3, kafka) and operation.",
      {"component", "operation"});
}

}  // namespace

Registry& DefaultRegistry() {
  // Never destroyed: threads of librdkafka or of the S3 uploads may count
  // while static destructors run.
  static Registry* registry = [] {
    auto* r = new Registry();
    Retries(*r);  // listed from the start, so that its HELP and TYPE are there
    return r;
  }();
  return *registry;
}

void CountRetry(std::string_view component, std::string_view operation) {
  static CounterFamily& retries = Retries(DefaultRegistry());
  retries.WithLabels({std::string(component), std::string(operation)}).Increment();
}

}  // namespace silt::metrics
