//! How figures are written in reports: units always shown, precision fitted to the size.

/// MiB to GiB.
pub fn gib_of_mib(mib: u64) -> f64 {
    mib as f64 / 1024.0
}

/// Bytes to GiB.
pub fn gib_of_bytes(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}

pub fn watts(w: f64) -> String {
    format!("{w:.0} W")
}

pub fn tflops(t: f64) -> String {
    if t >= 100.0 {
        format!("{t:.0} TFLOP/s")
    } else {
        format!("{t:.1} TFLOP/s")
    }
}

/// A bandwidth given in GB/s, shown in TB/s from 1000 GB/s up.
pub fn bandwidth(gb_per_s: f64) -> String {
    if gb_per_s >= 1000.0 {
        format!("{:.2} TB/s", gb_per_s / 1000.0)
    } else {
        format!("{gb_per_s:.0} GB/s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_fit_the_size() {
        assert_eq!(watts(699.6), "700 W");
        assert_eq!(tflops(790.26), "790 TFLOP/s");
        assert_eq!(tflops(65.04), "65.0 TFLOP/s");
        assert_eq!(bandwidth(4300.0), "4.30 TB/s");
        assert_eq!(bandwidth(936.4), "936 GB/s");
        assert_eq!(gib_of_mib(143771), 143771.0 / 1024.0);
        assert_eq!(gib_of_bytes(1 << 31), 2.0);
    }
}

pub use crate::utc::utc_parts;

/// `2026-11-29 13:38:35 UTC`.
pub fn utc_text(unix_ms: u64) -> String {
    let (y, mo, d, h, mi, s, _) = utc_parts(unix_ms);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02} UTC")
}

#[cfg(test)]
mod time_tests {
    use super::*;

    #[test]
    fn utc_matches_known_instants() {
        assert_eq!(utc_text(0), "1970-01-01 00:00:00 UTC");
        // 2026-11-29T08:00:00Z, as the config's RFC 3339 tests have it.
        assert_eq!(utc_text(1_795_939_200_000), "2026-11-29 08:00:00 UTC");
        assert_eq!(utc_parts(951_868_800_250), (2000, 3, 1, 0, 0, 0, 250));
    }
}
