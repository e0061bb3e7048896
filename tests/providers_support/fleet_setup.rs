//! The config and ssh config of a test whose fleet comes from a RunPod account on a loopback
//! server, its pods' SSH endpoints a real sshd (shared by the provider fleet tests).

use crate::cli::Home;
use crate::common::sshd::Sshd;
use crate::provider_api::Server;

/// The config (`hosts` first) and an ssh config giving the sshd's client key.
pub fn setup(home: &Home, sshd: &Sshd, server: &Server, hosts: &str) -> (String, String) {
    let config = home.write(
        "c.toml",
        &format!(
            "interval_ms = 500\n{hosts}\n[[providers]]\nkind = \"runpod\"\n\
             token_env = \"RUNPOD_KEY\"\nbase_url = \"{}\"\n",
            server.base_url
        ),
    );
    let ssh_config = home.write(
        "ssh_config",
        &format!(
            "Host 127.0.0.1\n  IdentityFile {}\n",
            sshd.client_key().display()
        ),
    );
    (config, ssh_config)
}
