#include "silt/expr/value/time_zone.h"

#include <cctz/civil_time.h>
#include <cctz/time_zone.h>

#include <chrono>
#include <cstdlib>

#include "silt/columnar/temporal.h"
#include "silt/expr/eval_options.h"

namespace silt::expr {

struct TimeZone::Impl {
  cctz::time_zone zone;
};

TimeZone::~TimeZone() = default;

namespace {

constexpr int64_t kMicros = 1000000;

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// "+HH", "+HH:mm", "+HHmm", "+H", "+HH:mm:ss" after an optional UTC/GMT/UT
// prefix; nullopt when `text` is not such an offset.
std::optional<int32_t> ParseFixedOffset(std::string_view text) {
  for (std::string_view prefix : {"UTC", "GMT", "UT"}) {
    if (text.size() > prefix.size() && text.substr(0, prefix.size()) == prefix &&
        (text[prefix.size()] == '+' || text[prefix.size()] == '-')) {
      text.remove_prefix(prefix.size());
      break;
    }
  }
  if (text.empty() || (text[0] != '+' && text[0] != '-')) return std::nullopt;
  int sign = text[0] == '-' ? -1 : 1;
  text.remove_prefix(1);
  int parts[3] = {0, 0, 0};
  int part = 0;
  int digits = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == ':') {
      if (digits == 0 || part == 2) return std::nullopt;
      ++part;
      digits = 0;
      continue;
    }
    if (c < '0' || c > '9') return std::nullopt;
    if (digits == 2) {
      // "+0530": no colon, two-digit groups.
      if (part == 2) return std::nullopt;
      ++part;
      digits = 0;
    }
    parts[part] = parts[part] * 10 + (c - '0');
    ++digits;
  }
  if (digits == 0 || parts[0] > 18 || parts[1] > 59 || parts[2] > 59) return std::nullopt;
  return sign * (parts[0] * 3600 + parts[1] * 60 + parts[2]);
}

}  // namespace

Result<TimeZonePtr> TimeZone::Load(std::string_view name) {
  auto tz = std::shared_ptr<TimeZone>(new TimeZone());
  tz->name_ = std::string(name);
  if (name == "UTC" || name == "Z" || name == "GMT" || name == "UT" || name == "Etc/UTC") {
    return TimeZonePtr(tz);
  }
  if (std::optional<int32_t> offset = ParseFixedOffset(name)) {
    tz->fixed_offset_ = *offset;
    return TimeZonePtr(tz);
  }
  // Region ids only: letters, digits, '/', '_', '-', '+'; no path tricks.
  if (name.empty() || name.find("..") != std::string_view::npos || name[0] == '/') {
    return Status::InvalidArgument("Unknown time zone '", name, "'");
  }
  auto impl = std::make_unique<Impl>();
  if (!cctz::load_time_zone(std::string(name), &impl->zone)) {
    return Status::InvalidArgument("Unknown time zone '", name,
                                   "' (expected a tz database region such as "
                                   "'America/Los_Angeles' or an offset such as '+02:00')");
  }
  tz->fixed_ = false;
  tz->impl_ = std::move(impl);
  return TimeZonePtr(tz);
}

const TimeZonePtr& TimeZone::Utc() {
  static const TimeZonePtr utc = *Load("UTC");
  return utc;
}

TimeZonePtr SessionTimeZone(const EvalOptions& options) {
  if (options.session_zone != nullptr) return options.session_zone;
  if (options.session_zone_offset_micros == 0) return TimeZone::Utc();
  int64_t secs = options.session_zone_offset_micros / kMicros;
  int64_t a = secs < 0 ? -secs : secs;
  std::string text = std::string(secs < 0 ? "-" : "+") + std::to_string(a / 3600) + ":" +
                     std::to_string(a / 60 % 60 / 10) + std::to_string(a / 60 % 10) + ":" +
                     std::to_string(a % 60 / 10) + std::to_string(a % 10);
  Result<TimeZonePtr> zone = TimeZone::Load(text);
  return zone.ok() ? *zone : TimeZone::Utc();
}

std::optional<int64_t> ParseTimestampInZone(std::string_view text, const TimeZone& zone) {
  return ParseInZone(zone,
                     [text](int64_t offset) { return columnar::ParseTimestamp(text, offset); });
}

int32_t TimeZone::OffsetSecondsAt(int64_t utc_micros) const {
  if (fixed_) return fixed_offset_;
  auto tp = std::chrono::time_point<std::chrono::system_clock, std::chrono::seconds>(
      std::chrono::seconds(FloorDiv(utc_micros, kMicros)));
  return impl_->zone.lookup(tp).offset;
}

int64_t TimeZone::LocalToUtc(int64_t local_micros) const {
  if (fixed_) return local_micros - int64_t{fixed_offset_} * kMicros;
  int64_t secs = FloorDiv(local_micros, kMicros);
  int64_t frac = local_micros - secs * kMicros;
  cctz::civil_second cs = cctz::civil_second(1970, 1, 1, 0, 0, 0) + secs;
  cctz::time_zone::civil_lookup cl = impl_->zone.lookup(cs);
  // SKIPPED: `pre` is the local time read with the offset before the gap,
  // which is the local time moved forward by the gap (java.time). REPEATED:
  // `pre` is the earlier offset.
  auto tp = cl.pre;
  return static_cast<int64_t>(tp.time_since_epoch().count()) * kMicros + frac;
}

}  // namespace silt::expr
