//! Carries links' questions into the app loop and the user's answers back: each
//! `PromptRequest` becomes an `Event::Prompt` (plain data the model can hold), while its reply
//! channel waits here until `Command::AnswerPrompt` names it.

use std::collections::HashMap;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};

use crate::app::event::Event;
use crate::app::prompt::{Prompt, PromptAnswer, PromptKind};
use crate::remote::{AskAgain, PromptRequest, Secret};

/// The reply ends of questions the user has not answered yet, and the links waiting to ask
/// again about a host key the user declined.
#[derive(Clone, Default)]
pub struct PendingPrompts {
    waiting: Arc<Mutex<HashMap<u64, PromptRequest>>>,
    ask_again: AskAgain,
}

impl PendingPrompts {
    /// What the links are given to wait on after a declined host key.
    pub fn ask_again(&self) -> AskAgain {
        self.ask_again.clone()
    }

    /// Asks `host`'s link, which waits after a declined host key, to connect and ask again;
    /// nothing happens for a link that does not wait.
    pub fn ask_host_key_again(&self, host: crate::fleet::HostId) {
        self.ask_again.ask(host);
    }

    /// Sends `answer` to the link that asked question `id`; a question already gone (its link
    /// stopped or gave up waiting) is ignored.
    pub fn answer(&self, id: u64, answer: PromptAnswer) {
        let Some(request) = self.waiting.lock().ok().and_then(|mut m| m.remove(&id)) else {
            return;
        };
        match (request, answer) {
            (PromptRequest::HostKey { reply, .. }, PromptAnswer::HostKey(accept)) => {
                let _ = reply.send(accept);
            }
            (
                PromptRequest::Passphrase { reply, .. } | PromptRequest::Password { reply, .. },
                PromptAnswer::Secret(secret),
            ) => {
                let _ = reply.send(secret.map(Secret::new));
            }
            // A mismatched answer declines: dropping the request is "no".
            _ => {}
        }
    }
}

/// Forwards questions from `requests` to the app loop on a thread of its own.
pub fn spawn(
    requests: Receiver<PromptRequest>,
    events: Sender<Event>,
) -> std::io::Result<PendingPrompts> {
    let pending = PendingPrompts::default();
    let store = pending.clone();
    std::thread::Builder::new()
        .name("prompts".to_string())
        .spawn(move || {
            for (id, request) in (1u64..).zip(requests.iter()) {
                let prompt = describe(id, &request);
                if let Ok(mut map) = store.waiting.lock() {
                    map.insert(id, request);
                }
                if events.send(Event::Prompt(prompt)).is_err() {
                    return;
                }
            }
        })?;
    Ok(pending)
}

fn describe(id: u64, request: &PromptRequest) -> Prompt {
    match request {
        PromptRequest::HostKey {
            host, target, key, ..
        } => Prompt {
            id,
            host: *host,
            target: target.clone(),
            kind: PromptKind::HostKey {
                known_as: key.known_as.clone(),
                key_type: key.key_type.clone(),
                fingerprint: key.fingerprint.clone(),
                other_types_known: key.other_types_known.clone(),
            },
        },
        PromptRequest::Passphrase {
            host,
            target,
            key_file,
            ..
        } => Prompt {
            id,
            host: *host,
            target: target.clone(),
            kind: PromptKind::Passphrase {
                key_file: key_file.display().to_string(),
            },
        },
        PromptRequest::Password { host, target, .. } => Prompt {
            id,
            host: *host,
            target: target.clone(),
            kind: PromptKind::Password,
        },
    }
}
