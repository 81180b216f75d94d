//! Turning serde_json's "line 40 column 17" into a field path.
//!
//! serde_json reports *where* in the text it gave up, and its messages name a
//! missing or unknown field, but a wrong-typed value only says what it found
//! and what it expected. A crate such as `serde_path_to_error` would track the
//! path during deserialisation; this workspace keeps its dependency list
//! short, so instead we re-scan the text (only on the error path) with a tiny
//! tolerant JSON tokenizer that records the span and path of every value, and
//! pick the value the error position falls in:
//!
//! * a wrong type or value: the value that ends at the position (serde_json
//!   stops right after the offending scalar), or, for an object or array
//!   where a scalar belongs, the one that starts there;
//! * a missing field: serde_json stops at the object's `}`, so the innermost
//!   object around the position, plus the field named in the message;
//! * a wrong sequence length: likewise the innermost array around the `]`.
//!
//! The paths are exactly those [`crate::ParticleSystem::validate`] produces,
//! so a caller sees one naming scheme for every kind of bad input.

/// Maximum nesting the scanner follows; deeper text is reported at the cut.
const MAX_DEPTH: usize = 256;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Object,
    Array,
    Scalar,
}

struct Span {
    start: usize,
    end: usize,
    kind: Kind,
    path: String,
}

struct Scanner<'a> {
    bytes: &'a [u8],
    i: usize,
    spans: Vec<Span>,
}

/// Join a field name onto a path.
pub(crate) fn join_field(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_owned()
    } else {
        format!("{path}.{field}")
    }
}

/// Join an array index onto a path.
pub(crate) fn join_index(path: &str, index: usize) -> String {
    format!("{path}[{index}]")
}

impl<'a> Scanner<'a> {
    fn skip_ws(&mut self) {
        while self.i < self.bytes.len()
            && matches!(self.bytes[self.i], b' ' | b'\t' | b'\n' | b'\r')
        {
            self.i += 1;
        }
    }

    /// Scans a string starting at the opening quote; returns its raw contents.
    fn string(&mut self) -> Option<String> {
        debug_assert_eq!(self.bytes.get(self.i), Some(&b'"'));
        self.i += 1;
        let start = self.i;
        while self.i < self.bytes.len() {
            match self.bytes[self.i] {
                b'\\' => self.i += 2,
                b'"' => {
                    let s = String::from_utf8_lossy(&self.bytes[start..self.i]).into_owned();
                    self.i += 1;
                    return Some(s);
                }
                _ => self.i += 1,
            }
        }
        None
    }

    /// Scans one value at `path`; returns false where the text stops making
    /// sense (the spans recorded so far stay usable).
    fn value(&mut self, path: String, depth: usize) -> bool {
        self.skip_ws();
        let Some(&c) = self.bytes.get(self.i) else {
            return false;
        };
        let start = self.i;
        let slot = self.spans.len();
        let kind = match c {
            b'{' => Kind::Object,
            b'[' => Kind::Array,
            _ => Kind::Scalar,
        };
        self.spans.push(Span {
            start,
            end: self.bytes.len(),
            kind,
            path: path.clone(),
        });
        if depth > MAX_DEPTH {
            return false;
        }
        let ok = match c {
            b'{' => self.object(&path, depth),
            b'[' => self.array(&path, depth),
            b'"' => self.string().is_some(),
            _ => {
                while self.i < self.bytes.len()
                    && !matches!(
                        self.bytes[self.i],
                        b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'
                    )
                {
                    self.i += 1;
                }
                self.i > start
            }
        };
        if ok {
            self.spans[slot].end = self.i;
        }
        ok
    }

    fn object(&mut self, path: &str, depth: usize) -> bool {
        self.i += 1;
        loop {
            self.skip_ws();
            match self.bytes.get(self.i) {
                Some(b'}') => {
                    self.i += 1;
                    return true;
                }
                Some(b',') => self.i += 1,
                Some(b'"') => {
                    let Some(key) = self.string() else {
                        return false;
                    };
                    self.skip_ws();
                    if self.bytes.get(self.i) != Some(&b':') {
                        return false;
                    }
                    self.i += 1;
                    if !self.value(join_field(path, &key), depth + 1) {
                        return false;
                    }
                }
                _ => return false,
            }
        }
    }

    fn array(&mut self, path: &str, depth: usize) -> bool {
        self.i += 1;
        let mut index = 0;
        loop {
            self.skip_ws();
            match self.bytes.get(self.i) {
                Some(b']') => {
                    self.i += 1;
                    return true;
                }
                Some(b',') => self.i += 1,
                Some(_) => {
                    if !self.value(join_index(path, index), depth + 1) {
                        return false;
                    }
                    index += 1;
                }
                None => return false,
            }
        }
    }
}

/// Byte offset of serde_json's 1-based (line, column).
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let mut line_start = 0;
    for _ in 1..line {
        match text[line_start..].find('\n') {
            Some(n) => line_start += n + 1,
            None => return text.len(),
        }
    }
    (line_start + column.saturating_sub(1)).min(text.len())
}

/// The name between the first pair of backticks in a serde message.
fn quoted_name(message: &str) -> Option<&str> {
    let start = message.find('`')? + 1;
    let len = message[start..].find('`')?;
    Some(&message[start..start + len])
}

/// The field path serde_json's error at (`line`, `column`) with `message`
/// refers to in `text`. Returns `"<root>"` for errors outside any field.
pub(crate) fn path_at(text: &str, line: usize, column: usize, message: &str) -> String {
    let mut scanner = Scanner {
        bytes: text.as_bytes(),
        i: 0,
        spans: Vec::new(),
    };
    scanner.value(String::new(), 0);
    let at = offset_of(text, line, column);

    // serde_json reports either the last byte it consumed or the next one,
    // depending on the error, so `at` and `at + 1` are both candidates.
    let contains = |s: &&Span| s.start <= at && at < s.end;
    let innermost = |spans: &mut dyn Iterator<Item = &Span>| -> Option<String> {
        spans
            .min_by_key(|s| s.end - s.start)
            .map(|s| s.path.clone())
    };
    let spans = &scanner.spans;
    let missing_field = message.starts_with("missing field");
    let found = if missing_field {
        innermost(
            &mut spans
                .iter()
                .filter(|s| s.kind == Kind::Object)
                .filter(contains),
        )
    } else if message.starts_with("invalid length") {
        innermost(
            &mut spans
                .iter()
                .filter(|s| s.kind == Kind::Array)
                .filter(contains),
        )
    } else if let Some(kind) = [
        ("invalid type: map", Kind::Object),
        ("invalid type: sequence", Kind::Array),
    ]
    .iter()
    .find(|(prefix, _)| message.starts_with(prefix))
    .map(|(_, kind)| *kind)
    {
        // A container of the wrong type: reported at its first byte.
        let starts_here = |s: &&Span| s.kind == kind && (s.start == at || s.start == at + 1);
        innermost(&mut spans.iter().filter(starts_here))
    } else {
        // A scalar of the wrong type or value: reported at its end.
        let ends_here = |s: &&Span| s.end == at || s.end == at + 1;
        innermost(&mut spans.iter().filter(ends_here))
    };
    let found = found.or_else(|| innermost(&mut spans.iter().filter(contains)));
    let mut path = found.unwrap_or_default();
    if missing_field || message.starts_with("unknown field") {
        if let Some(name) = quoted_name(message) {
            path = join_field(&path, name);
        }
    }
    if path.is_empty() {
        "<root>".to_owned()
    } else {
        path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_follow_lines_and_columns() {
        let text = "ab\ncde\nf";
        assert_eq!(offset_of(text, 1, 1), 0);
        assert_eq!(offset_of(text, 2, 2), 4);
        assert_eq!(offset_of(text, 3, 1), 7);
        assert_eq!(offset_of(text, 9, 1), text.len());
    }

    #[test]
    fn paths_of_values() {
        let text = r#"{"a": [1, {"b": "x"}], "c": {}}"#;
        let at = text.find("\"x\"").unwrap() + 3;
        assert_eq!(path_at(text, 1, at + 1, "invalid type"), "a[1].b");
        assert_eq!(path_at(text, 1, at, "invalid type"), "a[1].b");
        let at = text.find('1').unwrap();
        assert_eq!(path_at(text, 1, at + 2, "invalid type: integer"), "a[0]");
        let at = text.find("{\"b").unwrap();
        assert_eq!(path_at(text, 1, at, "invalid type: map"), "a[1]");
        let compact = "[1.5,2]";
        assert_eq!(path_at(compact, 1, 5, "invalid value"), "[0]");
        let at = text.find("{}").unwrap() + 1;
        assert_eq!(path_at(text, 1, at + 1, "missing field `d`"), "c.d");
        assert_eq!(
            path_at(text, 1, text.len() + 1, "trailing characters"),
            "<root>"
        );
    }

    #[test]
    fn malformed_text_does_not_panic() {
        for text in [
            "",
            "{",
            "[",
            "{\"a\"",
            "{\"a\":",
            "[1,",
            "\"abc",
            "{\"a\":1,}",
        ] {
            let _ = path_at(text, 1, 3, "x");
        }
    }
}
