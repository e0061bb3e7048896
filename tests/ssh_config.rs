//! An `~/.ssh/config` alias, reached through `Include`, resolves and connects over real sshd.

mod common;

use std::time::Duration;

use common::sshd::Sshd;
use common::{channel, is_sample, test_options};
use gpufleet::app::event::HostEvent;
use gpufleet::remote::{resolve, spawn_link};

#[test]
fn an_alias_from_an_included_file_connects() {
    let Some(sshd) = Sshd::start() else { return };
    let home = sshd.dir().join("home");
    let ssh_dir = home.join(".ssh");
    std::fs::create_dir_all(ssh_dir.join("config.d")).expect("mkdir");
    std::fs::write(
        ssh_dir.join("config"),
        "Include config.d/*.conf\n\nHost *\n    ServerAliveInterval 30\n",
    )
    .expect("config");
    std::fs::copy(sshd.client_key(), ssh_dir.join("rented_key")).expect("key");
    std::fs::write(
        ssh_dir.join("config.d/rented.conf"),
        format!(
            "Host my-h200 other-alias\n    HostName 127.0.0.1\n    Port {}\n    User {}\n    \
             IdentityFile ~/.ssh/rented_key\n",
            sshd.port, sshd.user
        ),
    )
    .expect("include");

    let host = resolve(
        "rented",
        "my-h200",
        None,
        None,
        Some(&ssh_dir.join("config")),
    )
    .expect("alias resolves");
    assert_eq!(host.target.host, "127.0.0.1");
    assert_eq!(host.target.port, sshd.port);
    assert_eq!(host.identity_files, vec![ssh_dir.join("rented_key")]);

    let (sink, mut events) = channel();
    let link = spawn_link(host, 0, sink, test_options(&sshd.trusted_known_hosts())).expect("spawn");
    let connected = events.expect(Duration::from_secs(10), "Connected", |_, e| {
        matches!(e, HostEvent::Connected(_))
    });
    events.expect(Duration::from_secs(10), "Sample", |_, e| is_sample(e));
    link.stop_and_join();
    let HostEvent::Connected(info) = connected else {
        unreachable!()
    };
    assert_eq!(
        info.source,
        format!("ssh {}@127.0.0.1:{}", sshd.user, sshd.port)
    );
}
