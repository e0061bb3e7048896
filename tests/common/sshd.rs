//! Throwaway OpenSSH servers on 127.0.0.1 for the SSH tests: temp host keys and
//! authorized_keys, the fake nvidia-smi first on the remote PATH, stopped by PID on drop.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use gpufleet::remote::{Endpoint, RemoteHost};

const SSHD: &str = "/usr/sbin/sshd";

/// Whether real sshd tests can run here. Prints why not; under `CI=true` a missing sshd is a
/// failure, not a skip.
pub fn available() -> bool {
    let why = if !Path::new(SSHD).exists() {
        Some(format!(
            "{SSHD} is missing (apt-get install openssh-server)"
        ))
    } else if Command::new("ssh-keygen").arg("-?").output().is_err() {
        Some("ssh-keygen is missing (apt-get install openssh-client)".to_string())
    } else if is_root() && std::fs::create_dir_all("/run/sshd").is_err() {
        Some("/run/sshd (sshd's privilege-separation dir) cannot be created".to_string())
    } else {
        None
    };
    match why {
        None => true,
        Some(why) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("SSH tests cannot run under CI: {why}")
        }
        Some(why) => {
            eprintln!("skipping SSH test: {why}");
            false
        }
    }
}

fn is_root() -> bool {
    current_user() == "root"
}

/// The local user, which the test sshd logs in as.
pub fn current_user() -> String {
    Command::new("id")
        .arg("-un")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "root".to_string())
}

pub fn keygen(path: &Path, kind: &str, passphrase: &str) {
    let _ = std::fs::remove_file(path);
    let status = Command::new("ssh-keygen")
        .args([
            "-q",
            "-t",
            kind,
            "-N",
            passphrase,
            "-C",
            "gpufleet-test",
            "-f",
        ])
        .arg(path)
        .stdin(Stdio::null())
        .status()
        .expect("run ssh-keygen");
    assert!(status.success(), "ssh-keygen -t {kind} failed");
}

/// `SHA256:...` of a public key file, as `ssh-keygen -lf` prints it.
pub fn fingerprint_of(pub_key: &Path) -> String {
    let out = Command::new("ssh-keygen")
        .arg("-lf")
        .arg(pub_key)
        .output()
        .expect("run ssh-keygen -lf");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    text.split_whitespace()
        .nth(1)
        .unwrap_or_else(|| panic!("no fingerprint in {text:?}"))
        .to_string()
}

#[derive(Debug, Clone, Default)]
pub struct SshdOptions {
    /// Allow password logins (root included); every password fails, as no test user has one
    /// the tests know.
    pub password_auth: bool,
    /// Programs to put first on the remote `PATH` instead of copies of the shell fakes (the
    /// fleet benchmark's compiled stand-in); `None` installs the fakes from the fixtures.
    pub bin_dir: Option<PathBuf>,
    /// sshd's `MaxStartups` (`start:rate:full`); `None` keeps `100:30:200`. One sshd that
    /// stands in for many hosts needs room for all their logins at once.
    pub max_startups: Option<String>,
    /// More `sshd_config` lines, appended (sshd takes the first value of a keyword, so these
    /// can only add keywords the harness does not set).
    pub extra_config: String,
    /// A program and its arguments that start sshd (its command line appended), e.g. an
    /// `unshare` that puts it in a container of its own; empty starts sshd itself. Killing
    /// the server kills this program.
    pub wrapper: Vec<String>,
    /// The remote login's `$HOME` instead of the user's own (what a test leaves in the home
    /// stays in its own directory).
    pub home: Option<PathBuf>,
}

pub struct Sshd {
    dir: tempfile::TempDir,
    pub port: u16,
    child: Option<Child>,
    pub user: String,
    options: SshdOptions,
}

enum Launch {
    Listening,
    PortTaken,
}

impl Sshd {
    /// Starts an sshd on a free port; `None` when sshd tests cannot run here.
    pub fn start() -> Option<Sshd> {
        Self::start_with(&SshdOptions::default())
    }

    pub fn start_with(options: &SshdOptions) -> Option<Sshd> {
        if !available() {
            return None;
        }
        let dir = tempfile::Builder::new()
            .prefix("gpufleet-sshd-")
            .tempdir()
            .expect("temp dir");
        let root = dir.path();
        keygen(&root.join("host_ed25519"), "ed25519", "");
        keygen(&root.join("host_ecdsa"), "ecdsa", "");
        keygen(&root.join("client_ed25519"), "ed25519", "");
        std::fs::copy(
            root.join("client_ed25519.pub"),
            root.join("authorized_keys"),
        )
        .expect("authorized_keys");
        if options.bin_dir.is_none() {
            install_fakes(&root.join("bin"));
        }
        let mut sshd = Sshd {
            dir,
            port: 0,
            child: None,
            user: current_user(),
            options: options.clone(),
        };
        // A port found free may be taken again before sshd binds it (by another test's sshd,
        // or as a client socket's local port): then sshd exits with "Address already in use"
        // while the other listener answers, so pick another port rather than talk to it.
        for _ in 0..5 {
            sshd.port = free_port();
            sshd.write_config();
            match sshd.launch() {
                Launch::Listening => return Some(sshd),
                Launch::PortTaken => continue,
            }
        }
        panic!("sshd found no free port in 5 tries: {}", sshd.log());
    }

    fn write_config(&self) {
        let root = self.dir.path();
        let port = self.port;
        // PATH puts the fakes first (a login's ~/.bashrc may prepend more, e.g. pyenv shims,
        // which is harmless). SHLVL=1 makes bash skip ~/.bashrc for sshd commands: root's here
        // runs `pyenv init`, whose rehash holds a lock file, and a test that kills sessions
        // mid-rc would leave it stale and hang every later login on the machine.
        let login = if self.options.password_auth {
            "yes"
        } else {
            "prohibit-password"
        };
        let password = if self.options.password_auth {
            "yes"
        } else {
            "no"
        };
        let d = root.display();
        let bin = self
            .options
            .bin_dir
            .clone()
            .unwrap_or_else(|| root.join("bin"));
        let bin = bin.display();
        let max_startups = self.options.max_startups.as_deref().unwrap_or("100:30:200");
        let extra = &self.options.extra_config;
        let home = self
            .options
            .home
            .as_ref()
            .map(|h| format!(" HOME={}", h.display()))
            .unwrap_or_default();
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_ed25519\nHostKey {d}/host_ecdsa\n\
             PidFile {d}/sshd.pid\nAuthorizedKeysFile {d}/authorized_keys\n\
             PasswordAuthentication {password}\nKbdInteractiveAuthentication no\n\
             PubkeyAuthentication yes\nPermitRootLogin {login}\nUsePAM no\nStrictModes no\n\
             LogLevel VERBOSE\nMaxStartups {max_startups}\nMaxSessions 10\n\
             SetEnv PATH={bin}:/usr/local/bin:/usr/bin:/bin GPUFLEET_FAKE_DIR={d} SHLVL=1{home}\n{extra}"
        );
        std::fs::write(root.join("sshd_config"), config).expect("sshd_config");
    }

    /// Starts sshd and waits until *this* sshd says it listens (a connect alone could reach
    /// another test's server that holds the port).
    fn launch(&mut self) -> Launch {
        let root = self.dir.path();
        let log = root.join("sshd.log");
        let _ = std::fs::remove_file(&log);
        let mut command = match self.options.wrapper.split_first() {
            Some((program, args)) => {
                let mut command = Command::new(program);
                command.args(args).arg(SSHD);
                command
            }
            None => Command::new(SSHD),
        };
        let child = command
            .arg("-D")
            .arg("-f")
            .arg(root.join("sshd_config"))
            .arg("-E")
            .arg(&log)
            .stdin(Stdio::null())
            .spawn()
            .expect("start sshd");
        self.child = Some(child);
        let listening = format!("Server listening on 127.0.0.1 port {}.", self.port);
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if self.log().contains(&listening)
                && TcpStream::connect(("127.0.0.1", self.port)).is_ok()
            {
                return Launch::Listening;
            }
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                self.child = None;
                if self.log().contains("Address already in use") {
                    return Launch::PortTaken;
                }
                panic!("sshd exited with {status}: {}", self.log());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!(
            "sshd did not listen on {} within 10 s: {}",
            self.port,
            self.log()
        );
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir().join("sshd.log")).unwrap_or_default()
    }

    pub fn client_key(&self) -> PathBuf {
        self.dir().join("client_ed25519")
    }

    pub fn host_key_pub(&self, kind: &str) -> PathBuf {
        self.dir().join(format!("host_{kind}.pub"))
    }

    /// A known_hosts line for this server's `kind` host key.
    pub fn known_hosts_line(&self, kind: &str) -> String {
        let key = std::fs::read_to_string(self.host_key_pub(kind)).expect("host key");
        let mut words = key.split_whitespace();
        let (key_type, blob) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
        format!("[127.0.0.1]:{} {key_type} {blob}\n", self.port)
    }

    /// Writes a known_hosts file that trusts this server's ed25519 key.
    pub fn trusted_known_hosts(&self) -> PathBuf {
        let path = self.dir().join("known_hosts");
        std::fs::write(&path, self.known_hosts_line("ed25519")).expect("known_hosts");
        path
    }

    /// Selects what the fake nvidia-smi and dmesg do on their next run.
    pub fn set_scenario(&self, word: &str) {
        std::fs::write(self.dir().join("scenario"), word).expect("scenario");
    }

    /// How often the fake `program` ran, with which arguments.
    pub fn calls(&self, program: &str) -> Vec<String> {
        std::fs::read_to_string(self.dir().join(format!("{program}.calls")))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// The host as a link sees it, logging in with the authorized client key.
    pub fn remote_host(&self, name: &str) -> RemoteHost {
        RemoteHost {
            name: name.to_string(),
            target: Endpoint {
                user: self.user.clone(),
                host: "127.0.0.1".to_string(),
                port: self.port,
            },
            identity_files: vec![self.client_key()],
            password_env: None,
            host_keys: Default::default(),
            proxy: Default::default(),
            settings: Default::default(),
            job_log: None,
            dead_man: None,
            disarm_stray_switch: false,
        }
    }

    fn listener_pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The per-connection sshd processes and everything they started.
    pub fn session_pids(&self) -> Vec<u32> {
        self.listener_pid().map(descendants).unwrap_or_default()
    }

    /// Kills sshd and every session it serves (SIGKILL, by PID), like a host going away.
    pub fn kill(&mut self) {
        let sessions = self.session_pids();
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        signal(&sessions, "KILL");
    }

    /// Processes started under this server that outlived their session (a closed session
    /// leaves its commands running): found by the fake-dir variable in their environment.
    fn strays(&self) -> Vec<u32> {
        self.host_processes()
    }

    /// Every process that runs on this "host" on a session's behalf (the commands a link
    /// started and their children, not sshd itself): found by the fake-dir variable that
    /// sshd puts in their environment.
    pub fn host_processes(&self) -> Vec<u32> {
        let marker = format!("GPUFLEET_FAKE_DIR={}", self.dir().display());
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
                continue;
            };
            if environ
                .split(|&b| b == 0)
                .any(|var| var == marker.as_bytes())
            {
                found.push(pid);
            }
        }
        found
    }

    /// Kills (SIGKILL) the sshd processes that serve connections, leaving the listener and
    /// whatever the sessions started: a link that drops while the host stays up.
    pub fn kill_connections(&self) -> Vec<u32> {
        let sshd: Vec<u32> = self
            .session_pids()
            .into_iter()
            .filter(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/comm"))
                    .is_ok_and(|c| c.trim().starts_with("sshd"))
            })
            .collect();
        signal(&sshd, "KILL");
        sshd
    }

    /// Starts sshd again on the same port with the same keys.
    pub fn restart(&mut self) {
        self.kill();
        if let Launch::PortTaken = self.launch() {
            panic!("port {} was taken while sshd was down", self.port);
        }
    }

    /// Freezes the sessions (SIGSTOP) while the listener keeps accepting: a link that went
    /// silent without closing, as when a network path dies.
    pub fn freeze_sessions(&self) -> Vec<u32> {
        let pids = self.session_pids();
        signal(&pids, "STOP");
        pids
    }

    /// Lets processes frozen by [`Sshd::freeze_sessions`] run again.
    pub fn thaw(&self, pids: &[u32]) {
        signal(pids, "CONT");
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        self.kill();
        // Twice: a shell caught between fork and exec shows up a moment later.
        for _ in 0..2 {
            signal(&self.strays(), "KILL");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Sends signal `name` (`KILL`, `STOP`, ...) to `pids`.
pub fn signal(pids: &[u32], name: &str) {
    if pids.is_empty() {
        return;
    }
    let _ = Command::new("kill")
        .arg(format!("-{name}"))
        .args(pids.iter().map(u32::to_string))
        .stderr(Stdio::null())
        .status();
}

/// PIDs of all descendants of `root`, from /proc.
fn descendants(root: u32) -> Vec<u32> {
    let mut parent_of = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // The command name may hold spaces or parentheses; the ppid follows the last ')'.
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse::<u32>().ok());
            if let Some(ppid) = ppid {
                parent_of.push((pid, ppid));
            }
        }
    }
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            parent_of
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    found.remove(0);
    found
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

/// Copies the fake programs with their exec bits set (a checkout may have lost them).
fn install_fakes(bin: &Path) {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-nvidia-smi");
    std::fs::create_dir_all(bin).expect("bin dir");
    for entry in std::fs::read_dir(&source)
        .expect("fake-nvidia-smi fixtures")
        .flatten()
    {
        let target = bin.join(entry.file_name());
        std::fs::copy(entry.path(), &target).expect("copy fixture");
        let name = entry.file_name();
        if name == "nvidia-smi" || name == "dmesg" {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755))
                .expect("chmod");
        }
    }
}
