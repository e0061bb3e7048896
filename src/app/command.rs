//! What `update` asks the runtime to do; the runtime performs it and reports back as events.

use crate::app::prompt::PromptAnswer;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Restore the terminal and exit.
    Quit,
    /// Send the user's answer to the link that asked question `id`.
    AnswerPrompt { id: u64, answer: PromptAnswer },
}
