//! What the SSH link tells the user in a notice, as catalogue words (`link_notice.*`) with
//! their values: the kernel log or a job's log flooding or unreadable, nvidia-smi refusing a
//! field or printing what cannot be read, the host refusing a command, a host key added, and
//! the ssh config's options gpufleet does not apply. What the host, libssh2 or the OS said is
//! put in as it came; the words around it follow the user's language.

use crate::remote::credentials::HostKeyPrompt;
use crate::words::Words;

/// `exit status N`, or that there was none.
pub(crate) fn exit_status(status: Option<i32>) -> Words {
    match status {
        Some(code) => Words::new("link_notice.exit_status").put("code", code.to_string()),
        None => Words::new("link_notice.no_exit_status"),
    }
}

pub(crate) fn kernel_flood() -> Words {
    Words::new("link_notice.kernel_flood")
}

pub(crate) fn job_log_flood() -> Words {
    Words::new("link_notice.job_log_flood")
}

/// The full query failed; `output` is what nvidia-smi printed.
pub(crate) fn detail_failed(status: Option<i32>, output: &str) -> Words {
    Words::new("link_notice.detail_failed")
        .put_words("why", exit_status(status))
        .put("output", output)
}

pub(crate) fn field_unknown(field: &str) -> Words {
    Words::new("link_notice.field_unknown").put("field", field)
}

pub(crate) fn odd_line(line: &str) -> Words {
    Words::new("link_notice.odd_line").put("line", line)
}

/// The host refused the stream; `why` is the SSH layer's text.
pub(crate) fn stream_refused(why: &Words) -> Words {
    Words::new("link_notice.stream_refused").put_words("why", why.clone())
}

pub(crate) fn job_log_refused(why: &Words) -> Words {
    Words::new("link_notice.job_log_refused").put_words("why", why.clone())
}

/// The host refused to run `tool` (`rocm-smi`, `npu-smi`, ...).
pub(crate) fn accel_refused(tool: &str, why: &Words) -> Words {
    Words::new("link_notice.accel_refused")
        .put("tool", tool)
        .put_words("why", why.clone())
}

/// The kernel log cannot be read: `output` is what the reader printed (`dmesg: read kernel
/// buffer failed: Operation not permitted`); when it printed nothing, how it ended.
pub(crate) fn kernel_unreadable(output: String, status: Option<i32>) -> Words {
    let notice = Words::new("link_notice.kernel_unreadable");
    if !output.is_empty() {
        return notice.put("why", output);
    }
    notice.put_words(
        "why",
        match status {
            Some(code) => exit_status(Some(code)),
            None => Words::new("link_notice.it_ended"),
        },
    )
}

/// The kernel log's reader could not be started: `why` is the SSH layer's text.
pub(crate) fn kernel_refused(why: &Words) -> Words {
    Words::new("link_notice.kernel_unreadable").put_words("why", why.clone())
}

/// A host key was added to known_hosts (`unchecked` under `StrictHostKeyChecking no`).
pub(crate) fn key_added(key: &HostKeyPrompt, unchecked: bool) -> Words {
    let key_name = if unchecked {
        "link_notice.key_added_unchecked"
    } else {
        "link_notice.key_added"
    };
    Words::new(key_name)
        .put("key_type", key.key_type.as_str())
        .put("fingerprint", key.fingerprint.as_str())
        .put("known_as", key.known_as.as_str())
}

/// `StrictHostKeyChecking no` is honoured for `known_as`.
pub(crate) fn strict_no_in_effect(known_as: &str) -> Words {
    Words::new("link_notice.strict_no_in_effect").put("known_as", known_as)
}

/// A changed key let through under `StrictHostKeyChecking no`: what changed, then why the
/// link connects anyway, and `remedy`, how to clear the old key.
pub(crate) fn key_changed_let_through(
    known_as: &str,
    key_type: &str,
    presented: &str,
    expected: &Words,
    remedy: &Words,
) -> Words {
    Words::new("link_notice.key_changed_let_through")
        .put("known_as", known_as)
        .put("key_type", key_type)
        .put("presented", presented)
        .put_words("expected", expected.clone())
        .put_words("remedy", remedy.clone())
}

/// `FILE line N` of the ssh config.
pub(crate) fn place(file: &std::path::Path, line: usize) -> Words {
    Words::new("link_notice.place")
        .put("file", file.display().to_string())
        .put("line", line.to_string())
}

/// A `Match exec`/`localnetwork` block setting only options that may be ignored.
pub(crate) fn match_not_evaluated(
    host: &str,
    criterion: &str,
    place: Words,
    options: &[String],
) -> Words {
    Words::new("link_notice.match_not_evaluated")
        .put("host", host)
        .put("criterion", criterion)
        .put_words("place", place)
        .put("options", options.join(", "))
}

/// Why an ssh config option is ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ignored {
    /// An algorithm list that only adds to the defaults (`+...`).
    AddsOnly,
    /// An OpenSSH option gpufleet does not implement.
    NotImplemented,
    /// Not an option gpufleet knows.
    Unknown,
}

/// `HOST: ssh config option KEY (FILE line N) is ignored: WHY`.
pub(crate) fn option_ignored(host: &str, option: &str, place: Words, why: Ignored) -> Words {
    let why = Words::new(match why {
        Ignored::AddsOnly => "link_notice.ignored_adds_only",
        Ignored::NotImplemented => "link_notice.ignored_not_implemented",
        Ignored::Unknown => "link_notice.ignored_unknown",
    });
    Words::new("link_notice.option_ignored")
        .put("host", host)
        .put("option", option)
        .put_words("place", place)
        .put_words("why", why)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel log reader the host refused: the notice says why in the notice's language,
    /// libssh2's words as they came; the English (the log) as it was.
    #[test]
    fn a_refused_kernel_log_reader_says_why_in_the_notices_language() {
        let why = Words::new("ssh_context.failed")
            .put_words("context", Words::new("ssh_context.open_channel"))
            .put(
                "message",
                "Channel open failure (administratively prohibited)",
            );
        let notice = kernel_refused(&why);
        assert_eq!(
            notice.english(),
            "the kernel log is not readable on this host, so Xid lines will not show (opening a \
             channel: Channel open failure (administratively prohibited))"
        );
        let zh = notice.render("zh-CN");
        assert!(
            zh.contains("打开通道时") && zh.contains("administratively prohibited"),
            "{zh}"
        );
        assert!(!zh.contains("opening a channel"), "{zh}");
    }
}
