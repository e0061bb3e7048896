//! Calendar time in UTC from a Unix time, through the `jiff` date crate: one place for every
//! time gpufleet prints.

use jiff::Timestamp;
use jiff::tz::TimeZone;

/// `(year, month, day, hour, minute, second, millisecond)` in UTC of a Unix time in ms. Times
/// past the calendar's end (year 9999) read as its last instant.
pub fn utc_parts(unix_ms: u64) -> (i64, u32, u32, u32, u32, u32, u32) {
    let at = i64::try_from(unix_ms)
        .ok()
        .and_then(|ms| Timestamp::from_millisecond(ms).ok())
        .unwrap_or(Timestamp::MAX);
    let t = TimeZone::UTC.to_datetime(at);
    let part = |n: i16| u32::try_from(n).unwrap_or(0);
    (
        i64::from(t.year()),
        part(t.month().into()),
        part(t.day().into()),
        part(t.hour().into()),
        part(t.minute().into()),
        part(t.second().into()),
        part(t.millisecond()),
    )
}

/// RFC 3339 in UTC with milliseconds, `2026-12-01T19:27:06.123Z`.
pub fn rfc3339(unix_ms: u64) -> String {
    let (y, mo, d, h, mi, s, ms) = utc_parts(unix_ms);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z")
}

/// Milliseconds since the Unix epoch of an RFC 3339 time with its offset
/// (`2026-11-29T08:00:00Z`, `2026-11-29 16:00:00.5+08:00`); jiff's reason when it is not one.
pub fn parse_rfc3339_ms(text: &str) -> Result<i64, String> {
    text.parse::<Timestamp>()
        .map(|at| at.as_millisecond())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_is_utc_with_milliseconds() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_868_800_250), "2000-03-01T00:00:00.250Z");
        assert_eq!(rfc3339(1_795_939_200_000), "2026-11-29T08:00:00.000Z");
        assert_eq!(utc_parts(u64::MAX).0, 9999, "clamped, not wrapped");
    }

    #[test]
    fn printed_times_read_back_as_the_same_instant() {
        for ms in [0, 951_868_800_250, 1_795_939_200_123] {
            assert_eq!(parse_rfc3339_ms(&rfc3339(ms)), Ok(ms as i64));
        }
    }
}
