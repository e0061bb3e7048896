//! OpenSSH's host patterns, as `known_hosts` host fields use them: a comma-separated list of
//! patterns with `*` (any run of characters) and `?` (one character), each negated by a leading
//! `!`. A negated pattern that matches makes the whole list not match, whatever else matches.
//! Names are compared lowercased. `[host]:port` is no special syntax: the name `[h]:2222` is
//! matched whole, so `[h]:*` covers every port of `h` other than 22 (filed as plain `h`).

/// What a pattern list says about a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListMatch {
    /// No pattern matched.
    No,
    /// A pattern matched and no negated one did.
    Yes,
    /// A negated pattern matched: the list excludes the name.
    Negated,
}

/// Whether `name` matches the wildcard `pattern` (`*`, `?`), byte by byte, case-sensitively.
pub(crate) fn match_pattern(name: &str, pattern: &str) -> bool {
    let (s, p) = (name.as_bytes(), pattern.as_bytes());
    let (mut si, mut pi) = (0, 0);
    // Where the last `*` was and how much of the name it had taken: resuming there with one
    // more byte taken is the only backtracking a `*`/`?` pattern needs.
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        match p.get(pi) {
            Some(b'*') => {
                star = Some((pi, si));
                pi += 1;
            }
            Some(&c) if c == b'?' || c == s[si] => {
                si += 1;
                pi += 1;
            }
            _ => match star {
                Some((star_pi, star_si)) => {
                    pi = star_pi + 1;
                    si = star_si + 1;
                    star = Some((star_pi, star_si + 1));
                }
                None => return false,
            },
        }
    }
    p[pi.min(p.len())..].iter().all(|&c| c == b'*')
}

/// Matches a lowercased `name` against a comma-separated list, as OpenSSH's `match_hostname`:
/// patterns are lowercased, a matching `!pattern` wins over every positive match.
pub(crate) fn match_host_list(name: &str, list: &str) -> ListMatch {
    let name = name.to_ascii_lowercase();
    let mut matched = false;
    for item in list.split(',') {
        let (negated, pattern) = match item.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, item),
        };
        if match_pattern(&name, &pattern.to_ascii_lowercase()) {
            if negated {
                return ListMatch::Negated;
            }
            matched = true;
        }
    }
    if matched {
        ListMatch::Yes
    } else {
        ListMatch::No
    }
}

/// Whether a list names `name` exactly, without wildcards (`ssh-keygen -R` can remove such a
/// line; a pattern line must be edited by hand).
pub(crate) fn names_exactly(name: &str, list: &str) -> bool {
    list.split(',')
        .any(|item| item.eq_ignore_ascii_case(name) && !item.contains(['*', '?', '!']))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_follow_openssh() {
        assert!(match_pattern("a.example", "*.example"));
        assert!(match_pattern("x.a.example", "*.example"));
        assert!(!match_pattern("example", "*.example"));
        assert!(!match_pattern("a.example.org", "*.example"));
        assert!(match_pattern("gpu7", "gpu?"));
        assert!(!match_pattern("gpu17", "gpu?"));
        assert!(match_pattern("", "*"));
        assert!(match_pattern("abc", "a**c"));
        assert!(match_pattern("aXbYc", "a*b*c"));
        assert!(!match_pattern("aXbY", "a*b*c"));
        assert!(match_pattern("mississippi", "*sip*"));
        assert!(!match_pattern("abc", ""));
        assert!(match_pattern("", ""));
    }

    #[test]
    fn bracketed_ports_are_matched_as_whole_names() {
        assert!(match_pattern("[127.0.0.1]:2222", "[127.0.0.1]:*"));
        assert!(match_pattern("[127.0.0.1]:22", "[127.0.0.1]:2?"));
        assert!(!match_pattern("127.0.0.1", "[127.0.0.1]:*"));
        assert!(!match_pattern("[127.0.0.10]:2222", "[127.0.0.1]:*"));
        assert!(match_pattern("[127.0.0.1]:2222", "*"));
        assert!(match_pattern("[10.1.2.3]:40022", "[10.1.*]:*"));
    }

    #[test]
    fn lists_negate_and_ignore_case() {
        let list = "*.EXAMPLE,!bad.example";
        assert_eq!(match_host_list("a.example", list), ListMatch::Yes);
        assert_eq!(match_host_list("A.Example", list), ListMatch::Yes);
        assert_eq!(match_host_list("bad.example", list), ListMatch::Negated);
        assert_eq!(match_host_list("BAD.example", list), ListMatch::Negated);
        assert_eq!(match_host_list("example", list), ListMatch::No);
        // The negation wins wherever it stands in the list.
        assert_eq!(
            match_host_list("[h]:2222", "!*:2222,[h]:*"),
            ListMatch::Negated
        );
        // A negation alone never matches anything positively.
        assert_eq!(match_host_list("other", "!bad"), ListMatch::No);
        assert_eq!(match_host_list("h", "g,h,i"), ListMatch::Yes);
    }

    #[test]
    fn exact_names_are_told_from_patterns() {
        assert!(names_exactly("[h]:2222", "x,[H]:2222"));
        assert!(!names_exactly("[h]:2222", "[h]:*"));
        assert!(!names_exactly("h", "!h"));
    }
}
