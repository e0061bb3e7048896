//! Parsers for the command line's numbers: each refuses an out-of-range value at parse time with
//! the allowed range, using the same rule as the config file or the code that uses the value.
//! The refusals are the catalogue's (`cli_value`), in the language set when they are made.

use rust_i18n::t;

use crate::config::INTERVAL_MS_RANGE;
use crate::telemetry::sim::MAX_SPEED;

/// `range`, then `, found VALUE` when the text was a number.
fn refusal(range: String, found: Option<String>) -> String {
    match found {
        Some(value) => range + &t!("cli_value.found", value = value),
        None => range,
    }
}

/// `--interval-ms`: the config's `interval_ms` rule.
pub fn interval_ms(text: &str) -> Result<u64, String> {
    let range = || {
        let (min, max) = (INTERVAL_MS_RANGE.start(), INTERVAL_MS_RANGE.end());
        t!("cli_value.interval_ms", min = min, max = max).into_owned()
    };
    let value: u64 = text.trim().parse().map_err(|_| refusal(range(), None))?;
    crate::config::check_interval_ms(value)
        .map(|()| value)
        .map_err(|_| refusal(range(), Some(value.to_string())))
}

/// `--speed`: the simulator's rule.
pub fn speed(text: &str) -> Result<f64, String> {
    let range = || t!("cli_value.speed", max = MAX_SPEED).into_owned();
    let value: f64 = text.trim().parse().map_err(|_| refusal(range(), None))?;
    crate::telemetry::sim::check_speed(value)
        .map(|()| value)
        .map_err(|_| refusal(range(), Some(value.to_string())))
}

/// `--sustain-s`: 0 (no sustained phase) or more seconds.
pub fn sustain_s(text: &str) -> Result<f64, String> {
    let range = || t!("cli_value.sustain_s").into_owned();
    match text.trim().parse::<f64>() {
        Ok(value) if value.is_finite() && value >= 0.0 => Ok(value),
        Ok(value) => Err(refusal(range(), Some(value.to_string()))),
        Err(_) => Err(range()),
    }
}

/// A count such as `--limit`: 1 or more.
pub fn at_least_one(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(value) if value >= 1 => Ok(value),
        _ => Err(refusal(
            t!("cli_value.at_least_one").into_owned(),
            Some(format!("{text:?}")),
        )),
    }
}

/// `--since`: a whole number and a unit (`s`, `m`, `h`, `d`), as milliseconds.
pub fn duration_ms(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let unit_ms: u64 = match text.chars().last() {
        Some('s') => 1_000,
        Some('m') => 60_000,
        Some('h') => 3_600_000,
        Some('d') => 86_400_000,
        _ => return Err(t!("cli_value.duration").into_owned()),
    };
    match text[..text.len() - 1].parse::<u64>() {
        Ok(n) if n > 0 => n
            .checked_mul(unit_ms)
            .ok_or_else(|| t!("cli_value.too_long").into_owned()),
        _ => Err(t!("cli_value.duration_above_0").into_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_values_say_the_range() {
        assert_eq!(
            interval_ms("0"),
            Err("must be from 100 to 60000 milliseconds, found 0".to_string())
        );
        assert_eq!(interval_ms("100"), Ok(100));
        assert_eq!(
            interval_ms("fast"),
            Err("must be from 100 to 60000 milliseconds".to_string())
        );
        assert!(speed("0").is_err_and(|e| e.contains("more than 0 and at most 1000")));
        assert!(speed("nan").is_err());
        assert_eq!(speed("20"), Ok(20.0));
        assert!(sustain_s("-1").is_err());
        assert_eq!(at_least_one("0").ok(), None);
    }
}
