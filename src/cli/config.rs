//! Settings of `apply`: flag, then `git config clada.<name>`, then the
//! team's `.clada/config.toml` (read from the state before the apply),
//! then the default (apply.md §7).

use std::time::Duration;

use crate::git::Repository;

use super::CliError;

/// The team's settings file, in the repository.
pub use crate::transaction::TEAM_CONFIG;

/// The layers below the command line.
pub struct Layers<'r> {
    repo: Option<&'r Repository>,
    team: Option<toml::Table>,
}

impl<'r> Layers<'r> {
    pub fn new(repo: Option<&'r Repository>) -> Layers<'r> {
        Layers { repo, team: None }
    }

    /// Adds the team's settings from the text of `.clada/config.toml`.
    pub fn with_team(mut self, text: Option<&[u8]>) -> Result<Layers<'r>, CliError> {
        let Some(bytes) = text else {
            return Ok(self);
        };
        let text = std::str::from_utf8(bytes)
            .map_err(|_| CliError::new(format!("{TEAM_CONFIG} is not UTF-8")))?;
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            CliError::new(format!("{TEAM_CONFIG} is malformed: {e}")).hint(format!(
                "fix {TEAM_CONFIG} (it is read from the state before the apply)"
            ))
        })?;
        self.team = Some(table);
        Ok(self)
    }

    /// The raw value of setting `name` (camelCase, as after `clada.`) and
    /// where it came from.
    fn raw(&self, name: &str) -> Option<(String, String)> {
        if let Some(repo) = self.repo
            && let Some(v) = repo.config_string(&format!("clada.{name}"))
        {
            return Some((v, format!("git config clada.{name}")));
        }
        let value = self.team.as_ref()?.get(name)?;
        let text = match value {
            toml::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        Some((text, format!("{TEAM_CONFIG} key {name}")))
    }

    /// A boolean setting: `flag` if given, else git's own reading of
    /// `clada.<name>` (a bare key is true, `yes`/`on`/`1` too), else the
    /// team file.
    pub fn get_bool(&self, flag: Option<bool>, name: &str) -> Result<Option<bool>, CliError> {
        if flag.is_some() {
            return Ok(flag);
        }
        if let Some(repo) = self.repo
            && let Some(value) = repo
                .config_bool(&format!("clada.{name}"))
                .map_err(|e| CliError::new(e.to_string()))?
        {
            return Ok(Some(value));
        }
        match self.team.as_ref().and_then(|t| t.get(name)) {
            None => Ok(None),
            Some(toml::Value::Boolean(b)) => Ok(Some(*b)),
            Some(other) => Err(CliError::new(format!(
                "{TEAM_CONFIG} key {name} = {other} is not true or false"
            ))),
        }
    }

    /// A list setting: a TOML array of strings in the team file, or one
    /// string of items separated by commas or spaces anywhere.
    pub fn get_list(&self, name: &str) -> Result<Vec<String>, CliError> {
        if self
            .repo
            .and_then(|r| r.config_string(&format!("clada.{name}")))
            .is_none()
            && let Some(toml::Value::Array(items)) = self.team.as_ref().and_then(|t| t.get(name))
        {
            return items
                .iter()
                .map(|v| match v {
                    toml::Value::String(s) => Ok(s.clone()),
                    other => Err(CliError::new(format!(
                        "{TEAM_CONFIG} key {name}: {other} is not a string"
                    ))),
                })
                .collect();
        }
        Ok(self
            .raw(name)
            .map(|(raw, _)| {
                raw.split([',', ' '])
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default())
    }

    /// `flag` if given, else the configured value parsed with `parse`.
    pub fn get<T>(
        &self,
        flag: Option<T>,
        name: &str,
        parse: impl Fn(&str) -> Option<T>,
        expected: &str,
    ) -> Result<Option<T>, CliError> {
        if flag.is_some() {
            return Ok(flag);
        }
        match self.raw(name) {
            None => Ok(None),
            Some((raw, source)) => parse(raw.trim())
                .map(Some)
                .ok_or_else(|| CliError::new(format!("{source} = {raw:?} is not {expected}"))),
        }
    }
}

impl Layers<'_> {
    /// A limit: `flag` if given, else `clada.<name>` from git config,
    /// else the team file's value, but only when it is no higher than
    /// `default` (`None`: no limit), which it may lower and never raise —
    /// a team file travels with the repository, and on a server anyone
    /// who can push writes it. A higher team value is clamped to the
    /// default; a malformed one is an error, as for every setting.
    pub fn get_limit<T: PartialOrd + Copy>(
        &self,
        flag: Option<T>,
        name: &str,
        parse: impl Fn(&str) -> Option<T>,
        expected: &str,
        default: Option<T>,
    ) -> Result<Option<T>, CliError> {
        if flag.is_some() {
            return Ok(flag);
        }
        let from_git = self
            .repo
            .and_then(|r| r.config_string(&format!("clada.{name}")))
            .is_some();
        let value = self.get(None, name, parse, expected)?;
        if from_git {
            return Ok(value);
        }
        Ok(match (value, default) {
            (Some(team), Some(default)) if team > default => Some(default),
            (Some(team), _) => Some(team),
            (None, default) => default,
        })
    }
}

/// `10s`, `500ms`, `2m`, or a number of seconds.
pub fn parse_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    let (number, unit) = match s.find(|c: char| !c.is_ascii_digit() && c != '.') {
        Some(i) => (&s[..i], s[i..].trim()),
        None => (s, "s"),
    };
    let n: f64 = number.parse().ok()?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" | "sec" | "secs" => n,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        "d" | "day" | "days" => n * 86400.0,
        "w" | "week" | "weeks" => n * 7.0 * 86400.0,
        _ => return None,
    };
    Duration::try_from_secs_f64(secs).ok()
}

/// `10MB`, `512KiB`, `2M`, or a number of bytes. Decimal and binary
/// units both mean powers of 1024, as people use them for output sizes.
pub fn parse_size(s: &str) -> Option<usize> {
    let s = s.trim();
    let (number, unit) = match s.find(|c: char| !c.is_ascii_digit() && c != '.') {
        Some(i) => (&s[..i], s[i..].trim()),
        None => (s, ""),
    };
    let n: f64 = number.parse().ok()?;
    let factor = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" | "kib" => 1024.0,
        "m" | "mb" | "mib" => 1024.0 * 1024.0,
        "g" | "gb" | "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let bytes = n * factor;
    (bytes.is_finite() && bytes >= 0.0 && bytes < usize::MAX as f64).then_some(bytes as usize)
}

/// clap value parser for sizes.
pub fn size_arg(s: &str) -> Result<usize, String> {
    parse_size(s).ok_or_else(|| format!("{s:?} is not a size (like 10MB, 512KB, 4096)"))
}

/// clap value parser for durations.
pub fn duration_arg(s: &str) -> Result<Duration, String> {
    parse_duration(s).ok_or_else(|| format!("{s:?} is not a duration (like 10s, 500ms, 2m)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("10MB"), Some(10 << 20));
        assert_eq!(parse_size("512 KiB"), Some(512 << 10));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("1.5k"), Some(1536));
        assert_eq!(parse_size("ten"), None);
        assert_eq!(parse_size("3 parsecs"), None);
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10"), Some(Duration::from_secs(10)));
        assert_eq!(parse_duration("10s"), Some(Duration::from_secs(10)));
        assert_eq!(parse_duration("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse_duration("2m"), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration("soon"), None);
        assert_eq!(parse_duration("-1"), None);
        assert_eq!(parse_duration("99999999999999999999h"), None);
    }

    #[test]
    fn a_team_file_only_lowers_limits() {
        let layers = Layers::new(None)
            .with_team(Some(
                b"maxOutput = \"1GB\"\ntimeout = \"1s\"\ntotalTimeout = \"5m\"\n",
            ))
            .unwrap();
        let max = |flag| {
            layers
                .get_limit(flag, "maxOutput", parse_size, "a size", Some(10 << 20))
                .unwrap()
        };
        assert_eq!(max(None), Some(10 << 20));
        assert_eq!(max(Some(2 << 30)), Some(2 << 30));
        let timeout = layers
            .get_limit(
                None,
                "timeout",
                parse_duration,
                "a duration",
                Some(Duration::from_secs(30)),
            )
            .unwrap();
        assert_eq!(timeout, Some(Duration::from_secs(1)));
        // No default limit: any value lowers it.
        let total = layers
            .get_limit(None, "totalTimeout", parse_duration, "a duration", None)
            .unwrap();
        assert_eq!(total, Some(Duration::from_secs(300)));
        let absent = layers
            .get_limit(None, "maxFileSize", parse_size, "a size", Some(7))
            .unwrap();
        assert_eq!(absent, Some(7));
    }

    #[test]
    fn team_config_is_read_and_errors_name_the_file_and_line() {
        let layers = Layers::new(None)
            .with_team(Some(b"match = \"whitespace\"\natomic = true\n"))
            .unwrap();
        let m = layers
            .get(None, "match", |s| Some(s.to_string()), "x")
            .unwrap();
        assert_eq!(m.as_deref(), Some("whitespace"));
        assert_eq!(layers.get_bool(None, "atomic").unwrap(), Some(true));
        assert_eq!(layers.get_bool(Some(false), "atomic").unwrap(), Some(false));
        let err = Layers::new(None)
            .with_team(Some(b"a = 1\nb = \n"))
            .err()
            .unwrap();
        assert!(
            err.message.contains(".clada/config.toml") && err.message.contains("line 2"),
            "{}",
            err.message
        );
    }
}
