//! URLs made fit to print: a token can sit in a URL's userinfo (`https://TOKEN@host/`) or its
//! query (`?key=TOKEN`), and every URL gpufleet shows (the request line before a release, the
//! audit log, errors) goes through [`url`] first.

/// What stands for a removed part.
const HIDDEN: &str = "***";

/// The shortest URL piece [`secrets`] treats as a secret.
pub const MIN_SECRET_CHARS: usize = 4;

/// `raw` with its userinfo shown as `***@`, its query as `?***` and its fragment as `#***`;
/// scheme, host, port and path are kept. Text that is not a URL is treated the same way (the
/// part before the first `/` as the authority), so a malformed `base_url` in an error is
/// redacted too.
pub fn url(raw: &str) -> String {
    let parts = Parts::of(raw);
    let mut out = String::with_capacity(raw.len());
    out.push_str(parts.scheme);
    if parts.userinfo.is_some() {
        out.push_str(HIDDEN);
        out.push('@');
    }
    out.push_str(parts.host);
    out.push_str(parts.path);
    if parts.query.is_some() {
        out.push('?');
        out.push_str(HIDDEN);
    }
    if parts.fragment.is_some() {
        out.push('#');
        out.push_str(HIDDEN);
    }
    out
}

/// The secret-bearing pieces of `raw` (the userinfo, its user and password, the query, each
/// query value, the fragment), longest first, so text that quotes them (a server echoing the
/// request back) can be scrubbed with [`scrub`]. Pieces shorter than [`MIN_SECRET_CHARS`] are
/// left out: scrubbing every `2` of `?page=2` would mangle the text and hide nothing.
pub fn secrets(raw: &str) -> Vec<String> {
    let parts = Parts::of(raw);
    let mut found: Vec<&str> = Vec::new();
    if let Some(userinfo) = parts.userinfo {
        found.push(userinfo);
        found.extend(userinfo.split(':'));
    }
    if let Some(query) = parts.query {
        found.push(query);
        for pair in query.split('&') {
            found.push(pair.split_once('=').map_or(pair, |(_, value)| value));
        }
    }
    found.extend(parts.fragment);
    let mut owned: Vec<String> = found
        .into_iter()
        .filter(|s| s.len() >= MIN_SECRET_CHARS)
        .map(str::to_string)
        .collect();
    owned.sort_by_key(|s| std::cmp::Reverse(s.len()));
    owned.dedup();
    owned
}

/// The path segments of a webhook address that are its secret: a Slack hook's
/// `T…/B…/<secret>`, a Telegram bot's `bot<token>` (and the token without `bot`, and its part
/// after the `:`), a Feishu hook's id, an ntfy topic with digits in it. A segment counts when it
/// is at least [`MIN_SECRET_CHARS`] long and not only digits, and holds a digit or is at least
/// [`LONG_SEGMENT_CHARS`] long: API words (`services`, `open-apis`, `sendMessage`) are kept,
/// so scrubbing does not mangle text that merely names them.
pub fn path_secrets(raw: &str) -> Vec<String> {
    let parts = Parts::of(raw);
    let mut found: Vec<&str> = Vec::new();
    for segment in parts.path.split('/') {
        found.push(segment);
        // `bot123456:ABC-DEF…`: the token as a host would print it, and its secret half.
        let bare = segment.trim_start_matches(|c: char| c.is_ascii_alphabetic());
        found.push(bare);
        found.extend(bare.split(':'));
    }
    let mut owned: Vec<String> = found
        .into_iter()
        .filter(|s| segment_is_secret(s))
        .map(str::to_string)
        .collect();
    owned.sort_by_key(|s| std::cmp::Reverse(s.len()));
    owned.dedup();
    owned
}

/// A path segment this long counts as a secret even without a digit.
pub const LONG_SEGMENT_CHARS: usize = 16;

fn segment_is_secret(segment: &str) -> bool {
    segment.len() >= MIN_SECRET_CHARS
        && !segment.chars().all(|c| c.is_ascii_digit())
        && (segment.chars().any(|c| c.is_ascii_digit()) || segment.len() >= LONG_SEGMENT_CHARS)
}

/// `text` with every piece of `secrets` replaced by `***`.
pub fn scrub(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    for secret in secrets {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), HIDDEN);
        }
    }
    out
}

struct Parts<'a> {
    /// `https://`, or empty.
    scheme: &'a str,
    userinfo: Option<&'a str>,
    /// Host and port.
    host: &'a str,
    path: &'a str,
    query: Option<&'a str>,
    fragment: Option<&'a str>,
}

impl<'a> Parts<'a> {
    fn of(raw: &'a str) -> Self {
        let (scheme, rest) = match raw.find("://") {
            Some(at) => raw.split_at(at + "://".len()),
            None => ("", raw),
        };
        let (rest, fragment) = match rest.split_once('#') {
            Some((before, fragment)) => (before, Some(fragment)),
            None => (rest, None),
        };
        let (rest, query) = match rest.split_once('?') {
            Some((before, query)) => (before, Some(query)),
            None => (rest, None),
        };
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        // The host cannot hold an `@`, so everything up to the last one is userinfo.
        let (userinfo, host) = match authority.rsplit_once('@') {
            Some((userinfo, host)) => (Some(userinfo), host),
            None => (None, authority),
        };
        Self {
            scheme,
            userinfo,
            host,
            path,
            query,
            fragment,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_query_and_fragment_are_hidden() {
        let cases = [
            ("https://console.vast.ai", "https://console.vast.ai"),
            (
                "https://TOKEN@127.0.0.1:8080/api/v0/instances/1/",
                "https://***@127.0.0.1:8080/api/v0/instances/1/",
            ),
            (
                "http://user:pa@ss@host/x?key=SECRET&b=2#frag",
                "http://***@host/x?***#***",
            ),
            ("https://host?key=SECRET", "https://host?***"),
            ("ftp://TOKEN@host/", "ftp://***@host/"),
            ("TOKEN@host/path", "***@host/path"),
            ("/just/a/path@x", "/just/a/path@x"),
        ];
        for (raw, want) in cases {
            assert_eq!(url(raw), want, "{raw}");
        }
    }

    #[test]
    fn echoed_secrets_are_scrubbed() {
        let raw = "https://user:TOKEN@host/x?key=SECRET2&plain";
        let found = secrets(raw);
        let text = "GET /x?key=SECRET2&plain with user:TOKEN failed; TOKEN again";
        let clean = scrub(text, &found);
        assert!(!clean.contains("TOKEN"), "{clean}");
        assert!(!clean.contains("SECRET2"), "{clean}");
        assert!(secrets("https://host/x").is_empty());
        assert!(secrets("https://host/x?page=2").iter().all(|s| s != "2"));
    }

    /// Webhook addresses as their services document them (Slack's incoming webhooks page,
    /// Telegram's Bot API page, Feishu's custom bot guide): the secret path parts are found,
    /// the API words are not.
    #[test]
    fn the_secret_path_segments_of_webhook_addresses_are_found() {
        let slack = "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX";
        let found = path_secrets(slack);
        for part in ["T00000000", "B00000000", "XXXXXXXXXXXXXXXXXXXXXXXX"] {
            assert!(found.iter().any(|s| s == part), "{part}: {found:?}");
        }
        assert!(!found.iter().any(|s| s == "services"), "{found:?}");
        let telegram =
            "https://api.telegram.org/bot123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11/sendMessage";
        let found = path_secrets(telegram);
        for part in [
            "bot123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11",
            "123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11",
            "ABC-DEF1234ghIkl-zyx57W2v1u123ew11",
        ] {
            assert!(found.iter().any(|s| s == part), "{part}: {found:?}");
        }
        assert!(
            !found.iter().any(|s| s == "sendMessage" || s == "123456"),
            "{found:?}"
        );
        let feishu =
            "https://open.feishu.cn/open-apis/bot/v2/hook/2d6b4f8a-1c3e-4a5b-9d7f-0e8c6a4b2d1f";
        let found = path_secrets(feishu);
        assert_eq!(found, ["2d6b4f8a-1c3e-4a5b-9d7f-0e8c6a4b2d1f"]);
    }
}
