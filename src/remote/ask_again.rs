//! Asking again about a host key the user declined. A declined key ends the link's attempts
//! (retrying cannot change the answer), but where a person answers the questions (the
//! console) the link waits instead of ending: asked to, it connects again and the host key
//! question comes back.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

use crate::fleet::HostId;

/// The hosts the user asked to be asked again, shared by the console and the links.
#[derive(Clone, Default)]
pub struct AskAgain(Arc<Inner>);

#[derive(Default)]
struct Inner {
    asked: Mutex<HashSet<HostId>>,
    notify: Notify,
}

impl AskAgain {
    /// Asks `host`'s link, waiting after a declined key, to connect and ask again.
    pub fn ask(&self, host: HostId) {
        if let Ok(mut asked) = self.0.asked.lock() {
            asked.insert(host);
        }
        self.0.notify.notify_waiters();
    }

    /// Takes `host`'s request, if there is one.
    fn take(&self, host: HostId) -> bool {
        self.0
            .asked
            .lock()
            .is_ok_and(|mut asked| asked.remove(&host))
    }

    /// Returns once `host` is asked about again; a request made before the wait (between the
    /// decline and this call) is not lost.
    pub async fn wait(&self, host: HostId) {
        loop {
            let notified = self.0.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.take(host) {
                return;
            }
            notified.await;
        }
    }
}

impl std::fmt::Debug for AskAgain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AskAgain")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_wakes_only_the_host_asked_for_and_is_kept_until_taken() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        let ask = AskAgain::default();
        // Asked before anyone waits: the wait returns at once.
        ask.ask(3);
        runtime.block_on(async {
            tokio::time::timeout(std::time::Duration::from_secs(1), ask.wait(3))
                .await
                .expect("host 3 was asked");
        });
        // Host 4 asked: host 3 keeps waiting.
        ask.ask(4);
        let waited = runtime.block_on(async {
            tokio::time::timeout(std::time::Duration::from_millis(50), ask.wait(3)).await
        });
        assert!(waited.is_err(), "host 3 was not asked again");
        assert!(ask.take(4));
    }
}
