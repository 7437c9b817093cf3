#include "silt/delta/clustering.h"

#include <simdjson.h>

#include "silt/base/json_writer.h"
#include "silt/delta/protocol.h"
#include "silt/delta/table.h"

namespace silt::delta {

DomainMetadata ClusteringDomain(const std::vector<std::string>& columns) {
  JsonWriter w;
  w.BeginObject();
  w.Key("clusteringColumns");
  w.BeginArray();
  for (const std::string& column : columns) {
    w.BeginArray();
    w.String(column);
    w.EndArray();
  }
  w.EndArray();
  w.Member("domainName", std::string(kClusteringDomain));
  w.EndObject();
  return DomainMetadata{std::string(kClusteringDomain), w.Take(), false};
}

Result<std::vector<std::string>> ClusteringColumns(const Snapshot& snapshot) {
  std::vector<std::string> columns;
  if (!SupportsWriterFeature(snapshot.protocol(), "clustering")) return columns;
  const DomainMetadata* domain = snapshot.FindDomain(std::string(kClusteringDomain));
  if (domain == nullptr) return columns;
  auto bad = [&]() {
    return Status::Corruption("domainMetadata ", kClusteringDomain, ": configuration '",
                              domain->configuration,
                              "' is not {\"clusteringColumns\": [[name parts], ...]}");
  };
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  simdjson::dom::array list;
  if (parser.parse(domain->configuration).get(root) != simdjson::SUCCESS ||
      root["clusteringColumns"].get_array().get(list) != simdjson::SUCCESS) {
    return bad();
  }
  for (simdjson::dom::element column : list) {
    simdjson::dom::array parts;
    if (column.get_array().get(parts) != simdjson::SUCCESS) return bad();
    std::string path;
    for (simdjson::dom::element part : parts) {
      std::string_view name;
      if (part.get_string().get(name) != simdjson::SUCCESS) return bad();
      if (!path.empty()) path += '.';
      path += name;
    }
    if (path.empty()) return bad();
    columns.push_back(std::move(path));
  }
  return columns;
}

}  // namespace silt::delta
