// The embedded objects of a from_json STRING field, handed to the
// get_json_object paths over that field (decision 197): the seed job's
// from_json reads its envelope's `payload` string, and eight `$.name` paths
// then read the same payload again. When the flat scanner decodes such a
// string it can read the object inside in the same pass
// (FlatObjectScanner::set_embedded_key); JsonDecoder keeps those members
// per row in an EmbeddedObjectIndex, and JsonMultiPathEvaluator, given the
// decoded column, writes its `$.name` results from them instead of
// scanning the text a second time.
//
// The two meet through a per-thread table (EmbeddedObjects::ForThread())
// keyed by the identity of the decoded column's buffers (offsets and
// data), so no planner rule across transform steps is needed and a column
// that is not the decoder's (another batch, filtered or copied rows) never
// matches. Results cannot differ: an index row holds exactly the members
// FlatObjectScanner::Scan() gives for that row's text (the scanner's
// embedded contract), and the evaluator writes them as it writes a scanned
// row. The decoder reads embedded objects only for a field an evaluator
// has asked for (FieldDemand), so a job that never calls get_json_object
// on a from_json field pays nothing but one table entry per batch.
//
// Thread safety: the table is per thread; a decoder and an evaluator on
// different threads never meet (the evaluator then scans, as before).
// Ownership: the table holds weak references to the column's buffers (it
// never keeps a batch alive) and a shared reference to the index.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "silt/base/buffer.h"
#include "silt/columnar/column.h"
#include "silt/json/flat_object_internal.h"

namespace silt::json::internal {

// Whether some evaluator wants a decoder's field read with its embedded
// objects (set by the evaluator, read by the decoder at its next batch).
struct FieldDemand {
  std::atomic<bool> wanted{false};
};

// The embedded objects of one decoded STRING column, by row.
class EmbeddedObjectIndex {
 public:
  void Clear() {
    rows_.clear();
    members_.clear();
  }
  // Adds row `row` (REQUIRES: above every row added since Clear()), whose
  // text `text` holds an embedded object with `members` (views into
  // `text`). False, with nothing added, when the text is too long for the
  // index's 32-bit offsets.
  bool AddRow(int64_t row, std::string_view text, const std::vector<FlatMember>& members);

  // Walks the rows in increasing order.
  class Reader {
   public:
    explicit Reader(const EmbeddedObjectIndex& index) : index_(index) {}
    // When row `row` of a column is indexed and its text is `text` (same
    // length as the indexed text: a guard, the column's buffers are the
    // indexed ones): true, with *members the row's members as views into
    // `text`. REQUIRES: rows asked in increasing order.
    bool Members(int64_t row, std::string_view text, std::vector<FlatMember>* members);

   private:
    const EmbeddedObjectIndex& index_;
    size_t next_ = 0;
  };

 private:
  struct Row {
    int64_t row;
    uint32_t begin;  // in members_
    uint32_t count;
    uint32_t text_size;
  };
  // A FlatMember with its views as offsets into its row's text.
  struct Member {
    uint32_t key_offset;
    uint32_t key_size;
    uint32_t text_offset;
    uint32_t text_size;
    int64_t int_value;
    double double_value;
    FlatKind kind;
  };
  std::vector<Row> rows_;
  std::vector<Member> members_;
};

// The per-thread table of decoded columns and their indexes.
class EmbeddedObjects {
 public:
  static EmbeddedObjects& ForThread();

  // Records that `column` (a decoded STRING field; its offsets and data
  // buffers identify it) is the field `demand` stands for, with `index`
  // (null when the field was not read with its embedded objects). Replaces
  // the previous entry of `demand`.
  void Publish(const std::shared_ptr<FieldDemand>& demand, const columnar::Column& column,
               std::shared_ptr<const EmbeddedObjectIndex> index);
  // Drops the entry of `demand` (its index is then the decoder's alone).
  void Withdraw(const FieldDemand* demand);

  // For a column with the buffers of a published one (alive) and no more
  // rows: its index, or null. A published column without an index gets its
  // demand set, so that its decoder reads the next batch's embedded objects.
  std::shared_ptr<const EmbeddedObjectIndex> Find(const columnar::Column& column);

 private:
  struct Entry {
    std::shared_ptr<FieldDemand> demand;
    const Buffer* offsets = nullptr;
    const Buffer* data = nullptr;
    std::weak_ptr<Buffer> offsets_alive;
    std::weak_ptr<Buffer> data_alive;
    int64_t length = 0;
    std::shared_ptr<const EmbeddedObjectIndex> index;
  };
  // A few decoders per thread: a vector searched in full.
  std::vector<Entry> entries_;
};

}  // namespace silt::json::internal
