//! SSH links against real OpenSSH sshd on loopback: authentication, host keys, the ssh config,
//! proxies, faults, reconnects, streams, remote commands.
//!
//! One test binary for this area: each module is one former test file.

#[path = "../common/mod.rs"]
mod common;
#[path = "../support/tmux.rs"]
mod tmux;

mod remote_exec;
mod ssh_accel_kernel;
mod ssh_auth;
mod ssh_cleanup;
mod ssh_config;
mod ssh_config_options;
mod ssh_dead_man;
mod ssh_faults;
mod ssh_flood;
mod ssh_host_kind;
mod ssh_hostkeys;
mod ssh_hostkeys_config;
mod ssh_passphrase;
mod ssh_proxy;
mod ssh_reconnect;
mod ssh_run_shell;
mod ssh_stream;
mod ssh_wrong_port;
