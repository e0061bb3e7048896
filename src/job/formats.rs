//! Readers of one segment of a training log, one per format seen in real captures
//! (`tests/fixtures/training-logs/`): tqdm bars, Hugging Face `Trainer` dicts, Lightning's
//! Rich bar and its metrics, plain `step N … loss X` prints; and the user's own pattern. Each
//! returns `None` for a segment that is not its format; none allocates on the common path.

use regex::Regex;

/// A tqdm bar: `desc: 33%|███▎      | 200/600 [00:03<00:03, 111.43it/s]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar<'a> {
    /// The text before the percentage, without its colon (`epoch 0`, `Writing model shards`);
    /// empty when there is none.
    pub desc: &'a str,
    pub n: u64,
    pub total: u64,
    pub elapsed_s: Option<f64>,
    /// `None` while tqdm shows `?`.
    pub remaining_s: Option<f64>,
    /// Iterations per second (`s/it` is turned around); `None` while tqdm shows `?`.
    pub rate_per_s: Option<f64>,
    /// The training loss the bar's postfix shows ([`postfix_loss`]); `nan` stays `nan`.
    pub loss: Option<f64>,
}

/// `00:03`, `1:02:03`: seconds.
fn clock_s(text: &str) -> Option<f64> {
    let mut total = 0.0;
    let mut parts = 0;
    for part in text.split(':') {
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) || parts == 3 {
            return None;
        }
        // Digits only: an integer parse is a tenth of a float's, and a bar has two clocks.
        total = total * 60.0 + part.parse::<u64>().ok()? as f64;
        parts += 1;
    }
    (parts >= 2).then_some(total)
}

/// ` 8.33it/s`, `2.20s/it`, `?it/s`: iterations per second.
fn rate(text: &str) -> Option<f64> {
    let text = text.trim();
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let value: f64 = text[..end].parse().ok()?;
    let unit = &text[end..];
    if unit.starts_with("s/") {
        (value > 0.0).then(|| 1.0 / value)
    } else if unit.ends_with("/s") {
        Some(value)
    } else {
        None
    }
}

/// The digits that end `text` (after trailing spaces), and where they start.
fn trailing_number(text: &str) -> Option<(u64, usize)> {
    let trimmed = text.trim_end_matches(' ');
    let start = trimmed
        .char_indices()
        .rev()
        .find(|(_, c)| !c.is_ascii_digit())
        .map_or(0, |(i, c)| i + c.len_utf8());
    let digits = &trimmed[start..];
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    Some((digits.parse().ok()?, start))
}

/// Where the next ` [` starts at or after `from`: a byte scan (a bar's segments are short,
/// and `str::find` sets up a substring searcher per call).
fn space_bracket(seg: &str, from: usize) -> Option<usize> {
    let bytes = seg.as_bytes();
    (from.max(1)..bytes.len())
        .find(|&i| bytes[i] == b'[' && bytes[i - 1] == b' ')
        .map(|i| i - 1)
}

/// Where the last `%|` in `head` starts.
fn percent_bar(head: &str) -> Option<usize> {
    let bytes = head.as_bytes();
    (1..bytes.len())
        .rev()
        .find(|&i| bytes[i] == b'|' && bytes[i - 1] == b'%')
        .map(|i| i - 1)
}

/// A tqdm bar anywhere in `seg` (the first one).
pub fn tqdm_bar(seg: &str) -> Option<Bar<'_>> {
    // Most lines of a log are not bars: `contains` (vectorised) turns them away before
    // `find`, which sets up a searcher per call.
    if !seg.contains(" [") {
        return None;
    }
    let mut from = 0;
    while let Some(open) = space_bracket(seg, from) {
        from = open + 2;
        let Some((total, total_start)) = trailing_number(&seg[..open]) else {
            continue;
        };
        let Some(before_slash) = seg[..total_start].strip_suffix('/') else {
            continue;
        };
        let Some((n, n_start)) = trailing_number(before_slash) else {
            continue;
        };
        let inside = &seg[open + 2..];
        let inside = &inside[..inside.find(']').unwrap_or(inside.len())];
        let Some((elapsed, rest)) = inside.split_once('<') else {
            continue;
        };
        let Some(elapsed_s) = clock_s(elapsed.trim()) else {
            continue;
        };
        let (remaining, rate_text) = rest.split_once(',').unwrap_or((rest, ""));
        let remaining = remaining.trim();
        if remaining != "?" && clock_s(remaining).is_none() {
            continue;
        }
        let (rate_text, postfix) = rate_text.split_once(',').unwrap_or((rate_text, ""));
        let head = &seg[..n_start];
        // `desc: 33%|███| ` before the count; no percentage means no description either.
        let desc = percent_bar(head)
            .map(|pct| {
                let before = head[..pct].trim_end_matches(|c: char| c.is_ascii_digit());
                before.trim().trim_end_matches(':').trim()
            })
            .unwrap_or("");
        return Some(Bar {
            desc,
            n,
            total,
            elapsed_s: Some(elapsed_s),
            remaining_s: clock_s(remaining),
            rate_per_s: rate(rate_text),
            loss: postfix_loss(postfix),
        });
    }
    None
}

/// The training loss in a bar's postfix, as `tqdm.set_postfix(loss=…)` and Lightning's tqdm bar
/// print it: `…, 4.14s/it, loss=9.847, v_num=193315]`, `…, v_num=0, train_loss=0.352]`.
fn postfix_loss(postfix: &str) -> Option<f64> {
    if !postfix.contains("loss=") {
        return None;
    }
    postfix.split(',').find_map(|item| {
        let (key, value) = item.trim().split_once('=')?;
        if matches!(key, "loss" | "train_loss" | "loss_step" | "train_loss_step") {
            leading_float(value.trim())
        } else {
            None
        }
    })
}

/// What a Hugging Face `Trainer` log dict says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HfRecord {
    /// `{'loss': '5.012', 'grad_norm': …, 'learning_rate': …, 'epoch': '0.1562'}`
    Loss(f64),
    /// `{'eval_loss': '0.02902', 'eval_runtime': …, 'epoch': '1.562'}`
    Eval(f64),
    /// `{'train_runtime': '10.27', …, 'train_loss': '0.4247', 'epoch': '4.688'}`: the end.
    Summary,
}

/// A `Trainer` log dict. transformers 5 prints the values as strings (`'5.012'`, captured in
/// the fixtures); 4.x printed numbers (`5.012`), which the same reader takes.
pub fn hf_dict(seg: &str) -> Option<HfRecord> {
    let body = seg.trim().strip_prefix("{'")?.strip_suffix('}')?;
    let mut rest = body;
    let mut loss = None;
    let mut eval = None;
    let mut summary = false;
    loop {
        let (key, after) = rest.split_once("': ")?;
        let (value, next) = if let Some(quoted) = after.strip_prefix('\'') {
            let end = quoted.find('\'')?;
            (&quoted[..end], &quoted[end + 1..])
        } else {
            let end = after.find(',').unwrap_or(after.len());
            (after[..end].trim(), &after[end..])
        };
        match key {
            "loss" => loss = value.parse::<f64>().ok(),
            "eval_loss" => eval = value.parse::<f64>().ok(),
            "train_runtime" => summary = true,
            _ => {}
        }
        match next.strip_prefix(", '") {
            Some(more) => rest = more,
            None => break,
        }
    }
    if summary {
        Some(HfRecord::Summary)
    } else if let Some(v) = eval {
        Some(HfRecord::Eval(v))
    } else {
        loss.map(HfRecord::Loss)
    }
}

/// Lightning's Rich bar: `Epoch 5/5  ━━━━ 64/64 0:00:00 • 0:00:00 245.78it/s v_num: 0.000`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RichBar {
    pub epoch: u64,
    /// The last epoch's number (`max_epochs - 1`: Lightning counts from 0 in both).
    pub last_epoch: u64,
    pub n: u64,
    pub batches: u64,
    pub elapsed_s: Option<f64>,
    pub remaining_s: Option<f64>,
    pub rate_per_s: Option<f64>,
}

fn fraction(token: &str) -> Option<(u64, u64)> {
    let (a, b) = token.split_once('/')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

pub fn rich_bar(seg: &str) -> Option<RichBar> {
    let rest = seg.trim_start().strip_prefix("Epoch ")?;
    let mut tokens = rest.split_whitespace();
    let (epoch, last_epoch) = fraction(tokens.next()?)?;
    let mut tokens = tokens.skip_while(|t| t.chars().all(|c| matches!(c, '━' | '╸' | '╺')));
    let (n, batches) = fraction(tokens.next()?)?;
    let elapsed_s = tokens.next().and_then(clock_s);
    let remaining_s = match (tokens.next(), tokens.next()) {
        (Some("•"), Some(t)) => clock_s(t),
        _ => None,
    };
    let rate_per_s = tokens.next().and_then(rate);
    Some(RichBar {
        epoch,
        last_epoch,
        n,
        batches,
        elapsed_s,
        remaining_s,
        rate_per_s,
    })
}

/// A number at the start of `text`: `0.006`, `6.833e-05`, `nan`.
fn leading_float(text: &str) -> Option<f64> {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+')))
        .unwrap_or(text.len());
    text[..end].parse().ok()
}

/// Whether `text[at..]` starts a word (the byte before is not a letter, digit or `_`).
fn word_start(text: &str, at: usize) -> bool {
    at == 0
        || text[..at]
            .chars()
            .next_back()
            .is_some_and(|c| !(c.is_alphanumeric() || c == '_'))
}

/// `name: value` as Lightning's Rich bar prints its metrics (`train_loss: 0.006`).
pub fn rich_metric(seg: &str, name: &str) -> Option<f64> {
    if !seg.contains(name) {
        return None;
    }
    let mut from = 0;
    while let Some(found) = seg[from..].find(name) {
        let at = from + found;
        from = at + name.len();
        if word_start(seg, at)
            && let Some(value) = seg[from..].strip_prefix(": ")
        {
            return leading_float(value);
        }
    }
    None
}

/// A plain print: `step 20 loss 3.6064` (text may stand between the two).
pub fn plain_step(seg: &str) -> Option<(u64, f64)> {
    if !seg.contains("step ") {
        return None;
    }
    let mut from = 0;
    while let Some(found) = seg[from..].find("step ") {
        let at = from + found;
        from = at + 5;
        if !word_start(seg, at) {
            continue;
        }
        let after = seg[from..].trim_start_matches(' ');
        let digits = after
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(after.len());
        let Ok(step) = after[..digits].parse::<u64>() else {
            continue;
        };
        let rest = &after[digits..];
        if !rest.is_empty() && !rest.starts_with(' ') {
            continue;
        }
        let mut at_loss = 0;
        while let Some(found) = rest[at_loss..].find("loss ") {
            let l = at_loss + found;
            at_loss = l + 5;
            if word_start(rest, l)
                && let Some(v) = leading_float(rest[at_loss..].trim_start_matches(' '))
            {
                return Some((step, v));
            }
        }
    }
    None
}

/// What one of nanoGPT's prints says (karpathy/nanoGPT `train.py`, and the many scripts that
/// copied its loop).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NanoRecord {
    /// `iter 791: loss 1.2052, time 745.63ms` (and `, mfu …` since).
    Train { step: u64, loss: f64 },
    /// `step 800: train loss 0.9795, val loss 3.7535`, at each evaluation.
    Eval { step: u64, train: f64, val: f64 },
}

/// `N: ` after a word: the step and the rest.
fn numbered(rest: &str) -> Option<(u64, &str)> {
    let (digits, after) = rest.split_once(": ")?;
    Some((digits.parse().ok()?, after))
}

pub fn nanogpt(seg: &str) -> Option<NanoRecord> {
    let text = seg.trim_start();
    if let Some(rest) = text.strip_prefix("iter ") {
        let (step, after) = numbered(rest)?;
        let loss = leading_float(after.strip_prefix("loss ")?)?;
        return Some(NanoRecord::Train { step, loss });
    }
    let (step, after) = numbered(text.strip_prefix("step ")?)?;
    let (train, val) = after
        .strip_prefix("train loss ")?
        .split_once(", val loss ")?;
    Some(NanoRecord::Eval {
        step,
        train: leading_float(train)?,
        val: leading_float(val)?,
    })
}

/// Where a checkpoint was written, from the line that says so: the Hugging Face `Trainer`'s
/// `Saving model checkpoint to <dir>` (its `logger.info` in `Trainer._save`) gives the step of
/// a `checkpoint-<step>` directory (the final model's directory names none: `None`); nanoGPT's
/// `saving checkpoint to <out_dir>` (printed right after an evaluation) gives `Some(None)`.
pub fn checkpoint_saved(seg: &str) -> Option<Option<u64>> {
    if seg.trim_start().starts_with("saving checkpoint to ") {
        return Some(None);
    }
    let at = seg.find("Saving model checkpoint to ")? + 27;
    let path = seg[at..].trim_end();
    let step = path
        .rfind("checkpoint-")
        .and_then(|i| path[i + 11..].trim_end_matches('/').parse().ok())?;
    Some(Some(step))
}

pub use crate::config::PatternError;

/// A user's pattern with named groups `step`, `total`, `loss`, `eval_loss` (any of them).
#[derive(Debug, Clone)]
pub struct UserPattern {
    regex: Regex,
}

/// What one match of a [`UserPattern`] gave.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct UserMatch {
    pub step: Option<u64>,
    pub total: Option<u64>,
    pub loss: Option<f64>,
    pub eval_loss: Option<f64>,
}

impl UserPattern {
    /// Compiles `pattern` (size-limited, as the regex crate's defaults allow).
    pub fn new(pattern: &str) -> Result<Self, PatternError> {
        Ok(Self {
            regex: crate::config::compile_pattern(pattern)?,
        })
    }

    pub fn find(&self, seg: &str) -> Option<UserMatch> {
        let caps = self.regex.captures(seg)?;
        let num = |name: &str| caps.name(name).map(|m| m.as_str().trim());
        let found = UserMatch {
            step: num("step").and_then(|s| s.parse().ok()),
            total: num("total").and_then(|s| s.parse().ok()),
            loss: num("loss").and_then(|s| s.parse().ok()),
            eval_loss: num("eval_loss").and_then(|s| s.parse().ok()),
        };
        (found != UserMatch::default()).then_some(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_as_tqdm_prints_them() {
        let b = tqdm_bar("  2%|▏         | 14/600 [00:02<01:10,  8.33it/s]").expect("bar");
        assert_eq!((b.desc, b.n, b.total), ("", 14, 600));
        assert_eq!(b.elapsed_s, Some(2.0));
        assert_eq!(b.remaining_s, Some(70.0));
        assert_eq!(b.rate_per_s, Some(8.33));
        let b = tqdm_bar("  0%|          | 1/600 [00:02<21:56,  2.20s/it]").expect("bar");
        assert!((b.rate_per_s.expect("rate") - 1.0 / 2.2).abs() < 1e-9);
        let b = tqdm_bar("  0%|          | 0/600 [00:00<?, ?it/s][transformers] x").expect("b");
        assert_eq!((b.n, b.remaining_s, b.rate_per_s), (0, None, None));
        let b = tqdm_bar("epoch 3:  78%|███████▊  | 50/64 [00:00<00:00, 495.39it/s]step 200 loss")
            .expect("bar");
        assert_eq!((b.desc, b.n, b.total), ("epoch 3", 50, 64));
        let b = tqdm_bar("Writing model shards: 100%|██████████| 1/1 [00:00<00:00, 230.34it/s]")
            .expect("bar");
        assert_eq!(b.desc, "Writing model shards");
        // Lightning's tqdm bar (pytorch-lightning#4225): the loss in the postfix.
        let b = tqdm_bar(
            "Epoch 0:  28%|██▊       | 5/18 [00:20<00:53,  4.14s/it, loss=9.847, v_num=193315]",
        )
        .expect("bar");
        assert_eq!((b.n, b.loss), (5, Some(9.847)));
        assert_eq!(b.rate_per_s, Some(1.0 / 4.14));
        let b = tqdm_bar("Epoch 0:   6%|▌         | 1/18 [00:08<02:29,  8.77s/it]").expect("b");
        assert_eq!(b.loss, None);
        assert_eq!(tqdm_bar("GPU 0 [00:01]"), None);
        assert_eq!(tqdm_bar("x 1/2 [not<a clock]"), None);
    }

    #[test]
    fn nanogpt_prints_and_checkpoint_lines() {
        // karpathy/nanoGPT#97.
        assert_eq!(
            nanogpt("iter 791: loss 1.2052, time 745.63ms"),
            Some(NanoRecord::Train {
                step: 791,
                loss: 1.2052
            })
        );
        assert_eq!(
            nanogpt("step 800: train loss 0.9795, val loss 3.7535"),
            Some(NanoRecord::Eval {
                step: 800,
                train: 0.9795,
                val: 3.7535
            })
        );
        assert_eq!(nanogpt("step 20 loss 3.6064"), None);
        assert_eq!(nanogpt("iter 3: time 5ms"), None);
        assert_eq!(
            checkpoint_saved("saving checkpoint to out-shakespeare"),
            Some(None)
        );
        assert_eq!(
            checkpoint_saved("Saving model checkpoint to ./out/checkpoint-3000"),
            Some(Some(3000))
        );
        assert_eq!(
            checkpoint_saved("we are not saving checkpoint to disk"),
            None
        );
        // The Trainer's final save names no step.
        assert_eq!(checkpoint_saved("Saving model checkpoint to ./out"), None);
    }

    #[test]
    fn trainer_dicts_of_transformers_5() {
        let loss = "{'loss': '5.012', 'grad_norm': '1.012', 'learning_rate': '0.0009683', 'epoch': '0.1562'}";
        assert_eq!(hf_dict(loss), Some(HfRecord::Loss(5.012)));
        let eval = "{'eval_loss': '0.02902', 'eval_runtime': '0.8003', 'epoch': '1.562'}";
        assert_eq!(hf_dict(eval), Some(HfRecord::Eval(0.02902)));
        let end = "{'train_runtime': '10.27', 'train_loss': '0.4247', 'epoch': '4.688'}";
        assert_eq!(hf_dict(end), Some(HfRecord::Summary));
        assert_eq!(hf_dict("{'a': 'b'}"), None);
        assert_eq!(hf_dict("{'loss': "), None);
    }

    #[test]
    fn lightning_rich_bar_and_metrics() {
        let line =
            "Epoch 5/5  ━━━━━━━━━━━━━━━━ 64/64 0:00:00 • 0:00:00 245.78it/s v_num: 0.000     ";
        let b = rich_bar(line).expect("bar");
        assert_eq!((b.epoch, b.last_epoch, b.n, b.batches), (5, 5, 64, 64));
        assert_eq!(b.rate_per_s, Some(245.78));
        assert_eq!(b.remaining_s, Some(0.0));
        assert_eq!(
            rich_metric("       train_loss: 0.006", "train_loss"),
            Some(0.006)
        );
        assert_eq!(rich_metric("{'train_loss': '0.4'}", "train_loss"), None);
        assert_eq!(rich_metric("my_train_loss: 1", "train_loss"), None);
    }

    #[test]
    fn plain_steps() {
        assert_eq!(plain_step("step 20 loss 3.6064"), Some((20, 3.6064)));
        assert_eq!(
            plain_step("| 1/64 [00:00<00:17,  3.60it/s]step 20 loss 3.6064"),
            Some((20, 3.6064))
        );
        assert_eq!(plain_step("step 2x loss 1"), None);
        assert_eq!(plain_step("substep 2 loss 1"), None);
        assert_eq!(plain_step("step 2 train_loss 1"), None);
    }

    /// Untrusted text: any mix of the formats' own characters, multi-byte ones next to digits,
    /// never panics a reader.
    #[test]
    fn no_text_panics_a_reader() {
        let pieces = [
            "▏",
            "█",
            "━",
            "•",
            "7",
            "42",
            "/",
            " [",
            "]",
            "<",
            ",",
            ":",
            "%|",
            "{'",
            "'",
            ": ",
            "}",
            "step ",
            "loss ",
            "Epoch ",
            "it/s",
            "s/it",
            "?",
            " ",
            "é",
            "99999999999999999999",
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            let mut text = String::new();
            for _ in 0..12 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text.push_str(pieces[(state % pieces.len() as u64) as usize]);
            }
            let _ = tqdm_bar(&text);
            let _ = hf_dict(&text);
            let _ = rich_bar(&text);
            let _ = rich_metric(&text, "train_loss");
            let _ = plain_step(&text);
        }
        let b = tqdm_bar("▏14/600 [00:01<00:02, 3.00it/s]").expect("bar");
        assert_eq!((b.n, b.total), (14, 600));
    }

    #[test]
    fn user_patterns_need_a_known_group() {
        assert_eq!(
            UserPattern::new("it=(\\d+)").map(|_| ()),
            Err(PatternError::NoGroups)
        );
        assert!(matches!(
            UserPattern::new("(?P<step>"),
            Err(PatternError::Invalid(_))
        ));
        let p = UserPattern::new(r"it (?P<step>\d+)/(?P<total>\d+) l=(?P<loss>[\d.]+)")
            .expect("pattern");
        let m = p.find("it 5/10 l=0.5").expect("match");
        assert_eq!((m.step, m.total, m.loss), (Some(5), Some(10), Some(0.5)));
        assert_eq!(p.find("nothing"), None);
    }
}
