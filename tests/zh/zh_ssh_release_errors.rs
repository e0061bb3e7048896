//! The last English words of ours inside errors, said in the user's language through the real
//! binary: on the command line a mistyped ssh target, a host whose `ProxyCommand` dies before
//! the SSH handshake (where it leads and what the command printed), and a release command that
//! fails (its exit code); in the console (tmux), the demo's unreachable host. What the OS,
//! libssh2 or the command printed stays as it came; the English is word for word what it was.

use crate::cli;
use crate::tmux;

use std::time::Duration;

use cli::{Home, stderr, stdout};

#[test]
fn a_mistyped_ssh_target_is_told_in_chinese() {
    let home = Home::new();
    let config = home.write("fleet.toml", "[[hosts]]\nname = \"rented\"\nssh = \"h\"\n");
    let run = |lang: &str| {
        let out = home.run(&[
            "--lang",
            lang,
            "snapshot",
            "--config",
            &config,
            "root@gpu:99999",
        ]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        stderr(&out)
    };
    let zh = run("zh-CN");
    assert!(
        zh.contains("端口 \"99999\" 不是 1 到 65535 之间的数字"),
        "{zh}"
    );
    assert!(!zh.contains("is not a number"), "{zh}");
    assert_eq!(
        run("en").trim_end(),
        "gpufleet: `root@gpu:99999` is not a valid host: port \"99999\" is not a number from 1 \
         to 65535"
    );
}

/// `snapshot` of a host whose ProxyCommand prints a line and exits: the handshake fails, and
/// the row says where the link led and what the command said.
fn proxy_snapshot(home: &Home, lang: &str) -> String {
    let config = home.write(
        "fleet.toml",
        "[[hosts]]\nname = \"rented\"\nssh = \"my-h200\"\n",
    );
    let ssh_config = home.write(
        "ssh_config",
        "Host my-h200\n    HostName 127.0.0.1\n    ProxyCommand sh -c \"echo oops >&2; exit 1\"\n",
    );
    let known_hosts = home.path().join("known_hosts");
    let out = home
        .command(&[
            "--lang",
            lang,
            "snapshot",
            "--config",
            &config,
            "--ssh-config",
            &ssh_config,
            "--known-hosts",
            known_hosts.to_str().expect("utf-8 path"),
        ])
        .env("SSH_AUTH_SOCK", "")
        .output()
        .expect("run gpufleet");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    stdout(&out)
}

#[test]
fn a_proxy_command_that_dies_is_told_in_chinese_with_what_it_printed() {
    let home = Home::new();
    let zh = proxy_snapshot(&home, "zh-CN");
    assert!(
        zh.contains("root@127.0.0.1:22（经由它的 ProxyCommand）"),
        "{zh}"
    );
    assert!(zh.contains("ProxyCommand 输出：oops"), "{zh}");
    assert!(
        !zh.contains("through its ProxyCommand") && !zh.contains("the ProxyCommand said"),
        "{zh}"
    );
    let en = proxy_snapshot(&home, "en");
    // libssh2's own words in between depend on whether the command died before or after the
    // banner went out ("Failed getting banner" / "Failed sending banner"): a race, not ours.
    let said = en
        .lines()
        .find(|l| l.contains("ssh handshake with"))
        .unwrap_or_default();
    assert!(
        said.contains("ssh handshake with root@127.0.0.1:22 (through its ProxyCommand) failed: ")
            && said.contains(" banner; the ProxyCommand said: oops"),
        "{en}"
    );
}

#[test]
fn a_failing_release_command_says_its_exit_code_in_chinese() {
    let home = Home::new();
    let config = home.write(
        "release.toml",
        "[[hosts]]\nname = \"h1\"\nssh = \"root@127.0.0.1:1\"\n[hosts.release]\n\
         provider = \"command\"\ncommand = [\"sh\", \"-c\", \"echo no quota >&2; exit 3\"]\n",
    );
    let run = |lang: &str| {
        let out = home.run(&[
            "release", "h1", "--yes", "--lang", lang, "--config", &config,
        ]);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        stdout(&out)
    };
    let zh = run("zh-CN");
    assert!(
        zh.contains(
            "gpufleet release：h1：sh -c 'echo no quota >&2; exit 3' 失败（退出码 3）：no quota"
        ),
        "{zh}"
    );
    assert!(!zh.contains("(exit 3)"), "{zh}");
    let en = run("en");
    assert!(
        en.contains(
            "gpufleet release: h1: sh -c 'echo no quota >&2; exit 3' failed (exit 3): no quota"
        ),
        "{en}"
    );
}

/// The demo's host that never answers: the line under its row says why in Chinese, with the
/// address and the OS's `Connection timed out` as they came.
#[test]
fn the_demos_unreachable_host_says_why_in_chinese() {
    let command = format!(
        "{} --demo --speed 20 --lang zh-CN; echo EXIT=$?; sleep 30",
        tmux::binary().display()
    );
    let Some(console) = tmux::Tmux::start(&command, 160, 48) else {
        return;
    };
    let screen = console.wait_for(
        "无法连接 203.0.113.7 的 22 端口：Connection timed out",
        Duration::from_secs(30),
    );
    assert!(!screen.contains("connect to 203.0.113.7"), "{screen}");
}
