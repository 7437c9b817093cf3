// silt describe TABLE [--version N] [--format text|json]: what a table is —
// location, id, schema as a tree (Spark's printSchema), partition columns,
// properties, protocol and table features, number and size of live files,
// the last checkpoint (from _delta_log/_last_checkpoint), and the txn
// actions: each streaming query's last batch, and for scale-out workers each
// Kafka partition's next offset and the worker that wrote it last.

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "silt/base/json_writer.h"
#include "silt/cli/command.h"
#include "silt/cli/json_view.h"
#include "silt/cli/scaleout_view.h"
#include "silt/cli/table_util.h"
#include "silt/delta/table.h"
#include "silt/fs/file_system.h"

namespace silt::cli {

namespace {

std::string TypeName(const columnar::DataType& type) {
  switch (type.id()) {
    case columnar::TypeId::kStruct: return "struct";
    case columnar::TypeId::kArray: return "array";
    case columnar::TypeId::kMap: return "map";
    default: return type.JsonTypeName();
  }
}

// Spark's StructType.treeString: " |-- name: type (nullable = true)", nested
// levels indented by " |   ".
void TreeLines(const columnar::DataType& type, const std::string& prefix, std::string* out);

void FieldLine(const std::string& name, const columnar::DataType& type, const std::string& suffix,
               const std::string& prefix, std::string* out) {
  *out += fmt::format("{} |-- {}: {}{}\n", prefix, name, TypeName(type), suffix);
  TreeLines(type, prefix + " |   ", out);
}

void TreeLines(const columnar::DataType& type, const std::string& prefix, std::string* out) {
  switch (type.id()) {
    case columnar::TypeId::kStruct:
      for (const columnar::Field& field : type.fields()) {
        FieldLine(field.name, *field.type, fmt::format(" (nullable = {})", field.nullable), prefix,
                  out);
      }
      return;
    case columnar::TypeId::kArray:
      FieldLine("element", *type.element_type(),
                fmt::format(" (containsNull = {})", type.contains_null()), prefix, out);
      return;
    case columnar::TypeId::kMap:
      FieldLine("key", *type.key_type(), "", prefix, out);
      FieldLine("value", *type.value_type(),
                fmt::format(" (valueContainsNull = {})", type.value_contains_null()), prefix, out);
      return;
    default: return;
  }
}

std::string JoinList(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

std::string FormatBytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0) return fmt::format("{} B", bytes);
  return fmt::format("{:.1f} {} ({} bytes)", value, units[unit], bytes);
}

class DescribeCommand final : public Command {
 public:
  explicit DescribeCommand(CLI::App* app) {
    sub_ = app->add_subcommand("describe",
                               "Describe a Delta table: schema, partitioning, properties, "
                               "protocol, files and checkpoint");
    sub_->add_option("table", table_path_, "Table path")->required();
    sub_->add_option("--version", version_, "Describe this version instead of the latest")
        ->check(CLI::NonNegativeNumber);
    sub_->add_option("--format", format_, "Output format")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
  }

  CLI::App* subcommand() const override { return sub_; }

  Status Run() override {
    SILT_ASSIGN_OR_RETURN(auto table, OpenExistingTable(table_path_));
    SILT_ASSIGN_OR_RETURN(delta::SnapshotPtr snapshot, SnapshotOrLatest(table.get(), version_));
    int64_t bytes = 0;
    for (const delta::AddFile& add : snapshot->files()) bytes += add.size;
    const int64_t num_files = static_cast<int64_t>(snapshot->files().size());
    // _last_checkpoint is a hint; a missing or unreadable one shows as none.
    std::optional<std::string> last_checkpoint;
    Result<std::string> hint =
        table->file_system()->ReadFile(fs::JoinPath(table->log_path(), "_last_checkpoint"));
    if (hint.ok()) {
      std::string text = *hint;
      while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
      if (JsonObjectView::Parse(text).has_value()) last_checkpoint = text;
    }
    const delta::Metadata& metadata = snapshot->metadata();
    const delta::Protocol& protocol = snapshot->protocol();
    if (format_ == "json") {
      JsonWriter w;
      w.BeginObject();
      w.Member("location", table->path());
      w.Member("id", metadata.id);
      if (metadata.name) {
        w.Member("name", *metadata.name);
      }
      if (metadata.description) {
        w.Member("description", *metadata.description);
      }
      w.Member("version", snapshot->version());
      w.Member("lastModified", snapshot->timestamp_ms());
      if (metadata.created_time) {
        w.Member("createdAt", *metadata.created_time);
      }
      w.Key("schema");
      w.Raw(metadata.schema_string.empty() ? "null" : metadata.schema_string);
      w.Key("partitionColumns");
      w.BeginArray();
      for (const std::string& c : metadata.partition_columns) w.String(c);
      w.EndArray();
      w.Key("properties");
      w.BeginObject();
      for (const auto& [key, value] : metadata.configuration) {
        w.Member(key, value);
      }
      w.EndObject();
      w.Member("minReaderVersion", protocol.min_reader_version);
      w.Member("minWriterVersion", protocol.min_writer_version);
      if (protocol.reader_features) {
        w.Key("readerFeatures");
        w.BeginArray();
        for (const std::string& f : *protocol.reader_features) w.String(f);
        w.EndArray();
      }
      if (protocol.writer_features) {
        w.Key("writerFeatures");
        w.BeginArray();
        for (const std::string& f : *protocol.writer_features) w.String(f);
        w.EndArray();
      }
      w.Member("numFiles", num_files);
      w.Member("sizeInBytes", bytes);
      w.Key("lastCheckpoint");
      if (last_checkpoint) {
        w.Raw(*last_checkpoint);
      } else {
        w.Null();
      }
      // The txn actions: streaming queries' last batches and scale-out
      // workers' Kafka offsets (scaleout_view.h).
      SILT_ASSIGN_OR_RETURN(std::string txns, TxnView(table.get(), *snapshot, "json"));
      w.Key("streamingOffsets");
      w.Raw(txns);
      w.EndObject();
      fmt::print("{}\n", w.Take());
      return Status::OK();
    }
    std::string out;
    out += fmt::format("location:          {}\n", table->path());
    out += fmt::format("id:                {}\n", metadata.id);
    if (metadata.name) out += fmt::format("name:              {}\n", *metadata.name);
    if (metadata.description) out += fmt::format("description:       {}\n", *metadata.description);
    out += fmt::format("version:           {}\n", snapshot->version());
    out += fmt::format("last modified:     {}\n", FormatMillisUtc(snapshot->timestamp_ms()));
    if (metadata.created_time) {
      out += fmt::format("created:           {}\n", FormatMillisUtc(*metadata.created_time));
    }
    out += fmt::format("partition columns: {}\n", metadata.partition_columns.empty()
                                                      ? "(none)"
                                                      : JoinList(metadata.partition_columns));
    out += fmt::format("files:             {}\n", num_files);
    out += fmt::format("size:              {}\n", FormatBytes(bytes));
    out += fmt::format("protocol:          minReaderVersion={} minWriterVersion={}\n",
                       protocol.min_reader_version, protocol.min_writer_version);
    if (protocol.reader_features) {
      out += fmt::format("reader features:   {}\n", protocol.reader_features->empty()
                                                        ? "(none)"
                                                        : JoinList(*protocol.reader_features));
    }
    if (protocol.writer_features) {
      out += fmt::format("writer features:   {}\n", protocol.writer_features->empty()
                                                        ? "(none)"
                                                        : JoinList(*protocol.writer_features));
    }
    std::optional<int64_t> checkpoint_version;
    if (last_checkpoint)
      checkpoint_version = JsonObjectView::Parse(*last_checkpoint)->GetInt("version");
    out += fmt::format("last checkpoint:   {}\n",
                       checkpoint_version ? fmt::format("version {}", *checkpoint_version)
                                          : std::string("(none)"));
    out += "properties:";
    if (metadata.configuration.empty()) out += "        (none)";
    out += "\n";
    for (const auto& [key, value] : metadata.configuration) {
      out += fmt::format("  {} = {}\n", key, value);
    }
    out += "schema:\nroot\n";
    if (metadata.schema != nullptr) TreeLines(*metadata.schema, "", &out);
    if (!snapshot->txns().empty()) {
      SILT_ASSIGN_OR_RETURN(std::string txns, TxnView(table.get(), *snapshot, "text"));
      out += txns;
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    return Status::OK();
  }

 private:
  CLI::App* sub_ = nullptr;
  std::string table_path_;
  int64_t version_ = -1;
  std::string format_ = "text";
};

}  // namespace

std::unique_ptr<Command> AddDescribeCommand(CLI::App* app) {
  return std::make_unique<DescribeCommand>(app);
}

}  // namespace silt::cli
