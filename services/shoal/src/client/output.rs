//! What the client commands print: a table for people (`--output table`, the default) or the
//! API's JSON for scripts (`--output json`, unchanged so scripts read the documented schema).

use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    Table,
    Json,
}

pub fn json(value: &Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
    );
}

/// Columns padded to their widest cell; the last column is not padded.
pub fn table(headers: &[&str], rows: &[Vec<String>]) {
    print!("{}", render(headers, rows));
}

pub fn render(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let last = cells.len().saturating_sub(1);
        let mut out = String::new();
        for (i, cell) in cells.into_iter().enumerate() {
            if i == last {
                out.push_str(cell);
            } else {
                out.push_str(&format!("{cell:<width$}  ", width = widths[i]));
            }
        }
        out.trim_end().to_owned() + "\n"
    };
    let mut out = line(headers.to_vec());
    for row in rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    out
}

/// A field of `value` as table text: strings unquoted, absent as `-`.
pub fn cell(value: &Value, pointer: &str) -> String {
    match value.pointer(pointer) {
        None | Some(Value::Null) => "-".to_owned(),
        Some(Value::String(s)) => one_line(s),
        Some(other) => other.to_string(),
    }
}

/// Text on one table line: newlines and tabs become spaces.
pub fn one_line(text: &str) -> String {
    text.replace(['\n', '\r', '\t'], " ")
}

/// `key  value` lines for a resource's main fields.
pub fn fields(pairs: &[(&str, String)]) {
    let width = pairs.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (key, value) in pairs {
        println!("{key:<width$}  {value}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tables_align_columns_and_cells_read_fields() {
        let text = render(
            &["NAME", "TRIGGER", "STATE"],
            &[
                vec!["orders".into(), "queueTrigger".into(), "Running".into()],
                vec!["a".into(), "-".into(), "x".into()],
            ],
        );
        assert_eq!(
            text,
            "NAME    TRIGGER       STATE\norders  queueTrigger  Running\na       -             x\n"
        );
        let value = json!({"a": {"b": "two\nlines"}, "n": 3, "z": null});
        assert_eq!(cell(&value, "/a/b"), "two lines");
        assert_eq!(cell(&value, "/n"), "3");
        assert_eq!(cell(&value, "/z"), "-");
        assert_eq!(cell(&value, "/missing"), "-");
    }
}
