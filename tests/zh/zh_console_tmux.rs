//! The console in Simplified Chinese in a real terminal (tmux), on the demo fleet, at 80x24 and
//! 160x48: the fleet table, a host's view with its GPU card and findings, and the release
//! dialog. Chinese characters take two cells each: the tests read the screen in display cells
//! and check that every row's columns start where the header's do, that the boxes' right
//! borders stay at the edge, and that the Chinese words are drawn whole, never cut in half.

use crate::tmux;

use std::time::Duration;

use gpufleet::cells;
use tmux::{Tmux, binary};

const WAIT: Duration = Duration::from_secs(20);

/// The demo in Chinese at `width`x`height`; `how` chooses the language (`--lang zh-CN`, or a
/// locale variable in front of the command).
fn demo(width: u16, height: u16, how: Lang) -> Option<Tmux> {
    let (env, flag) = match how {
        Lang::Flag => ("", "--lang zh-CN"),
        Lang::Locale => ("LC_ALL= LC_MESSAGES= LANG=zh_CN.UTF-8", ""),
    };
    let command = format!(
        "{env} {bin} --demo --speed 20 {flag}; echo EXIT=$?; sleep 30",
        bin = binary().display(),
    );
    Tmux::start(&command, width, height)
}

#[derive(Clone, Copy)]
enum Lang {
    Flag,
    Locale,
}

/// The display column (cells from the left) where `needle` starts in `line`.
fn column_of(line: &str, needle: &str) -> Option<usize> {
    line.find(needle).map(|at| cells::width(&line[..at]))
}

/// The character drawn at display column `col` of `line` (a wide one covers two columns; its
/// second column reads as `None`).
fn char_at(line: &str, col: usize) -> Option<char> {
    let mut at = 0;
    for c in line.chars() {
        if at == col {
            return Some(c);
        }
        at += cells::char_width(c);
        if at > col {
            return None;
        }
    }
    None
}

/// Every line is `width` cells or less, and the box whose top border holds `top` is whole:
/// every row between its corners has its left and right borders in the corners' columns
/// (rows another box is drawn over are passed by).
fn assert_box_edges(screen: &str, width: usize, top: &str) {
    let lines: Vec<&str> = screen.lines().collect();
    for line in &lines {
        assert!(
            cells::width(line) <= width,
            "wider than {width}: {line:?}\n{screen}"
        );
    }
    let first = lines
        .iter()
        .position(|l| l.contains(top))
        .unwrap_or_else(|| panic!("no box {top:?}:\n{screen}"));
    let left = column_of(lines[first], top).unwrap_or(0);
    let right = (left..width)
        .find(|&col| char_at(lines[first], col) == Some('┐'))
        .unwrap_or_else(|| panic!("no top right corner of {top:?}:\n{screen}"));
    let mut closed = false;
    for line in &lines[first + 1..] {
        match char_at(line, left) {
            Some('└') => {
                assert_eq!(char_at(line, right), Some('┘'), "{line:?}\n{screen}");
                closed = true;
                break;
            }
            Some('│') => assert_eq!(
                char_at(line, right),
                Some('│'),
                "the right border of {top:?} moved: {line:?}\n{screen}"
            ),
            _ => {}
        }
    }
    assert!(closed, "no bottom border under {top:?}:\n{screen}");
}

/// The fleet table: Chinese headers, each host's name and status starting at the header's
/// columns, the status words whole.
fn assert_fleet_aligned(screen: &str, width: usize) {
    let header = screen
        .lines()
        .find(|l| l.starts_with('│') && l.contains("主机") && l.contains("状态"))
        .unwrap_or_else(|| panic!("no Chinese header:\n{screen}"));
    let host_col = column_of(header, "主机").expect("host header");
    let status_col = column_of(header, "状态").expect("status header");
    let model_col = column_of(header, "卡型").expect("GPU model header");
    assert!(header.contains("显存"), "{header}");
    let mut rows = 0;
    for name in [
        "train-h100x8",
        "idle-a100",
        "hot-4090",
        "leaky-t4",
        "flaky-h200",
    ] {
        let Some(row) = screen
            .lines()
            .find(|l| l.starts_with('│') && l.contains(name))
        else {
            panic!("no row for {name}:\n{screen}");
        };
        assert_eq!(column_of(row, name), Some(host_col), "{name}:\n{screen}");
        // The status starts at its header's column, after a gap, and is a whole word.
        assert_eq!(char_at(row, status_col - 1), Some(' '), "{row}\n{screen}");
        let status = row[row.find(name).unwrap_or(0) + name.len()..].trim_start();
        assert_eq!(column_of(row, status), Some(status_col), "{row}\n{screen}");
        let word: String = status.chars().take_while(|c| *c != ' ').collect();
        assert!(
            ["在线", "掉卡", "连接中", "无新数据", "已释放"]
                .iter()
                .any(|w| word.starts_with(w)),
            "status {word:?} of {name}:\n{screen}"
        );
        // The GPU model column starts where its header does (`1x ...`, `8x ...`).
        let model = char_at(row, model_col);
        assert!(
            model.is_some_and(|c| c.is_ascii_digit()) || model == Some('-'),
            "{name}: {model:?} at the model column:\n{screen}"
        );
        rows += 1;
    }
    assert_eq!(rows, 5);
    assert!(screen.contains("合计"), "the totals line:\n{screen}");
    assert_box_edges(screen, width, "┌ 机群");
}

/// One console session: the fleet, then a host's view with its findings, then the release
/// dialog, each checked; `q` quits with 0.
fn tour(width: u16, height: u16, how: Lang) {
    let Some(tmux) = demo(width, height, how) else {
        return;
    };
    let w = usize::from(width);
    // At 20x the H200 falls off the bus within seconds: 掉卡.
    let fleet = tmux.wait_for("掉卡", WAIT);
    let fleet = if fleet.contains("合计") {
        fleet
    } else {
        tmux.wait_for("合计", WAIT)
    };
    assert!(fleet.contains("台主机"), "{fleet}");
    assert_fleet_aligned(&fleet, w);

    // The hot card's own view: its GPU card in Chinese and the findings pane.
    tmux.keys(&["/", "h", "o", "t", "Enter", "Enter"]);
    let host = tmux.wait_for("┌ 发现", WAIT);
    for word in ["显存", "利用", "功耗", "温度", "在线", "驱动"] {
        assert!(host.contains(word), "{word} in the host view:\n{host}");
    }
    assert!(
        ["严重", "警告", "提示"].iter().any(|t| host.contains(t)),
        "a finding's severity in Chinese:\n{host}"
    );
    assert_box_edges(&host, w, "┌ 发现");
    // The card's gauges line up: the four labels start in the same column.
    let label_cols: Vec<Option<usize>> = ["显存", "利用", "功耗", "温度"]
        .iter()
        .map(|label| {
            host.lines()
                .find(|l| l.starts_with('│') && l.contains(label))
                .and_then(|l| column_of(l, label))
        })
        .collect();
    assert!(
        label_cols
            .iter()
            .all(|c| c.is_some() && *c == label_cols[0]),
        "{label_cols:?}:\n{host}"
    );

    // The release dialog, from the fleet.
    tmux.keys(&["Escape"]);
    tmux.wait_for("┌ 机群 · 1 台主机", WAIT);
    tmux.keys(&["R"]);
    let dialog = tmux.wait_for("┌ 释放 hot-4090", WAIT);
    for word in [
        "平台",
        "操作",
        "关机",
        "花费",
        "输入 hot-4090 以关机",
        "取消",
    ] {
        assert!(
            dialog.contains(word),
            "{word} in the release dialog:\n{dialog}"
        );
    }
    assert_box_edges(&dialog, w, "┌ 释放 hot-4090");
    // The labels of the plan are padded to one column in cells: the values line up.
    let value_cols: Vec<Option<usize>> = ["平台", "操作", "花费"]
        .iter()
        .map(|label| {
            dialog
                .lines()
                .find(|l| l.contains(&format!(" {label} ")))
                .and_then(|l| {
                    let after = column_of(l, label)? + cells::width(label);
                    let rest = &l[l.find(label)? + label.len()..];
                    Some(after + cells::width(rest) - cells::width(rest.trim_start()))
                })
        })
        .collect();
    assert!(
        value_cols
            .iter()
            .all(|c| c.is_some() && *c == value_cols[0]),
        "{value_cols:?}:\n{dialog}"
    );

    tmux.keys(&["Escape", "q"]);
    let after = tmux.wait_for("EXIT=", WAIT);
    assert!(after.contains("EXIT=0"), "{after}");
}

#[test]
fn chinese_fleet_host_findings_and_release_dialog_at_80x24() {
    tour(80, 24, Lang::Flag);
}

#[test]
fn chinese_fleet_host_findings_and_release_dialog_at_160x48() {
    tour(160, 48, Lang::Flag);
}

/// The box drawn over the view whose top border holds `top` is whole: its top left corner
/// starts `top`, and every row down to its bottom corners has its left and right borders in
/// the corners' columns. Chinese text under it must not take the left border's cell.
fn assert_overlay_frame(screen: &str, top: &str) {
    let lines: Vec<&str> = screen.lines().collect();
    let first = lines
        .iter()
        .position(|l| l.contains(top))
        .unwrap_or_else(|| panic!("no box {top:?} (its corner lost?):\n{screen}"));
    let left = column_of(lines[first], top).unwrap_or(0);
    let right = (left + 1..cells::width(lines[first]))
        .find(|&col| char_at(lines[first], col) == Some('┐'))
        .unwrap_or_else(|| panic!("no top right corner of {top:?}:\n{screen}"));
    for (row, line) in lines.iter().enumerate().skip(first + 1) {
        let (l, r) = (char_at(line, left), char_at(line, right));
        if l == Some('└') {
            assert_eq!(r, Some('┘'), "{line:?}\n{screen}");
            return;
        }
        assert_eq!(
            (l, r),
            (Some('│'), Some('│')),
            "the borders of {top:?} on row {row}: {line:?}\n{screen}"
        );
    }
    panic!("no bottom border under {top:?}:\n{screen}");
}

/// The help (`?`) over the fleet and over a host's view keeps its whole frame.
fn help_over_chinese(width: u16, height: u16) {
    let Some(tmux) = demo(width, height, Lang::Flag) else {
        return;
    };
    tmux.wait_for("合计", WAIT);
    tmux.keys(&["?"]);
    let help = tmux.wait_for("┌ 按键", WAIT);
    assert_overlay_frame(&help, "┌ 按键");
    tmux.keys(&["Escape", "/", "h", "o", "t", "Enter", "Enter"]);
    tmux.wait_for("┌ 发现", WAIT);
    tmux.keys(&["?"]);
    let help = tmux.wait_for("┌ 按键", WAIT);
    assert_overlay_frame(&help, "┌ 按键");
    tmux.keys(&["Escape", "Escape", "q"]);
    let after = tmux.wait_for("EXIT=", WAIT);
    assert!(after.contains("EXIT=0"), "{after}");
}

#[test]
fn chinese_help_keeps_its_frame_at_80x24() {
    help_over_chinese(80, 24);
}

#[test]
fn chinese_help_keeps_its_frame_at_100x30() {
    help_over_chinese(100, 30);
}

/// Without `--lang`, a Chinese locale chooses Chinese.
#[test]
fn a_chinese_locale_chooses_chinese() {
    tour(160, 48, Lang::Locale);
}

/// What a row of the demo fleet may end with when its text reaches the right border: the
/// whole of a badge or a time, never a piece of one (a cut is marked by an ellipsis).
const WHOLE_ENDS: [&str; 8] = [
    "…",
    "GPU LOST",
    "XID 79",
    "THERMAL THROTTLE",
    "IDLE BILLING",
    "VRAM FULL",
    "连不上",
    "重试",
];

/// At 60x15 text is cut: by display cells, with an ellipsis, and never a number or an amount.
#[test]
fn a_narrow_chinese_fleet_cuts_text_with_an_ellipsis_and_no_number() {
    let Some(tmux) = demo(60, 15, Lang::Flag) else {
        return;
    };
    let screen = tmux.wait_for("掉卡", WAIT);
    let screen = if screen.contains("最后读数") {
        screen
    } else {
        tmux.wait_for("最后读数", WAIT)
    };
    assert_box_edges(&screen, 60, "┌ 机群");
    for line in screen.lines().filter(|l| l.starts_with('│')) {
        let inner = line.trim_start_matches('│').trim_end_matches('│');
        // A row filled to the border ends in an ellipsis or a whole badge or word.
        if char_at(line, 58).is_none_or(|c| c != ' ') {
            assert!(
                WHOLE_ENDS.iter().any(|end| inner.trim_end().ends_with(end))
                    || inner.trim_end().ends_with(|c: char| c.is_ascii_digit()),
                "cut without an ellipsis: {line:?}\n{screen}"
            );
        }
        // A time is whole: `最后读数 04:39:31`.
        if let Some(at) = inner.find("最后读数 ") {
            let time: String = inner[at + "最后读数 ".len()..].chars().take(8).collect();
            assert!(
                time.len() == 8 && time.chars().filter(|c| *c == ':').count() == 2,
                "a cut time {time:?} in {line:?}\n{screen}"
            );
        }
    }
    // The totals: whole pieces only, every amount with its currency.
    let totals = screen
        .lines()
        .find(|l| l.contains("合计"))
        .unwrap_or_else(|| panic!("no totals:\n{screen}"));
    let inner = totals
        .trim_start_matches('│')
        .trim_end_matches('│')
        .trim_end();
    for piece in inner.split(" · ") {
        for part in piece.split(" + ") {
            let ok = part == "合计"
                || part.ends_with("张卡")
                || part == "未设单价"
                || part.ends_with("CNY")
                || part.ends_with("USD")
                || part.ends_with("/h")
                || (part.starts_with("利用率 ") && part.ends_with('%'))
                || (part.starts_with("空闲 ") && part.len() > "空闲 ".len());
            assert!(ok, "a cut piece {part:?} in the totals:\n{screen}");
        }
    }
    tmux.keys(&["q"]);
    tmux.wait_for("EXIT=", WAIT);
}

/// The English console is unchanged by the catalogue: the same words at the same places.
#[test]
fn english_stays_english() {
    let command = format!(
        "LC_ALL= LANG=C.UTF-8 {} --demo --speed 20; echo EXIT=$?; sleep 30",
        binary().display()
    );
    let Some(tmux) = Tmux::start(&command, 80, 24) else {
        return;
    };
    let screen = tmux.wait_for("GPU lost", WAIT);
    assert!(
        screen.contains("┌ Fleet · 11 hosts · sort: config order"),
        "{screen}"
    );
    assert!(
        !screen.chars().any(|c| cells::char_width(c) == 2),
        "{screen}"
    );
    tmux.keys(&["q"]);
    tmux.wait_for("EXIT=", WAIT);
}
