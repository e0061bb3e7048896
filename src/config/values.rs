//! Small typed values of the config file that carry their own format: RFC 3339 times, CUDA
//! versions and environment-variable names.

use std::fmt;

use rust_i18n::t;
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};

/// An RFC 3339 date and time with its offset (read by `crate::utc`, with the jiff crate). Keeps
/// the text as written so that it can be shown back unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Rfc3339 {
    text: String,
    unix_ms: i64,
}

impl Rfc3339 {
    /// Reads `2026-11-29T08:00:00Z`, `2026-11-29 16:00:00.5+08:00` and the like.
    pub fn parse(text: &str) -> Result<Self, String> {
        let unix_ms = crate::utc::parse_rfc3339_ms(text).map_err(|why| {
            t!("config_error.rfc3339", text = text : {:?}, why = why).into_owned()
        })?;
        Ok(Self {
            text: text.to_owned(),
            unix_ms,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Milliseconds since the Unix epoch, the unit the telemetry timestamps use.
    pub fn unix_ms(&self) -> i64 {
        self.unix_ms
    }
}

impl fmt::Display for Rfc3339 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Rfc3339 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TimeVisitor;

        impl<'de> Visitor<'de> for TimeVisitor {
            type Value = Rfc3339;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&t!("config_error.expect_rfc3339"))
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Rfc3339, E> {
                Rfc3339::parse(text).map_err(E::custom)
            }

            // An unquoted TOML datetime arrives as a map; accepting it spares the user a
            // confusing "expected a string" for a value TOML itself calls valid.
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Rfc3339, A::Error> {
                let native =
                    toml::value::Datetime::deserialize(de::value::MapAccessDeserializer::new(map))?;
                self.visit_str(&native.to_string())
            }
        }

        deserializer.deserialize_any(TimeVisitor)
    }
}

/// A CUDA version as `nvidia-smi` prints it (`12.1`), compared numerically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CudaVersion {
    pub major: u32,
    pub minor: u32,
}

impl CudaVersion {
    pub fn parse(text: &str) -> Result<Self, String> {
        let bad = || t!("config_error.cuda", text = text : {:?}).into_owned();
        let number = |part: &str| {
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            part.parse::<u32>().map_err(|_| bad())
        };
        match text.split_once('.') {
            Some((major, minor)) => Ok(Self {
                major: number(major)?,
                minor: number(minor)?,
            }),
            None => Ok(Self {
                major: number(text)?,
                minor: 0,
            }),
        }
    }
}

impl fmt::Display for CudaVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl<'de> Deserialize<'de> for CudaVersion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct VersionVisitor;

        impl Visitor<'_> for VersionVisitor {
            type Value = CudaVersion;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&t!("config_error.expect_cuda"))
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<CudaVersion, E> {
                CudaVersion::parse(text).map_err(E::custom)
            }

            fn visit_f64<E: de::Error>(self, _: f64) -> Result<CudaVersion, E> {
                Err(E::custom(t!("config_error.cuda_as_string")))
            }

            fn visit_i64<E: de::Error>(self, _: i64) -> Result<CudaVersion, E> {
                Err(E::custom(t!("config_error.cuda_as_string")))
            }

            fn visit_u64<E: de::Error>(self, _: u64) -> Result<CudaVersion, E> {
                Err(E::custom(t!("config_error.cuda_as_string")))
            }
        }

        deserializer.deserialize_any(VersionVisitor)
    }
}

/// `[A-Z_][A-Z0-9_]*`: the names the config may point at for secrets.
pub(crate) fn is_env_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_uppercase() || c == '_')
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(text: &str) -> i64 {
        match Rfc3339::parse(text) {
            Ok(time) => time.unix_ms(),
            Err(why) => panic!("{why}"),
        }
    }

    #[test]
    fn rfc3339_matches_known_epoch_values() {
        assert_eq!(ms("1970-01-01T00:00:00Z"), 0);
        assert_eq!(ms("2000-03-01T00:00:00Z"), 951_868_800_000);
        assert_eq!(ms("2026-11-29T08:00:00Z"), 1_795_939_200_000);
        assert_eq!(ms("2026-11-29T16:00:00+08:00"), 1_795_939_200_000);
        assert_eq!(ms("2026-11-29 07:30:00.25-00:30"), 1_795_939_200_250);
        assert_eq!(ms("1969-12-31T23:59:59z"), -1_000);
    }

    #[test]
    fn rfc3339_rejects_what_it_cannot_place_in_time() {
        for bad in [
            "2026-11-29T08:00:00",
            "2026-11-29",
            "2026-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-11-29T24:00:00Z",
            "2026-11-29T08:00:00+8:00",
            "2026/11/29T08:00:00Z",
            "2026-11-29T08:00:00Zjunk",
        ] {
            assert!(Rfc3339::parse(bad).is_err(), "{bad}");
        }
        assert!(Rfc3339::parse("2024-02-29T00:00:00Z").is_ok());
    }

    #[test]
    fn cuda_versions_compare_numerically() {
        let parse = |text| CudaVersion::parse(text).map_err(|why| why.to_string());
        assert_eq!(
            parse("12.1"),
            Ok(CudaVersion {
                major: 12,
                minor: 1
            })
        );
        assert_eq!(
            parse("13"),
            Ok(CudaVersion {
                major: 13,
                minor: 0
            })
        );
        assert!(parse("12.10") > parse("12.9"));
        assert!(parse("12.").is_err());
        assert!(parse("v12").is_err());
    }

    #[test]
    fn env_var_names() {
        assert!(is_env_var_name("VAST_API_KEY"));
        assert!(is_env_var_name("_X1"));
        assert!(!is_env_var_name("1X"));
        assert!(!is_env_var_name("vast_api_key"));
        assert!(!is_env_var_name(""));
        assert!(!is_env_var_name("sk-abc123"));
    }
}
