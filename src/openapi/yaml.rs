//! The documents' YAML as every reader reads it back. The emitter quotes a string only where
//! YAML 1.2 would read it as something else, but many readers partners use (PyYAML, the
//! generators built on SnakeYAML) follow YAML 1.1, where a plain `2026-03-02` is a date and a
//! plain `yes` or `off` a boolean: an example or a default written that way would reach them
//! as the wrong type. [`quoted_for_yaml11`] puts such plain values in single quotes, outside
//! literal and folded blocks, whose text is the string itself.

/// `yaml` with every plain value that YAML 1.1 reads as a timestamp or a boolean quoted.
pub fn quoted_for_yaml11(yaml: &str) -> String {
    let mut out = String::with_capacity(yaml.len());
    // The indentation of the line that opened a block scalar; its content is deeper.
    let mut block_opened_at: Option<usize> = None;
    for line in yaml.split_inclusive('\n') {
        let text = line.trim_end_matches('\n');
        let indent = text.len() - text.trim_start().len();
        if let Some(opened_at) = block_opened_at {
            if text.trim().is_empty() || indent > opened_at {
                out.push_str(line);
                continue;
            }
            block_opened_at = None;
        }
        let (head, value) = split_value(text);
        if value.starts_with('|') || value.starts_with('>') {
            block_opened_at = Some(indent);
            out.push_str(line);
        } else if is_yaml11_timestamp(value) || is_yaml11_boolean(value) {
            out.push_str(head);
            out.push('\'');
            out.push_str(value);
            out.push('\'');
            out.push_str(&line[text.len()..]);
        } else {
            out.push_str(line);
        }
    }
    out
}

/// A line's text before its value (indentation, `- ` markers, a `key: `) and the value.
fn split_value(text: &str) -> (&str, &str) {
    let mut start = text.len() - text.trim_start().len();
    while text[start..].starts_with("- ") {
        start += 2;
    }
    let rest = &text[start..];
    // A quoted key may hold `: `; such a line is left as it is (the emitter quotes what needs it).
    if !rest.starts_with(['\'', '"'])
        && let Some(colon) = rest.find(": ")
    {
        let value_at = start + colon + 2;
        return (&text[..value_at], &text[value_at..]);
    }
    if rest.ends_with(':') {
        return (text, "");
    }
    (&text[..start], rest)
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
