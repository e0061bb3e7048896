//! Why a host is not streaming, as pieces of a line: short for a fleet row (`connection refused
//! · retry 14:03:37`), in full for the line under it and the host view's banner (`connection
//! refused · retry … · tried … (attempt 4) · last reading … · cannot connect to …: Connection
//! refused`). Times are UTC.

use rust_i18n::t;

use ratatui::style::Style;

use crate::fleet::host::Retry;
use crate::fleet::outage::Outage;
use crate::theme::Theme;
use crate::ui::format::{Piece, clean, clock};

/// The style of an outage's words: critical for a link down or GPUs lost, else a warning.
pub fn style(outage: &Outage, theme: &Theme) -> Style {
    if outage.last_attempt_ms.is_some() || outage.detail.is_some() {
        theme.critical()
    } else {
        theme.warning()
    }
}

fn retry_text(retry: Retry, with_zone: bool) -> String {
    match retry {
        Retry::At(at_ms) if with_zone => t!("outage.retry_at_utc", time = clock(at_ms)),
        Retry::At(at_ms) => t!("outage.retry_at", time = clock(at_ms)),
        Retry::Trying => t!("outage.retrying"),
        Retry::Never => t!("outage.not_retrying"),
    }
    .into_owned()
}

/// When the link tries again; for a host key the user declined, how to be asked again.
fn retry_piece(outage: &Outage, with_zone: bool, theme: &Theme) -> Option<Piece> {
    if outage.key_declined() {
        return Some(Piece::new(
            t!("outage.ask_again").into_owned(),
            theme.warning(),
            7,
        ));
    }
    let retry = outage.retry?;
    Some(Piece::new(retry_text(retry, with_zone), theme.dim(), 7))
}

/// For a row: the few words (left out when the status column already says them), the last
/// reading's time, when the link retries; most needed first.
pub fn row_pieces(outage: &Outage, status_text: &str, theme: &Theme) -> Vec<Piece> {
    let mut pieces = Vec::new();
    if clean(&outage.summary) != status_text {
        pieces.push(Piece::text(
            clean(&outage.summary_words().localized()),
            style(outage, theme),
            9,
        ));
    }
    pieces.extend(last_reading_piece(outage, theme));
    pieces.extend(retry_piece(outage, false, theme));
    pieces
}

/// The last reading's time, for a row (what a released host still shows).
pub fn last_reading_piece(outage: &Outage, theme: &Theme) -> Option<Piece> {
    outage.last_reading_ms.map(|at_ms| {
        Piece::new(
            t!("outage.last_reading", time = clock(at_ms)),
            theme.stale(),
            8,
        )
    })
}

/// In full: the few words, when the link retries, when it last tried and how often, the last
/// reading, then the whole message, which is cut first (with an ellipsis) when the line is
/// short.
pub fn full_pieces(outage: &Outage, theme: &Theme) -> Vec<Piece> {
    let summary = clean(&outage.summary_words().localized());
    let mut pieces = vec![Piece::text(summary, style(outage, theme), 9)];
    pieces.extend(retry_piece(outage, true, theme));
    if let Some(at_ms) = outage.last_attempt_ms {
        let attempt = if outage.attempts > 1 {
            t!("outage.attempt", n = outage.attempts).into_owned()
        } else {
            String::new()
        };
        pieces.push(Piece::new(
            t!("outage.tried", time = clock(at_ms), attempt = attempt),
            theme.dim(),
            6,
        ));
    }
    match outage.last_reading_ms {
        Some(at_ms) => pieces.push(Piece::new(
            t!("outage.last_reading_utc", time = clock(at_ms)),
            theme.stale(),
            8,
        )),
        None if outage.last_attempt_ms.is_some() => {
            pieces.push(Piece::new(t!("outage.never_read"), theme.dim(), 3));
        }
        None => {}
    }
    if let Some(detail) = outage.detail_words().map(|w| w.localized()) {
        pieces.push(Piece::text(clean(&detail), theme.dim(), 5));
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(pieces: &[Piece]) -> Vec<&str> {
        pieces.iter().map(|p| p.text.as_str()).collect()
    }

    #[test]
    fn a_row_says_why_and_when_and_the_full_line_says_everything() {
        let theme = Theme::default_theme();
        let outage = Outage {
            summary: "connection refused".into(),
            detail: Some("cannot connect to 127.0.0.1:9: Connection refused".into()),
            words: None,
            last_attempt_ms: Some(1_800_000_000_000),
            attempts: 4,
            retry: Some(Retry::At(1_800_000_005_000)),
            last_reading_ms: Some(1_799_999_990_000),
        };
        assert_eq!(
            texts(&row_pieces(&outage, "unreachable", &theme)),
            [
                "connection refused",
                "last reading 07:59:50",
                "retry 08:00:05"
            ]
        );
        assert_eq!(
            texts(&full_pieces(&outage, &theme)),
            [
                "connection refused",
                "retry 08:00:05 UTC",
                "tried 08:00:00 UTC (attempt 4)",
                "last reading 07:59:50 UTC",
                "cannot connect to 127.0.0.1:9: Connection refused"
            ]
        );
        // The status column already says `GPU lost`: the row does not repeat it.
        let lost = Outage {
            summary: "GPU lost".into(),
            detail: None,
            words: None,
            last_attempt_ms: None,
            attempts: 0,
            retry: None,
            last_reading_ms: Some(1_800_000_000_000),
        };
        assert_eq!(
            texts(&row_pieces(&lost, "GPU lost", &theme)),
            ["last reading 08:00:00"]
        );
    }
}
