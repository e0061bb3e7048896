//! Reading fields of a provider's JSON leniently where the providers are loose (a price given
//! as `"0.74"` or `0.74`, a port as `"41234"` or `41234`), and as text fit to keep: every string
//! taken from an answer is sanitized (no control characters or terminal escapes) and cut short.

use serde_json::Value;

/// The longest text kept from one field.
const MAX_FIELD_CHARS: usize = 200;

/// A string field (or a number written as one), sanitized; `None` when absent, null or empty.
pub fn text(value: &Value, key: &str) -> Option<String> {
    let raw = match value.get(key)? {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    let clean = crate::remote::sanitize(&raw);
    let clean: String = clean.trim().chars().take(MAX_FIELD_CHARS).collect();
    (!clean.is_empty()).then_some(clean)
}

/// A number field, or a string holding one; finite only.
pub fn number(value: &Value, key: &str) -> Option<f64> {
    let n = match value.get(key)? {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => s.trim().parse::<f64>().ok()?,
        _ => return None,
    };
    n.is_finite().then_some(n)
}

/// A non-negative whole number that fits `u32`.
pub fn count(value: &Value, key: &str) -> Option<u32> {
    let n = number(value, key)?;
    ((0.0..=f64::from(u32::MAX)).contains(&n) && n.fract() == 0.0).then_some(n as u32)
}

/// A TCP port (1..=65535).
pub fn port(value: &Value, key: &str) -> Option<u16> {
    let n = number(value, key)?;
    ((1.0..=65_535.0).contains(&n) && n.fract() == 0.0).then_some(n as u16)
}

/// An RFC 3339 time field as Unix milliseconds (before 1970 is `None`).
pub fn rfc3339_ms(value: &Value, key: &str) -> Option<u64> {
    let raw = value.get(key)?.as_str()?;
    let parsed = crate::config::Rfc3339::parse(raw).ok()?;
    u64::try_from(parsed.unix_ms()).ok()
}

/// A Unix time in seconds (integer or float) as milliseconds.
pub fn unix_s_ms(value: &Value, key: &str) -> Option<u64> {
    let s = number(value, key)?;
    (s > 0.0 && s < 1.0e11).then(|| (s * 1000.0).round() as u64)
}

/// A host name or address fit for SSH: no spaces, no control characters, not an option.
pub fn host(value: &Value, key: &str) -> Option<String> {
    let host = text(value, key)?;
    let fits = !host.starts_with('-')
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':'));
    fits.then_some(host)
}

/// The price unit a provider documents is not always per hour in the currency's main unit.
pub fn scaled(n: Option<f64>, divisor: f64) -> Option<f64> {
    n.map(|n| n / divisor)
        .filter(|n| n.is_finite() && *n >= 0.0)
}

/// A non-negative amount (price, size).
pub fn amount(value: &Value, key: &str) -> Option<f64> {
    number(value, key).filter(|n| *n >= 0.0)
}
