//! A small declarative form of the parts of SchemaStore's `host.json` schema that Shoal
//! stores without acting on them (`logging`, `singleton`, `extensions.http` …).
//!
//! Those sections are checked for shape only — types, enums, ranges and unknown keys, each
//! problem with its path — and then kept exactly as written, so a pasted `host.json` round-trips
//! and a misspelled key is still a 422 rather than something silently ignored. Sections that
//! Shoal gives a meaning (`extensions.queues`, `retry` …) are parsed field by field elsewhere.

use serde_json::{Map, Value};

use crate::timespan::TimeSpan;
use crate::validation::{Problems, join_path};

/// What a JSON value must look like. `null` anywhere means "not set", as in the typed sections.
#[derive(Debug)]
pub(super) enum Shape {
    Bool,
    /// Any JSON number (the schema's `number`).
    Number,
    /// Any integer (the schema's `integer` without bounds).
    Int,
    /// An integer of at least this much (the schema's `minimum`).
    IntAtLeast(i64),
    /// An integer within the bounds (the schema's `minimum` and `maximum`).
    IntBetween(i64, i64),
    Str,
    /// A .NET `TimeSpan` string such as `00:00:30`.
    Duration,
    /// One of these strings, matched case-insensitively as Azure's configuration binder does.
    Enum(&'static [&'static str]),
    /// An array of distinct strings (`uniqueItems`); `true`: each must be non-empty.
    Strings {
        non_empty: bool,
    },
    /// An array of strings, duplicates allowed.
    StringList,
    /// An array of distinct values of the enum.
    EnumSet(&'static [&'static str]),
    /// An object with exactly these optional keys (`additionalProperties: false`).
    Object(&'static [(&'static str, Shape)]),
    /// An object whose keys are free and whose values all have one shape (`logLevel`).
    MapOf(&'static Shape),
    /// Any object (`customHeaders`: header names to values).
    AnyObject,
}

/// Checks `value` against `shape`, pushing every problem with its path.
pub(super) fn check(problems: &mut Problems, value: &Value, path: &str, shape: &Shape) {
    if value.is_null() {
        return;
    }
    match shape {
        Shape::Bool if !value.is_boolean() => problems.push(path, "expected a boolean"),
        Shape::Number if !value.is_number() => problems.push(path, "expected a number"),
        Shape::Int => {
            int(problems, value, path, i64::MIN, i64::MAX);
        }
        Shape::IntAtLeast(min) => {
            int(problems, value, path, *min, i64::MAX);
        }
        Shape::IntBetween(min, max) => {
            int(problems, value, path, *min, *max);
        }
        Shape::Str if !value.is_string() => problems.push(path, "expected a string"),
        Shape::Duration => match value.as_str() {
            Some(s) => {
                if let Err(message) = TimeSpan::parse(s) {
                    problems.push(path, message);
                }
            }
            None => problems.push(path, "expected a duration string like \"00:01:00\""),
        },
        Shape::Enum(options) => {
            let ok = value
                .as_str()
                .is_some_and(|s| options.iter().any(|o| o.eq_ignore_ascii_case(s)));
            if !ok {
                problems.push(path, one_of(options));
            }
        }
        Shape::Strings { non_empty } => strings(problems, value, path, *non_empty, true),
        Shape::StringList => strings(problems, value, path, false, false),
        Shape::EnumSet(options) => {
            strings(problems, value, path, false, true);
            for (i, item) in value.as_array().into_iter().flatten().enumerate() {
                if let Some(s) = item.as_str()
                    && !options.iter().any(|o| o.eq_ignore_ascii_case(s))
                {
                    problems.push(join_path(path, &format!("[{i}]")), one_of(options));
                }
            }
        }
        Shape::Object(fields) => {
            let Some(map) = value.as_object() else {
                return problems.push(path, "expected an object");
            };
            let known: Vec<&str> = fields.iter().map(|(name, _)| *name).collect();
            report_unknown(problems, map, path, &known);
            for (name, field) in *fields {
                if let Some(v) = map.get(*name) {
                    check(problems, v, &join_path(path, name), field);
                }
            }
        }
        Shape::MapOf(each) => {
            let Some(map) = value.as_object() else {
                return problems.push(path, "expected an object");
            };
            for (key, v) in map {
                check(problems, v, &join_path(path, key), each);
            }
        }
        Shape::AnyObject if !value.is_object() => problems.push(path, "expected an object"),
        _ => {}
    }
}

fn int(problems: &mut Problems, value: &Value, path: &str, min: i64, max: i64) {
    match value.as_i64() {
        Some(n) if (min..=max).contains(&n) => {}
        Some(_) if max == i64::MAX => problems.push(path, format!("must be at least {min}")),
        Some(_) => problems.push(path, format!("must be between {min} and {max}")),
        None => problems.push(path, "expected an integer"),
    }
}

fn strings(problems: &mut Problems, value: &Value, path: &str, non_empty: bool, unique: bool) {
    let Some(items) = value.as_array() else {
        return problems.push(path, "expected an array of strings");
    };
    for (i, item) in items.iter().enumerate() {
        let at = join_path(path, &format!("[{i}]"));
        match item.as_str() {
            None => problems.push(at, "expected a string"),
            Some("") if non_empty => problems.push(at, "must not be empty"),
            Some(_) if unique && items[..i].contains(item) => {
                problems.push(at, "duplicates an earlier item")
            }
            Some(_) => {}
        }
    }
}

fn one_of(options: &[&str]) -> String {
    let names: Vec<String> = options.iter().map(|o| format!("\"{o}\"")).collect();
    format!("must be one of {}", names.join(", "))
}

/// Pushes one problem per key of `map` that is not in `known`, suggesting the known key that
/// differs only in case (the usual slip when copying from C# attribute names).
pub(super) fn report_unknown(
    problems: &mut Problems,
    map: &Map<String, Value>,
    path: &str,
    known: &[&str],
) {
    for key in map.keys() {
        if known.contains(&key.as_str()) {
            continue;
        }
        let message = match known.iter().find(|k| k.eq_ignore_ascii_case(key)) {
            Some(similar) => format!("unknown field \"{key}\", did you mean \"{similar}\"?"),
            None => format!("unknown field \"{key}\""),
        };
        problems.push(join_path(path, key), message);
    }
}

/// The dotted paths of the values set under `value` (objects are walked, arrays and scalars
/// are leaves; `null` is not set), for telling a tenant which keys have no effect.
pub(crate) fn set_keys(value: &Value, path: &str) -> Vec<String> {
    match value {
        Value::Null => Vec::new(),
        Value::Object(map) if !map.is_empty() => map
            .iter()
            .flat_map(|(key, v)| set_keys(v, &join_path(path, key)))
            .collect(),
        _ => vec![path.to_owned()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SAMPLE: Shape = Shape::Object(&[
        ("on", Shape::Bool),
        ("count", Shape::IntAtLeast(1)),
        ("pct", Shape::Number),
        ("every", Shape::Duration),
        ("level", Shape::Enum(&["Information", "None"])),
        ("dirs", Shape::Strings { non_empty: true }),
        (
            "levels",
            Shape::MapOf(&Shape::Enum(&["Information", "None"])),
        ),
        ("inner", Shape::Object(&[("name", Shape::Str)])),
    ]);

    fn problems(value: Value) -> Vec<(String, String)> {
        let mut p = Problems::new();
        check(&mut p, &value, "s", &SAMPLE);
        p.finish()
            .err()
            .map(|e| e.errors.into_iter().map(|e| (e.path, e.message)).collect())
            .unwrap_or_default()
    }

    #[test]
    fn well_formed_values_and_nulls_pass() {
        let value = json!({
            "on": true, "count": 3, "pct": 0.5, "every": "00:00:10", "level": "information",
            "dirs": ["a", "b"], "levels": {"default": "None", "Host.Results": "Information"},
            "inner": {"name": null}
        });
        assert_eq!(problems(value), []);
        assert_eq!(problems(Value::Null), []);
    }

    #[test]
    fn every_problem_has_its_path() {
        let got = problems(json!({
            "On": true, "count": 0, "pct": "1", "every": "soon", "level": "Verbose",
            "dirs": ["a", "", "a", 1], "levels": {"default": "Loud"}, "inner": {"nmae": "x"}
        }));
        let paths: Vec<&str> = got.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            [
                "s.On",
                "s.count",
                "s.pct",
                "s.every",
                "s.level",
                "s.dirs[1]",
                "s.dirs[2]",
                "s.dirs[3]",
                "s.levels.default",
                "s.inner.nmae",
            ]
        );
        assert_eq!(got[0].1, "unknown field \"On\", did you mean \"on\"?");
        assert_eq!(got[4].1, "must be one of \"Information\", \"None\"");
    }

    #[test]
    fn set_keys_lists_leaves_and_skips_nulls() {
        let value = json!({"a": {"b": 1, "c": [1], "d": null, "e": {}}, "f": "x"});
        assert_eq!(set_keys(&value, "h"), ["h.a.b", "h.a.c", "h.a.e", "h.f"]);
    }
}
