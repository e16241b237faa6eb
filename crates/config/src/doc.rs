//! Both file formats are first read into one TOML document (a `toml::Table`) that remembers
//! where each key came from; `--set` overrides are applied to that document; then one
//! conversion turns it into the typed configuration.

use crate::error::{quote, ConfigError, Loc};
use crate::keys::{self, ConfValue, KeyDef, ValueType};
use crate::model::SourceKind;
use std::collections::HashMap;
use toml::{Table, Value};

/// A document read from a file, before conversion.
#[derive(Debug, Clone)]
pub(crate) struct Doc {
    pub table: Table,
    /// Where each key (TOML path) was set: a file line or an override.
    pub origins: HashMap<String, Loc>,
    pub file: String,
    pub kind: SourceKind,
}

impl Doc {
    fn new(file: &str, kind: SourceKind) -> Doc {
        Doc {
            table: Table::new(),
            origins: HashMap::new(),
            file: file.to_string(),
            kind,
        }
    }

    /// The location of key `path`: where it was set, else where its nearest enclosing table
    /// was (TOML), else the file.
    pub fn loc(&self, path: &str) -> Loc {
        let mut p = path;
        loop {
            if let Some(l) = self.origins.get(p) {
                return l.clone();
            }
            match p.rfind('.') {
                Some(i) => p = &p[..i],
                None => return Loc::File { file: self.file.clone() },
            }
        }
    }

    /// True when key `path` was given (in the file or by an override).
    pub fn is_set(&self, path: &str) -> bool {
        self.origins.contains_key(path)
    }

    /// The name of key `path` as this document's format names it.
    pub fn name(&self, path: &str) -> String {
        key_name(self.kind, path)
    }
}

/// The name of key `path` in the style of `kind`: the siitperf.conf name where siitperf has
/// the key, else the TOML path.
pub(crate) fn key_name(kind: SourceKind, path: &str) -> String {
    if kind == SourceKind::SiitperfConf {
        if let Some(c) = keys::by_path(path).and_then(KeyDef::conf_name) {
            return c.to_string();
        }
    }
    path.to_string()
}

/// Set `value` at dotted `path`, making the tables on the way.
fn set_path(table: &mut Table, path: &str, value: Value) {
    let mut t = table;
    let mut parts = path.split('.').peekable();
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            t.insert(part.to_string(), value);
            return;
        }
        let entry = t.entry(part.to_string()).or_insert_with(|| Value::Table(Table::new()));
        if !entry.is_table() {
            *entry = Value::Table(Table::new());
        }
        match entry {
            Value::Table(inner) => t = inner,
            _ => return,
        }
    }
}

/// The 1-based line of byte offset `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    let end = at.min(text.len());
    text.as_bytes()[..end].iter().filter(|b| **b == b'\n').count() + 1
}

// ---------------------------------------------------------------------------------------------
// TOML

/// Read a TOML text.
pub(crate) fn read_toml(text: &str, file: &str) -> Result<Doc, ConfigError> {
    let table: Table = text.parse().map_err(|e: toml::de::Error| {
        let at = match e.span() {
            Some(s) => Loc::Line {
                file: file.to_string(),
                line: line_of(text, s.start),
            },
            None => Loc::File { file: file.to_string() },
        };
        ConfigError::Syntax {
            at,
            msg: e.message().trim().replace('\n', "; "),
        }
    })?;
    let mut doc = Doc::new(file, SourceKind::Toml);
    doc.table = table;
    doc.origins = toml_key_lines(text, file);
    Ok(doc)
}

/// Put the `[tester]` table of `companion` (a TOML document beside siitperf.conf) into `doc`,
/// over what `doc` says; any other key there is an error naming its line.
pub(crate) fn merge_tester(doc: &mut Doc, mut companion: Doc) -> Result<(), ConfigError> {
    for (name, value) in std::mem::take(&mut companion.table) {
        let Value::Table(t) = value else {
            return Err(not_tester(&companion, &name));
        };
        if name != "tester" {
            return Err(not_tester(&companion, &name));
        }
        let target = doc.table.entry("tester").or_insert_with(|| Value::Table(Table::new()));
        if let Value::Table(dst) = target {
            for (k, v) in t {
                dst.insert(k, v);
            }
        }
    }
    for (path, at) in companion.origins {
        doc.origins.insert(path, at);
    }
    Ok(())
}

fn not_tester(companion: &Doc, name: &str) -> ConfigError {
    ConfigError::Invalid {
        at: companion.loc(name),
        msg: format!(
            "'{name}': a {} beside siitperf.conf holds the [tester] table only (ports, backend, EAL arguments); \
             the test itself belongs in siitperf.conf",
            crate::model::COMPANION
        ),
    }
}

/// The line of every key and table header of a (syntactically valid) TOML text, by dotted
/// path. Good enough for messages: TOML forbids defining a key twice, and the keys of this
/// format are plain words.
fn toml_key_lines(text: &str, file: &str) -> HashMap<String, Loc> {
    let mut out = HashMap::new();
    let mut prefix = String::new();
    let record = |path: String, line: usize, out: &mut HashMap<String, Loc>| {
        out.entry(path).or_insert_with(|| Loc::Line {
            file: file.to_string(),
            line,
        });
    };
    let join = |prefix: &str, key: &str| {
        if prefix.is_empty() {
            key.to_string()
        } else {
            format!("{prefix}.{key}")
        }
    };
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let t = line.trim_start();
        if t.starts_with('#') || t.is_empty() {
            continue;
        }
        if let Some(rest) = t.strip_prefix('[') {
            let rest = rest.strip_prefix('[').unwrap_or(rest);
            if let Some(end) = rest.find(']') {
                prefix = dotted(&rest[..end]);
                record(prefix.clone(), n, &mut out);
            }
            continue;
        }
        let Some(eq) = t.find('=') else { continue };
        let path = join(&prefix, &dotted(&t[..eq]));
        record(path.clone(), n, &mut out);
        // An inline table: record its keys on the same line.
        let value = t[eq + 1..].trim_start();
        if let Some(inner) = value.strip_prefix('{') {
            let inner = inner.split('}').next().unwrap_or("");
            for pair in inner.split(',') {
                if let Some(eq) = pair.find('=') {
                    record(join(&path, &dotted(&pair[..eq])), n, &mut out);
                }
            }
        }
    }
    out
}

/// A TOML key as written (`a . "b"`) as a plain dotted path (`a.b`).
fn dotted(key: &str) -> String {
    key.split('.')
        .map(|p| p.trim().trim_matches(|c| c == '"' || c == '\''))
        .collect::<Vec<_>>()
        .join(".")
}

// ---------------------------------------------------------------------------------------------
// siitperf.conf

/// Read a siitperf.conf text: `Key value` lines, `#` comments, leading blanks allowed.
pub(crate) fn read_siitperf(text: &str, file: &str) -> Result<Doc, ConfigError> {
    let mut doc = Doc::new(file, SourceKind::SiitperfConf);
    for (i, raw) in text.lines().enumerate() {
        let at = Loc::Line {
            file: file.to_string(),
            line: i + 1,
        };
        let line = match raw.find('#') {
            Some(p) => &raw[..p],
            None => raw,
        };
        let mut tokens = line.split_whitespace();
        let Some(name) = tokens.next() else { continue };
        let Some(def) = keys::by_conf_name(name) else {
            return Err(ConfigError::UnknownLine {
                at,
                text: quote(line.trim()),
            });
        };
        let Some(token) = tokens.next() else {
            return Err(ConfigError::MissingValue { at, key: name.to_string() });
        };
        // siitperf takes the first token after the key; a key given twice: the last one counts.
        let value = conf_value(def, name, token, &at)?;
        set_path(&mut doc.table, def.path, value);
        doc.origins.insert(def.path.to_string(), at);
    }
    Ok(doc)
}

/// A siitperf.conf number: decimal or `0x` hexadecimal, no sign.
pub(crate) fn parse_number(s: &str) -> Option<u64> {
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        return u64::from_str_radix(hex, 16).ok();
    }
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Turn one siitperf.conf value into its TOML value.
fn conf_value(def: &KeyDef, name: &str, token: &str, at: &Loc) -> Result<Value, ConfigError> {
    let Some(cv) = def.conf_value else {
        return Err(ConfigError::UnknownKey {
            at: at.clone(),
            key: name.to_string(),
            hint: String::new(),
        });
    };
    let bad = || ConfigError::BadValue {
        at: at.clone(),
        key: name.to_string(),
        value: token.to_string(),
        allowed: cv.allowed().to_string(),
    };
    let code = || parse_number(token).ok_or_else(bad);
    let pick = |names: &[&str]| -> Result<Value, ConfigError> {
        let c = code()?;
        usize::try_from(c)
            .ok()
            .and_then(|c| names.get(c))
            .map(|n| Value::String(n.to_string()))
            .ok_or_else(bad)
    };
    Ok(match cv {
        ConfValue::Version => match code()? {
            v @ (4 | 6) => Value::Integer(v as i64),
            _ => return Err(bad()),
        },
        ConfValue::Ipv4 | ConfValue::Ipv6 | ConfValue::Mac => Value::String(token.to_string()),
        ConfValue::Flag => match code()? {
            0 => Value::Boolean(false),
            1 => Value::Boolean(true),
            _ => return Err(bad()),
        },
        ConfValue::Number => {
            let n = code()?;
            let n = i64::try_from(n).map_err(|_| bad())?;
            if let Some((lo, hi)) = def.range {
                if n < lo || n > hi {
                    return Err(ConfigError::BadValue {
                        at: at.clone(),
                        key: name.to_string(),
                        value: token.to_string(),
                        allowed: format!("{lo}-{hi}"),
                    });
                }
            }
            Value::Integer(n)
        }
        ConfValue::Variation | ConfValue::Tuples => pick(&keys::VARIATION_NAMES)?,
        ConfValue::Enumerate => pick(&keys::ENUMERATE_NAMES)?,
        ConfValue::Stateful => pick(&keys::STATEFUL_NAMES)?,
    })
}

// ---------------------------------------------------------------------------------------------
// --set overrides

/// Apply `--set KEY=VALUE` overrides: KEY is a TOML dotted path or a siitperf.conf key name.
pub(crate) fn apply_overrides(doc: &mut Doc, overrides: &[(String, String)]) -> Result<(), ConfigError> {
    for (key, value) in overrides {
        let key = key.trim();
        let value = value.trim();
        let at = Loc::Set { key: key.to_string() };
        let (def, v) = if let Some(def) = keys::by_path(key) {
            (def, toml_value(def, value, &at)?)
        } else if let Some(def) = keys::by_conf_name(key) {
            if value.is_empty() {
                return Err(ConfigError::MissingValue { at, key: key.to_string() });
            }
            (def, conf_value(def, key, value, &at)?)
        } else {
            let hint = match keys::suggest(key) {
                Some(s) => format!(" (did you mean '{s}'?)"),
                None => " (a TOML dotted path like traffic.reverse or a siitperf.conf key like IP-L-var)".to_string(),
            };
            return Err(ConfigError::UnknownKey {
                at: at.clone(),
                key: key.to_string(),
                hint,
            });
        };
        set_path(&mut doc.table, def.path, v);
        doc.origins.insert(def.path.to_string(), at);
    }
    Ok(())
}

/// Parse an override's value as the TOML type of its key.
fn toml_value(def: &KeyDef, value: &str, at: &Loc) -> Result<Value, ConfigError> {
    let bad = || ConfigError::BadValue {
        at: at.clone(),
        key: def.path.to_string(),
        value: quote(value),
        allowed: def.value_type.describe().to_string(),
    };
    let unquoted = || {
        let v = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')).unwrap_or(value);
        Value::String(v.to_string())
    };
    Ok(match def.value_type {
        ValueType::Str | ValueType::Port => unquoted(),
        ValueType::Int => {
            let (neg, digits) = match value.strip_prefix('-') {
                Some(d) => (true, d),
                None => (false, value),
            };
            let n = parse_number(digits).and_then(|n| i64::try_from(n).ok()).ok_or_else(bad)?;
            Value::Integer(if neg { -n } else { n })
        }
        ValueType::Bool => match value {
            "true" => Value::Boolean(true),
            "false" => Value::Boolean(false),
            _ => return Err(bad()),
        },
        ValueType::Float => match value.parse::<f64>() {
            Ok(f) if f.is_finite() => Value::Float(f),
            _ => return Err(bad()),
        },
        ValueType::StrList => {
            if value.starts_with('[') {
                let t: Table = format!("v = {value}").parse().map_err(|_| bad())?;
                match t.get("v") {
                    Some(v @ Value::Array(a)) if t.len() == 1 && a.iter().all(Value::is_str) => v.clone(),
                    _ => return Err(bad()),
                }
            } else {
                Value::Array(value.split_whitespace().map(|s| Value::String(s.to_string())).collect())
            }
        }
    })
}

/// Check that every key of the document is known and has the right TOML type.
pub(crate) fn check_keys(doc: &Doc) -> Result<(), ConfigError> {
    check_table(doc, &doc.table, "")
}

fn check_table(doc: &Doc, table: &Table, prefix: &str) -> Result<(), ConfigError> {
    for (k, v) in table {
        let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        if let Some(def) = keys::by_path(&path) {
            let ok = match def.value_type {
                ValueType::Int => v.is_integer(),
                ValueType::Str => v.is_str(),
                ValueType::Bool => v.is_bool(),
                ValueType::Float => v.is_float() || v.is_integer(),
                ValueType::StrList => v.as_array().is_some_and(|a| a.iter().all(Value::is_str)),
                ValueType::Port => v.is_str() || v.as_integer().is_some_and(|i| i >= 0),
            };
            if !ok {
                return Err(ConfigError::BadValue {
                    at: doc.loc(&path),
                    key: doc.name(&path),
                    value: describe_value(v),
                    allowed: def.value_type.describe().to_string(),
                });
            }
        } else if keys::is_table(&path) {
            match v {
                Value::Table(t) => check_table(doc, t, &path)?,
                other => {
                    return Err(ConfigError::BadValue {
                        at: doc.loc(&path),
                        key: path.clone(),
                        value: describe_value(other),
                        allowed: "a table".to_string(),
                    })
                }
            }
        } else {
            let hint = match keys::suggest(&path) {
                Some(s) => format!(" (did you mean '{s}'?)"),
                None => String::new(),
            };
            return Err(ConfigError::UnknownKey {
                at: doc.loc(&path),
                key: path,
                hint,
            });
        }
    }
    Ok(())
}

/// A TOML value for a message.
pub(crate) fn describe_value(v: &Value) -> String {
    match v {
        Value::String(s) => quote(s),
        Value::Integer(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Boolean(b) => b.to_string(),
        Value::Datetime(d) => format!("the date/time {d}"),
        Value::Array(_) => "an array".to_string(),
        Value::Table(_) => "a table".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(parse_number("0"), Some(0));
        assert_eq!(parse_number("65535"), Some(65535));
        assert_eq!(parse_number("0xffff"), Some(65535));
        assert_eq!(parse_number("0XFF"), Some(255));
        for bad in ["", "-1", "+1", "0x", "0x+1", "1.5", "12abc", "99999999999999999999999"] {
            assert_eq!(parse_number(bad), None, "{bad}");
        }
    }

    #[test]
    fn key_lines() {
        let t = "# c\n[tester]\nbackend = \"mem\"\n[traffic]\nforeground = { n = 2, m = 2 }\n[traffic.forward_ports]\nsport = { variation = \"fixed\" }\n";
        let m = toml_key_lines(t, "f");
        let line = |p: &str| match m.get(p) {
            Some(Loc::Line { line, .. }) => *line,
            _ => 0,
        };
        assert_eq!(line("tester"), 2);
        assert_eq!(line("tester.backend"), 3);
        assert_eq!(line("traffic.foreground.m"), 5);
        assert_eq!(line("traffic.forward_ports.sport.variation"), 7);
    }
}
