//! The reader against OpenSSH's rules: first value wins, `Host` negation, `Match` evaluated in
//! order with what came before, `Match final`, `Include`, quoting.

use std::path::Path;

use super::*;

fn read(dir: &Path, text: &str, host: &str) -> HostOptions {
    let path = dir.join("config");
    std::fs::write(&path, text).expect("write");
    read_host(&path, Some(dir), None, host, "me").expect("reads")
}

fn first(options: &HostOptions, key: &str) -> Option<String> {
    options.get(key).and_then(|a| a.first()).cloned()
}

#[test]
fn the_first_value_wins_and_negation_excludes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = "User=early\nHost gpu-* !gpu-bad\n  User gpu\n  Port 2222\nHost *\n  User late\n  \
                Port = 22\n  IdentityFile ~/a\n  IdentityFile \"/b c\"\n";
    let o = read(dir.path(), text, "gpu-1");
    assert_eq!(first(&o, "user").as_deref(), Some("early"));
    assert_eq!(first(&o, "port").as_deref(), Some("2222"));
    let files: Vec<&str> = o
        .all("identityfile")
        .iter()
        .map(|s| s.args[0].as_str())
        .collect();
    assert_eq!(files, ["~/a", "/b c"], "IdentityFile adds up");
    let o = read(dir.path(), text, "GPU-BAD");
    assert_eq!(
        first(&o, "port").as_deref(),
        Some("22"),
        "negated: the block is skipped"
    );
}

#[test]
fn match_sees_what_came_before_and_final_runs_a_second_pass() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = "Host short\n  HostName 10.1.2.3\n  User ubuntu\n\
                Match host 10.1.* user ubuntu\n  Port 40022\n\
                Match originalhost short !user root\n  IdentityFile ~/k\n\
                Match final host 10.1.*\n  ConnectTimeout 7\n\
                Match host short\n  ServerAliveInterval 9\n";
    let o = read(dir.path(), text, "short");
    assert_eq!(first(&o, "port").as_deref(), Some("40022"));
    assert_eq!(o.all("identityfile").len(), 1);
    assert_eq!(first(&o, "connecttimeout").as_deref(), Some("7"));
    assert_eq!(
        first(&o, "serveraliveinterval"),
        None,
        "host is the HostName"
    );
    // A Match before the HostName sees the name given.
    let o = read(
        dir.path(),
        "Match host short\n  Port 1\nHost short\n  HostName 10.1.2.3\n",
        "short",
    );
    assert_eq!(first(&o, "port").as_deref(), Some("1"));
}

#[test]
fn match_exec_is_recorded_with_what_it_would_set() {
    let dir = tempfile::tempdir().expect("tempdir");
    let o = read(
        dir.path(),
        "Match exec \"test -f /x\" host gpu\n  ProxyJump b\n  Compression yes\nHost *\n  Port 7\n",
        "gpu",
    );
    assert_eq!(first(&o, "proxyjump"), None);
    assert_eq!(first(&o, "port").as_deref(), Some("7"));
    assert_eq!(o.unevaluated.len(), 1);
    assert_eq!(o.unevaluated[0].criterion, "exec");
    assert_eq!(o.unevaluated[0].line, 1);
    assert_eq!(o.unevaluated[0].options, ["proxyjump", "compression"]);
    // A criterion that fails settles it: nothing unknown.
    let o = read(dir.path(), "Match host other exec true\n  Port 1\n", "gpu");
    assert!(o.unevaluated.is_empty());
}

#[test]
fn includes_are_relative_globbed_and_follow_their_block() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    std::fs::create_dir_all(d.join("conf.d")).expect("mkdir");
    std::fs::write(d.join("conf.d/b.conf"), "Host gpu\n  User from-b\n").expect("write");
    std::fs::write(d.join("conf.d/a.conf"), "Host gpu\n  Port 2200\n").expect("write");
    std::fs::write(d.join("only-other"), "Port 9\n").expect("write");
    let o = read(
        d,
        "Host other\n  Include only-other\nHost *\n  Include conf.d/*.conf\n  User last\n",
        "gpu",
    );
    assert_eq!(first(&o, "port").as_deref(), Some("2200"));
    assert_eq!(first(&o, "user").as_deref(), Some("from-b"));
    let place = o.setting("user").expect("user");
    assert_eq!(
        (place.file.clone(), place.line),
        (d.join("conf.d/b.conf"), 2)
    );
    // A loop is an error, not a hang.
    std::fs::write(d.join("self"), "Include self\n").expect("write");
    let path = d.join("config");
    std::fs::write(&path, "Include self\n").expect("write");
    assert!(read_host(&path, Some(d), None, "gpu", "me").is_err());
}

#[test]
fn lines_split_as_openssh_splits_them() {
    assert_eq!(split_keyword("  Port=22"), Some(("Port", "22")));
    assert_eq!(split_keyword("Port = 22 "), Some(("Port", "22")));
    assert_eq!(split_keyword("# c"), None);
    assert_eq!(split_keyword("   "), None);
    assert_eq!(
        split_args(r#"a "b c" 'd e' f\ g "h\"i" # comment"#).expect("splits"),
        ["a", "b c", "d e", "f g", "h\"i"]
    );
    assert!(split_args("\"open").is_err());
    assert_eq!(
        expand_host_name("%h.example", "gpu").as_deref(),
        Ok("gpu.example")
    );
    assert_eq!(expand_host_name("100%%", "gpu").as_deref(), Ok("100%"));
    assert!(expand_host_name("%p", "gpu").is_err());
}

#[test]
fn a_host_block_names_an_alias_and_the_catch_all_does_not() {
    let dir = tempfile::tempdir().expect("temp");
    let text = "Host *\n  User everyone\nHost gpu-a gpu-b\n  HostName 10.0.0.1\nHost !bad *.corp\n  Port 2222\n";
    let alias = read(dir.path(), text, "gpu-a");
    assert!(alias.named_by_a_block);
    assert_eq!(alias.literal_hosts, vec!["gpu-a", "gpu-b"]);
    assert!(
        read(dir.path(), text, "x.corp").named_by_a_block,
        "a wildcard block names it too"
    );
    assert!(
        !read(dir.path(), text, "somewhere").named_by_a_block,
        "only `Host *` matched"
    );
}
