// TimeZone: a Spark session or function time zone ("UTC", "+02:00",
// "GMT+8", "America/Los_Angeles") over the tz database (cctz reads
// /usr/share/zoneinfo, Debian's tzdata).
//
// Conversions follow java.time as Spark uses it: a UTC instant has one
// offset; a local date-time in a DST gap is moved forward by the gap, and
// one in an overlap takes the earlier offset (ZonedDateTime.of).
//
// Thread safety: immutable after Load; share freely.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "silt/base/result.h"

namespace silt::expr {

class TimeZone {
 public:
  // Errors: InvalidArgument naming the zone when it is neither a region in
  // the tz database nor a fixed offset.
  static Result<std::shared_ptr<const TimeZone>> Load(std::string_view name);
  static const std::shared_ptr<const TimeZone>& Utc();

  ~TimeZone();
  const std::string& name() const { return name_; }
  // True for UTC and fixed offsets (no transitions).
  bool is_fixed() const { return fixed_; }
  // The offset in seconds of a fixed zone (0 for UTC). REQUIRES: is_fixed().
  int32_t fixed_offset_seconds() const { return fixed_offset_; }

  // Offset (local - UTC) in seconds at the UTC instant `utc_micros`.
  int32_t OffsetSecondsAt(int64_t utc_micros) const;
  // The UTC instant of the local date-time `local_micros` (micros since the
  // local epoch), resolving gaps and overlaps as java.time does.
  int64_t LocalToUtc(int64_t local_micros) const;
  // Saturates at the int64 range.
  int64_t UtcToLocal(int64_t utc_micros) const {
    int64_t local = 0;
    const int64_t shift = int64_t{OffsetSecondsAt(utc_micros)} * 1000000;
    if (__builtin_add_overflow(utc_micros, shift, &local)) {
      return shift > 0 ? INT64_MAX : INT64_MIN;
    }
    return local;
  }

  struct Impl;

 private:
  TimeZone() = default;
  std::string name_;
  bool fixed_ = true;
  int32_t fixed_offset_ = 0;
  std::unique_ptr<Impl> impl_;
};

using TimeZonePtr = std::shared_ptr<const TimeZone>;

struct EvalOptions;
// options.session_zone, or a fixed zone of options.session_zone_offset_micros.
TimeZonePtr SessionTimeZone(const EvalOptions& options);

// columnar::ParseTimestamp with zone-less text read as a local date-time in
// `zone` (with its DST rules); text with an explicit zone keeps it.
std::optional<int64_t> ParseTimestampInZone(std::string_view text, const TimeZone& zone);

// `parse(text, offset)` for a parser that reads zone-less text at a fixed
// offset (micros) and text with a zone at that zone: the result with
// zone-less text read in `zone`. Parses twice for zones with transitions.
template <typename Parse>
std::optional<int64_t> ParseInZone(const TimeZone& zone, Parse&& parse) {
  if (zone.is_fixed()) return parse(int64_t{zone.fixed_offset_seconds()} * 1000000);
  std::optional<int64_t> at_utc = parse(int64_t{0});
  if (!at_utc) return at_utc;
  // Zone-less text moves with the default offset; text with a zone doesn't.
  std::optional<int64_t> shifted = parse(int64_t{1});
  if (shifted && *shifted == *at_utc - 1) return zone.LocalToUtc(*at_utc);
  return at_utc;
}

}  // namespace silt::expr
