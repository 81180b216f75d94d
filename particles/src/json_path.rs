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

/// One step of a path: an object key (a byte range of the text, between
/// its quotes) or an array index.
#[derive(Clone, Copy)]
enum Segment {
    Key(usize, usize),
    Index(usize),
}

/// What the caller is looking for, known before the scan: which spans
/// qualify, first choice and fallback.
struct Want {
    at: usize,
    primary: Primary,
}

#[derive(Clone, Copy)]
enum Primary {
    /// Innermost container of this kind around `at`.
    ContainerAround(Kind),
    /// Innermost container of this kind starting at `at` or `at + 1`.
    StartsHere(Kind),
    /// Innermost value ending at `at` or `at + 1`.
    EndsHere,
}

/// The best span found so far for one criterion: the shortest, and of equal
/// ones the first to start (the outer one of a nest). Only its path is kept.
#[derive(Default)]
struct Best {
    found: Option<(usize, usize, String)>,
}

impl Best {
    fn beats(&self, len: usize, start: usize) -> bool {
        self.found.as_ref().is_none_or(|&(l, s, _)| (len, start) < (l, s))
    }
}

/// A one-pass scanner that keeps only the path of the value it is in (a
/// stack of segments pointing into the text) and, for the two criteria,
/// the best value seen so far. Memory is the nesting depth plus the two
/// chosen paths, and each path is written out only when its value beats
/// the best so far, so the whole scan is linear in the text: an earlier
/// version kept every value's full path, which for many values under a
/// long key is values × key length bytes (a 3 MB text asked for ~1 TB).
struct Scanner<'a> {
    bytes: &'a [u8],
    i: usize,
    stack: Vec<Segment>,
    want: Want,
    primary: Best,
    around: Best,
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
        while self.i < self.bytes.len() && matches!(self.bytes[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    /// Scans a string starting at the opening quote; returns the byte range
    /// of its raw contents.
    fn string(&mut self) -> Option<(usize, usize)> {
        debug_assert_eq!(self.bytes.get(self.i), Some(&b'"'));
        self.i += 1;
        let start = self.i;
        while self.i < self.bytes.len() {
            match self.bytes[self.i] {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return Some((start, self.i - 1));
                }
                _ => self.i += 1,
            }
        }
        None
    }

    /// The path of the value being scanned, written out.
    fn path(&self) -> String {
        let mut path = String::new();
        for segment in &self.stack {
            match *segment {
                Segment::Key(a, b) => {
                    let key = String::from_utf8_lossy(&self.bytes[a..b]);
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(&key);
                }
                Segment::Index(i) => {
                    path.push('[');
                    path.push_str(&i.to_string());
                    path.push(']');
                }
            }
        }
        path
    }

    /// Offers the value `[start, end)` of `kind` at the current path to both
    /// criteria. Values that never closed are offered with `end` = the
    /// text's length.
    fn offer(&mut self, start: usize, end: usize, kind: Kind) {
        let at = self.want.at;
        let len = end - start;
        let contains = start <= at && at < end;
        let primary = match self.want.primary {
            Primary::ContainerAround(k) => kind == k && contains,
            Primary::StartsHere(k) => kind == k && (start == at || start == at + 1),
            Primary::EndsHere => end == at || end == at + 1,
        };
        if primary && self.primary.beats(len, start) {
            self.primary.found = Some((len, start, self.path()));
        }
        if contains && self.around.beats(len, start) {
            self.around.found = Some((len, start, self.path()));
        }
    }

    /// Scans one value at the current path; returns false where the text
    /// stops making sense (the values seen so far were offered).
    fn value(&mut self, depth: usize) -> bool {
        self.skip_ws();
        let Some(&c) = self.bytes.get(self.i) else {
            return false;
        };
        let start = self.i;
        let kind = match c {
            b'{' => Kind::Object,
            b'[' => Kind::Array,
            _ => Kind::Scalar,
        };
        let ok = depth <= MAX_DEPTH
            && match c {
                b'{' => self.object(depth),
                b'[' => self.array(depth),
                b'"' => self.string().is_some(),
                _ => {
                    while self.i < self.bytes.len() && !matches!(self.bytes[self.i], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                        self.i += 1;
                    }
                    self.i > start
                }
            };
        let end = if ok { self.i } else { self.bytes.len() };
        self.offer(start, end, kind);
        ok
    }

    fn object(&mut self, depth: usize) -> bool {
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
                    let Some((a, b)) = self.string() else {
                        return false;
                    };
                    self.skip_ws();
                    if self.bytes.get(self.i) != Some(&b':') {
                        return false;
                    }
                    self.i += 1;
                    self.stack.push(Segment::Key(a, b));
                    let ok = self.value(depth + 1);
                    self.stack.pop();
                    if !ok {
                        return false;
                    }
                }
                _ => return false,
            }
        }
    }

    fn array(&mut self, depth: usize) -> bool {
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
                    self.stack.push(Segment::Index(index));
                    let ok = self.value(depth + 1);
                    self.stack.pop();
                    if !ok {
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
/// Time and memory are linear in the text.
pub(crate) fn path_at(text: &str, line: usize, column: usize, message: &str) -> String {
    let at = offset_of(text, line, column);
    // serde_json reports either the last byte it consumed or the next one,
    // depending on the error, so `at` and `at + 1` are both candidates.
    let missing_field = message.starts_with("missing field");
    let primary = if missing_field {
        // It stops at the object's `}`.
        Primary::ContainerAround(Kind::Object)
    } else if message.starts_with("invalid length") {
        Primary::ContainerAround(Kind::Array)
    } else if message.starts_with("invalid type: map") {
        // A container of the wrong type: reported at its first byte.
        Primary::StartsHere(Kind::Object)
    } else if message.starts_with("invalid type: sequence") {
        Primary::StartsHere(Kind::Array)
    } else {
        // A scalar of the wrong type or value: reported at its end.
        Primary::EndsHere
    };
    let mut scanner = Scanner {
        bytes: text.as_bytes(),
        i: 0,
        stack: Vec::new(),
        want: Want { at, primary },
        primary: Best::default(),
        around: Best::default(),
    };
    scanner.value(0);
    let found = scanner.primary.found.or(scanner.around.found);
    let mut path = found.map(|(_, _, path)| path).unwrap_or_default();
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
        assert_eq!(path_at(text, 1, text.len() + 1, "trailing characters"), "<root>");
    }

    #[test]
    fn malformed_text_does_not_panic() {
        for text in ["", "{", "[", "{\"a\"", "{\"a\":", "[1,", "\"abc", "{\"a\":1,}"] {
            let _ = path_at(text, 1, 3, "x");
        }
    }
}
