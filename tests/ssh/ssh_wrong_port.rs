//! Ports that answer, but not as an SSH server, on real loopback sockets: one that speaks
//! HTTP is named for what it is (not libssh2's "Failed getting banner") and is not asked
//! three times over; one that accepts and says nothing shows `connecting` with the time it
//! has taken, in the console (tmux, English and Chinese).

use crate::common;
use crate::tmux;

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{channel, test_options};
use gpufleet::fleet::HostEvent;
use gpufleet::remote::{Endpoint, RemoteHost, spawn_link};
use tmux::{Tmux, binary};

const WAIT: Duration = Duration::from_secs(20);

/// A loopback listener answering every connection as a web server answers a request it
/// cannot read, then closing it; counts the connections.
fn http_server() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = accepted.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            counter.fetch_add(1, Ordering::SeqCst);
            let mut line = String::new();
            let _ = BufReader::new(&stream).read_line(&mut line);
            let mut stream = stream;
            let _ = stream.write_all(
                b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n\
                  Content-Length: 11\r\nConnection: close\r\n\r\nBad Request",
            );
        }
    });
    (port, accepted)
}

/// A loopback listener that accepts and never says anything; the connections are held open
/// for as long as the test runs.
fn silent_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        let mut held: Vec<TcpStream> = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    port
}

fn host_at(port: u16) -> RemoteHost {
    RemoteHost {
        name: "web".to_string(),
        target: Endpoint {
            user: "root".to_string(),
            host: "127.0.0.1".to_string(),
            port,
        },
        identity_files: Vec::new(),
        password_env: None,
        host_keys: Default::default(),
        proxy: Default::default(),
        settings: Default::default(),
        job_log: None,
        dead_man: None,
        disarm_stray_switch: false,
    }
}

#[test]
fn an_http_port_is_named_as_not_ssh_and_asked_once_per_attempt() {
    let (port, accepted) = http_server();
    let dir = tempfile::tempdir().expect("temp");
    let mut opts = test_options(&dir.path().join("known_hosts"));
    // The next attempt comes long after the test looked.
    opts.reconnect_base_ms = 30_000;
    opts.reconnect_cap_ms = 30_000;
    let (sink, mut events) = channel();
    let link = spawn_link(host_at(port), 0, sink, opts).expect("spawn");
    let down = events.expect(WAIT, "Disconnected", |_, e| {
        matches!(e, HostEvent::Disconnected { .. })
    });
    let connections = accepted.load(Ordering::SeqCst);
    link.stop_and_join();
    let HostEvent::Disconnected {
        reason,
        summary,
        words,
        ..
    } = down
    else {
        unreachable!()
    };
    assert!(
        reason.contains(&format!("port {port} answers but is not an SSH server")),
        "{reason}"
    );
    assert!(!reason.contains("Failed getting banner"), "{reason}");
    assert!(
        reason.contains("Connection: close"),
        "what it sent: {reason}"
    );
    assert_eq!(summary, format!("port {port} is not SSH"));
    assert_eq!(connections, 1, "one attempt, one connection: {reason}");
    let words = words.expect("catalogue words");
    let zh = words.reason.render("zh-CN");
    assert!(zh.contains("不是 SSH 服务器"), "{zh}");
}

/// The number of seconds in the first `connecting Ns` on `screen`.
fn connecting_seconds(screen: &str, word: &str) -> Option<u64> {
    screen.match_indices(word).find_map(|(at, _)| {
        let rest = screen[at + word.len()..].strip_prefix(' ')?;
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let unit = rest[digits.len()..].chars().next()?;
        (unit == 's').then(|| digits.parse().ok())?
    })
}

/// Waits until the screen shows `word` followed by at least `seconds` seconds; returns them.
fn wait_connecting(tmux: &Tmux, word: &str, seconds: u64) -> u64 {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let screen = tmux.screen();
        if let Some(n) = connecting_seconds(&screen, word).filter(|&n| n >= seconds) {
            return n;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no `{word} {seconds}s` or more:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_silent_port_shows_connecting_with_the_time_it_has_taken() {
    let port = silent_server();
    let dir = tempfile::tempdir().expect("temp");
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!("[[hosts]]\nname = \"quiet-box\"\nssh = \"root@127.0.0.1:{port}\"\n"),
    )
    .expect("config");
    for (lang, word) in [("en", "connecting"), ("zh-CN", "连接中")] {
        let command = format!(
            "SSH_AUTH_SOCK= {} --lang {lang} --config {} --known-hosts {}; sleep 30",
            binary().display(),
            config.display(),
            dir.path().join("known_hosts").display()
        );
        let Some(tmux) = Tmux::start(&command, 100, 30) else {
            return;
        };
        tmux.wait_for("quiet-box", WAIT);
        let first = wait_connecting(&tmux, word, 2);
        // The time goes on while the port stays silent.
        let later = wait_connecting(&tmux, word, first + 2);
        assert!(later > first);
        tmux.keys(&["q"]);
    }
}
