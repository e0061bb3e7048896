//! The string literals of a Rust source file, read as the compiler reads them (comments, char
//! literals and lifetimes told apart, raw and byte strings, `\\` line continuations), each
//! with the code around it, for tests that scan the source.

/// One string literal of a source file, with what comes before and after it.
pub struct Literal {
    pub text: String,
    pub line: usize,
    pub before: String,
    pub after: String,
    pub byte: bool,
}

/// The code of a Rust file up to its `#[cfg(test)]` module, comments left out, as literals.
pub fn literals(source: &str) -> Vec<Literal> {
    let code = source.split("#[cfg(test)]").next().unwrap_or(source);
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut plain = String::new(); // the code outside literals, for context
    let mut line = 1;
    let mut i = 0;
    let mut ends: Vec<usize> = Vec::new(); // where each literal ends in `plain`
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\n' {
            line += 1;
        }
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '/' && next == Some('*') {
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                if chars[i] == '\n' {
                    line += 1;
                }
                i += 1;
            }
            i += 2;
            continue;
        }
        if c == '\'' {
            // A char literal ('x', '\n', '"'), else a lifetime.
            if chars.get(i + 2) == Some(&'\'') {
                plain.push_str("'_'");
                i += 3;
                continue;
            }
            if next == Some('\\') {
                let mut j = i + 2;
                while j < chars.len() && chars[j] != '\'' {
                    j += 1;
                }
                plain.push_str("'_'");
                i = j + 1;
                continue;
            }
        }
        let raw_start = (c == 'r' || c == 'b')
            && !plain
                .chars()
                .last()
                .is_some_and(|p| p.is_alphanumeric() || p == '_');
        if c == '"' || (raw_start && matches!(next, Some('"') | Some('#') | Some('r'))) {
            let byte = c == 'b';
            let mut j = i;
            if chars[j] == 'b' {
                j += 1;
            }
            let raw = chars.get(j) == Some(&'r');
            if raw {
                j += 1;
            }
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                plain.push(c);
                i += 1;
                continue;
            }
            j += 1;
            let start_line = line;
            let mut text = String::new();
            while let Some(&d) = chars.get(j) {
                if d == '\n' {
                    line += 1;
                }
                if !raw && d == '\\' {
                    // `\` at a line end joins the lines, dropping the indentation.
                    match chars.get(j + 1) {
                        Some('\n') => {
                            line += 1;
                            j += 2;
                            while chars.get(j).is_some_and(|c| c.is_whitespace()) {
                                j += 1;
                            }
                        }
                        Some('u') => {
                            while chars.get(j).is_some_and(|c| *c != '}') {
                                j += 1;
                            }
                            text.push('?');
                            j += 1;
                        }
                        Some(e) => {
                            text.push(match e {
                                'n' | 'r' | 't' | '0' => ' ',
                                other => *other,
                            });
                            j += 2;
                        }
                        None => j += 1,
                    }
                    continue;
                }
                if d == '"' && (0..hashes).all(|h| chars.get(j + 1 + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                text.push(d);
                j += 1;
            }
            plain.push_str("\"_\"");
            out.push(Literal {
                text,
                line: start_line,
                before: squeeze(&plain[..plain.len() - 3], true),
                after: String::new(),
                byte,
            });
            ends.push(plain.len());
            i = j;
            continue;
        }
        plain.push(c);
        i += 1;
    }
    for (lit, end) in out.iter_mut().zip(ends) {
        lit.after = squeeze(&plain[end..], false);
    }
    out
}

/// The 40 characters of code next to a literal, whitespace taken out: the end of `text` when
/// `tail`, else its start.
fn squeeze(text: &str, tail: bool) -> String {
    let all: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    if tail {
        all[all.len().saturating_sub(40)..].iter().collect()
    } else {
        all[..all.len().min(40)].iter().collect()
    }
}
