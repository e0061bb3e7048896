//! What a key means; only the keymap turns key codes into these.

/// A user intent, independent of which key produced it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Quit,
    /// Ctrl-C: quit, and exit 130 as every cancelled command does.
    Interrupt,
    /// The quit question about armed dead-man switches: quit, disarming them or not.
    QuitAnswer {
        disarm: bool,
    },
    /// The quit question: do not quit after all.
    QuitStay,
    /// `H`: push the host's dead-man switch two hours ahead, as `gpufleet hold HOST` does.
    HoldDeadMan,
    Up,
    Down,
    Left,
    Right,
    PageUp,
    PageDown,
    Top,
    Bottom,
    /// Open the selected host.
    Open,
    /// Close the overlay, clear the filter or go back to the fleet.
    Back,
    /// Move focus to the next pane.
    NextPane,
    ToggleHelp,
    CycleSort,
    StartFilter,
    /// A character typed into the filter or a secret prompt.
    TextInput(char),
    TextBackspace,
    FilterAccept,
    FilterCancel,
    /// Answer the open prompt: accept the host key, or submit the typed secret.
    PromptAccept,
    /// `K`: ask again about the host key the user declined for the selected host.
    AskHostKeyAgain,
    /// Decline the open prompt (`n` or Esc for a host key; Esc for a secret).
    PromptDecline,
    /// Open or close the cost panel.
    ToggleCost,
    /// Open the release dialog for the selected host.
    Release,
    /// Open the same dialog for a provider action that releases nothing (`r` restart, `S`
    /// start).
    InstanceAction(crate::release::ReleaseAction),
    /// Any key while an auto-release counts down: cancels it and does nothing else.
    CancelCountdown,
    /// Release dialog: run the backup, or check the typed name.
    ReleaseProceed,
    /// Release dialog: cancel (before the request goes out).
    ReleaseCancel,
    /// Release dialog: the other action (stop / terminate), where the provider has both.
    ReleaseSwitch,
    /// Release dialog: this action, where the provider has it.
    ReleaseChoose(crate::release::ReleaseAction),
    /// Release dialog: go on although the backup failed.
    ReleaseOverride,
    /// Release dialog: close it once finished.
    ReleaseClose,
    /// The runbook picker of the selected host.
    OpenRunbooks,
    /// Run `gpufleet check` on the selected host.
    CheckHost,
    /// The audit-log view.
    OpenAudit,
    /// `e`: write the selected host's incident report (`gpufleet report`).
    WriteReport,
    /// `!`: the alerts panel.
    OpenAlerts,
    /// Runbook picker: this runbook (then its parameters), or start it with those typed.
    RunbookChoose,
    /// Runbook parameters: back to the list.
    PanelBack,
    /// Close the open panel (picker, finished run or check, audit log).
    PanelClose,
    /// Stop the runbook or check that runs.
    StopRun,
    /// Run the step shown (only `y`).
    StepConfirm,
    /// Do not run the step shown (any other key).
    StepDecline,
}
