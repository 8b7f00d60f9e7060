//! The documents' YAML as every reader reads it back. The emitter quotes a string only where
//! YAML 1.2 would read it as something else, but many readers partners use (PyYAML, the
//! generators built on SnakeYAML) follow YAML 1.1, where a plain `2026-03-02` is a date and a
//! plain `yes` or `off` a boolean: an example or a default written that way would reach them
//! as the wrong type. [`quoted_for_yaml11`] puts such plain values in single quotes, outside
//! literal and folded blocks, whose text is the string itself, and serves the document
//! unquoted rather than changed if the result would read differently. Keys are left as the
//! emitter writes them: the documents' keys are names the code chooses.

/// `yaml` with every plain value that YAML 1.1 reads as a timestamp, a boolean or a number
/// quoted. Guarded: if the result would not read back (YAML 1.2) as exactly what `yaml` says,
/// `yaml` is returned unchanged, so the quoting can never alter a document's content.
pub fn quoted_for_yaml11(yaml: &str) -> String {
    let quoted = quote_values(yaml);
    let reads_the_same = match (
        yaml_serde::from_str::<serde_json::Value>(yaml),
        yaml_serde::from_str::<serde_json::Value>(&quoted),
    ) {
        (Ok(before), Ok(after)) => before == after,
        _ => false,
    };
    if reads_the_same {
        quoted
    } else {
        log::error!("quoting the YAML document for YAML 1.1 readers changed it; served unquoted");
        yaml.to_owned()
    }
}

fn quote_values(yaml: &str) -> String {
    let mut out = String::with_capacity(yaml.len());
    // The column of the node that owns an open block scalar; its content is deeper.
    let mut block_owner: Option<usize> = None;
    for line in yaml.split_inclusive('\n') {
        let text = line.trim_end_matches('\n');
        let indent = text.len() - text.trim_start().len();
        if let Some(owner) = block_owner {
            if text.trim().is_empty() || indent > owner {
                out.push_str(line);
                continue;
            }
            block_owner = None;
        }
        let Some(entry) = split_value(text) else {
            out.push_str(line);
            continue;
        };
        if entry.value.starts_with('|') || entry.value.starts_with('>') {
            block_owner = Some(entry.owner);
            out.push_str(line);
        } else if needs_quotes(entry.value) {
            out.push_str(&text[..entry.value_at]);
            out.push('\'');
            out.push_str(entry.value);
            out.push('\'');
            out.push_str(&line[text.len()..]);
        } else {
            out.push_str(line);
        }
    }
    out
}

/// One line's value: where it starts, the value, and the column of the node that owns it (a
/// key's column, or a sequence entry's dash), which a block scalar's lines are deeper than.
struct Entry<'a> {
    value_at: usize,
    value: &'a str,
    owner: usize,
}

/// The value of a line (after its indentation, `- ` markers and a `key: `), or `None` for a
/// line that opens a nested node (`key:`) or holds no value.
fn split_value(text: &str) -> Option<Entry<'_>> {
    let mut start = text.len() - text.trim_start().len();
    let mut dash = None;
    while text[start..].starts_with("- ") {
        dash = Some(start);
        start += 2;
    }
    let rest = &text[start..];
    let first = *rest.as_bytes().first()?;
    // Where the line's key ends, if it has one: a quoted key, or a plain one up to `: `.
    let key_end = if first == b'\'' || first == b'"' {
        let length = quoted_length(rest, first)?;
        let after = &rest[length..];
        (after.starts_with(": ") || after == ":").then_some(length)
    } else {
        rest.find(": ")
            .or_else(|| rest.ends_with(':').then(|| rest.len() - 1))
    };
    match key_end {
        Some(end) if &rest[end..] == ":" => None,
        Some(end) => Some(Entry {
            value_at: start + end + 2,
            value: &rest[end + 2..],
            owner: start,
        }),
        None => dash.map(|dash| Entry {
            value_at: start,
            value: rest,
            owner: dash,
        }),
    }
}

/// The length of a quoted scalar at the start of `text`, quotes included (`''` inside single
/// quotes and `\"` inside double ones are escapes).
fn quoted_length(text: &str, quote: u8) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = 1;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' if quote == b'"' => at += 2,
            byte if byte == quote => {
                if quote == b'\'' && bytes.get(at + 1) == Some(&b'\'') {
                    at += 2;
                } else {
                    return Some(at + 1);
                }
            }
            _ => at += 1,
        }
    }
    None
}

/// Plain values a YAML 1.1 reader takes for something other than a string.
fn needs_quotes(value: &str) -> bool {
    is_yaml11_timestamp(value)
        || is_yaml11_boolean(value)
        || is_yaml11_number(value)
        || value == "="
}

/// YAML 1.1's integers with `_` separators (`1_000`) and sexagesimal numbers (`10:30`).
fn is_yaml11_number(value: &str) -> bool {
    let digits = value.trim_start_matches(['-', '+']);
    let underscored = digits.starts_with(|c: char| c.is_ascii_digit())
        && digits.contains('_')
        && digits
            .chars()
            .all(|c| c.is_ascii_digit() || c == '_' || c == '.');
    let mut parts = digits.split(':');
    let sexagesimal = digits.contains(':')
        && parts
            .next()
            .is_some_and(|first| !first.is_empty() && first.bytes().all(|b| b.is_ascii_digit()))
        && parts
            .all(|part| (1..=2).contains(&part.len()) && part.bytes().all(|b| b.is_ascii_digit()));
    underscored || sexagesimal
}

/// YAML 1.1's timestamp: `YYYY-M-D`, optionally followed by a time.
fn is_yaml11_timestamp(value: &str) -> bool {
    let bytes = value.as_bytes();
    let digits = |from: usize, to: usize| {
        bytes.len() >= to && bytes[from..to].iter().all(u8::is_ascii_digit)
    };
    if !(digits(0, 4) && bytes.get(4) == Some(&b'-')) {
        return false;
    }
    let mut at = 5;
    for part in 0..2 {
        let width = bytes[at..]
            .iter()
            .take_while(|byte| byte.is_ascii_digit())
            .count();
        if !(1..=2).contains(&width) {
            return false;
        }
        at += width;
        if part == 0 {
            if bytes.get(at) != Some(&b'-') {
                return false;
            }
            at += 1;
        }
    }
    matches!(bytes.get(at), None | Some(b'T' | b't' | b' ' | b'\t'))
}

/// YAML 1.1's booleans beyond `true` and `false`, which the emitter quotes already.
fn is_yaml11_boolean(value: &str) -> bool {
    matches!(
        value,
        "y" | "Y"
            | "yes"
            | "Yes"
            | "YES"
            | "n"
            | "N"
            | "no"
            | "No"
            | "NO"
            | "on"
            | "On"
            | "ON"
            | "off"
            | "Off"
            | "OFF"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dates, times and YAML 1.1 booleans as values, in mappings and sequences, come out
    /// quoted; a block's text and everything else as the emitter wrote it; and the result
    /// reads back as the same strings.
    #[test]
    fn yaml11_dates_and_booleans_are_quoted_and_the_rest_untouched() {
        let value = serde_json::json!({
            "example": "2026-03-02",
            "stamp": "2026-03-02T10:00:00Z",
            "answer": "yes",
            "switch": "off",
            "list": ["2026-3-2", "no", "2026-03-02x", "plain"],
            "version": "2026.11.1",
            "description": "Deprecated:\n2026-03-02\nyes\n",
            "nested": {"sunset": "2027-01-01"},
        });
        let emitted = yaml_serde::to_string(&value).unwrap();
        let quoted = quoted_for_yaml11(&emitted);
        for expected in [
            "example: '2026-03-02'\n",
            "stamp: '2026-03-02T10:00:00Z'\n",
            "answer: 'yes'\n",
            "switch: 'off'\n",
            "- '2026-3-2'\n",
            "- 'no'\n",
            "- 2026-03-02x\n",
            "- plain\n",
            "version: 2026.11.1\n",
            "  sunset: '2027-01-01'\n",
            "  2026-03-02\n  yes\n",
        ] {
            assert!(quoted.contains(expected), "{expected:?} not in:\n{quoted}");
        }
        let read: serde_json::Value = yaml_serde::from_str(&quoted).unwrap();
        assert_eq!(read, value);
    }

    /// A block scalar under a quoted key, or in a sequence, keeps its text as written; a
    /// sibling after a block under a sequence entry is a value again; numbers YAML 1.1 reads
    /// are quoted.
    #[test]
    fn blocks_keep_their_text_and_their_siblings_are_values() {
        let value = serde_json::json!({
            "200": "line\n2026-01-01\nk: yes\n",
            "entries": [
                {"description": "a\nb\n", "example": "yes"},
                "block\n2026-01-01\n",
                "10:30",
                "1_000",
                "=",
                "it's 2026-01-01",
            ],
        });
        let emitted = yaml_serde::to_string(&value).unwrap();
        let quoted = quote_values(&emitted);
        for expected in [
            "  2026-01-01\n  k: yes\n",
            "  example: 'yes'\n",
            "- '10:30'\n",
            "- '1_000'\n",
            "- '='\n",
        ] {
            assert!(quoted.contains(expected), "{expected:?} not in:\n{quoted}");
        }
        assert!(
            !quoted.contains("'2026-01-01'"),
            "inside a block:\n{quoted}"
        );
        let read: serde_json::Value = yaml_serde::from_str(&quoted).unwrap();
        assert_eq!(read, value);
        assert_eq!(quoted_for_yaml11(&emitted), quoted);
    }

    #[test]
    fn timestamps_are_yaml11s() {
        for stamp in [
            "2026-03-02",
            "2026-3-2",
            "2026-03-02T10:00:00Z",
            "2026-03-02 10:00",
        ] {
            assert!(is_yaml11_timestamp(stamp), "{stamp}");
        }
        for other in [
            "2026-03",
            "2026-03-02x",
            "20260302",
            "2026-003-02",
            "v2026-03-02",
            "",
        ] {
            assert!(!is_yaml11_timestamp(other), "{other}");
        }
    }
}
