//! A notice as a recording writes it: `text`, the English words (what a reader of the file,
//! `jq` or the incident report, finds, as before), and since version 4 `key` and `args`, the
//! catalogue text and its values, so a replay says it in the user's language. A value is a
//! string (said as it came) or an object `{"key": ..., "args": {...}}` (a text of ours). A
//! line without `key`, as every version before 4 wrote, replays as its text.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::fleet::DownWords;
use crate::words::{WordArg, Words};

/// How deep texts of ours may nest in a recording's values: a login failure's attempts nest one
/// level each (`auth_words.then`), within a down link's reason.
const MAX_DEPTH: usize = 16;

/// One value of a notice as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Arg {
    Text(String),
    Words {
        key: String,
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        args: BTreeMap<String, Arg>,
    },
}

/// The `key` and `args` fields of a notice line for `text` (`None` and empty for verbatim
/// text).
pub fn to_wire(text: &Words) -> (Option<String>, BTreeMap<String, Arg>) {
    (text.key().map(str::to_string), args_to_wire(text))
}

/// A text as a value is written: `{"key": ..., "args": ...}`, or a string for verbatim text.
pub fn words_to_wire(text: &Words) -> Arg {
    match text.key() {
        Some(key) => Arg::Words {
            key: key.to_string(),
            args: args_to_wire(text),
        },
        None => Arg::Text(text.english()),
    }
}

/// A link's down words from a `disconnected` line: both texts, or none (a line written before
/// version 4, or one this build cannot say whole, is shown in its English).
pub fn down_words_from_wire(
    reason: (&str, Option<Arg>),
    summary: (&str, Option<Arg>),
) -> Option<DownWords> {
    Some(DownWords {
        reason: words_from_wire(reason.0, reason.1)?,
        summary: words_from_wire(summary.0, summary.1)?,
    })
}

/// A text written as words beside its `english` (a `disconnected` line's reason, a `flooding`
/// line's detail): `None` where there are none, or where this build cannot say them whole.
pub fn words_from_wire(english: &str, words: Option<Arg>) -> Option<Words> {
    match words? {
        Arg::Text(text) => Some(Words::verbatim(text)),
        Arg::Words { key, args } => {
            let read = from_wire(english.to_string(), Some(key), args);
            read.key().is_some().then_some(read)
        }
    }
}

fn args_to_wire(text: &Words) -> BTreeMap<String, Arg> {
    text.args()
        .iter()
        .map(|(name, value)| {
            let value = match value {
                WordArg::Verbatim(text) => Arg::Text(text.clone()),
                WordArg::Words(words) => Arg::Words {
                    key: words.key().unwrap_or_default().to_string(),
                    args: args_to_wire(words),
                },
            };
            (name.to_string(), value)
        })
        .collect()
}

/// The notice a line says: its catalogue words when it has a key this build can say whole,
/// else `text` as written.
pub fn from_wire(text: String, key: Option<String>, args: BTreeMap<String, Arg>) -> Words {
    let Some(key) = key else {
        return Words::verbatim(text);
    };
    match args_from_wire(args, 0) {
        Some(args) => Words::read_back(key, args, text),
        None => Words::verbatim(text),
    }
}

fn args_from_wire(args: BTreeMap<String, Arg>, depth: usize) -> Option<Vec<(String, WordArg)>> {
    if depth > MAX_DEPTH {
        return None;
    }
    args.into_iter()
        .map(|(name, value)| {
            let value = match value {
                Arg::Text(text) => WordArg::Verbatim(text),
                // Checked whole with the notice it is in.
                Arg::Words { key, args } => {
                    WordArg::Words(Words::from_parts(key, args_from_wire(args, depth + 1)?))
                }
            };
            Some((name, value))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::HostEvent;
    use crate::recording::RecordingReader;
    use crate::recording::wire::{Event, Line};

    const OLD_TEXT: &str = "the kernel log is not readable on this host, so Xid lines will not \
                            show (dmesg: read kernel buffer failed: Operation not permitted)";

    fn read(body: &str, version: u32) -> Vec<HostEvent> {
        let dir = tempfile::tempdir().expect("temp");
        let path = dir.path().join("r.ndjson");
        let header = format!(
            "{{\"format\":\"gpufleet-recording\",\"version\":{version},\"gpufleet\":\"0.1.0\",\
             \"started_ms\":1,\"started\":\"1970-01-01T00:00:00.001Z\",\"hosts\":[\"h\"]}}"
        );
        std::fs::write(&path, format!("{header}\n{body}\n")).expect("write");
        RecordingReader::open(&path)
            .expect("open")
            .map(|line| HostEvent::from(line.expect("line").event))
            .collect()
    }

    fn notice_of(event: &HostEvent) -> &Words {
        match event {
            HostEvent::Notice { text, .. } => text,
            other => panic!("not a notice: {other:?}"),
        }
    }

    /// A notice line as gpufleet wrote it up to version 3: its text only.
    #[test]
    fn an_old_notice_line_replays_as_its_text() {
        let line = format!(
            "{{\"t_ms\":2,\"host\":\"h\",\"event\":{{\"kind\":\"notice\",\"at_ms\":2,\"text\":\"{OLD_TEXT}\"}}}}"
        );
        let events = read(&line, 3);
        let notice = notice_of(&events[0]);
        assert_eq!(notice, &Words::verbatim(OLD_TEXT));
        assert_eq!(notice.render("zh-CN"), OLD_TEXT, "said as it was written");
    }

    #[test]
    fn a_notice_line_keeps_its_english_text_and_replays_in_either_language() {
        let notice = Words::new("link_notice.kernel_unreadable").put_words(
            "why",
            Words::new("link_notice.exit_status").put("code", "1"),
        );
        let event = HostEvent::Notice {
            at_ms: 2,
            text: notice.clone(),
        };
        let line = serde_json::to_string(&Line {
            t_ms: 2,
            host: "h".into(),
            event: Event::from(&event),
        })
        .expect("line");
        assert!(
            line.contains(&format!("\"text\":\"{}\"", notice.english())),
            "the English text where readers find it: {line}"
        );
        assert!(
            line.contains("\"key\":\"link_notice.kernel_unreadable\""),
            "{line}"
        );
        assert!(
            line.contains(
                "\"args\":{\"why\":{\"key\":\"link_notice.exit_status\",\"args\":{\"code\":\"1\"}}}"
            ),
            "{line}"
        );
        let back = read(&line, 4);
        assert_eq!(notice_of(&back[0]), &notice);
        let zh = notice_of(&back[0]).render("zh-CN");
        assert!(zh.contains("内核日志") && zh.contains("退出码 1"), "{zh}");
    }

    #[test]
    fn a_key_this_build_does_not_know_replays_as_the_english_text() {
        let line = r#"{"t_ms":2,"host":"h","event":{"kind":"notice","at_ms":2,"text":"from a newer gpufleet","key":"link_notice.kernel_unreadable","args":{"why":{"key":"link_notice.not_yet_written"}}}}"#;
        let events = read(line, 4);
        assert_eq!(
            notice_of(&events[0]),
            &Words::verbatim("from a newer gpufleet")
        );
    }

    /// A flooding line keeps its English `detail` and adds `detail_words`; one written
    /// without them (before this build) replays as its detail.
    #[test]
    fn a_flooding_line_keeps_its_english_detail_and_replays_in_either_language() {
        let words = Words::new("flood_words.over_budget")
            .put("lines", "70")
            .put("kib", "7")
            .put("within", "1 s")
            .put_words("what", Words::new("flood_words.stream"))
            .put("budget_lines", "64")
            .put("budget_kib", "64");
        let event = HostEvent::Flooding {
            at_ms: 2,
            detail: Some(words.english()),
            words: Some(words.clone()),
        };
        let line = serde_json::to_string(&Line {
            t_ms: 2,
            host: "h".into(),
            event: Event::from(&event),
        })
        .expect("line");
        assert!(
            line.contains("\"detail\":\"over budget: 70 lines, 7 KiB in 1 s from the nvidia-smi"),
            "{line}"
        );
        assert!(
            line.contains("\"key\":\"flood_words.over_budget\""),
            "{line}"
        );
        let back = read(&line, 4);
        assert_eq!(back[0], event);
        let old =
            r#"{"t_ms":2,"host":"h","event":{"kind":"flooding","at_ms":2,"detail":"over budget"}}"#;
        assert_eq!(
            read(old, 3)[0],
            HostEvent::Flooding {
                at_ms: 2,
                detail: Some("over budget".into()),
                words: None,
            }
        );
    }
}
