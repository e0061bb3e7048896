//! Playbooks: runbooks, local and sshd execution, device runs, the picker and confirmation screens.
//!
//! One test binary for this area: each module is one former test file.

#[path = "../common/mod.rs"]
mod common;
#[path = "../support/playbook_common.rs"]
mod playbook_common;

mod playbook_device;
mod playbook_local;
mod playbook_runbooks;
mod playbook_sshd;
mod playbook_tui;
