//! The message catalogues (`locales/en.toml`, `locales/zh-CN.toml`) and the console's source:
//! both catalogues hold the same keys, none empty, with the same placeholders; every key the
//! source names exists; and no text a user reads is written into any file under `src/`
//! outside the catalogues.
//!
//! What counts as hard-coded text: a string literal in the code of a file under `src/`
//! (comments, `#[cfg(test)]` modules and `*_tests.rs` files left out) that holds a
//! word (a run of letters, Latin or CJK, once `{...}` format placeholders are taken out) not in
//! [`NOT_TEXT`], the short list of what is not language: key names, units, product names.
//! A literal that is never shown is not counted: the key of `t!("...")`, a literal compared
//! (`==`, `!=`, a `match` arm's pattern, `starts_with(...)`), a JSON value's field
//! (`value["error"]`), a thread's name (`.name(...)`), a
//! `Debug` impl's text (`write!(f, ...)`, `f.write_str(...)`), a byte string, a config key as
//! the file writes it (`path.key("price_per_hour")`, `#[serde(rename = "vast")]`). A literal that
//! looks like a catalogue key (`help.move`) must be one. [`ALLOWED`] lists, with the reason,
//! the few literals kept in the source on purpose.

use crate::literals;

use std::collections::{BTreeMap, BTreeSet};

use literals::{Literal, literals};
use std::path::{Path, PathBuf};

/// Words that are not language: key names, units, product and protocol names.
const NOT_TEXT: &[&str] = &[
    // Keys, as the keyboard labels them, and the letters the keymap binds.
    "Enter",
    "Esc",
    "Tab",
    "Backspace",
    "PgUp",
    "PgDn",
    "Ctrl",
    "C",
    "a",
    "c",
    "e",
    "g",
    "G",
    "h",
    "j",
    "k",
    "K",
    "l",
    "o",
    "p",
    "q",
    "R",
    "s",
    "t",
    "x",
    "y",
    // Units and time.
    "GiB",
    "GB",
    "MiB",
    "MHz",
    "W",
    "m",
    "ms",
    "min",
    "d",
    "UTC",
    // Names of things.
    "GPU",
    "CUDA",
    "ECC",
    "SM",
    "TFLOP",
    "PCIe",
    "Gen",
    "Xid",
    "PyTorch",
    "sm",
    "gpufleet",
    // incident report (a GPU's PCI address and UUID, as nvidia-smi names them)
    "PCI",
    "UUID",
    // NCCL's and PyTorch's word for one process of a distributed job, written as is in Chinese.
    "rank",
    // Command names, as `gpufleet NAME: ...` starts an error.
    "diagnose",
    "hold",
    "report",
    "watch",
    "man",
    "audit",
    "config",
    "init",
    "path",
    "check",
    "cost",
];

/// Literals kept in the source on purpose: (file, literal, why).
const ALLOWED: &[(&str, &str, &str)] = &[
    // config errors
    (
        "src/config/ssh_target.rs",
        "String",
        "serde's `try_from` type: Rust, never shown",
    ),
    (
        "src/config/ssh_target.rs",
        "user@host",
        "the form to fill in, as the suggestion shows it when the command line names no host",
    ),
    (
        "src/commands/runbook.rs",
        "gpu",
        "the GPU parameter's name, as `--gpu N` fills it in",
    ),
    (
        "src/commands/runbook.rs",
        "undo",
        "the undo run's step id, kept in the audit log",
    ),
    (
        "src/commands/runbook.rs",
        "undo-verify",
        "the undo run's step id, kept in the audit log",
    ),
    (
        "src/runbook/validate.rs",
        "title",
        "a runbook's TOML key, named where the error is",
    ),
    (
        "src/runbook/validate.rs",
        "summary",
        "a runbook's TOML key, named where the error is",
    ),
    (
        "src/runbook/validate.rs",
        "help",
        "a runbook's TOML key, named where the error is",
    ),
    (
        "src/runbook/validate.rs",
        "why",
        "a runbook's TOML key, named where the error is",
    ),
    (
        "src/runbook/validate.rs",
        "command",
        "a runbook's TOML key, named where the error is",
    ),
    (
        "src/runbook/validate.rs",
        "check.equals",
        "a runbook's TOML key, named where the error is",
    ),
    (
        "src/runbook/validate.rs",
        "explain.say",
        "a runbook's TOML key, named where the error is",
    ),
    (
        "src/runbook/validate.rs",
        "undo.title",
        "a runbook's TOML key, named where the error is",
    ),
    (
        "src/runbook/validate.rs",
        "undo.command",
        "a runbook's TOML key, named where the error is",
    ),
    (
        "src/runbook/validate.rs",
        "undo.verify",
        "a runbook's TOML key, named where the error is",
    ),
    (
        "src/runbook/validate.rs",
        "undo.expect",
        "a runbook's TOML key, named where the error is",
    ),
    (
        "src/runbook/validate.rs",
        "torch-install",
        "the built-in advice's name, as a runbook writes it",
    ),
    (
        "src/runbook/validate.rs",
        "steps[{i}] ({}): {e}",
        "where in the runbook the error is: a TOML key path",
    ),
    (
        "src/runbook/validate.rs",
        "explain[{i}]: {e}",
        "where in the runbook the error is: a TOML key path",
    ),
    (
        "src/runbook/validate.rs",
        "params ({}): {e}",
        "where in the runbook the error is: a TOML key path",
    ),
    (
        "src/runbook/params.rs",
        "gpu",
        "the GPU parameter's name, as runbooks and `--param gpu=N` write it",
    ),
    (
        "src/config/alerts.rs",
        "webhook",
        "a sink's kind as the config spells it (`kind = ...`): an identifier",
    ),
    (
        "src/config/alerts.rs",
        "slack",
        "a sink's kind as the config spells it (`kind = ...`): an identifier",
    ),
    (
        "src/config/alerts.rs",
        "feishu",
        "a sink's kind as the config spells it (`kind = ...`): an identifier",
    ),
    (
        "src/config/alerts.rs",
        "dingtalk",
        "a sink's kind as the config spells it (`kind = ...`): an identifier",
    ),
    (
        "src/config/alerts.rs",
        "wecom",
        "a sink's kind as the config spells it (`kind = ...`): an identifier",
    ),
    (
        "src/config/alerts.rs",
        "ntfy",
        "a sink's kind as the config spells it (`kind = ...`): an identifier",
    ),
    (
        "src/config/alerts.rs",
        "telegram",
        "a sink's kind as the config spells it (`kind = ...`): an identifier",
    ),
    (
        "src/config/alerts.rs",
        "https",
        "a URL scheme compared with the parsed address's",
    ),
    (
        "src/config/jobs.rs",
        "step",
        "the named groups a log pattern may have: regex identifiers",
    ),
    (
        "src/config/jobs.rs",
        "total",
        "the named groups a log pattern may have: regex identifiers",
    ),
    (
        "src/config/jobs.rs",
        "loss",
        "the named groups a log pattern may have: regex identifiers",
    ),
    (
        "src/config/jobs.rs",
        "alert",
        "`on_plateau`'s values as the config spells them: identifiers",
    ),
    (
        "src/config/jobs.rs",
        "stop-job",
        "`on_plateau`'s values as the config spells them: identifiers",
    ),
    (
        "src/config/jobs.rs",
        "release",
        "`on_plateau`'s values as the config spells them: identifiers",
    ),
    (
        "src/config/lang.rs",
        "en",
        "language tags, as `--lang` and `language` take them",
    ),
    (
        "src/config/lang.rs",
        "zh-CN",
        "language tags, as `--lang` and `language` take them",
    ),
    (
        "src/config/lang.rs",
        "hant",
        "a locale's script, matched in `LANG`-style values",
    ),
    (
        "src/config/lang.rs",
        "LANG",
        "an environment variable's name",
    ),
    (
        "src/config/locate.rs",
        ", expected ",
        "a needle: where serde's message names the type it wanted",
    ),
    (
        "src/config/locate.rs",
        "table",
        "TOML's and serde's type names, matched, never shown",
    ),
    (
        "src/config/locate.rs",
        "integer",
        "TOML's and serde's type names, matched, never shown",
    ),
    (
        "src/config/locate.rs",
        "isize",
        "TOML's and serde's type names, matched, never shown",
    ),
    (
        "src/config/mod.rs",
        "vast",
        "a provider as the config spells it (`provider = ...`): an identifier",
    ),
    (
        "src/config/mod.rs",
        "runpod",
        "a provider as the config spells it (`provider = ...`): an identifier",
    ),
    (
        "src/config/mod.rs",
        "lambda",
        "a provider as the config spells it (`provider = ...`): an identifier",
    ),
    (
        "src/config/mod.rs",
        "autodl",
        "a provider as the config spells it (`provider = ...`): an identifier",
    ),
    (
        "src/config/mod.rs",
        "command",
        "a provider as the config spells it (`provider = ...`): an identifier",
    ),
    (
        "src/config/mod.rs",
        "ssh",
        "a provider as the config spells it (`provider = ...`): an identifier",
    ),
    ("src/config/mod.rs", "config.toml", "the config's file name"),
    ("src/config/mod.rs", "themes", "the themes directory's name"),
    (
        "src/config/providers.rs",
        "vast",
        "an account's kind as the config spells it (`kind = ...`): an identifier",
    ),
    (
        "src/config/providers.rs",
        "runpod",
        "an account's kind as the config spells it (`kind = ...`): an identifier",
    ),
    (
        "src/config/providers.rs",
        "lambda",
        "an account's kind as the config spells it (`kind = ...`): an identifier",
    ),
    (
        "src/config/providers.rs",
        "autodl",
        "an account's kind as the config spells it (`kind = ...`): an identifier",
    ),
    (
        "src/config/providers.rs",
        "command",
        "an account's kind as the config spells it (`kind = ...`): an identifier",
    ),
    (
        "src/config/validate.rs",
        "token",
        "key names that hold a secret, looked for in the file",
    ),
    (
        "src/config/validate.rs",
        "apikey",
        "key names that hold a secret, looked for in the file",
    ),
    (
        "src/config/validate.rs",
        "secret",
        "key names that hold a secret, looked for in the file",
    ),
    (
        "src/config/validate.rs",
        "password",
        "key names that hold a secret, looked for in the file",
    ),
    (
        "src/config/validate.rs",
        "passwd",
        "key names that hold a secret, looked for in the file",
    ),
    (
        "src/config/validate.rs",
        "passphrase",
        "key names that hold a secret, looked for in the file",
    ),
    (
        "src/fleet/outage.rs",
        "exited with status 127",
        "a needle: how the stream's failure says the shell found no nvidia-smi",
    ),
    (
        "src/remote/link/watchdog.rs",
        "it sent more than its budget",
        "why `nvidia-smi -q` evidence was cut, kept in recordings for the incident report",
    ),
    (
        "src/commands/demo.rs",
        "--speed {0}",
        "a flag and the parser's own message",
    ),
    (
        "src/commands/demo.rs",
        "--speed {e}",
        "a flag and the parser's own message",
    ),
    (
        "src/commands/config_file.rs",
        "../../config.example.toml",
        "the path of the example config the template is built from",
    ),
    (
        "src/commands/config_file.rs",
        "# gpufleet config, written by `gpufleet config init`.\n# Every setting below the \
         top-level ones is commented out: uncomment a [[hosts]] block, fill it\n# in, then run \
         `gpufleet config check` to validate the file.\n\n",
        "the config file's own comment, like config.example.toml's: the file stays English",
    ),
    (
        "src/commands/hold.rs",
        "gpufleet hold {host}",
        "the audit log's record of the command line, as typed",
    ),
    (
        "src/commands/hold.rs",
        "requested",
        "the audit log's outcome, stored data the audit view words",
    ),
    (
        "src/commands/fleet_inventory.rs",
        "snapshot",
        "the command's name, as `gpufleet snapshot: ...` starts a note",
    ),
    (
        "src/commands/fleet_inventory.rs",
        "release",
        "the command's name, as `gpufleet release: ...` starts a note",
    ),
    (
        "src/commands/fleet_inventory.rs",
        "console",
        "the console's name, as `gpufleet console: ...` starts a note",
    ),
    (
        "src/commands/fleet_inventory.rs",
        "provider account synced",
        "a log line (`tracing::info!` with fields), English in every language",
    ),
    (
        "src/commands/providers_import.rs",
        "hosts",
        "the config key of the [[hosts]] tables",
    ),
    (
        "src/commands/logging.rs",
        "gpufleet.log",
        "the log file's name",
    ),
    (
        "src/check/load.rs",
        "vram",
        "a probe stage's name, matched against its JSON lines",
    ),
    (
        "src/check/load.rs",
        "matmul",
        "a probe stage's name, matched against its JSON lines",
    ),
    (
        "src/check/load.rs",
        "copy",
        "a probe stage's name, matched against its JSON lines",
    ),
    (
        "src/check/load.rs",
        "sustain",
        "a probe stage's name, matched against its JSON lines",
    ),
    (
        "src/check/evaluate.rs",
        "matmul:{t}",
        "the probe's stage key for one GPU's matmul, matched against its JSON lines",
    ),
    (
        "src/check/evaluate.rs",
        "copy:{t}",
        "the probe's stage key for one GPU's copy, matched against its JSON lines",
    ),
    (
        "src/diagnose/recovery.rs",
        "None",
        "RecoveryAction::name: the driver's own name of a recovery action, as nvidia-smi prints it",
    ),
    (
        "src/diagnose/recovery.rs",
        "GPU Reset Required",
        "RecoveryAction::name: the driver's own name of a recovery action, as nvidia-smi prints it",
    ),
    (
        "src/diagnose/recovery.rs",
        "Node Reboot Required",
        "RecoveryAction::name: the driver's own name of a recovery action, as nvidia-smi prints it",
    ),
    (
        "src/diagnose/recovery.rs",
        "Drain P2P",
        "RecoveryAction::name: the driver's own name of a recovery action, as nvidia-smi prints it",
    ),
    (
        "src/diagnose/recovery.rs",
        "Drain and Reset",
        "RecoveryAction::name: the driver's own name of a recovery action, as nvidia-smi prints it",
    ),
    (
        "src/diagnose/verdict.rs",
        "healthy",
        "Verdict::word, the verdict as JSON writes it: an identifier",
    ),
    (
        "src/diagnose/verdict.rs",
        "findings",
        "Verdict::word, the verdict as JSON writes it: an identifier",
    ),
    (
        "src/diagnose/verdict.rs",
        "unrecognised",
        "Verdict::word, the verdict as JSON writes it: an identifier",
    ),
    (
        "src/diagnose/xid.rs",
        "IGNORE",
        "NVIDIA's resolution bucket for an Xid, NVIDIA's identifier",
    ),
    (
        "src/diagnose/xid.rs",
        "NVIDIA, \"Analyzing Xid Errors with the Xid Catalog\", https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html (spreadsheet https://docs.nvidia.com/Xid-Catalog.xlsx); NVIDIA \"XID Errors\" r555, https://docs.nvidia.com/deploy/xid-errors/index.html",
        "SOURCE: the citation of the Xid catalogue, for the code's readers",
    ),
    (
        "src/app/release_bridge.rs",
        "release-backup",
        "a worker thread's name, given to ReleaseBridge::spawn",
    ),
    (
        "src/app/release_bridge.rs",
        "release-send",
        "a worker thread's name, given to ReleaseBridge::spawn",
    ),
    (
        "src/app/keymap.rs",
        "Esc or ? closes · ↑↓ scroll · q quits",
        "HELP_CLOSE_HINT: the English text of help.close_hint, held equal by a test here",
    ),
    (
        "src/app/keymap.rs",
        "any key",
        "a key of BINDINGS; the help overlay shows it through keyname.any_key",
    ),
    (
        "src/app/keymap.rs",
        "wheel",
        "a key of BINDINGS; the help overlay shows it through keyname.wheel",
    ),
    (
        "src/app/keymap.rs",
        "click",
        "a key of BINDINGS; the help overlay shows it through keyname.click",
    ),
    (
        "src/alerts/book.rs",
        "unreachable",
        "the label of gpufleet's own alert, an identifier",
    ),
    (
        "src/alerts/book.rs",
        "auto_release",
        "the label of gpufleet's own alert, an identifier",
    ),
    (
        "src/alerts/book.rs",
        "red_line_{}",
        "the label of a red line's alert, an identifier",
    ),
    (
        "src/alerts/book.rs",
        "fleet",
        "the host field of a fleet-wide red line's alert, an identifier like a host name",
    ),
    (
        "src/alerts/message.rs",
        "firing",
        "AlertState::as_str, the webhook JSON's state value, an identifier",
    ),
    (
        "src/alerts/message.rs",
        "resolved",
        "AlertState::as_str, the webhook JSON's state value, an identifier",
    ),
    (
        "src/alerts/try_sinks.rs",
        "test",
        "the label of the test alert, an identifier",
    ),
    (
        "src/commands/help.rs",
        "help",
        "HELP_SUBCOMMAND: clap's name of its own help subcommand, an identifier",
    ),
    (
        "src/commands/help.rs",
        "lang",
        "the name of the --lang flag, looked for in the command line",
    ),
    (
        "src/commands/help.rs",
        "cli_help.{}.about",
        "the pattern of a command's catalogue key; a test holds every key in both catalogues",
    ),
    (
        "src/commands/help.rs",
        "cli_help.global.{}",
        "the pattern of a global flag's catalogue key",
    ),
    (
        "src/commands/help.rs",
        "cli_help.{}.{}",
        "the pattern of an argument's catalogue key",
    ),
    (
        "src/commands/help.rs",
        "cli_help.heading.{}",
        "the pattern of a heading's catalogue key",
    ),
    // incident report
    (
        "src/report/analyse.rs",
        "kernel",
        "KIND_KERNEL: an evidence line's kind, as report.json writes it: an identifier",
    ),
    (
        "src/report/analyse.rs",
        "lost",
        "KIND_LOST: an evidence line's kind, as report.json writes it: an identifier",
    ),
    (
        "src/report/analyse.rs",
        "disconnected",
        "KIND_DISCONNECTED: an evidence line's kind, as report.json writes it: an identifier",
    ),
    (
        "src/report/analyse.rs",
        "notice",
        "KIND_NOTICE: an evidence line's kind, as report.json writes it: an identifier",
    ),
    (
        "src/report/analyse.rs",
        "status.lost.{}",
        "the pattern of a lost host's status key (status.lost.gpu_lost), by LostReason::word",
    ),
    (
        "src/report/mod.rs",
        "fault",
        "VERDICT_FAULT: report.json's verdict, an identifier",
    ),
    (
        "src/report/mod.rs",
        "pass",
        "RESULT_PASS: report.json's check result, an identifier (report.md words it)",
    ),
    (
        "src/report/mod.rs",
        "warning",
        "RESULT_WARNING: report.json's check result, an identifier (report.md words it)",
    ),
    (
        "src/report/mod.rs",
        "failure",
        "RESULT_FAILURE: report.json's check result, an identifier (report.md words it)",
    ),
    (
        "src/report/analyse.rs",
        "nvidia-smi-q.txt",
        "a bundle file's name",
    ),
    ("src/report/bundle.rs", "report.md", "a bundle file's name"),
    (
        "src/report/bundle.rs",
        "report.json",
        "a bundle file's name",
    ),
    (
        "src/report/bundle.rs",
        "samples.csv",
        "a bundle file's name",
    ),
    ("src/report/bundle.rs", "kernel.log", "a bundle file's name"),
    (
        "src/report/bundle.rs",
        "failure.txt",
        "a bundle file's name",
    ),
    (
        "src/report/bundle.rs",
        "recording.ndjson",
        "a bundle file's name",
    ),
    (
        "src/report/bundle.rs",
        "gpufleet-report-{}-{y:04}{mo:02}{d:02}T{h:02}{mi:02}{s:02}Z",
        "the bundle folder's name",
    ),
    (
        "src/report/bundle.rs",
        "time_utc,at_ms,gpu,uuid,bus_id,name,utilization_gpu_pct,memory_used_mib,\
         memory_total_mib,temperature_c,temperature_memory_c,power_draw_w,power_limit_w,\
         clock_sm_mhz,clock_mem_mhz,pstate,fan_speed_pct,ecc_uncorrected_volatile,\
         retired_pages_pending,clock_event_reasons",
        "SAMPLES_COLUMNS: samples.csv's header, column names (identifiers)",
    ),
    (
        "src/report/markdown.rs",
        "text",
        "FENCE_TEXT: the language tag of a Markdown code fence",
    ),
    (
        "src/report/secrets.rs",
        "HOME",
        "an environment variable's name",
    ),
    (
        "src/report/ticket.rs",
        "finding_text.{}.summary",
        "the pattern of a finding's summary key (finding_text.gpu_lost.summary), by label",
    ),
    // ssh and release errors
    (
        "src/config/ssh_target.rs",
        "suggestion",
        "the name of the catalogue text's placeholder (%{suggestion})",
    ),
    (
        "src/config/ssh_target.rs",
        "user",
        "the name of the catalogue text's placeholder (%{user})",
    ),
    (
        "src/config/ssh_target.rs",
        "host",
        "the name of the catalogue text's placeholder (%{host})",
    ),
    (
        "src/config/ssh_target.rs",
        "port",
        "the name of the catalogue text's placeholder (%{port})",
    ),
    (
        "src/release/secret.rs",
        "<redacted>",
        "REDACTED: what stands for a secret wherever a request is shown, a marker",
    ),
    (
        "src/release/secret.rs",
        "token",
        "TokenError's `what` for the release's token, said as release_error.what_token",
    ),
    (
        "src/release/secret.rs",
        "[hosts.release]",
        "the config table that names the token, as the config writes it",
    ),
    (
        "src/release/secret_words.rs",
        "en",
        "the locale of the log's English (the error's Display)",
    ),
    (
        "src/config/ssh_target.rs",
        "String",
        "serde's `try_from` type, an identifier",
    ),
    (
        "src/config/ssh_target.rs",
        "user@host",
        "the form of a target in a suggested `user@host:port`, written as the config takes it",
    ),
    (
        "src/remote/known_hosts.rs",
        "ssh-ed25519",
        "an SSH host-key algorithm's protocol name",
    ),
    (
        "src/remote/known_hosts.rs",
        "ecdsa-sha2-nistp256",
        "an SSH host-key algorithm's protocol name",
    ),
    (
        "src/remote/known_hosts.rs",
        "ecdsa-sha2-nistp384",
        "an SSH host-key algorithm's protocol name",
    ),
    (
        "src/remote/known_hosts.rs",
        "ecdsa-sha2-nistp521",
        "an SSH host-key algorithm's protocol name",
    ),
    (
        "src/remote/known_hosts.rs",
        "ssh-rsa",
        "an SSH host-key algorithm's protocol name",
    ),
    (
        "src/remote/known_hosts.rs",
        "rsa-sha2-512",
        "an SSH host-key algorithm's protocol name",
    ),
    (
        "src/remote/known_hosts.rs",
        "rsa-sha2-256",
        "an SSH host-key algorithm's protocol name",
    ),
    (
        "src/remote/known_hosts.rs",
        "ssh-dss",
        "an SSH host-key algorithm's protocol name",
    ),
    (
        "src/remote/known_hosts.rs",
        "/dev/urandom",
        "a path: the salt of a hashed known_hosts name",
    ),
    (
        "src/remote/known_hosts.rs",
        "unknown",
        "the key type of a blob that names none (libssh2 never hands one over), said like the protocol's key type names",
    ),
    (
        "src/remote/proxy.rs",
        "SHELL",
        "an environment variable's name",
    ),
    (
        "src/remote/proxy.rs",
        "/bin/sh",
        "a path: the shell a ProxyCommand runs in when $SHELL is unset",
    ),
    (
        "src/remote/proxy.rs",
        "exec {}",
        "shell syntax: the ProxyCommand run by the user's shell, as OpenSSH does",
    ),
    (
        "src/remote/connect.rs",
        "/etc/ssh/ssh_known_hosts",
        "a path of OpenSSH's known_hosts files",
    ),
    (
        "src/remote/connect.rs",
        "/etc/ssh/ssh_known_hosts2",
        "a path of OpenSSH's known_hosts files",
    ),
    (
        "src/remote/connect.rs",
        ".ssh",
        "a path of OpenSSH's known_hosts files",
    ),
    (
        "src/remote/connect.rs",
        "~/.ssh/known_hosts",
        "a path of OpenSSH's known_hosts files",
    ),
    (
        "src/release/words.rs",
        "en",
        "the locale of the log's English (the error's Display)",
    ),
    (
        "src/release/execute.rs",
        "Bearer {}",
        "the HTTP Authorization scheme, sent to the provider",
    ),
    (
        "src/release/execute.rs",
        "application/json",
        "an HTTP media type, sent to the provider",
    ),
    (
        "src/release/execute.rs",
        "msg",
        "a field of the provider's JSON answer, read",
    ),
    (
        "src/release/execute.rs",
        "message",
        "a field of the provider's JSON answer, read",
    ),
    (
        "src/release/execute.rs",
        "error",
        "a field of the provider's JSON answer, read",
    ),
    (
        "src/release/execute.rs",
        "success",
        "a field of the provider's JSON answer, read",
    ),
    (
        "src/release/execute.rs",
        "code",
        "a field of the provider's JSON answer, read",
    ),
    (
        "src/release/execute.rs",
        "success: false",
        "the provider's JSON field as it said it, quoted when it gave no message",
    ),
    (
        "src/release/flow_words.rs",
        "en",
        "the locale of the log's English (the error's Display)",
    ),
    (
        "src/release/flow.rs",
        "ok",
        "the audit log's outcome, stored data the audit view words",
    ),
    (
        "src/release/flow.rs",
        "failed",
        "the audit log's outcome, stored data the audit view words",
    ),
    (
        "src/release/flow.rs",
        "refused",
        "the audit log's outcome, stored data the audit view words",
    ),
    (
        "src/release/flow.rs",
        "timeout",
        "the audit log's outcome, stored data the audit view words",
    ),
    (
        "src/release/request.rs",
        "https://console.vast.ai",
        "a provider API's base URL",
    ),
    (
        "src/release/request.rs",
        "https://rest.runpod.io/v1",
        "a provider API's base URL",
    ),
    (
        "src/release/request.rs",
        "https://cloud.lambda.ai",
        "a provider API's base URL",
    ),
    (
        "src/release/request.rs",
        "https://api.autodl.com",
        "a provider API's base URL",
    ),
    (
        "src/release/request.rs",
        "stop",
        "ReleaseAction::as_str, the action as JSON and the audit log write it: an identifier",
    ),
    (
        "src/release/request.rs",
        "terminate",
        "ReleaseAction::as_str, the action as JSON and the audit log write it: an identifier",
    ),
    (
        "src/release/request.rs",
        "POST",
        "an HTTP method, shown verbatim in the request",
    ),
    (
        "src/release/request.rs",
        "PUT",
        "an HTTP method, shown verbatim in the request",
    ),
    (
        "src/release/request.rs",
        "DELETE",
        "an HTTP method, shown verbatim in the request",
    ),
    (
        "src/release/request.rs",
        "shutdown",
        "the `ssh` provider's command run on the host (`shutdown -h now`), shown verbatim",
    ),
    (
        "src/release/request.rs",
        "now",
        "the `ssh` provider's command run on the host (`shutdown -h now`), shown verbatim",
    ),
    (
        "src/release/request.rs",
        "Bearer ",
        "the HTTP Authorization scheme, shown verbatim in the request",
    ),
    (
        "src/release/request.rs",
        "  Authorization: {scheme}{REDACTED}",
        "the HTTP header as sent, token redacted, shown verbatim in the request",
    ),
    (
        "src/release/request.rs",
        "/api/v0/instances/{segment}/",
        "a provider API's path",
    ),
    (
        "src/release/request.rs",
        "/pods/{segment}/stop",
        "a provider API's path",
    ),
    (
        "src/release/request.rs",
        "/pods/{segment}",
        "a provider API's path",
    ),
    (
        "src/release/request.rs",
        "/api/v1/instance-operations/terminate",
        "a provider API's path",
    ),
    (
        "src/release/request.rs",
        "/api/v1/dev/instance/pro/power_off",
        "a provider API's path",
    ),
    (
        "src/release/request.rs",
        "/api/v1/dev/instance/pro/release",
        "a provider API's path",
    ),
    (
        "src/release/request.rs",
        "stopped",
        "vast.ai's API value of an instance's state, sent",
    ),
    ("src/release/request.rs", "Lambda", "the provider's name"),
    (
        "src/release/request.rs",
        "command",
        "the provider's name as the config writes it (`provider = \"command\"`)",
    ),
    (
        "src/telemetry/sim/host.rs",
        "Connection timed out",
        "the OS's text for ETIMEDOUT, which `ssh` quotes; the words around it are sim_words.connect_timed_out",
    ),
    (
        "src/telemetry/sim/host.rs",
        "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  {}  Release Build  (nixbld@)",
        "the demo's imitation of the NVIDIA driver's kernel lines, which gpufleet reads as a host's",
    ),
    (
        "src/telemetry/sim/host.rs",
        "NVRM: GPU at PCI:{pci}: {}",
        "the demo's imitation of the NVIDIA driver's kernel lines, which gpufleet reads as a host's",
    ),
    (
        "src/telemetry/sim/host.rs",
        "NVRM: GPU Board Serial Number: {serial}",
        "the demo's imitation of the NVIDIA driver's kernel lines, which gpufleet reads as a host's",
    ),
    (
        "src/telemetry/sim/host.rs",
        "NVRM: Xid (PCI:{pci}): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
        "the demo's imitation of the NVIDIA driver's kernel lines, which gpufleet reads as a host's",
    ),
    (
        "src/telemetry/sim/host.rs",
        "NVRM: GPU {bus}: GPU has fallen off the bus.",
        "the demo's imitation of the NVIDIA driver's kernel lines, which gpufleet reads as a host's",
    ),
    (
        "src/telemetry/sim/host.rs",
        "Unable to determine the device handle for GPU {bus}: GPU is lost. Reboot the system to recover this GPU",
        "the demo's imitation of nvidia-smi's output for a lost GPU, read as a host's",
    ),
    (
        "src/telemetry/sim/host.rs",
        "simulated",
        "the telemetry source's identifier; the host view says it as clock_words.simulated",
    ),
    // errors: recordings, runbook catalogue, reload
    (
        "src/recording/read.rs",
        "format",
        "the recording header's JSON key, as the file writes it",
    ),
    (
        "src/recording/read.rs",
        "version",
        "the recording header's JSON key, as the file writes it",
    ),
    (
        "src/runbook/catalog.rs",
        "power-limit.toml",
        "a curated runbook's file name, as `embedded:NAME` names it in errors",
    ),
    (
        "src/runbook/catalog.rs",
        "../../runbooks/power-limit.toml",
        "the path `include_str!` embeds the curated runbook from",
    ),
    (
        "src/runbook/catalog.rs",
        "gpu-lost.toml",
        "a curated runbook's file name, as `embedded:NAME` names it in errors",
    ),
    (
        "src/runbook/catalog.rs",
        "../../runbooks/gpu-lost.toml",
        "the path `include_str!` embeds the curated runbook from",
    ),
    (
        "src/runbook/catalog.rs",
        "driver-lost.toml",
        "a curated runbook's file name, as `embedded:NAME` names it in errors",
    ),
    (
        "src/runbook/catalog.rs",
        "../../runbooks/driver-lost.toml",
        "the path `include_str!` embeds the curated runbook from",
    ),
    (
        "src/runbook/catalog.rs",
        "cuda-mismatch.toml",
        "a curated runbook's file name, as `embedded:NAME` names it in errors",
    ),
    (
        "src/runbook/catalog.rs",
        "../../runbooks/cuda-mismatch.toml",
        "the path `include_str!` embeds the curated runbook from",
    ),
    (
        "src/runbook/catalog.rs",
        "throttle.toml",
        "a curated runbook's file name, as `embedded:NAME` names it in errors",
    ),
    (
        "src/runbook/catalog.rs",
        "../../runbooks/throttle.toml",
        "the path `include_str!` embeds the curated runbook from",
    ),
    (
        "src/runbook/catalog.rs",
        "ecc-remap.toml",
        "a curated runbook's file name, as `embedded:NAME` names it in errors",
    ),
    (
        "src/runbook/catalog.rs",
        "../../runbooks/ecc-remap.toml",
        "the path `include_str!` embeds the curated runbook from",
    ),
    (
        "src/runbook/catalog.rs",
        "runbooks",
        "the folder of the user's runbooks in the config dir, a path",
    ),
    (
        "src/runbook/catalog.rs",
        "embedded:{name}",
        "a curated runbook's origin, as errors and `playbook list` name its file",
    ),
    // --- sources: telemetry and remote ---
    (
        "src/telemetry/nvml.rs",
        "local NVML",
        "the source's name in logs and recordings",
    ),
    (
        "src/telemetry/nvml.rs",
        "No devices were found",
        "nvidia-smi's own words for this state, which triage's catalogue reads as `no_devices`",
    ),
    (
        "src/telemetry/nvml.rs",
        "P{}",
        "a performance state as NVML names it (P0..P12)",
    ),
    (
        "src/telemetry/nvml.rs",
        "NVML: {e}",
        "the raw evidence of a lost GPU: NVML's own error after its name (the finding's words are the catalogue's)",
    ),
    (
        "src/telemetry/nvml.rs",
        "nvidia-smi",
        "the program run for the process list",
    ),
    ("src/telemetry/nvml.rs", "/proc/{pid}/comm", "a path"),
    (
        "src/telemetry/nvml.rs",
        "pid {pid}",
        "a process's name when /proc has none: an identifier",
    ),
    ("src/telemetry/nvml.rs", "nvml", "a thread's name"),
    (
        "src/metrics/serve.rs",
        "/metrics",
        "an HTTP protocol word or response body for scrapers, not for people",
    ),
    (
        "src/metrics/serve.rs",
        "/health",
        "an HTTP protocol word or response body for scrapers, not for people",
    ),
    (
        "src/metrics/serve.rs",
        "text/plain; charset=utf-8",
        "an HTTP protocol word or response body for scrapers, not for people",
    ),
    (
        "src/metrics/serve.rs",
        "ok ",
        "an HTTP protocol word or response body for scrapers, not for people",
    ),
    (
        "src/metrics/serve.rs",
        "not found ",
        "an HTTP protocol word or response body for scrapers, not for people",
    ),
    (
        "src/metrics/serve.rs",
        "GET only ",
        "an HTTP protocol word or response body for scrapers, not for people",
    ),
    (
        "src/metrics/serve.rs",
        "Content-Type",
        "an HTTP protocol word or response body for scrapers, not for people",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "id",
        "a word of the command the demo host answers (matched, never shown)",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "-u",
        "a word of the command the demo host answers (matched, never shown)",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "cat",
        "a word of the command the demo host answers (matched, never shown)",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "/proc/sys/kernel/random/boot_id",
        "a word of the command the demo host answers (matched, never shown)",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "dmesg",
        "a word of the command the demo host answers (matched, never shown)",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "reboot",
        "a word of the command the demo host answers (matched, never shown)",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "tar",
        "a word of the command the demo host answers (matched, never shown)",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "-czf",
        "a word of the command the demo host answers (matched, never shown)",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "nvidia-bug-report.sh",
        "a word of the command the demo host answers (matched, never shown)",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "nvidia-bug-report.sh will now collect information about your system and create the file 'nvidia-bug-report.log.gz' in the current directory.",
        "imitates the real tool's own output (English on every host), as parsers and checks read it",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "nvidia-smi",
        "a word of the command the demo host answers (matched, never shown)",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "csv",
        "a `--format` word of nvidia-smi",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "No devices were found",
        "imitates the real tool's own output (English on every host), as parsers and checks read it",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "GPU {} was successfully reset.",
        "imitates the real tool's own output (English on every host), as parsers and checks read it",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "All done.",
        "imitates the real tool's own output (English on every host), as parsers and checks read it",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "Field \"{fields}\" is not a valid field to query.",
        "imitates the real tool's own output (English on every host), as parsers and checks read it",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "[N/A]",
        "imitates the real tool's own output (English on every host), as parsers and checks read it",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "pci.bus_id",
        "a `--query-gpu` field name as nvidia-smi spells it",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "memory.total",
        "a `--query-gpu` field name as nvidia-smi spells it",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "memory.used",
        "a `--query-gpu` field name as nvidia-smi spells it",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "utilization.gpu",
        "a `--query-gpu` field name as nvidia-smi spells it",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "temperature.gpu",
        "a `--query-gpu` field name as nvidia-smi spells it",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "power.draw",
        "a `--query-gpu` field name as nvidia-smi spells it",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "power.limit",
        "a `--query-gpu` field name as nvidia-smi spells it",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "enforced.power.limit",
        "a `--query-gpu` field name as nvidia-smi spells it",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "power.default_limit",
        "a `--query-gpu` field name as nvidia-smi spells it",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "power.min_limit",
        "a `--query-gpu` field name as nvidia-smi spells it",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "power.max_limit",
        "a `--query-gpu` field name as nvidia-smi spells it",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "clocks.sm",
        "a `--query-gpu` field name as nvidia-smi spells it",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "clocks.current.sm",
        "a `--query-gpu` field name as nvidia-smi spells it",
    ),
    (
        "src/telemetry/sim/shell.rs",
        "clocks.max.sm",
        "a `--query-gpu` field name as nvidia-smi spells it",
    ),
    (
        "src/remote/link/evidence.rs",
        "fallen off the bus",
        "a needle matched in the host's kernel lines",
    ),
    (
        "src/remote/link/evidence.rs",
        "RmInitAdapter failed",
        "a needle matched in the host's kernel lines",
    ),
    (
        "src/remote/link/evidence.rs",
        "GPU is lost",
        "a needle matched in the host's kernel lines",
    ),
    (
        "src/remote/link/evidence.rs",
        "[gpufleet: output cut at {} KiB] ",
        "a note inside the recorded raw evidence, which a recording and the provider's ticket keep as the host gave it, in any language",
    ),
    (
        "src/remote/link/evidence.rs",
        "[gpufleet: could not run: {}] ",
        "a note inside the recorded raw evidence, which a recording and the provider's ticket keep as the host gave it, in any language",
    ),
    (
        "src/remote/link/evidence.rs",
        "[exit {code}] ",
        "a note inside the recorded raw evidence, which a recording and the provider's ticket keep as the host gave it, in any language",
    ),
    (
        "src/remote/link/evidence.rs",
        "[gpufleet: ended without an exit status] ",
        "a note inside the recorded raw evidence, which a recording and the provider's ticket keep as the host gave it, in any language",
    ),
    (
        "src/remote/link/accel_poll.rs",
        "exit status {code}",
        "the raw evidence line of an unreadable vendor tool (the finding's own words are the catalogue's)",
    ),
    (
        "src/remote/link/accel_poll.rs",
        "ended without an exit status",
        "the raw evidence line of an unreadable vendor tool (the finding's own words are the catalogue's)",
    ),
    // --- engine, drivers and commands ---
    (
        "src/launch.rs",
        "--speed {0}",
        "the flag and the value given: the message around it is the caller's",
    ),
    ("src/launch.rs", "gone-host", "a thread's name"),
    (
        "src/app/runtime.rs",
        "quit",
        "the log's word for how the console ended (`how=\"quit\"`), an identifier for whoever reads the log",
    ),
    (
        "src/app/runtime.rs",
        "interrupted",
        "the log's word for how the console ended (`how=\"interrupted\"`), an identifier for whoever reads the log",
    ),
    ("src/launch.rs", "/proc/sys/kernel/hostname", "a path"),
    (
        "src/telemetry/boot_id.rs",
        "/proc/sys/kernel/random/boot_id",
        "a path",
    ),
    (
        "src/launch.rs",
        "localhost",
        "this machine's name when it has none: an identifier",
    ),
    (
        "src/commands/runbook.rs",
        "gpu",
        "a parameter kind in `--json`: an identifier (a JSON or file word), the same in every language",
    ),
    (
        "src/commands/runbook.rs",
        "watts",
        "a parameter kind in `--json`: an identifier (a JSON or file word), the same in every language",
    ),
    (
        "src/commands/runbook.rs",
        "choice",
        "a parameter kind in `--json`: an identifier (a JSON or file word), the same in every language",
    ),
    (
        "src/runbook/model.rs",
        "read",
        "a danger level as runbook files spell it",
    ),
    (
        "src/runbook/model.rs",
        "change",
        "a danger level as runbook files spell it",
    ),
    (
        "src/runbook/model.rs",
        "disruptive",
        "a danger level as runbook files spell it",
    ),
    (
        "src/runbook/undo.rs",
        "playbook-undo.json",
        "a state file's name",
    ),
    (
        "src/fleet/notice.rs",
        "en",
        "the English locale's tag: the log's language",
    ),
    (
        "src/cost/holds.rs",
        "auto-release-holds.json",
        "a state file's name",
    ),
    (
        "src/watch/reload.rs",
        "config reloaded",
        "text of the log file only, which is English",
    ),
    (
        "src/watch/reload.rs",
        "provider inventory joined: hosts changed",
        "text of the log file only, which is English",
    ),
    (
        "src/watch/reload.rs",
        "could not start the host",
        "text of the log file only, which is English",
    ),
    (
        "src/watch/signals.rs",
        "SIGINT",
        "a signal's name, which the watcher's caller matches and the log keeps",
    ),
    (
        "src/watch/signals.rs",
        "SIGTERM",
        "a signal's name, which the watcher's caller matches and the log keeps",
    ),
    (
        "src/snapshot_jobs.rs",
        "starting",
        "a job's state in `snapshot --json`: an identifier (a JSON or file word), the same in every language",
    ),
    (
        "src/snapshot_jobs.rs",
        "running",
        "a job's state in `snapshot --json`: an identifier (a JSON or file word), the same in every language",
    ),
    (
        "src/snapshot_jobs.rs",
        "exited",
        "a job's state in `snapshot --json`: an identifier (a JSON or file word), the same in every language",
    ),
    (
        "src/theme/depth.rs",
        "TERM",
        "an environment variable's name",
    ),
    (
        "src/theme/depth.rs",
        "COLORTERM",
        "an environment variable's name",
    ),
    (
        "src/utc.rs",
        "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z",
        "RFC 3339, the same in every language",
    ),
    (
        "src/fleet/event.rs",
        "nvidia-smi -q",
        "the command whose output the evidence is",
    ),
    (
        "src/fleet/job.rs",
        "TrackedJob",
        "a `Debug` impl's type name",
    ),
    ("src/fleet/job.rs", "process", "a `Debug` impl's field name"),
    (
        "src/fleet/money.rs",
        "gone",
        "the ledger's reason word for a host that left the fleet: an identifier (a JSON or file word), the same in every language",
    ),
    (
        "src/cost/mod.rs",
        "{hours}h{:02}m",
        "a duration: times keep one format in both languages",
    ),
    (
        "src/cost/mod.rs",
        "{days}d{:02}h",
        "a duration: times keep one format in both languages",
    ),
    (
        "src/check/format.rs",
        "{:.2} TB/s",
        "a unit: figures keep one format in both languages",
    ),
    (
        "src/check/runner.rs",
        "{program}: not found",
        "what a shell says for a missing program, as a line of the probe's output (the check's verdict on it is the catalogue's)",
    ),
    ("src/recording/replay.rs", "replay", "a thread's name"),
    (
        "src/watch/stop_job.rs",
        "stop-job: stopping the job now",
        "text of the log file only, which is English",
    ),
    (
        "src/check/sim_runner.rs",
        "NVIDIA H200",
        "the card's name as nvidia-smi says it",
    ),
    (
        "src/check/sim_runner.rs",
        "../../tests/fixtures/check/real-h200/smi_qx.xml",
        "a capture embedded at build time",
    ),
    (
        "src/check/sim_runner.rs",
        "../../tests/fixtures/check/real-h200/query.csv",
        "a capture embedded at build time",
    ),
    (
        "src/check/sim_runner.rs",
        "../../tests/fixtures/check/real-h200/probe.jsonl",
        "a capture embedded at build time",
    ),
    (
        "src/check/sim_runner.rs",
        "606b7d42-d306-fbed-4c48-308a70a87b16",
        "the captured card's UUID",
    ),
    (
        "src/check/sim_runner.rs",
        "nvidia-smi",
        "a command the simulator answers",
    ),
    (
        "src/check/sim_runner.rs",
        "dmesg",
        "a command the simulator answers",
    ),
    (
        "src/runbook/confirm.rs",
        "yes",
        "an answer the prompt accepts (as `y`), in every language",
    ),
    (
        "src/runbook/exec.rs",
        "local",
        "the name of this machine as a runbook's host",
    ),
    (
        "src/runbook/exec.rs",
        "gpufleet: {program}: command not found",
        "what a shell says for a missing program, so the runner explains it the same way for local and remote hosts (its explanation is the catalogue's)",
    ),
    (
        "src/runbook/exec.rs",
        "kill",
        "the command that ends a step's process group",
    ),
    ("src/runbook/exec.rs", "-KILL", "the signal of that command"),
    (
        "src/runbook/reboot.rs",
        "cat",
        "the probe command run on the host",
    ),
    (
        "src/runbook/reboot.rs",
        "/proc/sys/kernel/random/boot_id",
        "the probe command run on the host",
    ),
    (
        "src/runbook/advice.rs",
        "cu130",
        "a PyTorch wheel index's tag (part of its URL)",
    ),
    (
        "src/runbook/advice.rs",
        "cu128",
        "a PyTorch wheel index's tag (part of its URL)",
    ),
    (
        "src/runbook/advice.rs",
        "cu126",
        "a PyTorch wheel index's tag (part of its URL)",
    ),
    ("src/runbook/advice.rs", "580.65.06", "a driver version"),
    ("src/runbook/advice.rs", "570.26", "a driver version"),
    ("src/runbook/advice.rs", "560.28.03", "a driver version"),
    (
        "src/runbook/advice.rs",
        "https://download.pytorch.org/whl",
        "PyTorch's wheel index URL",
    ),
    (
        "src/runbook/advice.rs",
        "  python3 -m pip install --upgrade torch --index-url {INDEX_URL}/{}",
        "the command to copy and run, the same in every language",
    ),
    (
        "src/cost/advice.rs",
        "hourly",
        "a billing mode's machine word (JSON, and part of its catalogue key)",
    ),
    (
        "src/cost/advice.rs",
        "daily",
        "a billing mode's machine word (JSON, and part of its catalogue key)",
    ),
    (
        "src/cost/advice.rs",
        "weekly",
        "a billing mode's machine word (JSON, and part of its catalogue key)",
    ),
    (
        "src/cost/advice.rs",
        "monthly",
        "a billing mode's machine word (JSON, and part of its catalogue key)",
    ),
    (
        "src/cost/advice.rs",
        "prices.daily",
        "the config key that holds this mode's price, as the file writes it",
    ),
    (
        "src/cost/advice.rs",
        "prices.weekly",
        "the config key that holds this mode's price, as the file writes it",
    ),
    (
        "src/cost/advice.rs",
        "prices.monthly",
        "the config key that holds this mode's price, as the file writes it",
    ),
    (
        "src/watch/mod.rs",
        "no more input",
        "why the watcher stopped, an identifier its caller matches and the log keeps",
    ),
    (
        "src/watch/mod.rs",
        "alert",
        "a log event's name (the log file is English)",
    ),
    (
        "src/watch/mod.rs",
        "stopped",
        "a log event's name (the log file is English)",
    ),
    (
        "src/watch/mod.rs",
        "alert not delivered yet",
        "a log event's name (the log file is English)",
    ),
    (
        "src/watch/mod.rs",
        "alert not delivered",
        "a log event's name (the log file is English)",
    ),
    (
        "src/job/stop.rs",
        "INT",
        "a signal's name, a word of the `kill -s` command",
    ),
    (
        "src/job/stop.rs",
        "TERM",
        "a signal's name, a word of the `kill -s` command",
    ),
    ("src/job/stop.rs", "kill", "the command run on the host"),
    (
        "src/job/stop.rs",
        "ok",
        "the audit log's outcome word (an identifier its readers match)",
    ),
    (
        "src/job/stop.rs",
        "failed",
        "the audit log's outcome word (an identifier its readers match)",
    ),
    (
        "src/job/stop.rs",
        "SIG{}",
        "the audit line's step: the signal's name",
    ),
    (
        "src/runbook/runner/outcome.rs",
        "cancelled",
        "the audit log's outcome word (an identifier its readers match)",
    ),
    (
        "src/runbook/runner/outcome.rs",
        "timeout",
        "the audit log's outcome word (an identifier its readers match)",
    ),
    (
        "src/runbook/runner/outcome.rs",
        "ok",
        "the audit log's outcome word (an identifier its readers match)",
    ),
    (
        "src/runbook/runner/outcome.rs",
        "failed",
        "the audit log's outcome word (an identifier its readers match)",
    ),
    (
        "src/runbook/runner/outcome.rs",
        "a password is required",
        "sudo's own message, matched in the step's output",
    ),
    (
        "src/runbook/runner/outcome.rs",
        "sudo",
        "the command put before an undo that needed sudo",
    ),
    (
        "src/runbook/runner/outcome.rs",
        "-n",
        "sudo's flag in that command",
    ),
    // --- remote ---
    (
        "src/remote/auth.rs",
        ".pub",
        "the suffix of a key's public half, as ssh-keygen names the file",
    ),
    (
        "src/remote/auth.rs",
        "keyboard-interactive",
        "an SSH login method's protocol name (RFC 4252), as the server offers it and `PreferredAuthentications` lists it",
    ),
    (
        "src/remote/auth.rs",
        "none",
        "the cipher name an unencrypted OpenSSH private key carries inside its body (`openssh-key-v1`)",
    ),
    (
        "src/remote/auth.rs",
        "password",
        "an SSH login method's protocol name (RFC 4252), as the server offers it and `PreferredAuthentications` lists it",
    ),
    (
        "src/remote/auth.rs",
        "publickey",
        "an SSH login method's protocol name (RFC 4252), as the server offers it and `PreferredAuthentications` lists it",
    ),
    (
        "src/remote/bridge.rs",
        "gpufleet closing the jump",
        "the description of the SSH disconnect message sent to the host as the connection closes (the host's sshd may log it); never shown here",
    ),
    (
        "src/remote/exec.rs",
        "-TERM",
        "`kill`'s signal argument in the command run on the host to stop a cancelled command",
    ),
    (
        "src/remote/exec.rs",
        "g=; if read -r s < /proc/$$/stat 2>/dev/null; then r=${s##*) }; r=${r#* }; r=${r#* }; g=${r%% *}; fi; echo \"gpufleet-pid $$ $g\"; exec \"$@\"",
        "the shell wrapper run on the host: it prints the pid marker, then becomes the command",
    ),
    (
        "src/remote/exec.rs",
        "gpufleet-pid ",
        "the marker the wrapper prints before the pid and process group, which the reader strips off its output",
    ),
    (
        "src/remote/exec.rs",
        "kill",
        "the command run on the host to stop a cancelled command",
    ),
    (
        "src/remote/exec.rs",
        "sh",
        "the POSIX shell the command runs under on the host (`sh -c WRAPPER sh ARGV`)",
    ),
    (
        "src/remote/host_settings.rs",
        "BatchMode",
        "an ssh_config keyword as OpenSSH spells it, named in a refusal whose reason is `option_words` catalogue text",
    ),
    (
        "src/remote/host_settings.rs",
        "CertificateFile",
        "an ssh_config keyword as OpenSSH spells it, named in a refusal whose reason is `option_words` catalogue text",
    ),
    (
        "src/remote/host_settings.rs",
        "ChallengeResponseAuthentication",
        "an ssh_config keyword as OpenSSH spells it, named in a refusal whose reason is `option_words` catalogue text",
    ),
    (
        "src/remote/host_settings.rs",
        "ConnectTimeout",
        "an ssh_config keyword as OpenSSH spells it, named in a refusal whose reason is `option_words` catalogue text",
    ),
    (
        "src/remote/host_settings.rs",
        "HashKnownHosts",
        "an ssh_config keyword as OpenSSH spells it, named in a refusal whose reason is `option_words` catalogue text",
    ),
    (
        "src/remote/host_settings.rs",
        "IdentitiesOnly",
        "an ssh_config keyword as OpenSSH spells it, named in a refusal whose reason is `option_words` catalogue text",
    ),
    (
        "src/remote/host_settings.rs",
        "IdentityAgent",
        "an ssh_config keyword as OpenSSH spells it, named in a refusal whose reason is `option_words` catalogue text",
    ),
    (
        "src/remote/host_settings.rs",
        "KbdInteractiveAuthentication",
        "an ssh_config keyword as OpenSSH spells it, named in a refusal whose reason is `option_words` catalogue text",
    ),
    (
        "src/remote/host_settings.rs",
        "PasswordAuthentication",
        "an ssh_config keyword as OpenSSH spells it, named in a refusal whose reason is `option_words` catalogue text",
    ),
    (
        "src/remote/host_settings.rs",
        "PubkeyAuthentication",
        "an ssh_config keyword as OpenSSH spells it, named in a refusal whose reason is `option_words` catalogue text",
    ),
    (
        "src/remote/host_settings.rs",
        "ServerAliveCountMax",
        "an ssh_config keyword as OpenSSH spells it, named in a refusal whose reason is `option_words` catalogue text",
    ),
    (
        "src/remote/host_settings.rs",
        "ServerAliveInterval",
        "an ssh_config keyword as OpenSSH spells it, named in a refusal whose reason is `option_words` catalogue text",
    ),
    (
        "src/remote/host_settings.rs",
        "batchmode",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/host_settings.rs",
        "certificatefile",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/host_settings.rs",
        "challengeresponseauthentication",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/host_settings.rs",
        "connecttimeout",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/host_settings.rs",
        "hashknownhosts",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/host_settings.rs",
        "identitiesonly",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/host_settings.rs",
        "identityagent",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/host_settings.rs",
        "kbdinteractiveauthentication",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/host_settings.rs",
        "keyboard-interactive",
        "an SSH login method's protocol name (RFC 4252), as the server offers it and `PreferredAuthentications` lists it",
    ),
    (
        "src/remote/host_settings.rs",
        "password",
        "an SSH login method's protocol name (RFC 4252), as the server offers it and `PreferredAuthentications` lists it",
    ),
    (
        "src/remote/host_settings.rs",
        "passwordauthentication",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/host_settings.rs",
        "preferredauthentications",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/host_settings.rs",
        "pubkeyauthentication",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/host_settings.rs",
        "publickey",
        "an SSH login method's protocol name (RFC 4252), as the server offers it and `PreferredAuthentications` lists it",
    ),
    (
        "src/remote/host_settings.rs",
        "serveralivecountmax",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/host_settings.rs",
        "serveraliveinterval",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/mod.rs",
        "LinkOptions",
        "a name in `LinkOptions`'s `fmt::Debug` output (`debug_struct` / `field`), never shown to a user",
    ),
    (
        "src/remote/mod.rs",
        "nvidia-smi",
        "the default `nvidia_smi` command run on the host",
    ),
    (
        "src/remote/mod.rs",
        "prompter",
        "a name in `LinkOptions`'s `fmt::Debug` output (`debug_struct` / `field`), never shown to a user",
    ),
    (
        "src/remote/link/mux.rs",
        "gpufleet closing the link",
        "the description of the SSH disconnect message sent to the host as the connection closes (the host's sshd may log it); never shown here",
    ),
    (
        "src/remote/proxy_config.rs",
        "ProxyCommand",
        "an ssh_config keyword as OpenSSH spells it, named in a refusal whose reason is `option_words` catalogue text",
    ),
    (
        "src/remote/proxy_config.rs",
        "ProxyJump",
        "an ssh_config keyword as OpenSSH spells it, named in a refusal whose reason is `option_words` catalogue text",
    ),
    (
        "src/remote/proxy_config.rs",
        "proxycommand",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/proxy_config.rs",
        "proxyjump",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/link/queries.rs",
        "nvidia-smi ended without an exit status",
        "a line added, after the host's own output, to the raw evidence of unreadable GPUs (`HostEvent::Lost`'s `raw`), kept as recorded like accel_poll's `exit status {code}`; the status and findings around it are catalogue words",
    ),
    (
        "src/remote/link/queries.rs",
        "nvidia-smi exited with status {code}",
        "a line added, after the host's own output, to the raw evidence of unreadable GPUs (`HostEvent::Lost`'s `raw`), kept as recorded like accel_poll's `exit status {code}`; the status and findings around it are catalogue words",
    ),
    (
        "src/remote/link/session.rs",
        "ssh {}",
        "where a host's readings come from, `ssh TARGET` (a command and a target, shown as is by `app::words::source`): the source's name in logs and recordings",
    ),
    (
        "src/remote/ssh_config_file.rs",
        "certificatefile",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/ssh_config_file.rs",
        "hostname",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/ssh_config_file.rs",
        "identityfile",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/ssh_config_file.rs",
        "tag",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/ssh_config_file.rs",
        "user",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/ssh_config_match.rs",
        "all",
        "a `Match` criterion of ssh_config, lower-cased as the reader matches it",
    ),
    (
        "src/remote/ssh_config_match.rs",
        "canonical",
        "a `Match` criterion of ssh_config, lower-cased as the reader matches it",
    ),
    (
        "src/remote/ssh_config_match.rs",
        "exec",
        "a `Match` criterion of ssh_config, lower-cased as the reader matches it",
    ),
    (
        "src/remote/ssh_config_match.rs",
        "final",
        "a `Match` criterion of ssh_config, lower-cased as the reader matches it",
    ),
    (
        "src/remote/ssh_config_match.rs",
        "host",
        "a `Match` criterion of ssh_config, lower-cased as the reader matches it",
    ),
    (
        "src/remote/ssh_config_match.rs",
        "localnetwork",
        "a `Match` criterion of ssh_config, lower-cased as the reader matches it",
    ),
    (
        "src/remote/ssh_config_match.rs",
        "localuser",
        "a `Match` criterion of ssh_config, lower-cased as the reader matches it",
    ),
    (
        "src/remote/ssh_config_match.rs",
        "originalhost",
        "a `Match` criterion of ssh_config, lower-cased as the reader matches it",
    ),
    (
        "src/remote/ssh_config_match.rs",
        "sessiontype",
        "a `Match` criterion of ssh_config, lower-cased as the reader matches it",
    ),
    (
        "src/remote/ssh_config_match.rs",
        "tagged",
        "a `Match` criterion of ssh_config, lower-cased as the reader matches it",
    ),
    (
        "src/remote/ssh_config_match.rs",
        "user",
        "a `Match` criterion of ssh_config, lower-cased as the reader matches it",
    ),
    (
        "src/remote/ssh_config_match.rs",
        "version",
        "a `Match` criterion of ssh_config, lower-cased as the reader matches it",
    ),
    (
        "src/remote/ssh_options.rs",
        "HostKeyAlias",
        "an ssh_config keyword as OpenSSH spells it, named in a refusal whose reason is `option_words` catalogue text",
    ),
    (
        "src/remote/ssh_options.rs",
        "KnownHostsCommand",
        "an ssh_config keyword as OpenSSH spells it, named in a refusal whose reason is `option_words` catalogue text",
    ),
    (
        "src/remote/ssh_options.rs",
        "RevokedHostKeys",
        "an ssh_config keyword as OpenSSH spells it, named in a refusal whose reason is `option_words` catalogue text",
    ),
    (
        "src/remote/ssh_options.rs",
        "StrictHostKeyChecking",
        "an ssh_config keyword as OpenSSH spells it, named in a refusal whose reason is `option_words` catalogue text",
    ),
    (
        "src/remote/ssh_options.rs",
        "UserKnownHostsFile",
        "an ssh_config keyword as OpenSSH spells it, named in a refusal whose reason is `option_words` catalogue text",
    ),
    (
        "src/remote/ssh_options.rs",
        "globalknownhostsfile",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/ssh_options.rs",
        "hostkeyalias",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/ssh_options.rs",
        "knownhostscommand",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/ssh_options.rs",
        "revokedhostkeys",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/ssh_options.rs",
        "stricthostkeychecking",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/ssh_options.rs",
        "userknownhostsfile",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/target.rs",
        ".ssh",
        "a path: the `~/.ssh` folder, where the ssh config, its includes and the default keys live",
    ),
    (
        "src/remote/target.rs",
        "HostName",
        "an ssh_config keyword as OpenSSH spells it, named in a refusal whose reason is `option_words` catalogue text",
    ),
    (
        "src/remote/target.rs",
        "IdentityFile",
        "an ssh_config keyword as OpenSSH spells it, named in a refusal whose reason is `option_words` catalogue text",
    ),
    (
        "src/remote/target.rs",
        "LOGNAME",
        "an environment variable's name",
    ),
    (
        "src/remote/target.rs",
        "Port",
        "an ssh_config keyword as OpenSSH spells it, named in a refusal whose reason is `option_words` catalogue text",
    ),
    (
        "src/remote/target.rs",
        "USER",
        "an environment variable's name",
    ),
    (
        "src/remote/target.rs",
        "hostname",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/target.rs",
        "identityfile",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/target.rs",
        "port",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/target.rs",
        "root",
        "the local user name taken when `USER` and `LOGNAME` are unset: a login name (the default remote user, OpenSSH's `%u`)",
    ),
    (
        "src/remote/target.rs",
        "user",
        "an ssh_config keyword, lower-cased as the config reader stores and looks it up",
    ),
    (
        "src/remote/target.rs",
        "~/.ssh/config",
        "a path: the ssh config a refusal names when no config file was read",
    ),
    (
        "src/remote/link/task.rs",
        "ssh-links",
        "the name of the links' runtime threads (`thread_name`)",
    ),
    // --- check, job, playbook, recording, alerts ---
    // recording (h3)
    (
        "src/recording/writer.rs",
        "--record {}: {e}",
        "the flag, the file and the OS's own error: no words of gpufleet's",
    ),
    (
        "src/recording/writer.rs",
        "--record {}: {source}",
        "the flag, the file and the OS's own error: no words of gpufleet's",
    ),
    (
        "src/recording/blackbox.rs",
        "ndjson",
        "the file extension of a black-box segment",
    ),
    (
        "src/recording/demo_runs.rs",
        "run-",
        "the name prefix of a demo run's black-box folder",
    ),
    (
        "src/recording/blackbox.rs",
        "lock",
        "the name of the lock file in a host's black-box folder",
    ),
    (
        "src/recording/blackbox.rs",
        "blackbox",
        "the black box's folder name under the state directory",
    ),
    (
        "src/recording/blackbox.rs",
        "demo",
        "the demo fleet's black-box folder name",
    ),
    (
        "src/recording/wire.rs",
        "gpufleet-recording",
        "the header's `format` value in the recording's wire format",
    ),
    (
        "src/recording/wire.rs",
        "kind",
        "serde's tag field of an event line in the recording's wire format",
    ),
    // check, job (h3)
    (
        "src/check/report.rs",
        "pass",
        "a verdict's identifier as the JSON report and the incident bundle write it (serde lowercase); the text report says it through check_report.*",
    ),
    (
        "src/check/report.rs",
        "skip",
        "a verdict's identifier as the JSON report and the incident bundle write it (serde lowercase); the text report says it through check_report.*",
    ),
    (
        "src/check/report.rs",
        "warn",
        "a verdict's identifier as the JSON report and the incident bundle write it (serde lowercase); the text report says it through check_report.*",
    ),
    (
        "src/check/report.rs",
        "fail",
        "a verdict's identifier as the JSON report and the incident bundle write it (serde lowercase); the text report says it through check_report.*",
    ),
    (
        "src/check/storage.rs",
        "checks",
        "the folder of kept check reports under the state directory",
    ),
    (
        "src/check/storage.rs",
        "{y:04}-{mo:02}-{d:02}T{h:02}-{mi:02}-{s:02}.{ms:03}Z.json",
        "a kept report's file name (UTC time, .json)",
    ),
    (
        "src/job/formats.rs",
        "step",
        "a named capture group of the user's `pattern`, as the config documents it",
    ),
    (
        "src/job/formats.rs",
        "total",
        "a named capture group of the user's `pattern`, as the config documents it",
    ),
    (
        "src/job/formats.rs",
        "loss",
        "a named capture group of the user's `pattern`, as the config documents it",
    ),
    (
        "src/job/log.rs",
        "Traceback (most recent call last):",
        "Python's own traceback header, looked for in training logs",
    ),
    (
        "src/job/log.rs",
        "Hugging Face Trainer",
        "a library's name, the same in every language",
    ),
    (
        "src/job/log.rs",
        "tqdm",
        "a library's name, the same in every language",
    ),
    (
        "src/job/log.rs",
        "Lightning",
        "a library's name, the same in every language",
    ),
    (
        "src/job/fit.rs",
        "bf16",
        "a dtype as PyTorch and the `--precision` flag write it, the same in every language",
    ),
    (
        "src/job/fit.rs",
        "fp16",
        "a dtype as PyTorch and the `--precision` flag write it, the same in every language",
    ),
    (
        "src/job/fit.rs",
        "fp32",
        "a dtype as PyTorch and the `--precision` flag write it, the same in every language",
    ),
    (
        "src/job/fit.rs",
        "AdamW",
        "an optimizer's name (PyTorch's torch.optim.AdamW), the same in every language",
    ),
    (
        "src/job/fit.rs",
        "8-bit AdamW",
        "an optimizer's name (bitsandbytes' AdamW8bit), the same in every language",
    ),
    (
        "src/job/fit.rs",
        "SGD",
        "an optimizer's name; the reader's words for SGD with momentum are cli_fit.optimizer_sgd",
    ),
    // alerts (h3)
    (
        "src/alerts/answer.rs",
        "HTTP {status}{}",
        "the HTTP status and the service's own answer, quoted: no words of gpufleet's",
    ),
    (
        "src/alerts/answer.rs",
        "errcode",
        "a field read from DingTalk's and WeCom's JSON answers",
    ),
    (
        "src/alerts/answer.rs",
        "code",
        "a field read from Feishu's JSON answer",
    ),
    (
        "src/alerts/answer.rs",
        "StatusCode",
        "a field read from Feishu's JSON answer",
    ),
    (
        "src/alerts/sink.rs",
        "url",
        "the config key the address came from, as the error names it",
    ),
    (
        "src/alerts/sink.rs",
        "[[alerts]]",
        "the config table that names the sink's secrets, as the config writes it",
    ),
    (
        "src/alerts/sink.rs",
        "token",
        "the secret's name, said as release_error.what_token",
    ),
    ("src/alerts/sink.rs", "https", "a URL scheme"),
    (
        "src/alerts/sink.rs",
        "Content-Type",
        "an HTTP header as the service's API documents it",
    ),
    (
        "src/alerts/sink.rs",
        "application/json",
        "an HTTP content type",
    ),
    (
        "src/alerts/sink.rs",
        "text/plain; charset=utf-8",
        "an HTTP content type",
    ),
    (
        "src/alerts/sink.rs",
        "Title",
        "ntfy's header, as its API documents it",
    ),
    (
        "src/alerts/sink.rs",
        "Priority",
        "ntfy's header, as its API documents it",
    ),
    (
        "src/alerts/sink.rs",
        "Tags",
        "ntfy's header, as its API documents it",
    ),
    (
        "src/alerts/sink.rs",
        "Authorization",
        "an HTTP header as the service's API documents it",
    ),
    (
        "src/alerts/sink.rs",
        "Bearer {}",
        "the Authorization header's scheme, as HTTP writes it",
    ),
    (
        "src/alerts/sink.rs",
        "text",
        "a key of the service's JSON body, as its API documents it",
    ),
    (
        "src/alerts/sink.rs",
        "timestamp",
        "a field of Feishu's body and DingTalk's query, as their APIs document them",
    ),
    (
        "src/alerts/sink.rs",
        "sign",
        "a field of Feishu's body and DingTalk's query, as their APIs document them",
    ),
    (
        "src/alerts/sink.rs",
        "warning",
        "an ntfy tag name (shown by ntfy as an emoji)",
    ),
    // check (h3)
    (
        "src/check/expect.rs",
        "--expect-gpu",
        "a command-line flag's name, as typed and as the errors name it",
    ),
    (
        "src/check/expect.rs",
        "--expect-count",
        "a command-line flag's name, as typed and as the errors name it",
    ),
    (
        "src/check/expect.rs",
        "--expect-memory-gib",
        "a command-line flag's name, as typed and as the errors name it",
    ),
    (
        "src/check/expect.rs",
        "--min-cuda",
        "a command-line flag's name, as typed and as the errors name it",
    ),
    (
        "src/check/expect.rs",
        "MAX",
        "a variant word looked for in nvidia-smi's GPU name (upper-cased), not shown",
    ),
    (
        "src/check/expect.rs",
        "MOBILE",
        "a variant word looked for in nvidia-smi's GPU name (upper-cased), not shown",
    ),
    (
        "src/check/probe.rs",
        "probe.py",
        "the embedded script's file, for include_str!",
    ),
    (
        "src/check/probe.rs",
        "index",
        "a field name of `nvidia-smi --query-gpu`, sent to the host and matched in the probe's sample header",
    ),
    (
        "src/check/probe.rs",
        "uuid",
        "a field name of `nvidia-smi --query-gpu`, sent to the host and matched in the probe's sample header",
    ),
    (
        "src/check/probe.rs",
        "utilization.gpu",
        "a field name of `nvidia-smi --query-gpu`, sent to the host and matched in the probe's sample header",
    ),
    (
        "src/check/probe.rs",
        "memory.used",
        "a field name of `nvidia-smi --query-gpu`, sent to the host and matched in the probe's sample header",
    ),
    (
        "src/check/probe.rs",
        "temperature.gpu",
        "a field name of `nvidia-smi --query-gpu`, sent to the host and matched in the probe's sample header",
    ),
    (
        "src/check/probe.rs",
        "power.draw",
        "a field name of `nvidia-smi --query-gpu`, sent to the host and matched in the probe's sample header",
    ),
    (
        "src/check/probe.rs",
        "enforced.power.limit",
        "a field name of `nvidia-smi --query-gpu`, sent to the host and matched in the probe's sample header",
    ),
    (
        "src/check/probe.rs",
        "clocks.sm",
        "a field name of `nvidia-smi --query-gpu`, sent to the host and matched in the probe's sample header",
    ),
    (
        "src/check/probe.rs",
        "clocks.max.sm",
        "a field name of `nvidia-smi --query-gpu`, sent to the host and matched in the probe's sample header",
    ),
    (
        "src/check/probe.rs",
        "clocks_event_reasons.active",
        "a field name of `nvidia-smi --query-gpu`, sent to the host and matched in the probe's sample header",
    ),
    (
        "src/check/probe.rs",
        "pcie.link.gen.current",
        "a field name of `nvidia-smi --query-gpu`, sent to the host and matched in the probe's sample header",
    ),
    (
        "src/check/probe.rs",
        "pcie.link.gen.max",
        "a field name of `nvidia-smi --query-gpu`, sent to the host and matched in the probe's sample header",
    ),
    (
        "src/check/probe.rs",
        "pcie.link.width.current",
        "a field name of `nvidia-smi --query-gpu`, sent to the host and matched in the probe's sample header",
    ),
    (
        "src/check/probe.rs",
        "pcie.link.width.max",
        "a field name of `nvidia-smi --query-gpu`, sent to the host and matched in the probe's sample header",
    ),
    (
        "src/check/probe.rs",
        "--sustain-s",
        "a flag of the probe script (probe.py), sent to the host",
    ),
    (
        "src/check/probe.rs",
        "--bench-s",
        "a flag of the probe script (probe.py), sent to the host",
    ),
    (
        "src/check/probe.rs",
        "--matmul-n",
        "a flag of the probe script (probe.py), sent to the host",
    ),
    (
        "src/check/probe.rs",
        "--vram-fraction",
        "a flag of the probe script (probe.py), sent to the host",
    ),
    (
        "src/check/probe.rs",
        "--window-s",
        "a flag of the probe script (probe.py), sent to the host",
    ),
    (
        "src/check/probe.rs",
        "--sample-ms",
        "a flag of the probe script (probe.py), sent to the host",
    ),
    (
        "src/check/probe.rs",
        "--sample-fields",
        "a flag of the probe script (probe.py), sent to the host",
    ),
    (
        "src/check/probe.rs",
        "--nvidia-smi",
        "a flag of the probe script (probe.py), sent to the host",
    ),
    (
        "src/check/vendor.rs",
        "identity.cuda",
        "a check's id (the report's and its JSON's identifier), the same in every language",
    ),
    (
        "src/check/vendor.rs",
        "identity.torch",
        "a check's id (the report's and its JSON's identifier), the same in every language",
    ),
    (
        "src/check/vendor.rs",
        "health.xid",
        "a check's id (the report's and its JSON's identifier), the same in every language",
    ),
    (
        "src/check/vendor.rs",
        "health.ecc",
        "a check's id (the report's and its JSON's identifier), the same in every language",
    ),
    (
        "src/check/vendor.rs",
        "health.retirement",
        "a check's id (the report's and its JSON's identifier), the same in every language",
    ),
    (
        "src/check/vendor.rs",
        "health.persistence",
        "a check's id (the report's and its JSON's identifier), the same in every language",
    ),
    (
        "src/check/vendor.rs",
        "power.limit",
        "a check's id (the report's and its JSON's identifier), the same in every language",
    ),
    (
        "src/check/vendor.rs",
        "pcie.link",
        "a check's id (the report's and its JSON's identifier), the same in every language",
    ),
    (
        "src/check/vendor.rs",
        "vram.usable",
        "a check's id (the report's and its JSON's identifier), the same in every language",
    ),
    (
        "src/check/vendor.rs",
        "throughput.matmul",
        "a check's id (the report's and its JSON's identifier), the same in every language",
    ),
    (
        "src/check/vendor.rs",
        "throughput.copy",
        "a check's id (the report's and its JSON's identifier), the same in every language",
    ),
    (
        "src/check/vendor.rs",
        "sustained.load",
        "a check's id (the report's and its JSON's identifier), the same in every language",
    ),
    // playbook (h3)
    (
        "src/runbook/runner/mod.rs",
        "uid",
        "the fact's name (the login's user id), looked up, not shown",
    ),
    (
        "src/runbook/runner/mod.rs",
        "sudo",
        "the command put in front of a root step, sent to the host as is",
    ),
    (
        "src/runbook/runner/mod.rs",
        "-n",
        "sudo's non-interactive flag, sent to the host as is",
    ),
    // --- providers, telemetry and the rest ---
    (
        "src/audit.rs",
        "audit.jsonl",
        "the audit log's file name in the state directory",
    ),
    (
        "src/cost/store.rs",
        "ledger.json",
        "the ledger's file name in the state directory",
    ),
    (
        "src/duty.rs",
        "auto-release.lock",
        "the auto-release duty's lock file name in the state directory",
    ),
    (
        "src/duty.rs",
        "alerts.lock",
        "the alerting duty's lock file name in the state directory",
    ),
    (
        "src/fleet/host.rs",
        "connecting",
        "the engine's status word: the `status` value of `snapshot --json` and the English that the console's own words (`app::words::status`, from the catalogue) are tested against",
    ),
    (
        "src/fleet/host.rs",
        "connecting #{attempt}",
        "the engine's status word: the `status` value of `snapshot --json` and the English that the console's own words (`app::words::status`, from the catalogue) are tested against",
    ),
    (
        "src/fleet/host.rs",
        "live",
        "the engine's status word: the `status` value of `snapshot --json` and the English that the console's own words (`app::words::status`, from the catalogue) are tested against",
    ),
    (
        "src/fleet/host.rs",
        "stale {}",
        "the engine's status word: the `status` value of `snapshot --json` and the English that the console's own words (`app::words::status`, from the catalogue) are tested against",
    ),
    (
        "src/fleet/host.rs",
        "unreachable",
        "the engine's status word: the `status` value of `snapshot --json` and the English that the console's own words (`app::words::status`, from the catalogue) are tested against",
    ),
    (
        "src/fleet/host.rs",
        "flooding",
        "the engine's status word: the `status` value of `snapshot --json` and the English that the console's own words (`app::words::status`, from the catalogue) are tested against",
    ),
    (
        "src/snapshot.rs",
        "gone",
        "a host's `status` value in `snapshot --json`: an identifier scripts match",
    ),
    (
        "src/snapshot.rs",
        "live",
        "a host's `status` value in `snapshot --json`: an identifier scripts match",
    ),
    (
        "src/snapshot.rs",
        "stale",
        "a host's `status` value in `snapshot --json`: an identifier scripts match",
    ),
    (
        "src/snapshot.rs",
        "connecting",
        "a host's `status` value in `snapshot --json`: an identifier scripts match",
    ),
    ("src/commands/allocator.rs", "linux", "a `cfg` target name"),
    ("src/commands/allocator.rs", "gnu", "a `cfg` target name"),
    (
        "src/main.rs",
        "local",
        "the check target's name for this machine (`check --local`), as the results file names it",
    ),
    (
        "src/commands/fleet_drive.rs",
        "gpufleet replay: {e}",
        "the command's name before its error, as every command's error line starts; the error is the catalogue's",
    ),
    (
        "src/commands/console.rs",
        "dark",
        "the default theme's name",
    ),
    (
        "src/commands/console.rs",
        "console started",
        "a log line in gpufleet.log (log lines stay English, for grep and bug reports)",
    ),
    (
        "src/commands/console.rs",
        "gpufleet console",
        "this process's name in the duty lock files (`gpufleet console (pid N)`), quoted by the other processes",
    ),
    (
        "src/commands/console.rs",
        "checks",
        "the check results' folder name",
    ),
    (
        "src/commands/console.rs",
        "console",
        "the command's name before a provider inventory error (`gpufleet console: ...`)",
    ),
    (
        "src/release/plan_json.rs",
        "http",
        "a release step's `kind` in the plan's JSON: an identifier",
    ),
    (
        "src/release/plan_json.rs",
        "bearer",
        "an HTTP step's `auth` scheme in the plan's JSON: an identifier",
    ),
    (
        "src/release/plan_json.rs",
        "bare",
        "an HTTP step's `auth` scheme in the plan's JSON: an identifier",
    ),
    (
        "src/release/plan_json.rs",
        "local",
        "a release step's `kind` in the plan's JSON: an identifier",
    ),
    (
        "src/state_file.rs",
        "state",
        "the file-name stem used for a state file's lock and temporary files when its path has no file name",
    ),
    (
        "src/state_file.rs",
        ".{}.lock",
        "a state file's lock file name",
    ),
    ("src/state_file.rs", ".tmp", "the temporary file's suffix"),
    (
        "src/state_file.rs",
        "{who} (pid {})",
        "what a process lock file holds: the process's name and pid, quoted by the others as the holder",
    ),
    (
        "src/state_file.rs",
        "HOME",
        "an environment variable's name",
    ),
    ("src/theme.rs", "dark", "a bundled theme's name"),
    ("src/theme.rs", "light", "a bundled theme's name"),
    ("src/theme.rs", "high-contrast", "a bundled theme's name"),
    ("src/theme.rs", "ansi16", "a bundled theme's name"),
    (
        "src/theme.rs",
        "../themes/dark.toml",
        "a bundled theme's file, compiled in",
    ),
    (
        "src/theme.rs",
        "../themes/light.toml",
        "a bundled theme's file, compiled in",
    ),
    (
        "src/theme.rs",
        "../themes/high-contrast.toml",
        "a bundled theme's file, compiled in",
    ),
    (
        "src/theme.rs",
        "../themes/ansi16.toml",
        "a bundled theme's file, compiled in",
    ),
    (
        "src/theme/spec.rs",
        "String",
        "serde's `try_from` type: Rust, never shown",
    ),
    (
        "src/theme.rs",
        "themes/{name}.toml (built in)",
        "the name a bundled theme's parse error would carry; bundled themes always parse (a test keeps them valid) and the result is dropped with `.ok()`",
    ),
    ("src/theme.rs", "{name}.toml", "a user theme's file name"),
    (
        "src/theme/spec.rs",
        "reset",
        "a colour's name as theme files write it (the config's values)",
    ),
    (
        "src/theme/spec.rs",
        "black",
        "a colour's name as theme files write it (the config's values)",
    ),
    (
        "src/theme/spec.rs",
        "red",
        "a colour's name as theme files write it (the config's values)",
    ),
    (
        "src/theme/spec.rs",
        "green",
        "a colour's name as theme files write it (the config's values)",
    ),
    (
        "src/theme/spec.rs",
        "yellow",
        "a colour's name as theme files write it (the config's values)",
    ),
    (
        "src/theme/spec.rs",
        "blue",
        "a colour's name as theme files write it (the config's values)",
    ),
    (
        "src/theme/spec.rs",
        "magenta",
        "a colour's name as theme files write it (the config's values)",
    ),
    (
        "src/theme/spec.rs",
        "cyan",
        "a colour's name as theme files write it (the config's values)",
    ),
    (
        "src/theme/spec.rs",
        "gray",
        "a colour's name as theme files write it (the config's values)",
    ),
    (
        "src/theme/spec.rs",
        "darkgray",
        "a colour's name as theme files write it (the config's values)",
    ),
    (
        "src/theme/spec.rs",
        "lightred",
        "a colour's name as theme files write it (the config's values)",
    ),
    (
        "src/theme/spec.rs",
        "lightgreen",
        "a colour's name as theme files write it (the config's values)",
    ),
    (
        "src/theme/spec.rs",
        "lightyellow",
        "a colour's name as theme files write it (the config's values)",
    ),
    (
        "src/theme/spec.rs",
        "lightblue",
        "a colour's name as theme files write it (the config's values)",
    ),
    (
        "src/theme/spec.rs",
        "lightmagenta",
        "a colour's name as theme files write it (the config's values)",
    ),
    (
        "src/theme/spec.rs",
        "lightcyan",
        "a colour's name as theme files write it (the config's values)",
    ),
    (
        "src/theme/spec.rs",
        "white",
        "a colour's name as theme files write it (the config's values)",
    ),
    (
        "src/telemetry/local.rs",
        "PATH",
        "an environment variable's name",
    ),
    (
        "src/telemetry/local.rs",
        "rocm-smi",
        "a vendor tool's program name",
    ),
    (
        "src/telemetry/local_rocm.rs",
        "rocm-smi",
        "a vendor tool's program name",
    ),
    (
        "src/telemetry/local_rocm.rs",
        "local {ROCM_SMI}",
        "the reading's source as the engine names it; the console says it in the catalogue's words (`app::words::source`, `clock_words.local`)",
    ),
    (
        "src/telemetry/local_rocm.rs",
        "ended without an exit status",
        "the raw evidence line of an unreadable vendor tool (the finding's own words are the catalogue's)",
    ),
    (
        "src/telemetry/local_rocm.rs",
        "exit status {code}",
        "the raw evidence line of an unreadable vendor tool (the finding's own words are the catalogue's)",
    ),
    (
        "src/telemetry/model.rs",
        "idle",
        "a clock-event reason's English as the engine names it; the console shows the catalogue's `clock_words.*` (a test keeps this English equal to the catalogue's)",
    ),
    (
        "src/telemetry/model.rs",
        "app clocks",
        "a clock-event reason's English as the engine names it; the console shows the catalogue's `clock_words.*` (a test keeps this English equal to the catalogue's)",
    ),
    (
        "src/telemetry/model.rs",
        "power cap",
        "a clock-event reason's English as the engine names it; the console shows the catalogue's `clock_words.*` (a test keeps this English equal to the catalogue's)",
    ),
    (
        "src/telemetry/model.rs",
        "hardware slowdown",
        "a clock-event reason's English as the engine names it; the console shows the catalogue's `clock_words.*` (a test keeps this English equal to the catalogue's)",
    ),
    (
        "src/telemetry/model.rs",
        "sync boost",
        "a clock-event reason's English as the engine names it; the console shows the catalogue's `clock_words.*` (a test keeps this English equal to the catalogue's)",
    ),
    (
        "src/telemetry/model.rs",
        "thermal slowdown",
        "a clock-event reason's English as the engine names it; the console shows the catalogue's `clock_words.*` (a test keeps this English equal to the catalogue's)",
    ),
    (
        "src/telemetry/model.rs",
        "hw thermal slowdown",
        "a clock-event reason's English as the engine names it; the console shows the catalogue's `clock_words.*` (a test keeps this English equal to the catalogue's)",
    ),
    (
        "src/telemetry/model.rs",
        "power brake",
        "a clock-event reason's English as the engine names it; the console shows the catalogue's `clock_words.*` (a test keeps this English equal to the catalogue's)",
    ),
    (
        "src/telemetry/model.rs",
        "display clocks",
        "a clock-event reason's English as the engine names it; the console shows the catalogue's `clock_words.*` (a test keeps this English equal to the catalogue's)",
    ),
    (
        "src/telemetry/model.rs",
        "GPU lost",
        "a lost reason's English as the engine names it (the log's field, the snapshot's status); what a user reads is `LostReason::said`, the catalogue's `status.lost.*` (a test keeps the two English equal)",
    ),
    (
        "src/telemetry/model.rs",
        "driver not loaded",
        "a lost reason's English as the engine names it (the log's field, the snapshot's status); what a user reads is `LostReason::said`, the catalogue's `status.lost.*` (a test keeps the two English equal)",
    ),
    (
        "src/telemetry/model.rs",
        "driver/library mismatch",
        "a lost reason's English as the engine names it (the log's field, the snapshot's status); what a user reads is `LostReason::said`, the catalogue's `status.lost.*` (a test keeps the two English equal)",
    ),
    (
        "src/telemetry/model.rs",
        "no devices",
        "a lost reason's English as the engine names it (the log's field, the snapshot's status); what a user reads is `LostReason::said`, the catalogue's `status.lost.*` (a test keeps the two English equal)",
    ),
    (
        "src/telemetry/model.rs",
        "telemetry failed",
        "a lost reason's English as the engine names it (the log's field, the snapshot's status); what a user reads is `LostReason::said`, the catalogue's `status.lost.*` (a test keeps the two English equal)",
    ),
    (
        "src/telemetry/model.rs",
        "nvidia-smi missing",
        "a lost reason's English as the engine names it (the log's field, the snapshot's status); what a user reads is `LostReason::said`, the catalogue's `status.lost.*` (a test keeps the two English equal)",
    ),
    (
        "src/telemetry/df.rs",
        "/dev/shm",
        "a path given to `df` on the host, and read back from the marker of its answer",
    ),
    (
        "src/telemetry/df.rs",
        "/proc/{pid}/cwd",
        "a job's working directory as a path given to `df` on the host, read back from the marker of its answer",
    ),
    (
        "src/providers/account.rs",
        "token",
        "what the secret is, as `release::secret_words` names it: it says `release_error.what_token` in the user's words",
    ),
    (
        "src/providers/account.rs",
        "[[providers]]",
        "the config table the token keys belong in, as the file writes it",
    ),
    (
        "src/providers/fetch.rs",
        "429, waiting",
        "a debug line in gpufleet.log (log lines stay English, for grep and bug reports)",
    ),
    (
        "src/providers/fetch.rs",
        "application/json",
        "an HTTP content type",
    ),
    (
        "src/providers/model.rs",
        "running",
        "an instance state's name in the stored inventory and `providers sync --json`: an identifier",
    ),
    (
        "src/providers/model.rs",
        "stopped",
        "an instance state's name in the stored inventory and `providers sync --json`: an identifier",
    ),
    (
        "src/providers/model.rs",
        "other",
        "an instance state's name in the stored inventory and `providers sync --json`: an identifier",
    ),
    (
        "src/providers/store.rs",
        "inventory.json",
        "the stored inventory's file name in the state directory",
    ),
    (
        "src/providers/store.rs",
        "version",
        "the stored inventory's JSON key",
    ),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A catalogue as flat `key -> text`, nested tables joined with dots as rust-i18n reads them.
fn catalogue(lang: &str) -> BTreeMap<String, String> {
    let path = root().join("locales").join(format!("{lang}.toml"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let table: toml::Table =
        toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = BTreeMap::new();
    flatten("", &toml::Value::Table(table), &mut out, &path);
    out
}

fn flatten(prefix: &str, value: &toml::Value, out: &mut BTreeMap<String, String>, path: &Path) {
    match value {
        toml::Value::Table(table) => {
            for (k, v) in table {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out, path);
            }
        }
        toml::Value::String(s) => {
            out.insert(prefix.to_string(), s.clone());
        }
        other => panic!("{}: {prefix} is not text: {other:?}", path.display()),
    }
}

/// The `%{name}` placeholders of a catalogue text.
fn placeholders(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("%{") {
        let after = &rest[at + 2..];
        match after.find('}') {
            Some(end) => {
                out.insert(after[..end].to_string());
                rest = &after[end + 1..];
            }
            None => break,
        }
    }
    out
}

#[test]
fn both_catalogues_hold_the_same_keys_none_empty_with_the_same_placeholders() {
    let en = catalogue("en");
    let zh = catalogue("zh-CN");
    assert!(
        en.len() > 100,
        "the English catalogue holds {} texts",
        en.len()
    );
    let only_en: Vec<&String> = en.keys().filter(|k| !zh.contains_key(*k)).collect();
    let only_zh: Vec<&String> = zh.keys().filter(|k| !en.contains_key(*k)).collect();
    assert!(only_en.is_empty(), "missing from zh-CN.toml: {only_en:?}");
    assert!(only_zh.is_empty(), "missing from en.toml: {only_zh:?}");
    for (lang, texts) in [("en", &en), ("zh-CN", &zh)] {
        let empty: Vec<&String> = texts
            .iter()
            .filter(|(_, v)| v.trim().is_empty())
            .map(|(k, _)| k)
            .collect();
        assert!(empty.is_empty(), "empty texts in {lang}.toml: {empty:?}");
    }
    for (key, text) in &en {
        assert_eq!(
            placeholders(text),
            placeholders(&zh[key]),
            "{key}: the two languages put in different values"
        );
    }
    for (lang, texts) in [("en", &en), ("zh-CN", &zh)] {
        // Texts with choices (`VRAM GiB|VRAM|GiB`, longest first) have no empty choice.
        for (key, text) in texts.iter().filter(|(_, v)| v.contains('|')) {
            assert!(
                text.split('|').all(|choice| !choice.trim().is_empty()),
                "{lang}.toml {key}: an empty choice in {text:?}"
            );
        }
    }
}

#[test]
fn chinese_texts_are_chinese() {
    let zh = catalogue("zh-CN");
    let en = catalogue("en");
    // A text copied over untranslated is a missing translation, except where the English is
    // all names and units (`$/h`, `ECC`, `GPU|...`).
    let untranslated: Vec<&String> = zh
        .iter()
        .filter(|(k, v)| en[*k] == **v && words(v).iter().any(|w| !NOT_TEXT.contains(&w.as_str())))
        .map(|(k, _)| k)
        .collect();
    assert!(untranslated.is_empty(), "same as English: {untranslated:?}");
}

#[test]
fn the_help_close_hint_is_the_catalogues_english() {
    assert_eq!(
        catalogue("en")["help.close_hint"],
        gpufleet::app::keymap::HELP_CLOSE_HINT
    );
}

#[test]
fn every_help_binding_names_a_catalogue_text() {
    let en = catalogue("en");
    for (keys, what) in gpufleet::app::keymap::BINDINGS {
        assert!(en.contains_key(*what), "{keys}: no text {what}");
    }
}

/// The words of a text: runs of letters once `{...}` placeholders are taken out.
fn words(text: &str) -> Vec<String> {
    let mut bare = String::new();
    let mut depth = 0;
    for c in text.chars() {
        match c {
            '{' => depth += 1,
            '}' if depth > 0 => depth -= 1,
            _ if depth == 0 => bare.push(c),
            _ => {}
        }
    }
    bare.split(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// Whether `text` reads like a catalogue key: `section.name`, lower case.
fn looks_like_key(text: &str) -> bool {
    let mut parts = text.split('.');
    let valid = |p: &str| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    };
    text.contains('.') && parts.all(valid)
}

/// A literal that never reaches the screen: a `t!` key, compared, a thread name, Debug text, a
/// JSON key or a serde attribute; or reaches only the log (`tracing::warn!(...)`), which stays
/// English in every language, as one greps it and pastes it into a bug report.
fn never_shown(lit: &Literal) -> bool {
    let before = lit.before.as_str();
    let after = lit.after.as_str();
    let t_key = before.strip_suffix("t!(").is_some_and(|rest| {
        !rest
            .chars()
            .last()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    });
    // A JSON object's key (`json!({ "host": ... })`): nothing else in Rust puts a literal
    // right before a single colon.
    let json_key = after.starts_with(':') && !after.starts_with("::");
    lit.byte
        || t_key
        || [
            ".name(",
            ".name(format!(",
            "write!(f,",
            "f.write_str(",
            "==",
            "!=",
            "starts_with(",
        ]
        .iter()
        .any(|end| before.ends_with(end))
        || after.starts_with("=>")
        || json_key
        || before.ends_with("rename_all=")
        || before.ends_with("skip_serializing_if=")
        || is_identifier(&lit.text)
        || is_needle(before)
        || after.starts_with(".len()")
        // A JSON value's field, read or set (`value["error"]`): a key.
        || (after.starts_with(']')
            && before.strip_suffix('[').is_some_and(|rest| {
                rest.chars()
                    .last()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ']' || c == ')')
            }))
        || before.contains("tracing::")
        // The name of a notice's value (`.put("field", field)`): a placeholder, not text.
        || before.ends_with(".put(")
        || before.ends_with(".put_words(")
        // A config key as the file writes it (`path.key("price_per_hour")`, the key path a
        // config error names) or serde's name for one (`#[serde(rename = "vast")]`):
        // identifiers, the same in every language.
        || before.ends_with(".key(")
        || before.ends_with("rename=")
        || after.starts_with("|\"_\"")
        || after.starts_with("==")
        || (before.ends_with('|') && after.starts_with("=>"))
}

/// An identifier, not language: `gpu_lost`, `xid_79`, NVIDIA's `RESTART_BM` or
/// `ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS`: letters, digits and `_` only, with a `_`.
fn is_identifier(text: &str) -> bool {
    text.contains('_') && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A literal looked for in the input (a needle), not shown: the argument of a search in
/// `src/diagnose`'s readers of untrusted text.
fn is_needle(before: &str) -> bool {
    [
        ".contains(",
        ".find(",
        ".rfind(",
        ".strip_prefix(",
        ".strip_suffix(",
        ".split(",
        ".split_once(",
        ".ends_with(",
        ".eq_ignore_ascii_case(",
        "pci_after(rest,",
    ]
    .iter()
    .any(|call| before.ends_with(call))
}

/// Files that hold no text, only needles or identifiers: the tables of
/// phrases matched against pasted kernel lines, tracebacks and nvidia-smi output
/// (lower-cased), the field names of `nvidia-smi -q` and `--query-gpu`, the labels. What they
/// build is a finding from the label constructors, which are scanned. (file, why)
const NOT_SCANNED: &[(&str, &str)] = &[
    (
        "src/diagnose/line_rules.rs",
        "the phrase table of tracebacks and kernel lines, matched lower-cased",
    ),
    (
        "src/diagnose/line_detail.rs",
        "markers of rank, host, peer and PCI address inside a matched line",
    ),
    (
        "src/diagnose/smi_query.rs",
        "the section and field names of `nvidia-smi -q` (text and XML)",
    ),
    (
        "src/diagnose/smi.rs",
        "nvidia-smi's table markers and `--query-gpu` field names, quoted as evidence; its one \
         sentence (a process line) is the catalogue's live_evidence.process",
    ),
    (
        "src/diagnose/finding.rs",
        "the finding labels, runbook ids and severity words: identifiers",
    ),
    // --- sources: telemetry and remote ---
    (
        "src/telemetry/accel/npu_smi.rs",
        "a vendor tool's parser: the keys, headers and health words it matches in the tool's output, and the reason it gives inside the `unsupported output from TOOL` evidence line, quoted with the tool's first lines (the finding built from that line, `accel_unsupported_output`, says what it means and what to do in the catalogue's words)",
    ),
    (
        "src/telemetry/accel/xpu_smi.rs",
        "a vendor tool's parser: the keys, headers and health words it matches in the tool's output, and the reason it gives inside the `unsupported output from TOOL` evidence line, quoted with the tool's first lines (the finding built from that line, `accel_unsupported_output`, says what it means and what to do in the catalogue's words)",
    ),
    (
        "src/telemetry/accel/rocm_smi.rs",
        "a vendor tool's parser: the keys, headers and health words it matches in the tool's output, and the reason it gives inside the `unsupported output from TOOL` evidence line, quoted with the tool's first lines (the finding built from that line, `accel_unsupported_output`, says what it means and what to do in the catalogue's words)",
    ),
    (
        "src/telemetry/accel/mod.rs",
        "vendor and tool names, the commands run on the host, the health words the tools print, and the `unsupported output from TOOL` evidence line that `diagnose::accel` reads back (its finding's words are the catalogue's)",
    ),
    (
        "src/remote/option_policy.rs",
        "ssh_config keywords and values, lower-cased as they are matched; the warnings and refusals it raises are `notice_words` and `error_words`, which are scanned",
    ),
    (
        "src/metrics/fleet.rs",
        "Prometheus metric names, label names and HELP texts: what scrapers and dashboards match, English as in every exporter (the HELP text is part of the exposition format, not the interface)",
    ),
    (
        "src/metrics/jobs.rs",
        "Prometheus metric names, label names and HELP texts: what scrapers and dashboards match, English as in every exporter",
    ),
    (
        "src/metrics/accel.rs",
        "Prometheus metric names, label names and HELP texts: what scrapers and dashboards match, English as in every exporter",
    ),
    (
        "src/metrics/text.rs",
        "the Prometheus text exposition format's own words (`# HELP`, `# TYPE`, `gauge`, `NaN`)",
    ),
    // --- engine, drivers and commands ---
    // --- remote ---
    (
        "src/remote/accel_tools.rs",
        "the accelerator probe: its shell script, the vendor tools' names and arguments run on the host, the marker of the probe's answer; and the reason inside the `unsupported output from amd-smi` evidence line, English like the vendor parsers' reasons (`src/telemetry/accel/*_smi.rs`), whose finding `accel_unsupported_output` says what it means and what to do in the catalogue's words",
    ),
    (
        "src/remote/link/job_find.rs",
        "the job probe's shell script and the command words run on the host, the marker between the process list and the probe, and `stdout` / `stderr`, the stream's own name in a job's `log` field (`stdout: /path`), as the snapshot's JSON keeps it",
    ),
    (
        "src/remote/link/disk.rs",
        "the disk reading's shell script and the command words run on the host (`df -P -k`, `ps`, `awk`), the process name of PyTorch's DataLoader workers, and the markers of its output lines parsed back",
    ),
    (
        "src/remote/link/job_follow.rs",
        "the `tail` commands and shell scripts run on the host to read a job's log; its notices are `notice_words`, which are scanned",
    ),
    (
        "src/remote/link/job_find.rs",
        "the shell and awk script run on the host to find who holds a GPU device or writes the job's log (with the nvidia-smi fields and `-q` labels it reads), and the words of its output lines (`minors`, `scanned`, `gpu`, `dev`, `log`) parsed back",
    ),
    (
        "src/remote/link/smi.rs",
        "nvidia-smi's arguments, the kernel-log commands run on the host (`dmesg`, `journalctl`), and the needles matched in the host's kernel lines (`NVRM`, `PCIe Bus Error`)",
    ),
    (
        "src/remote/link/end_with_channel.rs",
        "the watch script run on the host that ends a command when its SSH channel closes",
    ),
    (
        "src/remote/link/run_shell.rs",
        "the query shell's script run on the host (`sh` and its one-line loop) and its end marker's prefix, read back from the host's output; no sentence",
    ),
    // --- check, job, playbook, recording, alerts ---
    (
        "src/runbook/localize.rs",
        "builds the catalogue keys of the curated runbooks' texts (runbook_text.<runbook>.<field>): every literal is a key pattern, the texts themselves are the catalogue's",
    ),
    (
        "src/check/reference.rs",
        "the datasheet table of GPU models: model names as reports write them, the name tokens matched in nvidia-smi's GPU names, dtypes (bf16, fp16) and figures; no sentence",
    ),
    (
        "src/job/gpus.rs",
        "the GPU model table of `gpufleet fit`: model names, lower-case needles matched in nvidia-smi's GPU names, figures and the datasheet each comes from (its URL and the datasheet's own figure, quoted); no sentence",
    ),
    // --- providers, telemetry and the rest ---
    (
        "src/cli.rs",
        "clap's definitions: value names (`FILE`, `HOST`), possible values and flag names are identifiers, and the version line is a version; every about, help and heading text here is replaced at run time by `commands::help` with its `cli_help.*` words (the catalogue test checks each one is in both catalogues)",
    ),
    (
        "src/demo.rs",
        "the demo fleet's data: host names, instance ids, currencies, a fake token, a backup's argv; what the demo says is the catalogue's (`demo_shell`, `sim_words`)",
    ),
    (
        "src/lib.rs",
        "the module list, the catalogues' paths and the fallback language's code",
    ),
    (
        "src/fleet/event_log.rs",
        "log lines in gpufleet.log through `tracing` (log lines stay English, for grep and bug reports); the console says the same events in the catalogue's words",
    ),
    (
        "src/telemetry/smi_csv.rs",
        "nvidia-smi's `--query-gpu` field names and argv, and the phrases of its failure output matched lower-cased; its parse errors are the catalogue's (`telemetry_csv_error`)",
    ),
    (
        "src/telemetry/smi_table.rs",
        "the header markers of nvidia-smi's table (`Driver Version:`, `CUDA Version:`) it matches",
    ),
    (
        "src/telemetry/smi_xml.rs",
        "the element names of `nvidia-smi -q -x`; its errors are the catalogue's (`telemetry_xml_error`)",
    ),
    (
        "src/telemetry/sim/cards.rs",
        "the simulated cards' data: product names and performance states as nvidia-smi prints them",
    ),
    (
        "src/providers/autodl.rs",
        "a provider's API client: the endpoint paths, the JSON field names, state values and defaults (`root`, a currency) of its documented answer, and the provider's own `success: false` quoted when it says nothing else; its errors are `FetchError`'s, in the catalogue's words (`provider_fetch`, `provider_shape`)",
    ),
    (
        "src/providers/lambda.rs",
        "a provider's API client: the endpoint paths, the JSON field names, state values and defaults (`root`, a currency) of its documented answer, and the provider's own `success: false` quoted when it says nothing else; its errors are `FetchError`'s, in the catalogue's words (`provider_fetch`, `provider_shape`)",
    ),
    (
        "src/providers/runpod.rs",
        "a provider's API client: the endpoint paths, the JSON field names, state values and defaults (`root`, a currency) of its documented answer, and the provider's own `success: false` quoted when it says nothing else; its errors are `FetchError`'s, in the catalogue's words (`provider_fetch`, `provider_shape`)",
    ),
    (
        "src/providers/vast.rs",
        "a provider's API client: the endpoint paths, the JSON field names, state values and defaults (`root`, a currency) of its documented answer, and the provider's own `success: false` quoted when it says nothing else; its errors are `FetchError`'s, in the catalogue's words (`provider_fetch`, `provider_shape`)",
    ),
];

/// Every `.rs` file under `src/`, test modules (`tests.rs`, `*_tests.rs`) and the files named in
/// `NOT_SCANNED` left out.
fn source_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![root().join("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .flatten()
        {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let name = path.to_string_lossy().replace('\\', "/");
            let skipped = !name.ends_with(".rs")
                || name.ends_with("/tests.rs")
                || name.ends_with("_tests.rs")
                || NOT_SCANNED.iter().any(|(f, _)| name.ends_with(f));
            if !skipped {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The problems the scan finds in one file's source.
fn hard_coded(file: &str, source: &str, keys: &BTreeMap<String, String>) -> Vec<String> {
    let mut problems = Vec::new();
    for lit in literals(source) {
        let check_id = ["result(", "CheckResult::new(", "missing("];
        if check_id.iter().any(|call| lit.before.ends_with(call)) {
            continue; // a check's id (`identity.count`), not a catalogue key
        }
        if ALLOWED.iter().any(|(f, l, _)| *f == file && *l == lit.text) {
            continue;
        }
        if looks_like_key(&lit.text) {
            if !keys.contains_key(&lit.text) {
                problems.push(format!(
                    "{file}:{}: no catalogue text {:?}",
                    lit.line, lit.text
                ));
            }
            continue;
        }
        if never_shown(&lit) {
            continue;
        }
        let text_words: Vec<String> = words(&lit.text)
            .into_iter()
            .filter(|w| !NOT_TEXT.contains(&w.as_str()))
            .collect();
        if text_words.is_empty() {
            continue;
        }
        if ALLOWED.iter().any(|(f, l, _)| *f == file && *l == lit.text) {
            continue;
        }
        problems.push(format!(
            "{file}:{}: {:?} (words {:?})",
            lit.line, lit.text, text_words
        ));
    }
    problems
}

#[test]
fn no_user_facing_text_is_written_into_the_console_outside_the_catalogue() {
    let en = catalogue("en");
    let mut problems = Vec::new();
    for path in source_files() {
        let file = path
            .strip_prefix(root())
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        problems.extend(hard_coded(&file, &source, &en));
    }
    assert!(
        problems.is_empty(),
        "text outside the catalogue ({}):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn every_key_the_source_names_is_in_both_catalogues() {
    let en = catalogue("en");
    let zh = catalogue("zh-CN");
    let mut missing = Vec::new();
    let mut used = BTreeSet::new();
    let mut stack = vec![root().join("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let source = std::fs::read_to_string(&path).unwrap_or_default();
            for (at, _) in source.match_indices("t!(\"") {
                let word_before = source[..at]
                    .chars()
                    .last()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_');
                if word_before {
                    continue; // format!(, print!(, ...
                }
                let rest = &source[at + 4..];
                let key = &rest[..rest.find('"').unwrap_or(0)];
                used.insert(key.to_string());
                if !en.contains_key(key) || !zh.contains_key(key) {
                    missing.push(format!("{}: {key}", path.display()));
                }
            }
            for lit in literals(&source) {
                if looks_like_key(&lit.text) && en.contains_key(&lit.text) {
                    used.insert(lit.text);
                }
            }
        }
    }
    assert!(missing.is_empty(), "keys with no text: {missing:?}");
    used.extend(curated_runbook_texts().into_keys());
    used.extend(gpufleet::commands::help::texts().into_iter().map(|t| t.key));
    let unused: Vec<&String> = en.keys().filter(|k| !used.contains(*k)).collect();
    assert!(unused.is_empty(), "texts no code uses: {unused:?}");
}

/// The SSH link's files (`src/remote/`, `src/remote/link/`), where only what a notice says is text for the user:
/// the rest is commands, option names, needles and errors for the log.
const LINK_DIRS: [&str; 2] = ["src/remote", "src/remote/link"];

/// The calls that carry what a notice says: the link's notices and the ssh config's and host
/// key check's warnings (shown as notices).
const NOTICE_CALLS: &[&str] = &[
    "notice(",
    "notice_once(",
    "notice_once_per(",
    "HostEvent::Notice {",
    "warnings.push(",
    "warnings: vec![",
];

/// Each call of `name` in `source` (definitions left out) with its arguments, up to the
/// bracket that closes it, and its line.
fn calls(source: &str, name: &str) -> Vec<(usize, String)> {
    let code = source.split("#[cfg(test)]").next().unwrap_or(source);
    let mut out = Vec::new();
    for (at, _) in code.match_indices(name) {
        let before = &code[..at];
        let word_before = before
            .chars()
            .last()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        if word_before || before.trim_end().ends_with("fn") {
            continue;
        }
        let mut depth = 0usize;
        let mut end = code.len();
        for (i, c) in code[at + name.len() - 1..].char_indices() {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = at + name.len() - 1 + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.push((before.matches('\n').count() + 1, code[at..end].to_string()));
    }
    out
}

#[test]
fn the_links_notices_say_only_catalogue_words() {
    let en = catalogue("en");
    let mut problems = Vec::new();
    let mut seen = 0;
    let mut files: Vec<PathBuf> = LINK_DIRS
        .iter()
        .flat_map(|dir| std::fs::read_dir(root().join(dir)).expect(dir))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .filter(|p| !p.to_string_lossy().ends_with("_tests.rs"))
        .collect();
    files.sort();
    for path in files {
        let file = path
            .strip_prefix(root())
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        if source.contains("NoticeText::verbatim(") {
            problems.push(format!(
                "{file}: a notice said verbatim, not in catalogue words"
            ));
        }
        for name in NOTICE_CALLS {
            for (line, call) in calls(&source, name) {
                seen += 1;
                for problem in hard_coded(&file, &call, &en) {
                    problems.push(format!("{file}:{line}: {call}\n    {problem}"));
                }
            }
        }
    }
    assert!(seen >= 15, "the scan found only {seen} notice calls");
    assert!(
        problems.is_empty(),
        "notice text outside the catalogue ({}):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// Functions whose every text is the catalogue's, in files that also hold the engine's English
/// identifiers (status words for logs and JSON): a quiet host's reason, a flood's detail and
/// what flooded, a gone instance's reason. (file, the function's signature up to its name)
const WORDS_FUNCTIONS: &[(&str, &str)] = &[
    ("src/fleet/host.rs", "pub fn status("),
    ("src/remote/link/watchdog.rs", "fn on_flood("),
    ("src/launch.rs", "fn gone_event("),
    ("src/providers/fleet_hosts.rs", "pub fn reason_words("),
    ("src/remote/auth.rs", "fn try_agent("),
    ("src/remote/auth.rs", "fn try_key("),
    ("src/remote/auth.rs", "fn key_failure("),
    ("src/remote/auth.rs", "fn try_passwords("),
    ("src/remote/known_hosts.rs", "fn remedy("),
    ("src/remote/link/channel_run.rs", "fn classify("),
    ("src/remote/ssh_config_file.rs", "fn split_args("),
    ("src/remote/ssh_config_file.rs", "fn fail("),
    ("src/remote/ssh_config_match.rs", "pub(crate) fn parse("),
    ("src/remote/proxy_config.rs", "fn expand("),
    ("src/remote/ssh_options.rs", "pub(crate) fn expand_file("),
    ("src/remote/host_settings.rs", "fn bad_time("),
];

/// The body of the function `signature` in `source`, from its first `{` to the matching `}`,
/// and its line.
fn function_body(source: &str, signature: &str) -> Option<(usize, String)> {
    let at = source.find(signature)?;
    let open = at + source[at..].find('{')?;
    let mut depth = 0usize;
    for (i, c) in source[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    let line = source[..at].matches('\n').count() + 1;
                    return Some((line, source[open..=open + i].to_string()));
                }
            }
            _ => {}
        }
    }
    None
}

#[test]
fn a_quiet_hosts_a_floods_and_a_gone_hosts_words_are_catalogue_words() {
    let en = catalogue("en");
    let mut problems = Vec::new();
    for (file, signature) in WORDS_FUNCTIONS {
        let source =
            std::fs::read_to_string(root().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let (line, body) =
            function_body(&source, signature).unwrap_or_else(|| panic!("{file}: no {signature}"));
        for problem in hard_coded(file, &body, &en) {
            problems.push(format!("{file} ({signature} at line {line}): {problem}"));
        }
    }
    assert!(
        problems.is_empty(),
        "text outside the catalogue ({}):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// The scan itself: what it must catch and what it must let through.
#[test]
fn the_scan_catches_text_and_lets_keys_and_symbols_through() {
    let keys: BTreeMap<String, String> = [("fleet.title".to_string(), "x".to_string())].into();
    let caught = |source: &str| hard_coded("src/ui/x.rs", source, &keys);
    assert_eq!(
        caught(r#"let a = Span::raw("waiting for the first sample…");"#).len(),
        1
    );
    assert_eq!(caught(r#"let a = format!(" {} live", n);"#).len(), 1);
    assert_eq!(caught(r#"let a = Line::from("等待");"#).len(), 1);
    assert_eq!(caught("let a = \"no \\\n    hosts\";").len(), 1);
    assert_eq!(caught(r#"let a = r"raw text";"#).len(), 1);
    assert_eq!(
        caught(r#"let a = t!("fleet.missing");"#).len(),
        1,
        "an unknown key"
    );
    assert!(caught(r#"let a = t!("fleet.title", n = 1);"#).is_empty());
    assert!(caught(r#"let n = NoticeText::new("fleet.title").put("field", f);"#).is_empty());
    assert_eq!(
        caught(r#"let n = NoticeText::new("fleet.titel");"#).len(),
        1
    );
    assert!(caught(r#"let a = format!("{}/{} GiB", u, t); let b = " · ";"#).is_empty());
    assert!(caught(r#"let a = ("Esc / Enter", x); let b = "▏";"#).is_empty());
    assert!(caught(r#"match s { "ok" => 1, _ => 2 }; if o == "dry_run" {}"#).is_empty());
    assert!(caught(r#"b.name("ledger-save".to_string()); write!(f, "Typed({t:?})")"#).is_empty());
    assert!(caught(r#"let c = '"'; let d = "ok"; // "comment text""#).len() == 1);
    assert!(caught("#[cfg(test)]\nmod tests { const A: &str = \"test text\"; }").is_empty());
    assert!(caught(r#"let e = account["error"].as_str(); v["simulated"] = x;"#).is_empty());
    assert_eq!(caught(r#"let e = [ "a word" ];"#).len(), 1, "a list's text");
    assert!(
        caught(r#"let j = json!({ "host": h }); let r = result("identity.count", c);"#).is_empty()
    );
    assert_eq!(
        caught(r#"let j = json!({ "summary": "a test alert" });"#).len(),
        1,
        "a JSON value is text"
    );
}

/// The readable texts of the curated runbooks as their files write them, by catalogue key.
fn curated_runbook_texts() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (name, text) in gpufleet::runbook::catalog::CURATED {
        let book = gpufleet::runbook::parse_runbook(text, name).expect("a curated runbook");
        for t in gpufleet::runbook::localize::texts(&book) {
            out.insert(t.key, t.text.to_string());
        }
    }
    out
}

/// The runbook files stay the English source: the catalogue's English of each runbook text is
/// the file's text, and every runbook text of the catalogue belongs to a curated runbook.
#[test]
fn the_runbooks_english_in_the_catalogue_is_the_runbook_files_text() {
    let en = catalogue("en");
    let zh = catalogue("zh-CN");
    let files = curated_runbook_texts();
    assert!(files.len() > 100, "{} runbook texts", files.len());
    for (key, text) in &files {
        assert_eq!(en.get(key), Some(text), "en.toml {key}");
        let facts = |t: &str| -> BTreeSet<String> {
            t.split('{')
                .skip(1)
                .filter_map(|rest| rest.split_once('}').map(|(name, _)| name.to_string()))
                .collect()
        };
        assert_eq!(
            facts(&zh[key]),
            facts(text),
            "zh-CN.toml {key}: facts named"
        );
    }
    let stray: Vec<&String> = en
        .keys()
        .filter(|k| k.starts_with("runbook_text.") && !files.contains_key(*k))
        .collect();
    assert!(stray.is_empty(), "runbook texts of no runbook: {stray:?}");
}

/// The help's English in the catalogue is the derive's text (src/cli.rs's doc comments), so the
/// English help and the catalogue never drift apart; every text has its Chinese.
#[test]
fn the_helps_english_in_the_catalogue_is_the_derives_text() {
    let en = catalogue("en");
    let zh = catalogue("zh-CN");
    let texts = gpufleet::commands::help::texts();
    assert!(texts.len() > 80, "{} help texts", texts.len());
    for text in &texts {
        assert_eq!(
            en.get(&text.key),
            Some(&text.english),
            "en.toml {}",
            text.key
        );
        assert!(zh.contains_key(&text.key), "zh-CN.toml {}", text.key);
    }
    let stray: Vec<&String> = en
        .keys()
        .filter(|k| {
            k.starts_with("cli_help.")
                && !k.starts_with("cli_help.clap.")
                && !texts.iter().any(|t| &t.key == *k)
        })
        .collect();
    assert!(stray.is_empty(), "help texts of no command: {stray:?}");
}

/// The Chinese runbook texts read as the console shows them (their line breaks, made for the
/// terminal, joined by a space) have no space between two Chinese characters or after Chinese
/// punctuation (`没有 进程`, `、 nvidia-smi`): Chinese puts none there.
#[test]
fn chinese_runbook_texts_have_no_space_between_chinese_characters() {
    let zh = catalogue("zh-CN");
    let wide = |c: char| !c.is_ascii();
    let mut stray = Vec::new();
    for (key, text) in zh.iter().filter(|(k, _)| k.starts_with("runbook_text.")) {
        let joined: Vec<char> = text
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .collect();
        for at in joined.windows(3) {
            if at[1] == ' ' && wide(at[0]) && (wide(at[2]) || "、，。；：".contains(at[0])) {
                stray.push(format!("{key}: {}", at.iter().collect::<String>()));
            }
        }
    }
    assert!(stray.is_empty(), "{stray:#?}");
}
