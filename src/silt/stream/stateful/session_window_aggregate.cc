#include "silt/stream/stateful/session_window_aggregate.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <map>
#include <string_view>
#include <vector>

#include "silt/base/strings.h"
#include "silt/columnar/builder.h"
#include "silt/exec/streaming_aggregate.h"
#include "silt/expr/expression.h"
#include "silt/expr/parse/ast.h"
#include "silt/expr/parse/lexer.h"
#include "silt/expr/parse/parser.h"
#include "silt/stream/stateful/aggregate_items.h"

namespace silt::stream {

namespace {

using columnar::ColumnPtr;
using columnar::DataType;
using columnar::RecordBatchPtr;
using columnar::SchemaPtr;
using columnar::TypePtr;
using expr::NodeKind;

constexpr char kSessionTag = 'S';
constexpr char kIndexTag = 'E';
constexpr size_t kLengthBytes = 4;

const expr::CallNode* AsSessionWindow(const expr::Node& node) {
  const expr::Node& inner = Unalias(node);
  if (inner.kind() != NodeKind::kCall) return nullptr;
  const auto& call = static_cast<const expr::CallNode&>(inner);
  return EqualsIgnoreCase(call.name(), "session_window") ? &call : nullptr;
}

// Spark's string -> interval cast for the units a session gap uses:
// "30 seconds", "interval 1 minute 30 seconds", "-5 seconds". nullopt when
// the text does not parse (Spark's cast gives NULL) or names months or
// years, which have no fixed length.
std::optional<int64_t> ParseGapMicros(std::string_view text) {
  std::string lower = AsciiLower(std::string(text));
  std::string_view s = lower;
  auto skip_ws = [&] {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  };
  skip_ws();
  if (s.substr(0, 8) == "interval") {
    s.remove_prefix(8);
    skip_ws();
  }
  int64_t total = 0;
  bool any = false;
  while (true) {
    skip_ws();
    if (s.empty()) break;
    bool negative = false;
    if (s.front() == '-' || s.front() == '+') {
      negative = s.front() == '-';
      s.remove_prefix(1);
    }
    size_t digits = 0;
    while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9') ++digits;
    if (digits == 0 || digits > 15) return std::nullopt;
    const int64_t value = std::strtoll(std::string(s.substr(0, digits)).c_str(), nullptr, 10);
    s.remove_prefix(digits);
    skip_ws();
    size_t letters = 0;
    while (letters < s.size() && s[letters] >= 'a' && s[letters] <= 'z') ++letters;
    std::string unit(s.substr(0, letters));
    s.remove_prefix(letters);
    if (unit.size() > 1 && unit.back() == 's') unit.pop_back();
    int64_t unit_micros = 0;
    if (unit == "week") unit_micros = 7 * 86400000000LL;
    if (unit == "day") unit_micros = 86400000000LL;
    if (unit == "hour") unit_micros = 3600000000LL;
    if (unit == "minute") unit_micros = 60000000LL;
    if (unit == "second") unit_micros = 1000000LL;
    if (unit == "millisecond") unit_micros = 1000LL;
    if (unit == "microsecond") unit_micros = 1LL;
    if (unit_micros == 0) return std::nullopt;
    int64_t term = 0;
    if (__builtin_mul_overflow(value, unit_micros, &term)) return std::nullopt;
    if (__builtin_add_overflow(total, negative ? -term : term, &total)) return std::nullopt;
    any = true;
  }
  if (!any) return std::nullopt;
  return total;
}

void AppendLength(std::string* out, size_t n) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out->push_back(static_cast<char>((n >> shift) & 0xff));
  }
}

// 'S' | u32 length | group key | start: the session's entry.
std::string SessionKeyPrefix(std::string_view group) {
  std::string out(1, kSessionTag);
  AppendLength(&out, group.size());
  out.append(group);
  return out;
}

// A session of one group key: start and end (micros) and its partial
// aggregate (exec::StreamingAggregator's state).
struct Session {
  int64_t start = 0;
  int64_t end = 0;
  std::string state;
};

// A state entry's group key and session; Corruption when the bytes do not
// have the layout of a session entry ('S') or an index entry ('E').
struct ParsedKey {
  bool is_index = false;
  std::string_view group;
  int64_t start = 0;
  int64_t end = 0;  // index entries only
};

Result<ParsedKey> ParseStateKey(std::string_view key) {
  ParsedKey out;
  if (!key.empty() && key.front() == kIndexTag) {
    out.is_index = true;
    key.remove_prefix(1);
    if (key.size() < kEventTimeKeyPrefixBytes) {
      return Status::Corruption("a session index key of ", key.size() + 1, " bytes");
    }
    out.end = DecodeEventTimeKeyPrefix(key);
    key.remove_prefix(kEventTimeKeyPrefixBytes);
  } else if (!key.empty() && key.front() == kSessionTag) {
    key.remove_prefix(1);
  } else {
    return Status::Corruption("a session state key with an unknown tag");
  }
  if (key.size() < kLengthBytes) return Status::Corruption("a truncated session state key");
  size_t length = 0;
  for (size_t i = 0; i < kLengthBytes; ++i) {
    length = (length << 8) | static_cast<unsigned char>(key[i]);
  }
  key.remove_prefix(kLengthBytes);
  if (key.size() != length + kEventTimeKeyPrefixBytes) {
    return Status::Corruption("a session state key whose group key length ", length,
                              " does not match its size");
  }
  out.group = key.substr(0, length);
  out.start = DecodeEventTimeKeyPrefix(key.substr(length));
  return out;
}

Result<Session> ParseSessionValue(int64_t start, std::string_view value) {
  if (value.size() < kEventTimeKeyPrefixBytes) {
    return Status::Corruption("a session state value of ", value.size(), " bytes");
  }
  Session s;
  s.start = start;
  s.end = DecodeEventTimeKeyPrefix(value);
  s.state.assign(value.substr(kEventTimeKeyPrefixBytes));
  return s;
}

std::string SessionValue(const Session& s) { return EventTimeKeyPrefix(s.end) + s.state; }

std::string IndexKey(std::string_view group, const Session& s) {
  std::string out(1, kIndexTag);
  out += EventTimeKeyPrefix(s.end);
  AppendLength(&out, group.size());
  out.append(group);
  out += EventTimeKeyPrefix(s.start);
  return out;
}

// The interval field of a unit word (singular or plural, any case): 0..3
// for day (and week) .. second (and its fractions) of a day-time interval,
// 10 + 0..1 for year .. month of a year-month interval; -1 for anything else.
int IntervalField(std::string_view word) {
  std::string unit = AsciiLower(std::string(word));
  if (unit.size() > 1 && unit.back() == 's') unit.pop_back();
  if (unit == "year") return 10;
  if (unit == "month") return 11;
  if (unit == "week" || unit == "day") return 0;
  if (unit == "hour") return 1;
  if (unit == "minute") return 2;
  if (unit == "second" || unit == "millisecond" || unit == "microsecond") return 3;
  return -1;
}

// A session gap may be an interval, as Spark's SessionWindowing takes any
// CalendarIntervalType expression: CAST(<text> AS INTERVAL) is read as the
// text, which the gap parses as Spark's string -> interval cast does. An
// ANSI interval literal (INTERVAL 5 SECONDS, INTERVAL '5' SECOND, ...) is a
// DayTimeIntervalType or YearMonthIntervalType in Spark 3.5, which it
// refuses as a gap; so does silt, with Spark's message. Returns the key text
// to parse. Errors: InvalidArgument with Spark's message.
Result<std::string> SessionGapIntervalsAsText(const std::string& key) {
  if (AsciiLower(key).find("interval") == std::string::npos) return key;
  Result<std::vector<expr::Token>> tokens = expr::Tokenize(key);
  if (!tokens.ok()) return key;  // the parser reports it
  std::string out = key;
  int day_time[2] = {4, -1};    // smallest and largest field seen
  int year_month[2] = {2, -1};  // likewise, 0 year .. 1 month
  auto note = [&](int field) {
    int* range = field >= 10 ? year_month : day_time;
    const int f = field >= 10 ? field - 10 : field;
    range[0] = std::min(range[0], f);
    range[1] = std::max(range[1], f);
  };
  const std::vector<expr::Token>& t = *tokens;
  // Backwards, so replacing a token keeps the earlier positions valid.
  for (size_t i = t.size(); i-- > 0;) {
    if (t[i].kind != expr::TokenKind::kIdentifier || t[i].quoted || !t[i].IsKeyword("INTERVAL")) {
      continue;
    }
    if (i > 0 && t[i - 1].IsKeyword("AS")) {
      out.replace(static_cast<size_t>(t[i].position), t[i].text.size(), "STRING");
      continue;
    }
    // An interval literal: numbers, strings and unit words (and TO).
    for (size_t j = i + 1; j < t.size(); ++j) {
      if (t[j].kind == expr::TokenKind::kNumber || t[j].kind == expr::TokenKind::kMinus ||
          (t[j].kind == expr::TokenKind::kIdentifier && t[j].IsKeyword("TO"))) {
        continue;
      }
      if (t[j].kind == expr::TokenKind::kString) {
        std::string word;
        for (char c : t[j].text + " ") {
          if (std::isalpha(static_cast<unsigned char>(c))) {
            word.push_back(c);
          } else if (!word.empty()) {
            if (IntervalField(word) >= 0) note(IntervalField(word));
            word.clear();
          }
        }
        continue;
      }
      if (t[j].kind == expr::TokenKind::kIdentifier && !t[j].quoted &&
          IntervalField(t[j].text) >= 0) {
        note(IntervalField(t[j].text));
        continue;
      }
      break;
    }
  }
  if (day_time[1] >= 0) {
    return Status::InvalidArgument(
        "Gap duration expression used in session window must be CalendarIntervalType, but got "
        "DayTimeIntervalType(",
        day_time[0], ",", day_time[1],
        "). (Spark 3.5's ANSI interval literals are not session gaps: write the gap as a string "
        "such as '5 seconds', or CAST('5 seconds' AS INTERVAL))");
  }
  if (year_month[1] >= 0) {
    return Status::InvalidArgument(
        "Gap duration expression used in session window must be CalendarIntervalType, but got "
        "YearMonthIntervalType(",
        year_month[0], ",", year_month[1], ").");
  }
  return out;
}

class SessionWindowAggregate final : public StoreBackedOperator {
 public:
  // Each session has an index entry beside it (by end time).
  SessionWindowAggregate() : StoreBackedOperator(/*entries_per_row=*/2) {}

  Status Init(const TransformStep& step, const SchemaPtr& input, const expr::EvalOptions& options,
              OutputMode mode, std::unique_ptr<state::StateStore> store) {
    const std::string path = step.key_path + ".groupBy";
    mode_ = mode;
    store_ = std::move(store);
    std::vector<expr::NodePtr> keys;
    for (size_t k = 0; k < step.exprs.size(); ++k) {
      const std::string key_path = path + ".keys[" + std::to_string(k) + "]";
      Result<std::string> text = SessionGapIntervalsAsText(step.exprs[k]);
      if (!text.ok()) return text.status().WithContext(key_path);
      Result<expr::NodePtr> node = expr::ParseNode(*text);
      if (!node.ok()) return Status::InvalidArgument(key_path, ": ", node.status().message());
      if (const expr::CallNode* call = AsSessionWindow(**node)) {
        if (session_index_ >= 0) {
          return Status::InvalidArgument(key_path,
                                         ": only one session_window key is supported (Spark's "
                                         "Multiple time/session window expressions)");
        }
        if (call->args().size() != 2 || call->star_arg()) {
          return Status::InvalidArgument(key_path,
                                         ": session_window takes (<timestamp column>, <gap>), e.g. "
                                         "session_window(ts, '30 seconds')");
        }
        session_index_ = static_cast<int>(k);
        SILT_RETURN_NOT_OK_CTX(BindSession(*call, input, options), key_path);
      }
      keys.push_back(std::move(*node));
    }
    if (session_index_ < 0) {
      return Status::InvalidArgument(path, ": no session_window key");
    }
    if (keys.size() < 2) {
      // Spark: "Grouping key must be specified when using sessionWindow".
      return Status::InvalidArgument(
          path, ": a session_window needs another key to group by (Spark groups sessions per key)");
    }
    if (mode_ == OutputMode::kUpdate) {
      // Spark 3.5's UnsupportedOperationChecker, word for word.
      return Status::InvalidArgument(
          path,
          ": Update output mode not supported for session window on streaming "
          "DataFrames/DataSets (use outputMode append or complete)");
    }
    if (mode_ == OutputMode::kAppend && !event_time_) {
      return Status::InvalidArgument(
          path,
          ": Append output mode not supported when there are streaming aggregations on streaming "
          "DataFrames/DataSets without watermark (put the watermark on the time column of "
          "session_window, or use outputMode complete)");
    }
    std::vector<TypePtr> key_types;
    std::vector<TypePtr> other_types;
    for (size_t k = 0; k < keys.size(); ++k) {
      if (static_cast<int>(k) == session_index_) {
        key_types.push_back(session_type_);
        const expr::Node& key = *keys[k];
        names_.push_back(key.kind() == NodeKind::kAlias ? key.OutputName() : "session_window");
        continue;
      }
      Result<expr::BoundExpressionPtr> bound = expr::Bind(*keys[k], input, options);
      if (!bound.ok()) {
        return Status::InvalidArgument(path, ".keys[", k, "]: ", bound.status().message());
      }
      key_types.push_back((*bound)->type());
      other_types.push_back((*bound)->type());
      other_exprs_.push_back(std::move(*bound));
      names_.push_back(keys[k]->OutputName());
    }
    std::vector<exec::AggregateSpec> specs;
    for (size_t a = 0; a < step.aggs.size(); ++a) {
      const std::string agg_path = path + ".agg[" + std::to_string(a) + "]";
      SILT_ASSIGN_OR_RETURN(AggItem item, ParseAggItem(step.aggs[a], agg_path));
      expr::BoundExpressionPtr arg;
      if (item.arg != nullptr) {
        Result<expr::BoundExpressionPtr> bound = expr::Bind(*item.arg, input, options);
        if (!bound.ok()) return Status::InvalidArgument(agg_path, ": ", bound.status().message());
        arg = std::move(*bound);
        item.spec.arg_type = arg->type();
      }
      arg_exprs_.push_back(std::move(arg));
      specs.push_back(item.spec);
      names_.push_back(item.name);
    }
    Result<exec::KeyCodec> others = exec::KeyCodec::Make(other_types);
    if (!others.ok()) return Status::InvalidArgument(path, ": ", others.status().message());
    others_.emplace(std::move(*others));
    Result<std::unique_ptr<exec::StreamingAggregator>> agg =
        exec::StreamingAggregator::Make(key_types, specs);
    if (!agg.ok()) return Status::InvalidArgument(path, ": ", agg.status().message());
    agg_ = std::move(*agg);
    SILT_ASSIGN_OR_RETURN(RecordBatchPtr empty, agg_->Finalize({}, {}, names_));
    // The keys keep the event-time mark, as Spark's grouping attributes do.
    std::vector<columnar::Field> fields = empty->schema->fields();
    for (size_t k = 0; k < keys.size() && k < fields.size(); ++k) {
      if (std::optional<int64_t> delay = ExpressionWatermarkDelay(*keys[k], *input)) {
        fields[k].metadata_json = WithWatermarkDelay("{}", delay);
      }
    }
    schema_ = DataType::Struct(std::move(fields));
    progress_.operator_name = "sessionWindowStateStoreSaveExec";
    return Status::OK();
  }

  const SchemaPtr& output_schema() const override { return schema_; }

  Status StartBatch(const StatefulBatch& batch) override {
    agg_->Reset();
    return LoadForBatch(batch);
  }

  Result<RecordBatchPtr> Process(const RecordBatchPtr& chunk,
                                 const expr::EvalContext& ctx) override {
    const auto start = std::chrono::steady_clock::now();
    if (chunk->num_rows > 0) SILT_RETURN_NOT_OK(Consume(*chunk, ctx));
    updates_time_ += std::chrono::steady_clock::now() - start;
    return RecordBatchPtr();
  }

  Result<RecordBatchPtr> FinishBatch() override {
    auto start = std::chrono::steady_clock::now();
    SILT_ASSIGN_OR_RETURN(auto batch_sessions, BatchSessions());
    agg_->Reset();
    // In every output mode: Spark's SessionWindowStateStoreRestoreExec
    // filters before the mode matters (unlike StateStoreSaveExec).
    const bool drops_late = event_time_;
    const int64_t late_micros = batch_.late_watermark_ms * 1000;
    std::vector<std::string> emit_groups;
    std::vector<Session> emitted;
    for (auto& [group, sessions] : batch_sessions) {
      std::vector<Session> kept;
      for (Session& s : sessions) {
        if (drops_late && s.end <= late_micros) {
          ++current_.num_rows_dropped_by_watermark;
        } else {
          kept.push_back(std::move(s));
        }
      }
      if (kept.empty()) continue;
      SILT_RETURN_NOT_OK(UpdateGroup(group, std::move(kept)));
    }
    updates_time_ += std::chrono::steady_clock::now() - start;
    current_.all_updates_time_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(updates_time_).count();

    start = std::chrono::steady_clock::now();
    if (mode_ == OutputMode::kComplete) {
      SILT_RETURN_NOT_OK(store_->Scan(std::string(1, kSessionTag), std::string(1, kSessionTag + 1),
                                      [&](std::string_view k, std::string_view v) -> Result<bool> {
                                        SILT_ASSIGN_OR_RETURN(ParsedKey key, ParseStateKey(k));
                                        SILT_ASSIGN_OR_RETURN(Session s,
                                                              ParseSessionValue(key.start, v));
                                        emit_groups.emplace_back(key.group);
                                        emitted.push_back(std::move(s));
                                        return true;
                                      }));
    } else if (event_time_) {
      SILT_RETURN_NOT_OK(Evict(&emit_groups, &emitted));
    }
    current_.all_removals_time_ms = ElapsedMs(start);
    if (emitted.empty()) return RecordBatchPtr();
    Result<RecordBatchPtr> out = Rows(emit_groups, emitted);
    if (!out.ok()) return out.status().WithContext("the stored sessions");
    return out;
  }

  void Abort() override {
    agg_->Reset();
    store_->Abort();
  }

  Result<RecordBatchPtr> DecodeState(const std::vector<std::string_view>& keys,
                                     const std::vector<std::string_view>& values) const override {
    std::vector<std::string> groups;
    std::vector<Session> sessions;
    for (size_t i = 0; i < keys.size(); ++i) {
      SILT_ASSIGN_OR_RETURN(ParsedKey key, ParseStateKey(keys[i]));
      if (key.is_index) continue;
      SILT_ASSIGN_OR_RETURN(Session s, ParseSessionValue(key.start, values[i]));
      groups.emplace_back(key.group);
      sessions.push_back(std::move(s));
    }
    return Rows(groups, sessions);
  }

  bool WantsNoDataBatch(int64_t next_watermark_ms) const override {
    return ran_batch_ && mode_ != OutputMode::kComplete && event_time_ &&
           next_watermark_ms > batch_.eviction_watermark_ms;
  }

 private:
  Status BindSession(const expr::CallNode& call, const SchemaPtr& input,
                     const expr::EvalOptions& options) {
    SILT_ASSIGN_OR_RETURN(time_expr_, expr::Bind(*call.args()[0], input, options));
    const columnar::TypeId time_type = time_expr_->type()->id();
    if (time_type != columnar::TypeId::kTimestamp && time_type != columnar::TypeId::kTimestampNtz) {
      return Status::InvalidArgument("the time column of session_window must be a TIMESTAMP, not ",
                                     time_expr_->type()->ToDdl());
    }
    SILT_ASSIGN_OR_RETURN(gap_expr_, expr::Bind(*call.args()[1], input, options));
    if (gap_expr_->type()->id() != columnar::TypeId::kString) {
      return Status::InvalidArgument(
          "the gap of session_window must be an interval STRING such as '30 seconds' (or a "
          "CASE of them), not ",
          gap_expr_->type()->ToDdl());
    }
    std::vector<columnar::Field> fields(2);
    fields[0].name = "start";
    fields[0].type = time_expr_->type();
    fields[1].name = "end";
    fields[1].type = time_expr_->type();
    session_type_ = DataType::Struct(std::move(fields));
    event_time_ = ExpressionWatermarkDelay(call, *input).has_value();
    return Status::OK();
  }

  // Spark's SessionWindowing: [t, t + gap), rows with a NULL time, a
  // NULL or unparsable gap or end <= start filtered out.
  Status Consume(const columnar::RecordBatch& chunk, const expr::EvalContext& ctx) {
    SILT_ASSIGN_OR_RETURN(ColumnPtr times, time_expr_->Evaluate(chunk, ctx));
    SILT_ASSIGN_OR_RETURN(ColumnPtr gaps, gap_expr_->Evaluate(chunk, ctx));
    std::vector<int64_t> kept;
    columnar::ColumnBuilder session(session_type_);
    std::string last_gap_text;
    std::optional<int64_t> last_gap;
    bool have_last = false;
    for (int64_t row = 0; row < chunk.num_rows; ++row) {
      if (times->IsNull(row) || gaps->IsNull(row)) continue;
      const std::string_view text = gaps->StringValue(row);
      if (!have_last || text != last_gap_text) {
        last_gap_text.assign(text);
        last_gap = ParseGapMicros(text);
        have_last = true;
      }
      if (!last_gap) continue;
      const int64_t start = times->Value<int64_t>(row);
      int64_t end = 0;
      if (__builtin_add_overflow(start, *last_gap, &end) || end <= start) continue;
      kept.push_back(row);
      session.child(0)->Append<int64_t>(start);
      session.child(1)->Append<int64_t>(end);
      session.AppendValid();
    }
    if (kept.empty()) return Status::OK();
    const bool all = static_cast<int64_t>(kept.size()) == chunk.num_rows;
    auto take = [&](ColumnPtr column) {
      return all ? column : columnar::TakeColumn(*column, kept);
    };
    std::vector<ColumnPtr> keys;
    size_t other = 0;
    ColumnPtr session_column = session.Finish();
    for (size_t k = 0; k < other_exprs_.size() + 1; ++k) {
      if (static_cast<int>(k) == session_index_) {
        keys.push_back(session_column);
        continue;
      }
      SILT_ASSIGN_OR_RETURN(ColumnPtr column, other_exprs_[other++]->Evaluate(chunk, ctx));
      keys.push_back(take(std::move(column)));
    }
    std::vector<ColumnPtr> args;
    for (const expr::BoundExpressionPtr& e : arg_exprs_) {
      ColumnPtr column;
      if (e != nullptr) {
        SILT_ASSIGN_OR_RETURN(column, e->Evaluate(chunk, ctx));
        column = take(std::move(column));
      }
      args.push_back(std::move(column));
    }
    return agg_->Consume(keys, args, static_cast<int64_t>(kept.size()));
  }

  // The batch's groups merged into sessions per group key (Spark's
  // MergingSessionsExec before the state is read), each list by start.
  Result<std::map<std::string, std::vector<Session>>> BatchSessions() const {
    std::map<std::string, std::vector<Session>> out;
    const int64_t groups = agg_->num_groups();
    if (groups == 0) return out;
    std::vector<std::string_view> encoded;
    for (int64_t g = 0; g < groups; ++g) encoded.push_back(agg_->group_key(g));
    SILT_ASSIGN_OR_RETURN(std::vector<ColumnPtr> columns, agg_->key_codec().Decode(encoded));
    const ColumnPtr session = columns[static_cast<size_t>(session_index_)];
    columns.erase(columns.begin() + session_index_);
    std::vector<std::string> group_keys;
    others_->EncodeRows(columns, groups, &group_keys);
    for (int64_t g = 0; g < groups; ++g) {
      Session s;
      s.start = session->children[0]->Value<int64_t>(g);
      s.end = session->children[1]->Value<int64_t>(g);
      agg_->SerializeState(g, &s.state);
      out[group_keys[static_cast<size_t>(g)]].push_back(std::move(s));
    }
    for (auto& [group, sessions] : out) {
      SILT_ASSIGN_OR_RETURN(sessions, Merge(std::move(sessions)));
    }
    return out;
  }

  // Sorts by start and merges sessions that overlap or touch.
  Result<std::vector<Session>> Merge(std::vector<Session> sessions) const {
    std::stable_sort(sessions.begin(), sessions.end(), [](const Session& a, const Session& b) {
      return a.start != b.start ? a.start < b.start : a.end < b.end;
    });
    std::vector<Session> out;
    for (Session& s : sessions) {
      if (!out.empty() && s.start <= out.back().end) {
        Session& cur = out.back();
        cur.end = std::max(cur.end, s.end);
        std::string merged;
        SILT_RETURN_NOT_OK(agg_->MergeStates(cur.state, s.state, &merged));
        cur.state = std::move(merged);
      } else {
        out.push_back(std::move(s));
      }
    }
    return out;
  }

  // Merges a group key's batch sessions with its stored ones and writes the
  // result back (Spark's updateSessions: every session of the key counts as
  // updated; stored sessions merged away are removed).
  Status UpdateGroup(const std::string& group, std::vector<Session> batch) {
    const std::string prefix = SessionKeyPrefix(group);
    std::vector<Session> stored;
    SILT_RETURN_NOT_OK(
        store_->Scan(prefix, prefix + std::string(kEventTimeKeyPrefixBytes + 1, '\xff'),
                     [&](std::string_view k, std::string_view v) -> Result<bool> {
                       SILT_ASSIGN_OR_RETURN(ParsedKey key, ParseStateKey(k));
                       SILT_ASSIGN_OR_RETURN(Session s, ParseSessionValue(key.start, v));
                       stored.push_back(std::move(s));
                       return true;
                     }));
    std::map<int64_t, const Session*> stored_by_start;
    for (const Session& s : stored) stored_by_start[s.start] = &s;
    // Stored sessions come first among equal starts: their rows are older.
    std::vector<Session> all = stored;
    for (Session& s : batch) all.push_back(std::move(s));
    SILT_ASSIGN_OR_RETURN(std::vector<Session> merged, Merge(std::move(all)));
    std::map<int64_t, const Session*> merged_by_start;
    for (const Session& s : merged) merged_by_start[s.start] = &s;
    for (const Session& old : stored) {
      auto it = merged_by_start.find(old.start);
      if (it == merged_by_start.end()) {
        SILT_RETURN_NOT_OK(store_->Delete(prefix + EventTimeKeyPrefix(old.start)));
        ++current_.num_rows_removed;
      }
      if (it == merged_by_start.end() || it->second->end != old.end) {
        SILT_RETURN_NOT_OK(store_->Delete(IndexKey(group, old)));
      }
    }
    for (const Session& s : merged) {
      ++current_.num_rows_updated;
      auto it = stored_by_start.find(s.start);
      const bool unchanged =
          it != stored_by_start.end() && it->second->end == s.end && it->second->state == s.state;
      if (unchanged) continue;
      SILT_RETURN_NOT_OK(store_->Put(prefix + EventTimeKeyPrefix(s.start), SessionValue(s)));
      if (it == stored_by_start.end() || it->second->end != s.end) {
        SILT_RETURN_NOT_OK(store_->Put(IndexKey(group, s), ""));
      }
    }
    return Status::OK();
  }

  // Removes the sessions whose end is <= the eviction watermark (a range
  // of the index), collecting them (append mode emits them).
  Status Evict(std::vector<std::string>* groups, std::vector<Session>* sessions) {
    const int64_t limit_micros = batch_.eviction_watermark_ms * 1000;
    if (limit_micros == std::numeric_limits<int64_t>::max()) return Status::OK();
    std::vector<std::string> index_keys;
    SILT_RETURN_NOT_OK(store_->Scan(
        std::string(1, kIndexTag), std::string(1, kIndexTag) + EventTimeKeyPrefix(limit_micros + 1),
        [&](std::string_view k, std::string_view) -> Result<bool> {
          index_keys.emplace_back(k);
          return true;
        }));
    for (const std::string& k : index_keys) {
      SILT_ASSIGN_OR_RETURN(ParsedKey key, ParseStateKey(k));
      const std::string session_key = SessionKeyPrefix(key.group) + EventTimeKeyPrefix(key.start);
      SILT_ASSIGN_OR_RETURN(std::optional<std::string> value, store_->Get(session_key));
      if (!value) return Status::Corruption("a session index entry without its session");
      SILT_ASSIGN_OR_RETURN(Session s, ParseSessionValue(key.start, *value));
      groups->emplace_back(key.group);
      sessions->push_back(std::move(s));
      SILT_RETURN_NOT_OK(store_->Delete(session_key));
      SILT_RETURN_NOT_OK(store_->Delete(k));
    }
    current_.num_rows_removed += static_cast<int64_t>(index_keys.size());
    return Status::OK();
  }

  // Output rows: the keys in step order (the session as struct<start, end>),
  // then the aggregates' results.
  Result<RecordBatchPtr> Rows(const std::vector<std::string>& groups,
                              const std::vector<Session>& sessions) const {
    std::vector<std::string_view> group_views(groups.begin(), groups.end());
    SILT_ASSIGN_OR_RETURN(std::vector<ColumnPtr> columns, others_->Decode(group_views));
    columnar::ColumnBuilder session(session_type_);
    for (const Session& s : sessions) {
      session.child(0)->Append<int64_t>(s.start);
      session.child(1)->Append<int64_t>(s.end);
      session.AppendValid();
    }
    columns.insert(columns.begin() + session_index_, session.Finish());
    std::vector<std::string> keys;
    agg_->key_codec().EncodeRows(columns, static_cast<int64_t>(sessions.size()), &keys);
    std::vector<std::string_view> key_views(keys.begin(), keys.end());
    std::vector<std::string_view> states;
    for (const Session& s : sessions) states.push_back(s.state);
    return agg_->Finalize(key_views, states, names_);
  }

  OutputMode mode_ = OutputMode::kAppend;
  int session_index_ = -1;
  expr::BoundExpressionPtr time_expr_;
  expr::BoundExpressionPtr gap_expr_;
  TypePtr session_type_;
  bool event_time_ = false;  // the watermark is on the session's time column
  std::vector<expr::BoundExpressionPtr> other_exprs_;
  std::vector<expr::BoundExpressionPtr> arg_exprs_;  // null for count(*)
  std::vector<std::string> names_;
  std::optional<exec::KeyCodec> others_;  // the group key: the keys but the session
  std::unique_ptr<exec::StreamingAggregator> agg_;
  SchemaPtr schema_;
};

}  // namespace

bool HasSessionWindowKey(const TransformStep& step) {
  for (const std::string& key : step.exprs) {
    Result<std::string> text = SessionGapIntervalsAsText(key);
    // An interval gap Spark refuses: the session window reports it.
    if (!text.ok()) return true;
    Result<expr::NodePtr> node = expr::ParseNode(*text);
    if (node.ok() && AsSessionWindow(**node) != nullptr) return true;
  }
  return false;
}

Result<std::unique_ptr<StatefulOperator>> MakeSessionWindowAggregate(
    const TransformStep& step, const SchemaPtr& input, const expr::EvalOptions& options,
    OutputMode mode, std::unique_ptr<state::StateStore> store) {
  auto op = std::make_unique<SessionWindowAggregate>();
  SILT_RETURN_NOT_OK(op->Init(step, input, options, mode, std::move(store)));
  return std::unique_ptr<StatefulOperator>(std::move(op));
}

}  // namespace silt::stream
