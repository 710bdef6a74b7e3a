//! Reading a JSON object field by field, collecting every problem instead of stopping at the
//! first, which is what lets `HostConfig::parse` report all of a tenant's mistakes at once.

use serde_json::{Map, Value};

use super::AZURE_INT_MAX;
use super::schema::{Shape, check, report_unknown};
use crate::timespan::TimeSpan;
use crate::validation::{Problems, join_path};

/// One JSON object being read field by field. Reading a field that is absent or `null` yields
/// the default; a wrong type or range is pushed to `Problems` and the default is returned so
/// reading can go on and report everything.
pub(crate) struct Section<'a> {
    path: String,
    map: Option<&'a Map<String, Value>>,
}

impl<'a> Section<'a> {
    /// Opens `value` as an object whose allowed fields are `known`, reporting each unknown one.
    pub(crate) fn open(
        problems: &mut Problems,
        value: Option<&'a Value>,
        path: String,
        known: &[&str],
    ) -> Self {
        let map = match value {
            None | Some(Value::Null) => None,
            Some(Value::Object(map)) => Some(map),
            Some(_) => {
                problems.push(path.clone(), "expected an object");
                None
            }
        };
        if let Some(map) = map {
            report_unknown(problems, map, &path, known);
        }
        Section { path, map }
    }

    pub(crate) fn child(
        &self,
        problems: &mut Problems,
        field: &str,
        known: &[&str],
    ) -> Section<'a> {
        Section::open(problems, self.raw(field), self.path(field), known)
    }

    pub(crate) fn path(&self, field: &str) -> String {
        join_path(&self.path, field)
    }

    /// The field's value, treating `null` as absent.
    pub(crate) fn raw(&self, field: &str) -> Option<&'a Value> {
        self.map?.get(field).filter(|v| !v.is_null())
    }

    pub(crate) fn opt_int(
        &self,
        problems: &mut Problems,
        field: &str,
        min: i64,
        max: i64,
    ) -> Option<i64> {
        let value = self.raw(field)?;
        let message = if max == i64::from(AZURE_INT_MAX) {
            format!("must be at least {min}")
        } else {
            format!("must be between {min} and {max}")
        };
        match value {
            Value::Number(n) => match n.as_i64() {
                Some(n) if (min..=max).contains(&n) => return Some(n),
                Some(_) => problems.push(self.path(field), message),
                None if n.is_u64() => problems.push(self.path(field), message),
                None => problems.push(self.path(field), "expected an integer"),
            },
            _ => problems.push(self.path(field), "expected an integer"),
        }
        None
    }

    pub(crate) fn int(
        &self,
        problems: &mut Problems,
        field: &str,
        default: u32,
        min: u32,
        max: u32,
    ) -> u32 {
        self.opt_u32(problems, field, min, max).unwrap_or(default)
    }

    pub(crate) fn opt_u32(
        &self,
        problems: &mut Problems,
        field: &str,
        min: u32,
        max: u32,
    ) -> Option<u32> {
        self.opt_int(problems, field, i64::from(min), i64::from(max))
            .and_then(|n| u32::try_from(n).ok())
    }

    pub(crate) fn opt_duration(
        &self,
        problems: &mut Problems,
        field: &str,
        min: TimeSpan,
        max: Option<TimeSpan>,
    ) -> Option<TimeSpan> {
        let span = match self.raw(field)? {
            Value::String(s) => TimeSpan::parse(s),
            _ => Err("expected a duration string like \"00:01:00\"".to_owned()),
        };
        let span = match span {
            Ok(span) => span,
            Err(message) => {
                problems.push(self.path(field), message);
                return None;
            }
        };
        let message = match max {
            Some(max) if min == TimeSpan::ZERO => format!("must be at most {max}"),
            Some(max) => format!("must be between {min} and {max}"),
            None => format!("must be at least {min}"),
        };
        if span < min || max.is_some_and(|max| span > max) {
            problems.push(self.path(field), message);
            return None;
        }
        Some(span)
    }

    pub(crate) fn duration(
        &self,
        problems: &mut Problems,
        field: &str,
        default: TimeSpan,
        min: TimeSpan,
        max: Option<TimeSpan>,
    ) -> TimeSpan {
        self.opt_duration(problems, field, min, max)
            .unwrap_or(default)
    }

    /// A duration that must be strictly positive (zero would make the setting meaningless).
    pub(crate) fn positive_duration(
        &self,
        problems: &mut Problems,
        field: &str,
        max: Option<TimeSpan>,
    ) -> Option<TimeSpan> {
        let span = self.opt_duration(problems, field, TimeSpan::ZERO, max)?;
        if span == TimeSpan::ZERO {
            problems.push(self.path(field), "must be greater than 00:00:00");
            return None;
        }
        Some(span)
    }

    pub(crate) fn boolean(&self, problems: &mut Problems, field: &str, default: bool) -> bool {
        self.opt_bool(problems, field).unwrap_or(default)
    }

    pub(crate) fn opt_bool(&self, problems: &mut Problems, field: &str) -> Option<bool> {
        match self.raw(field)? {
            Value::Bool(b) => Some(*b),
            _ => {
                problems.push(self.path(field), "expected a boolean");
                None
            }
        }
    }

    /// A field Shoal stores without acting on it: its shape is checked, and it is kept
    /// exactly as written so that reads return it unchanged.
    pub(super) fn stored(
        &self,
        problems: &mut Problems,
        field: &str,
        shape: &Shape,
    ) -> Option<Value> {
        let value = self.raw(field)?;
        check(problems, value, &self.path(field), shape);
        Some(value.clone())
    }

    pub(crate) fn opt_string(&self, problems: &mut Problems, field: &str) -> Option<&'a str> {
        match self.raw(field)? {
            Value::String(s) => Some(s),
            _ => {
                problems.push(self.path(field), "expected a string");
                None
            }
        }
    }

    /// One of `options`, matched case-insensitively as Azure's configuration binder does.
    pub(crate) fn opt_choice<T: Copy>(
        &self,
        problems: &mut Problems,
        field: &str,
        options: &[(&str, T)],
    ) -> Option<T> {
        let value = self.raw(field)?;
        let found = value.as_str().and_then(|s| {
            options
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(s))
        });
        if found.is_none() {
            let names: Vec<String> = options.iter().map(|(n, _)| format!("\"{n}\"")).collect();
            problems.push(
                self.path(field),
                format!("must be one of {}", names.join(", ")),
            );
        }
        found.map(|(_, v)| *v)
    }

    pub(crate) fn choice<T: Copy>(
        &self,
        problems: &mut Problems,
        field: &str,
        default: T,
        options: &[(&str, T)],
    ) -> T {
        self.opt_choice(problems, field, options).unwrap_or(default)
    }
}
