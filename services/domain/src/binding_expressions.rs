//! Binding expressions in an output binding's target name (`out-{Id}`, `{region}-orders`,
//! `audit-{DateTime:yyyy-MM-dd}`), as Azure Functions resolves them for each invocation from the
//! trigger's binding data.
//!
//! The names that may hold them are those Azure resolves per invocation: a `queue` output's
//! `queueName` (`QueueAttribute.QueueName` is `[AutoResolve]`), a `serviceBus` output's
//! `queueName`/`topicName` (`ServiceBusAttributeBindingProvider` binds it through
//! `BindableServiceBusPath`) and a `kafka` output's `topic` (`KafkaAttribute.Topic` is
//! `[AutoResolve]`). An `eventHub` output's `eventHubName` is not (`EventHubAttribute`), nor is
//! any trigger's own name; both refuse braces with the reason.
//!
//! A name is parsed once, on write, into a [`Template`]: literal text, `%Setting%` references
//! and `{expression}`s. The rules are the WebJobs SDK's (`azure-webjobs-sdk`,
//! `src/Microsoft.Azure.WebJobs.Host/Bindings/Path/BindingTemplateParser.cs` and
//! `BindingTemplateToken.cs`): `{{` and `}}` stand for braces, an expression is a dotted path of
//! identifiers (letters, digits, `_`, and `-` after the first part) with an optional `:format`,
//! and the built-ins `{rand-guid}` and `{DateTime}` (`BindingParameterResolver.cs`) take a
//! format too. The `%Setting%` references are resolved before the braces, as Azure's
//! `AttributeCloner.GetTemplateResolver` calls `INameResolver.ResolveWholeString` first; Shoal
//! uses a setting's value as text and does not read expressions in it.
//!
//! The bindings' `check_for_trigger` refuses, on write, an expression the function's trigger
//! can never supply; names that could be properties of a JSON message body are
//! accepted and looked up per invocation, as Azure's script host adds a JSON trigger value's
//! top-level properties to the binding data (`azure-functions-host`,
//! `src/WebJobs.Script/Utility.cs`, `ApplyBindingData`). [`BindingData`] is that data for one
//! invocation, read from the request the handler was sent, and [`BoundTemplate::resolve`] gives
//! the name for it.

mod data;
pub mod format;

use std::collections::BTreeMap;
use std::fmt;

pub use data::BindingData;

/// A target name as written, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    parts: Vec<Part>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Literal(String),
    Setting(String),
    Expression(Expression),
}

/// One `{…}` of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expression {
    /// The dotted path (`ApplicationProperties.region` is two parts).
    path: Vec<String>,
    /// What follows the first `:` (`yyyy-MM-dd`); applies to date-times and GUIDs.
    format: Option<String>,
    builtin: Option<Builtin>,
}

/// The host's built-in expressions, resolved without binding data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    /// `{rand-guid}`: a new GUID each time it is resolved (`RandGuidResolver`).
    RandGuid,
    /// `{DateTime}`: the current UTC time, unless the binding data has a `DateTime` value
    /// (`DateTimeResolver`: "may either resolve to user binding data or to DateTime.UtcNow").
    DateTime,
}

impl Expression {
    pub fn path(&self) -> &[String] {
        &self.path
    }

    pub fn format(&self) -> Option<&str> {
        self.format.as_deref()
    }

    pub fn builtin(&self) -> Option<Builtin> {
        self.builtin
    }

    /// The first part of the path, the binding data name it starts from.
    pub fn name(&self) -> &str {
        &self.path[0]
    }
}

impl fmt::Display for Expression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{{}", self.path.join("."))?;
        if let Some(format) = &self.format {
            write!(f, ":{format}")?;
        }
        f.write_str("}")
    }
}

impl Template {
    /// Parses a written name. Errors say what is wrong and where (1-based positions, as
    /// Azure's messages count).
    pub fn parse(written: &str) -> Result<Template, String> {
        let mut parts = Vec::new();
        for piece in percent_pieces(written)? {
            match piece {
                Piece::Setting(name) => parts.push(Part::Setting(name.to_owned())),
                Piece::Text(text, at) => brace_parts(text, at, &mut parts)?,
            }
        }
        // Adjacent literals (from escapes) read as one.
        let mut merged: Vec<Part> = Vec::with_capacity(parts.len());
        for part in parts {
            match (merged.last_mut(), part) {
                (Some(Part::Literal(previous)), Part::Literal(text)) => previous.push_str(&text),
                (_, part) => merged.push(part),
            }
        }
        Ok(Template { parts: merged })
    }

    pub fn has_expressions(&self) -> bool {
        self.expressions().next().is_some()
    }

    pub fn expressions(&self) -> impl Iterator<Item = &Expression> {
        self.parts.iter().filter_map(|part| match part {
            Part::Expression(e) => Some(e),
            _ => None,
        })
    }

    /// The app settings the name references, in order.
    pub fn settings(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|part| match part {
            Part::Setting(s) => Some(s.as_str()),
            _ => None,
        })
    }

    /// The literal text between references and expressions (escaped braces as braces).
    pub fn literals(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|part| match part {
            Part::Literal(s) => Some(s.as_str()),
            _ => None,
        })
    }

    /// The `%Setting%` references replaced by the settings' values (matched as every setting
    /// is, see [`crate::names::setting_value`]); the expressions stay for each invocation.
    pub fn bind_settings(
        &self,
        settings: &BTreeMap<String, String>,
    ) -> Result<BoundTemplate, String> {
        let mut parts: Vec<BoundPart> = Vec::with_capacity(self.parts.len());
        for part in &self.parts {
            let text = match part {
                Part::Literal(text) => text.as_str(),
                Part::Setting(name) => crate::names::setting_value(settings, name)?,
                Part::Expression(e) => {
                    parts.push(BoundPart::Expression(e.clone()));
                    continue;
                }
            };
            match parts.last_mut() {
                Some(BoundPart::Literal(previous)) => previous.push_str(text),
                _ => parts.push(BoundPart::Literal(text.to_owned())),
            }
        }
        Ok(BoundTemplate { parts })
    }
}

/// An output's target name as written, when it has braces: parsed, with its literal text
/// checked against the characters the target's names allow (`allowed`, described by `what`).
/// `Ok(None)` for a name without braces, which the caller checks as a literal name.
pub fn output_name(
    written: &str,
    allowed: impl Fn(char) -> bool,
    what: &str,
) -> Result<Option<Template>, String> {
    if !written.contains(['{', '}']) {
        return Ok(None);
    }
    let template = Template::parse(written)?;
    if let Some(bad) = template
        .literals()
        .flat_map(str::chars)
        .find(|c| !allowed(*c))
    {
        return Err(format!(
            "'{bad}' cannot be part of {what}; besides %Setting% references and {{expressions}} use {}",
            allowed_description(&allowed)
        ));
    }
    Ok(Some(template))
}

/// "letters, digits, '-' and '.'": the punctuation `allowed` lets through, for messages.
fn allowed_description(allowed: &impl Fn(char) -> bool) -> String {
    let punctuation: Vec<String> = ['-', '.', '_', '/']
        .into_iter()
        .filter(|c| allowed(*c))
        .map(|c| format!("'{c}'"))
        .collect();
    match punctuation.split_last() {
        None => "letters and digits".into(),
        Some((last, [])) => format!("letters, digits and {last}"),
        Some((last, rest)) => format!("letters, digits, {} and {last}", rest.join(", ")),
    }
}

/// Whether a written name has `{…}` expressions (a name that does not parse has none).
pub fn has_expressions(written: &str) -> bool {
    written.contains('{') && Template::parse(written).is_ok_and(|t| t.has_expressions())
}

/// A template with its settings resolved: text and expressions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundTemplate {
    parts: Vec<BoundPart>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum BoundPart {
    Literal(String),
    Expression(Expression),
}

impl BoundTemplate {
    /// The whole name when it has no expressions: resolved once, when the output is bound.
    pub fn literal(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [] => Some(""),
            [BoundPart::Literal(text)] => Some(text),
            _ => None,
        }
    }

    /// The name for one invocation. Errors name the expression that could not be resolved.
    pub fn resolve(&self, data: &BindingData<'_>) -> Result<String, String> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                BoundPart::Literal(text) => out.push_str(text),
                BoundPart::Expression(e) => out.push_str(&data.evaluate(e)?),
            }
        }
        Ok(out)
    }
}

enum Piece<'a> {
    /// Text and its byte offset in the written name.
    Text(&'a str, usize),
    Setting(&'a str),
}

/// The name split at `%Setting%` references (an unclosed `%` is an error, as in Azure's
/// `ResolveWholeString`).
fn percent_pieces(s: &str) -> Result<Vec<Piece<'_>>, String> {
    let mut pieces = Vec::new();
    let mut at = 0;
    while let Some(start) = s[at..].find('%').map(|i| at + i) {
        if start > at {
            pieces.push(Piece::Text(&s[at..start], at));
        }
        let Some(len) = s[start + 1..].find('%') else {
            return Err(format!(
                "the '%' at position {} has no closing '%'",
                start + 1
            ));
        };
        let name = &s[start + 1..start + 1 + len];
        if let Err(message) = crate::names::SettingName::parse(name) {
            return Err(format!("app setting reference %{name}%: name {message}"));
        }
        pieces.push(Piece::Setting(name));
        at = start + len + 2;
    }
    if at < s.len() {
        pieces.push(Piece::Text(&s[at..], at));
    }
    Ok(pieces)
}

/// Literal text, `{{`/`}}` escapes and `{expression}`s, by `BindingTemplateParser`'s token rule.
fn brace_parts(text: &str, offset: usize, parts: &mut Vec<Part>) -> Result<(), String> {
    let mut rest = text;
    let mut at = offset;
    while !rest.is_empty() {
        if rest.starts_with("{{") || rest.starts_with("}}") {
            parts.push(Part::Literal(rest[..1].to_owned()));
            rest = &rest[2..];
            at += 2;
        } else if let Some(inner) = rest.strip_prefix('{') {
            let Some(close) = inner
                .find(['{', '}'])
                .filter(|&i| inner[i..].starts_with('}'))
            else {
                return Err(format!(
                    "the '{{' at position {} has no closing '}}'",
                    at + 1
                ));
            };
            let expression = parse_expression(&inner[..close])
                .map_err(|m| format!("the expression at position {}: {m}", at + 1))?;
            parts.push(Part::Expression(expression));
            rest = &inner[close + 1..];
            at += close + 2;
        } else if rest.starts_with('}') {
            return Err(format!(
                "the '}}' at position {} has no opening '{{'",
                at + 1
            ));
        } else {
            let end = rest.find(['{', '}']).unwrap_or(rest.len());
            parts.push(Part::Literal(rest[..end].to_owned()));
            rest = &rest[end..];
            at += end;
        }
    }
    Ok(())
}

/// One expression's text, by `BindingTemplateToken.NewExpression`.
fn parse_expression(text: &str) -> Result<Expression, String> {
    if text.is_empty() {
        return Err("{} names nothing; write a binding data name such as {Id}".into());
    }
    let builtin_of = |name: &str| {
        if name.eq_ignore_ascii_case("rand-guid") {
            Some(Builtin::RandGuid)
        } else if name.eq_ignore_ascii_case("DateTime") {
            Some(Builtin::DateTime)
        } else {
            None
        }
    };
    let (name, format) = match text.split_once(':') {
        Some((name, format)) if !name.is_empty() => (name, Some(format)),
        _ => (text, None),
    };
    let format = format.map(str::trim).filter(|f| !f.is_empty());
    let builtin = builtin_of(name);
    if let Some(builtin) = builtin {
        if let Some(format) = format {
            format::check(builtin_kind(builtin), format)?;
        }
        return Ok(Expression {
            path: vec![name.to_owned()],
            format: format.map(str::to_owned),
            builtin: Some(builtin),
        });
    }
    let path: Vec<String> = name.split('.').map(str::to_owned).collect();
    for (index, part) in path.iter().enumerate() {
        check_identifier(part, index == 0).map_err(|m| format!("{{{text}}}: {m}"))?;
    }
    Ok(Expression {
        path,
        format: format.map(str::to_owned),
        builtin: None,
    })
}

fn builtin_kind(builtin: Builtin) -> format::ValueKind {
    match builtin {
        Builtin::RandGuid => format::ValueKind::Guid,
        Builtin::DateTime => format::ValueKind::DateTime,
    }
}

/// A C# identifier as `BindingTemplateParser.IdentifierPattern` allows it (letters, digits,
/// `_`, `-`); `-` is not allowed in the first part "for backwards compat".
fn check_identifier(part: &str, first: bool) -> Result<(), String> {
    let mut chars = part.chars();
    let Some(start) = chars.next() else {
        return Err("a dotted name has an empty part".into());
    };
    if !(start.is_alphabetic() || start == '_') {
        return Err(format!("{part:?} must start with a letter or '_'"));
    }
    if let Some(bad) = chars.find(|c| !(c.is_alphanumeric() || *c == '_' || *c == '-')) {
        return Err(format!(
            "'{bad}' is not allowed in a name (letters, digits, '_' and '-')"
        ));
    }
    if first && part.contains('-') {
        return Err(format!(
            "{part:?}: '-' is not allowed in the first part of a name (only {{rand-guid}} has one)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
