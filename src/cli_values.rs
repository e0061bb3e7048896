//! Parsers for the command line's numbers: each refuses an out-of-range value at parse time with
//! the allowed range, using the same rule as the config file or the code that uses the value.

/// `--interval-ms`: the config's `interval_ms` rule.
pub fn interval_ms(text: &str) -> Result<u64, String> {
    let value: u64 = text
        .trim()
        .parse()
        .map_err(|_| range_words(crate::config::check_interval_ms(0).err()))?;
    crate::config::check_interval_ms(value).map(|()| value)
}

/// `--speed`: the simulator's rule.
pub fn speed(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| range_words(crate::telemetry::sim::check_speed(0.0).err()))?;
    crate::telemetry::sim::check_speed(value).map(|()| value)
}

/// `--sustain-s`: 0 (no sustained phase) or more seconds.
pub fn sustain_s(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(value) if value.is_finite() && value >= 0.0 => Ok(value),
        Ok(value) => Err(format!("must be 0 or more seconds, found {value}")),
        Err(_) => Err("must be 0 or more seconds".to_string()),
    }
}

/// A count such as `--limit`: 1 or more.
pub fn at_least_one(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(value) if value >= 1 => Ok(value),
        _ => Err(format!(
            "must be a whole number of 1 or more, found {text:?}"
        )),
    }
}

/// A rule's message without its "found ..." part, for text that is not a number at all.
fn range_words(message: Option<String>) -> String {
    let message = message.unwrap_or_default();
    match message.split_once(", found") {
        Some((words, _)) => words.to_string(),
        None => message,
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
        _ => return Err("must be a number and a unit: 45s, 90m, 2h or 1d".to_string()),
    };
    match text[..text.len() - 1].parse::<u64>() {
        Ok(n) if n > 0 => n
            .checked_mul(unit_ms)
            .ok_or_else(|| "is too long".to_string()),
        _ => Err("must be a number above 0 and a unit: 45s, 90m, 2h or 1d".to_string()),
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
