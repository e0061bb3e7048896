//! A training log read as a stream: bytes in, a progress model out. Memory is bounded whatever
//! the log's length: one segment being read, the loss and eval-loss series thinned to a fixed
//! number of points, the last few lines, a few checkpoint steps.
//!
//! Steps come from where each library puts them: Hugging Face `Trainer` dicts carry none, so a
//! dict takes the step of the training bar tqdm redraws right after it (the `Trainer` writes
//! its logs through `tqdm.write`, which redraws the bar at the current step); Lightning's Rich
//! bar gives the epoch and the batch; plain prints and the user's pattern name the step.

use std::collections::VecDeque;

use serde::Serialize;

use crate::job::clock::StepClock;
use crate::job::formats::{self, Bar, HfRecord, NanoRecord, UserPattern};
use crate::job::judge::{self, Diverged, EvalTrack, JudgeOptions, Judgement};
use crate::job::segments::{Segment, Splitter};
use crate::job::series::{Series, StepValue};
use crate::words::Words;

/// Points kept of the loss series (and of the eval-loss series).
pub const SERIES_POINTS: usize = 512;
/// Lines kept of the log's end (for the traceback of a crash).
pub const TAIL_LINES: usize = 48;
/// Characters kept of one of those lines.
const TAIL_LINE_CHARS: usize = 512;
/// Checkpoint steps kept (the newest).
const CHECKPOINTS: usize = 32;
/// `Trainer` dicts waiting for the bar's step.
const PENDING: usize = 16;

const TRACEBACK: &str = "Traceback (most recent call last):";

/// How the log is read and judged.
#[derive(Debug, Clone, Default)]
pub struct JobOptions {
    pub judge: JudgeOptions,
    /// The user's pattern, for formats none of the built-in readers knows.
    pub pattern: Option<UserPattern>,
}

/// The formats a log showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    HfTrainer,
    Tqdm,
    Lightning,
    Plain,
    UserPattern,
}

impl Format {
    /// The format as the reader says it: the libraries by their names, the others in words.
    pub fn words(self) -> Words {
        match self {
            Format::HfTrainer => Words::verbatim("Hugging Face Trainer"),
            Format::Tqdm => Words::verbatim("tqdm"),
            Format::Lightning => Words::verbatim("Lightning"),
            Format::Plain => Words::new("job_log_format.plain"),
            Format::UserPattern => Words::new("job_log_format.user_pattern"),
        }
    }
}

/// Where the run is, as far as its log says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    /// No end seen (still running, or stopped without a word).
    Running,
    /// The library's own end-of-training line (`Trainer`'s `train_runtime` summary,
    /// Lightning's "`Trainer.fit` stopped").
    Completed,
    /// The log ends with a Python traceback.
    Crashed,
}

/// The log's end when it is a traceback.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Crash {
    /// The exception line (`torch.OutOfMemoryError: CUDA out of memory. …`).
    pub exception: String,
    /// The traceback's lines, from `Traceback (most recent call last):` on (as far as kept).
    pub lines: Vec<String>,
}

/// What the log says of the run: progress, series, checkpoints, its end, the judgement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobReport {
    pub formats: Vec<Format>,
    pub step: Option<u64>,
    pub total: Option<u64>,
    /// Iterations per second, as the progress bar last said.
    pub rate_per_s: Option<f64>,
    pub elapsed_s: Option<f64>,
    /// Time left, as the progress bar last said.
    pub eta_s: Option<f64>,
    pub loss: Option<StepValue>,
    pub eval_loss: Option<StepValue>,
    pub best_eval_loss: Option<StepValue>,
    pub loss_series: Vec<StepValue>,
    pub eval_series: Vec<StepValue>,
    /// Steps at which a checkpoint was written (the `Trainer` names it `checkpoint-<step>`).
    pub checkpoints: Vec<u64>,
    pub state: JobState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crash: Option<Crash>,
    pub judgement: Judgement,
    /// Seconds, by the log's own progress bar, from the step the run stopped paying off (the
    /// plateau's start, the best evaluation before overfitting) to the newest step; `None`
    /// when it did not, or the log's bar keeps no clock that spans the run.
    #[serde(skip)]
    pub stalled_for_s: Option<f64>,
}

impl JobReport {
    /// Whether the text was a training log at all: a loss, an eval loss, a Lightning epoch bar,
    /// a step print or a match of the user's pattern. A progress bar alone (a download) is not.
    pub fn is_training_log(&self) -> bool {
        !self.loss_series.is_empty()
            || self.judgement.diverged.is_some()
            || !self.eval_series.is_empty()
            || self
                .formats
                .iter()
                .any(|f| matches!(f, Format::Lightning | Format::UserPattern))
    }

    /// Progress as a share of the run, 0 to 1.
    pub fn fraction(&self) -> Option<f64> {
        match (self.step, self.total) {
            (Some(step), Some(total)) if total > 0 => Some((step as f64 / total as f64).min(1.0)),
            _ => None,
        }
    }

    /// The newest checkpoint written at or before `step`.
    pub fn checkpoint_at_or_before(&self, step: u64) -> Option<u64> {
        self.checkpoints
            .iter()
            .copied()
            .filter(|c| *c <= step)
            .max()
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Timing {
    rate_per_s: Option<f64>,
    elapsed_s: Option<f64>,
    eta_s: Option<f64>,
}

/// The stream reader.
pub struct JobLog {
    opts: JobOptions,
    /// Taken out while it hands segments to `self` (always there otherwise).
    splitter: Option<Splitter>,
    formats: Vec<Format>,
    /// The main tqdm bar: the one with the largest total that is not nested.
    main_total: Option<u64>,
    main_n: Option<u64>,
    main_timing: Timing,
    /// A step named by the log itself (plain prints, Lightning, the user's pattern).
    named_step: Option<u64>,
    named_total: Option<u64>,
    pending: Vec<HfRecord>,
    loss: Series,
    /// The first step of the newest run of losses that are NaN or inf, while the loss logged
    /// last is one of them.
    diverged_at: Option<u64>,
    evals_series: Series,
    evals: EvalTrack,
    last_eval: Option<StepValue>,
    checkpoints: VecDeque<u64>,
    /// The last lines that are not bars, each with the number of the segment it was.
    tail: VecDeque<(u64, String)>,
    /// Segments read, and the number of the last one that showed progress (a bar of the run
    /// moving, a loss): a traceback counts as the log's end only after it.
    segments: u64,
    progress_at: u64,
    completed: bool,
    /// Lightning: the step of its last epoch bar, for the metrics printed after it.
    lightning_step: Option<u64>,
    /// The main bar's elapsed time by step.
    clock: StepClock,
}

impl JobLog {
    pub fn new(opts: JobOptions) -> Self {
        Self {
            opts,
            splitter: Some(Splitter::default()),
            formats: Vec::new(),
            main_total: None,
            main_n: None,
            main_timing: Timing::default(),
            named_step: None,
            named_total: None,
            pending: Vec::new(),
            loss: Series::new(SERIES_POINTS),
            diverged_at: None,
            evals_series: Series::new(SERIES_POINTS),
            evals: EvalTrack::default(),
            last_eval: None,
            checkpoints: VecDeque::new(),
            tail: VecDeque::new(),
            segments: 0,
            progress_at: 0,
            completed: false,
            lightning_step: None,
            clock: StepClock::default(),
        }
    }

    /// Reads the next bytes of the log (any chunking).
    pub fn feed(&mut self, bytes: &[u8]) {
        if let Some(mut splitter) = self.splitter.take() {
            splitter.feed(bytes, &mut |seg| self.segment(seg));
            self.splitter = Some(splitter);
        }
    }

    /// Reads one line (without its line ending), as a reader split on `\n` hands it over.
    pub fn feed_line(&mut self, line: &[u8]) {
        self.feed(line);
        self.feed(b"\n");
    }

    /// Reads one line already decoded (as `gpufleet diagnose` has it). A line without `\r` or
    /// escape sequences is one segment and skips the byte splitter; others go through it.
    pub fn feed_text_line(&mut self, line: &str) {
        let bytes = line.as_bytes();
        let plain = !bytes.contains(&b'\r') && !bytes.contains(&0x1b);
        if plain && self.splitter.as_ref().is_some_and(Splitter::is_idle) {
            if !line.trim().is_empty() {
                self.segment(Segment {
                    text: std::borrow::Cow::Borrowed(line),
                    nested: false,
                });
            }
        } else {
            self.feed_line(bytes);
        }
    }

    /// Ends the input: the last unfinished segment is read and waiting `Trainer` dicts take
    /// the last step the bar showed.
    pub fn finish(&mut self) {
        if let Some(mut splitter) = self.splitter.take() {
            splitter.finish(&mut |seg| self.segment(seg));
            self.splitter = Some(splitter);
        }
        let step = self.main_n.unwrap_or(0);
        self.settle_pending(step);
    }

    fn mark(&mut self, format: Format) {
        if !self.formats.contains(&format) {
            self.formats.push(format);
        }
    }

    fn segment(&mut self, seg: Segment<'_>) {
        self.segments += 1;
        let text: &str = &seg.text;
        if let Some(bar) = formats::tqdm_bar(text) {
            self.bar(&bar, seg.nested);
        } else {
            self.line(text);
        }
        if let Some(record) = formats::nanogpt(text) {
            self.mark(Format::Plain);
            self.progress_at = self.segments;
            match record {
                NanoRecord::Train { step, loss } => {
                    self.named_step = Some(self.named_step.map_or(step, |s| s.max(step)));
                    self.push_loss(step, loss);
                }
                NanoRecord::Eval { step, val, .. } => self.eval(step, val),
            }
        }
        if text.contains("checkpoint to ")
            && let Some(saved) = formats::checkpoint_saved(text)
        {
            match saved {
                Some(step) => self.checkpoint(step),
                // nanoGPT saves right after the evaluation it printed, always to the same
                // `ckpt.pt`: only its newest save still exists.
                None => {
                    if let Some(eval) = self.last_eval {
                        self.checkpoints.clear();
                        self.checkpoint(eval.step);
                    }
                }
            }
        }
        if let Some((step, loss)) = formats::plain_step(text) {
            self.mark(Format::Plain);
            self.progress_at = self.segments;
            self.named_step = Some(self.named_step.map_or(step, |s| s.max(step)));
            self.push_loss(step, loss);
        }
        if let Some(pattern) = &self.opts.pattern
            && let Some(m) = pattern.find(text)
        {
            self.mark(Format::UserPattern);
            if let Some(step) = m.step {
                self.named_step = Some(step);
            }
            self.named_total = m.total.or(self.named_total);
            let step = self.named_step.unwrap_or(0);
            if let Some(loss) = m.loss {
                self.push_loss(step, loss);
            }
            if let Some(eval) = m.eval_loss {
                self.eval(step, eval);
            }
        }
    }

    fn bar(&mut self, bar: &Bar<'_>, nested: bool) {
        self.mark(Format::Tqdm);
        if bar.desc.starts_with("Writing model shards") && bar.n == bar.total {
            // The same save as a `Saving model checkpoint to …/checkpoint-N` line just before
            // it, when the log has those: the bar's own position may still lag a step behind.
            if let Some(step) = self.main_n
                && self
                    .checkpoints
                    .back()
                    .is_none_or(|last| last.abs_diff(step) > 1)
            {
                self.checkpoint(step);
            }
            return;
        }
        if nested || bar.total < 2 || self.main_total.is_some_and(|t| bar.total < t) {
            return;
        }
        if self.main_n != Some(bar.n) {
            self.progress_at = self.segments;
        }
        self.main_total = Some(bar.total);
        self.main_n = Some(bar.n);
        if let Some(loss) = bar.loss {
            self.push_loss(bar.n, loss);
        }
        if let Some(elapsed_s) = bar.elapsed_s {
            self.clock.push(bar.n, elapsed_s);
        }
        self.main_timing = Timing {
            rate_per_s: bar.rate_per_s.or(self.main_timing.rate_per_s),
            elapsed_s: bar.elapsed_s,
            eta_s: bar.remaining_s,
        };
        self.settle_pending(bar.n);
    }

    /// A training-loss point; a loss that is not a finite number marks the run as diverged
    /// from that step until a finite loss is logged again (the series keeps finite values only).
    fn push_loss(&mut self, step: u64, value: f64) {
        if value.is_finite() {
            self.diverged_at = None;
        } else {
            self.diverged_at.get_or_insert(step);
        }
        self.loss.push(step, value);
    }

    /// A checkpoint written at `step`; the newest [`CHECKPOINTS`] are kept, each step once.
    fn checkpoint(&mut self, step: u64) {
        if self.checkpoints.contains(&step) {
            return;
        }
        if self.checkpoints.len() == CHECKPOINTS {
            self.checkpoints.pop_front();
        }
        self.checkpoints.push_back(step);
    }

    fn settle_pending(&mut self, step: u64) {
        for record in std::mem::take(&mut self.pending) {
            match record {
                HfRecord::Loss(v) => self.push_loss(step, v),
                HfRecord::Eval(v) => self.eval(step, v),
                HfRecord::Summary => {}
            }
        }
    }

    fn eval(&mut self, step: u64, value: f64) {
        self.progress_at = self.segments;
        let point = StepValue { step, value };
        self.evals_series.push(step, value);
        self.evals.push(point, self.opts.judge.min_delta);
        self.last_eval = Some(point);
    }

    /// A segment that is not a tqdm bar.
    fn line(&mut self, text: &str) {
        let trimmed = text.trim_start();
        if trimmed.starts_with("{'") {
            if let Some(record) = formats::hf_dict(trimmed) {
                self.mark(Format::HfTrainer);
                if record == HfRecord::Summary {
                    self.completed = true;
                } else if self.pending.len() < PENDING {
                    self.pending.push(record);
                }
            }
        } else if let Some(bar) = formats::rich_bar(trimmed) {
            self.mark(Format::Lightning);
            self.progress_at = self.segments;
            let step = bar.epoch.saturating_mul(bar.batches).saturating_add(bar.n);
            self.lightning_step = Some(step);
            self.named_step = Some(step);
            self.named_total = Some(bar.last_epoch.saturating_add(1).saturating_mul(bar.batches));
            self.main_timing = Timing {
                rate_per_s: bar.rate_per_s,
                elapsed_s: bar.elapsed_s,
                eta_s: bar.remaining_s,
            };
        } else if trimmed.starts_with("`Trainer.fit` stopped") {
            self.completed = true;
        }
        if let Some(step) = self.lightning_step {
            if let Some(v) = formats::rich_metric(text, "train_loss") {
                self.push_loss(step, v);
            }
            if let Some(v) = formats::rich_metric(text, "val_loss") {
                self.eval(step, v);
            }
        }
        self.keep_tail(text);
    }

    fn keep_tail(&mut self, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        // A line of no more bytes than the limit has no more characters either.
        let kept = if text.len() <= TAIL_LINE_CHARS {
            text
        } else {
            match text.char_indices().nth(TAIL_LINE_CHARS) {
                Some((cut, _)) => &text[..cut],
                None => text,
            }
        };
        // The oldest line's buffer is reused: no allocation per line once the tail is full.
        let mut slot = if self.tail.len() == TAIL_LINES {
            self.tail.pop_front().map(|(_, s)| s).unwrap_or_default()
        } else {
            String::new()
        };
        slot.clear();
        slot.push_str(kept);
        self.tail.push_back((self.segments, slot));
    }

    /// The log's end, when it is a traceback.
    fn crash(&self) -> Option<Crash> {
        let start = self
            .tail
            .iter()
            .position(|(at, l)| *at > self.progress_at && l.starts_with(TRACEBACK))?;
        let lines: Vec<String> = self
            .tail
            .iter()
            .skip(start)
            .map(|(_, l)| l.clone())
            .collect();
        let exception = lines
            .iter()
            .rev()
            .find(|l| {
                !l.starts_with(char::is_whitespace)
                    && !l.starts_with(TRACEBACK)
                    && l.contains(|c: char| c.is_alphanumeric())
            })?
            .clone();
        Some(Crash { exception, lines })
    }

    /// The last lines read (not progress bars), oldest first.
    pub fn tail(&self) -> impl Iterator<Item = &str> {
        self.tail.iter().map(|(_, l)| l.as_str())
    }

    /// What the log says so far.
    pub fn report(&self) -> JobReport {
        let bar_step = self.main_n;
        let step = self.named_step.or(bar_step);
        let total = self
            .named_total
            .or(match (self.named_step, self.main_total) {
                (Some(named), Some(total)) if named <= total => Some(total),
                (None, total) => total,
                _ => None,
            });
        let crash = self.crash();
        let state = if crash.is_some() {
            JobState::Crashed
        } else if self.completed {
            JobState::Completed
        } else {
            JobState::Running
        };
        let judgement = match self.diverged_at {
            Some(since_step) => Judgement {
                diverged: Some(Diverged { since_step }),
                ..Judgement::default()
            },
            None => judge::judge(&self.loss, &self.evals, &self.opts.judge),
        };
        let stalled_at = judgement.since_step();
        JobReport {
            stalled_for_s: stalled_at.and_then(|step| self.clock.seconds_since(step)),
            formats: self.formats.clone(),
            step,
            total,
            rate_per_s: self.main_timing.rate_per_s,
            elapsed_s: self.main_timing.elapsed_s,
            eta_s: self.main_timing.eta_s,
            loss: self.loss.last(),
            eval_loss: self.last_eval,
            best_eval_loss: self.evals.best(),
            loss_series: self.loss.points(),
            eval_series: self.evals_series.points(),
            checkpoints: self.checkpoints.iter().copied().collect(),
            state,
            crash,
            judgement,
        }
    }
}

/// Reads a whole log held in memory.
pub fn read_log(bytes: &[u8], opts: JobOptions) -> JobReport {
    let mut log = JobLog::new(opts);
    log.feed(bytes);
    log.finish();
    log.report()
}

#[cfg(test)]
mod tests {
    use super::{Format, JobOptions, read_log};

    /// nanoGPT overwrites one `ckpt.pt` at each save: after two saves only the newest exists.
    /// The lines are karpathy/nanoGPT#97's (its evaluation, then its save), the second save
    /// after the second evaluation as `always_save_checkpoint` writes it.
    #[test]
    fn nanogpt_keeps_only_its_newest_save() {
        let log = "step 800: train loss 0.9795, val loss 3.7535\n\
                   saving checkpoint to out-shakespeare\n\
                   step 1000: train loss 0.6703, val loss 3.8986\n\
                   saving checkpoint to out-shakespeare\n";
        let report = read_log(log.as_bytes(), JobOptions::default());
        assert_eq!(report.checkpoints, [1000]);
    }

    /// `gpufleet diagnose` names the formats a log showed: libraries by their names in every
    /// language, the plain prints and the user's pattern in the reader's words.
    #[test]
    fn formats_are_named_in_the_readers_language() {
        assert_eq!(
            Format::HfTrainer.words().render("zh-CN"),
            "Hugging Face Trainer"
        );
        assert_eq!(Format::Plain.words().render("en"), "step/loss prints");
        assert_eq!(Format::UserPattern.words().render("en"), "your pattern");
        assert_eq!(Format::Plain.words().render("zh-CN"), "打印的 step/loss 行");
        assert_eq!(
            Format::UserPattern.words().render("zh-CN"),
            "你配置的 pattern"
        );
    }
}
