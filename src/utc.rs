//! Calendar time in UTC from a Unix time, without a date crate (one algorithm for every place
//! that prints a time).

/// `(year, month, day, hour, minute, second, millisecond)` in UTC of a Unix time in ms.
pub fn utc_parts(unix_ms: u64) -> (i64, u32, u32, u32, u32, u32, u32) {
    let secs = (unix_ms / 1000) as i64;
    let ms = (unix_ms % 1000) as u32;
    let days = secs.div_euclid(86_400);
    let rest = secs.rem_euclid(86_400) as u32;
    // Civil-from-days (Howard Hinnant's algorithm), valid for the proleptic Gregorian calendar.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day, rest / 3600, rest / 60 % 60, rest % 60, ms)
}

/// RFC 3339 in UTC with milliseconds, `2026-12-01T19:27:06.123Z`.
pub fn rfc3339(unix_ms: u64) -> String {
    let (y, mo, d, h, mi, s, ms) = utc_parts(unix_ms);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_is_utc_with_milliseconds() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_868_800_250), "2000-03-01T00:00:00.250Z");
    }
}
