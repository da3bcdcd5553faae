//! The site's small state files (lock files, running and done records, checkpoints,
//! heartbeats, wsmonitor's host states) through serde: written as TOML, one `key = value`
//! line per field, which a person reads as easily as the `key value` lines sites were
//! written with before; those are still read, so a site carries on across the upgrade
//! without a conversion step.

use serde::Serialize;
use serde::de::DeserializeOwned;
use std::path::Path;

/// Why a state file's text is not a `T`.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ParseError(String);

/// The TOML text of `value`.
pub fn to_text<T: Serialize>(value: &T) -> String {
    toml::to_string(value).expect("state records serialize to TOML")
}

/// Parses a state file's text: TOML, or the `key value` lines of sites written before.
/// `split` names the old lines that held two numbers (`pid 1234 567`) and the key of the
/// second (`("pid", "pid_start")`).
pub fn parse<T: DeserializeOwned>(text: &str, split: &[(&str, &str)]) -> Result<T, ParseError> {
    let toml_error = match toml::from_str::<T>(text) {
        Ok(v) => return Ok(v),
        Err(e) => e,
    };
    match old_lines(text, split) {
        Some(table) => {
            T::deserialize(toml::Value::Table(table)).map_err(|e| ParseError(e.to_string()))
        }
        None => Err(ParseError(toml_error.message().to_string())),
    }
}

/// The `key value` lines of an older site as a table: numbers as integers or floats, the
/// rest as strings. `None` when a line has no value or a key repeats (not such a file).
fn old_lines(text: &str, split: &[(&str, &str)]) -> Option<toml::Table> {
    let mut table = toml::Table::new();
    for line in text.lines() {
        let (k, v) = line.split_once(' ')?;
        let (v, second) = match split.iter().find(|(first, _)| *first == k) {
            Some((_, key)) => {
                let (a, b) = v.split_once(' ')?;
                (a, Some((*key, b)))
            }
            None => (v, None),
        };
        for (key, value) in std::iter::once((k, v)).chain(second) {
            if table.insert(key.to_string(), old_value(value)).is_some() {
                return None;
            }
        }
    }
    Some(table)
}

fn old_value(v: &str) -> toml::Value {
    if let Ok(n) = v.parse::<i64>() {
        toml::Value::Integer(n)
    } else if let Ok(x) = v.parse::<f64>()
        && v.contains('.')
    {
        toml::Value::Float(x)
    } else {
        toml::Value::String(v.to_string())
    }
}

/// For text fields of the older format that may look like a number (a host named `7`):
/// `#[serde(deserialize_with = "crate::state::text")]`.
pub fn text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Text {
        S(String),
        I(i64),
        F(f64),
    }
    Ok(match Text::deserialize(d)? {
        Text::S(s) => s,
        Text::I(n) => n.to_string(),
        Text::F(x) => x.to_string(),
    })
}

/// For yes/no fields the older format wrote as `1` or `0`:
/// `#[serde(deserialize_with = "crate::state::flag")]`.
pub fn flag<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Flag {
        B(bool),
        I(u8),
    }
    Ok(match Flag::deserialize(d)? {
        Flag::B(b) => b,
        Flag::I(n) => n != 0,
    })
}

/// [`text`] for an optional field.
pub fn opt_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    text(d).map(Some)
}

use serde::Deserialize;

/// Reads the state file at `path`, a `what` (`checkpoint`, ...): `Ok(None)` when there is
/// none; an error naming the file and `what` when it cannot be read or parsed.
pub fn read<T: DeserializeOwned>(
    path: &Path,
    what: &str,
    split: &[(&str, &str)],
) -> crate::error::Result<Option<T>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(crate::error::Error::io(
                format_args!("reading {}", path.display()),
                e,
            ));
        }
    };
    parse(&text, split).map(Some).map_err(|e| {
        crate::error::Error::Failed(format!("{}: corrupt {what}: {e}", path.display()))
    })
}

/// Writes `value` to `path` atomically (temporary file, rename) with `durability`.
pub fn write<T: Serialize>(
    path: &Path,
    value: &T,
    durability: crate::files::Durability,
) -> crate::error::Result<()> {
    crate::files::replace(path, to_text(value).as_bytes(), durability)
        .map_err(|e| crate::error::Error::io(format_args!("writing {}", path.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, serde::Deserialize)]
    struct Rec {
        #[serde(deserialize_with = "text")]
        host: String,
        pid: u32,
        pid_start: u64,
        seconds: f64,
        #[serde(
            default,
            deserialize_with = "opt_text",
            skip_serializing_if = "Option::is_none"
        )]
        failed: Option<String>,
    }

    #[test]
    fn toml_and_the_older_lines_give_the_same_record() {
        let rec = Rec {
            host: "7".into(),
            pid: 12,
            pid_start: 34,
            seconds: 0.5,
            failed: Some("job x: \"signal\" = 9".into()),
        };
        let text = to_text(&rec);
        assert!(text.contains("host = \"7\"\n"), "{text}");
        let split = [("pid", "pid_start")];
        assert_eq!(parse::<Rec>(&text, &split).unwrap(), rec);
        let old = "host 7\npid 12 34\nseconds 0.5\nfailed job x: \"signal\" = 9\n";
        assert_eq!(parse::<Rec>(old, &split).unwrap(), rec);
        let no_failure = parse::<Rec>("host h\npid 1 2\nseconds 1\n", &split).unwrap();
        assert_eq!(no_failure.failed, None);
        for torn in [
            "",
            "host h\npid 1",
            "host h\npid 1 2\n",
            "host = \"h",
            "host h\nhost h\n",
        ] {
            assert!(parse::<Rec>(torn, &split).is_err(), "{torn:?}");
        }
    }
}
