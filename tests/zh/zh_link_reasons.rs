//! Why a host cannot be reached, said on the command line in the user's language: with
//! `--lang zh-CN` a refused ssh config option and an unreadable ssh config are told in Chinese
//! (the option, the file and the line as written), and in English word for word as before.
//! Nothing connects: the config is refused before any connection.

use crate::tmux;

use std::path::Path;
use std::process::Command;

fn snapshot(dir: &Path, ssh_config: &str, lang: &str) -> String {
    let config = dir.join("ssh_config");
    std::fs::write(&config, ssh_config).expect("ssh config");
    let fleet = dir.join("fleet.toml");
    std::fs::write(&fleet, "[[hosts]]\nname = \"rented\"\nssh = \"my-h200\"\n").expect("config");
    let out = Command::new(tmux::binary())
        .env("SSH_AUTH_SOCK", "")
        .env("GPUFLEET_STATE_DIR", dir.join("state"))
        .args(["--lang", lang, "snapshot", "--config"])
        .arg(&fleet)
        .arg("--ssh-config")
        .arg(&config)
        .arg("--known-hosts")
        .arg(dir.join("known_hosts"))
        .output()
        .expect("snapshot");
    assert!(!out.status.success());
    String::from_utf8_lossy(&out.stderr).into_owned()
}

const HOST: &str = "Host my-h200\n    HostName 127.0.0.1\n    Port 9\n";

#[test]
fn a_refused_ssh_config_option_is_told_in_chinese() {
    let dir = tempfile::tempdir().expect("temp");
    let config = format!("{HOST}    Ciphers aes256-gcm@openssh.com\n");
    let zh = snapshot(dir.path(), &config, "zh-CN");
    assert!(zh.contains("主机 rented"), "{zh}");
    assert!(zh.contains("libssh2 协商的算法"), "{zh}");
    assert!(zh.contains("ciphers"), "the option as written: {zh}");
    assert!(
        !zh.contains("does not restrict") && !zh.contains("remove it"),
        "{zh}"
    );
    let en = snapshot(dir.path(), &config, "en");
    let path = dir.path().join("ssh_config");
    assert_eq!(
        en.trim_end(),
        format!(
            "gpufleet: host rented: my-h200: the ssh config {} sets ciphers, which gpufleet does \
             not honour: gpufleet does not restrict the algorithms libssh2 negotiates, so the \
             connection could use one this config rules out; remove it for this host",
            path.display()
        )
    );
}

#[test]
fn an_unreadable_ssh_config_is_told_in_chinese_with_its_line() {
    let dir = tempfile::tempdir().expect("temp");
    let config = format!("{HOST}    IdentityFile \"~/key\n");
    let zh = snapshot(dir.path(), &config, "zh-CN");
    assert!(
        zh.contains("第 4 行") && zh.contains("引号没有闭合"),
        "{zh}"
    );
    assert!(!zh.contains("not closed"), "{zh}");
    let en = snapshot(dir.path(), &config, "en");
    assert!(
        en.trim_end()
            .ends_with("ssh_config: line 4: a quote is not closed"),
        "{en}"
    );
}
