//! Tests of `fleet_row`: outage cells and badge fitting.
use super::*;

fn text(spans: &[Span]) -> String {
    spans.iter().map(|s| s.content.as_ref()).collect()
}

fn badge(text: &str) -> Badge {
    Badge {
        level: BadgeLevel::Critical,
        text: text.into(),
    }
}

fn outage_row(theme: &Theme) -> HostRow {
    HostRow {
        name: "far".into(),
        status: ("unreachable".into(), theme.critical()),
        gpus: "-".into(),
        figures: Figures::Outage(vec![crate::ui::format::Piece::text(
            "connection refused",
            theme.critical(),
            9,
        )]),
        money: std::array::from_fn(|_| ("-".to_string(), theme.dim())),
        badges: vec![badge("UNREACHABLE"), badge("XID 79")],
        note: None,
        kept: RefCell::default(),
        widths: Widths::default(),
    }
    .measured()
}

fn cell_texts(cells: &[Cell]) -> Vec<(String, usize)> {
    cells
        .iter()
        .map(|c| (text(&c.line.spans), c.span))
        .collect()
}

#[test]
fn an_outage_spans_the_figure_columns_and_says_why_instead_of_figures() {
    let theme = Theme::default_theme();
    let plan = [
        (Column::Host, 3),
        (Column::Status, 11),
        (Column::Util, 4),
        (Column::Vram, 9),
        (Column::Power, 9),
        (Column::Badges, 10),
    ];
    let cells = outage_row(&theme).cells(&plan, &theme, false);
    assert_eq!(
        cell_texts(&cells),
        [
            ("far".to_string(), 1),
            ("unreachable".to_string(), 1),
            // 4 + 9 + 9 + 10 and three gaps; the status's own badge is not repeated.
            ("connection refused · XID 79".to_string(), 4),
        ]
    );
    // No figure column fits: the words go in the badges' place.
    let narrow = [
        (Column::Host, 3),
        (Column::Status, 11),
        (Column::Badges, 12),
    ];
    let cells = outage_row(&theme).cells(&narrow, &theme, false);
    assert_eq!(cell_texts(&cells)[2], ("connection …".to_string(), 1));
}

#[test]
fn a_cut_badge_ends_in_an_ellipsis_and_left_out_ones_are_counted() {
    let theme = Theme::default_theme();
    let lost = [badge("GPU LOST")];
    assert_eq!(text(&badge_spans(&lost, None, 7, false, &theme)), "GPU LO…");
    assert_eq!(
        text(&badge_spans(&lost, None, 8, false, &theme)),
        "GPU LOST"
    );
    let two = [badge("XID 79"), badge("ECC")];
    assert_eq!(
        text(&badge_spans(&two, None, 10, false, &theme)),
        "XID 79 ECC"
    );
    assert_eq!(
        text(&badge_spans(&two, None, 9, false, &theme)),
        "XID 79 +1"
    );
    assert_eq!(text(&badge_spans(&two, None, 7, false, &theme)), "XID… +1");
    let note = badge_spans(&[], Some("over budget: 33 lines"), 12, false, &theme);
    assert_eq!(text(&note), "over budget…");
}
