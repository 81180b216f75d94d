//! Profiler spans: one at every frame stage ([`crate::Stage`]) and on the
//! worker tasks (visibility chunks, pass-setup tasks, recording chunks).
//!
//! Each span goes to two places:
//! - the `profiling` crate's `scope!`, which is nothing at all unless a
//!   backend is compiled in (the renderer's features `profile-with-tracy`
//!   and `profile-with-puffin`, as wgpu has them; the application starts
//!   the profiler's client);
//! - this module's recorder, for a Chrome trace (`--trace FILE` on the
//!   samples): while [`start`]ed, each span's begin and end are kept, and
//!   [`stop`] hands them back; [`Trace::chrome_json`] writes them in the
//!   Chrome trace event format (a JSON array of complete events) that
//!   chrome://tracing and Perfetto open. When not recording, a span costs
//!   one relaxed atomic load.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The most events one recording keeps (about 40 MB); later ones are
/// counted in [`Trace::dropped`].
pub const MAX_EVENTS: usize = 1 << 20;

static RECORDING: AtomicBool = AtomicBool::new(false);
static NEXT_TID: AtomicU64 = AtomicU64::new(1);
static RECORDER: Mutex<Recorder> =
    Mutex::new(Recorder { epoch: None, trace: Trace { events: Vec::new(), threads: Vec::new(), dropped: 0 } });

thread_local! {
    static TID: Cell<u64> = const { Cell::new(0) };
}

struct Recorder {
    epoch: Option<Instant>,
    trace: Trace,
}

/// One span: `start_us` microseconds after [`start`], lasting `dur_us`.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceEvent {
    /// What the span measured (a stage's or task's name).
    pub name: &'static str,
    /// `"stage"` for a frame stage, `"task"` for a worker task, or the
    /// caller's own category.
    pub category: &'static str,
    /// The recorder's number for the thread (not the OS's).
    pub tid: u64,
    /// Microseconds from [`start`] to the span's beginning.
    pub start_us: f64,
    /// The span's length in microseconds.
    pub dur_us: f64,
}

/// What one recording kept.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    /// In the order the spans ended.
    pub events: Vec<TraceEvent>,
    /// (tid, thread name) of every thread that recorded a span.
    pub threads: Vec<(u64, String)>,
    /// Spans left out past [`MAX_EVENTS`].
    pub dropped: u64,
}

/// Starts recording spans (forgetting any earlier recording); times are
/// from now.
pub fn start() {
    let mut r = RECORDER.lock().unwrap_or_else(|e| e.into_inner());
    r.epoch = Some(Instant::now());
    r.trace = Trace::default();
    RECORDING.store(true, Ordering::Release);
}

/// Stops recording and returns what was recorded since [`start`] (empty
/// when it was not started).
pub fn stop() -> Trace {
    RECORDING.store(false, Ordering::Release);
    let mut r = RECORDER.lock().unwrap_or_else(|e| e.into_inner());
    r.epoch = None;
    std::mem::take(&mut r.trace)
}

/// Whether spans are being recorded.
pub fn is_recording() -> bool {
    RECORDING.load(Ordering::Relaxed)
}

/// A span from [`Span::new`] to its drop. Use the crate's `span!` inside
/// the renderer (it opens a `profiling` scope too).
#[must_use = "a span ends when dropped"]
pub struct Span {
    name: &'static str,
    category: &'static str,
    start: Option<Instant>,
}

impl Span {
    /// Opens a span; it is recorded when dropped, if recording is on.
    #[inline]
    pub fn new(category: &'static str, name: &'static str) -> Self {
        let start = RECORDING.load(Ordering::Relaxed).then(Instant::now);
        Self { name, category, start }
    }
}

impl Drop for Span {
    #[inline]
    fn drop(&mut self) {
        if let Some(start) = self.start {
            record(self.name, self.category, start, Instant::now());
        }
    }
}

#[cold]
fn record(name: &'static str, category: &'static str, start: Instant, end: Instant) {
    let tid = TID.with(|t| {
        if t.get() == 0 {
            t.set(NEXT_TID.fetch_add(1, Ordering::Relaxed));
        }
        t.get()
    });
    let mut r = RECORDER.lock().unwrap_or_else(|e| e.into_inner());
    // Stopped (or restarted) while the span was open: it belongs to no recording.
    let Some(epoch) = r.epoch.filter(|e| *e <= start) else { return };
    if r.trace.events.len() >= MAX_EVENTS {
        r.trace.dropped += 1;
        return;
    }
    if !r.trace.threads.iter().any(|(t, _)| *t == tid) {
        let name = std::thread::current().name().map_or_else(|| format!("thread {tid}"), str::to_string);
        r.trace.threads.push((tid, name));
    }
    let us = |t: Instant| (t - epoch).as_secs_f64() * 1e6;
    r.trace.events.push(TraceEvent { name, category, tid, start_us: us(start), dur_us: (end - start).as_secs_f64() * 1e6 });
}

impl Trace {
    /// The Chrome trace event format's JSON array: a thread-name metadata
    /// event per thread, then one complete (`"ph":"X"`) event per span,
    /// times in microseconds.
    pub fn chrome_json(&self) -> String {
        let mut out = String::from("[\n");
        let mut first = true;
        let mut push = |line: String| {
            if !first {
                out.push_str(",\n");
            }
            first = false;
            out.push_str(&line);
        };
        for (tid, name) in &self.threads {
            push(format!(r#"{{"name":"thread_name","ph":"M","pid":1,"tid":{tid},"args":{{"name":"{}"}}}}"#, escape(name)));
        }
        for e in &self.events {
            push(format!(
                r#"{{"name":"{}","cat":"{}","ph":"X","pid":1,"tid":{},"ts":{:.3},"dur":{:.3}}}"#,
                escape(e.name),
                escape(e.category),
                e.tid,
                e.start_us,
                e.dur_us
            ));
        }
        out.push_str("\n]\n");
        out
    }
}

/// A JSON string's contents for `s`.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Opens a span until the end of the enclosing block: a `profiling` scope
/// (nothing without a profiler feature) and a [`Span`] for the Chrome trace.
macro_rules! span {
    ($category:literal, $name:expr) => {
        profiling::scope!($name);
        let _trace_span = $crate::trace::Span::new($category, $name);
    };
}
pub(crate) use span;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chrome_json_escapes_names_and_lists_threads_then_events() {
        let t = Trace {
            events: vec![TraceEvent { name: "a\"b", category: "task", tid: 3, start_us: 1.5, dur_us: 2.25 }],
            threads: vec![(3, "worker \\ 1".into())],
            dropped: 0,
        };
        assert_eq!(
            t.chrome_json(),
            "[\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":3,\"args\":{\"name\":\"worker \\\\ 1\"}},\n\
             {\"name\":\"a\\\"b\",\"cat\":\"task\",\"ph\":\"X\",\"pid\":1,\"tid\":3,\"ts\":1.500,\"dur\":2.250}\n]\n"
        );
        assert_eq!(Trace::default().chrome_json(), "[\n\n]\n");
        assert_eq!(escape("\n"), "\\u000a");
    }
}
