//! Python tracebacks, one builder per rank (ranks interleave their output):
//! `Traceback (most recent call last):`, the `File "x.py", line N, in f`
//! frames with their code lines, the exception line and the lines of its
//! message, and the chaining markers between tracebacks; IPython's and
//! Jupyter's styles (`ipython`) into the same frames. Over 500 lines:
//! the builder's step, its step of a known row (`known`) and its saved
//! body (put in place for a repeated block of rows) share the builder's
//! private state and must read a line alike, side by side.

mod frame;
mod ipython;
mod known;

pub use frame::Frame;
pub use known::RowStep;

use known::Kind;

use crate::text::{clip, clip_into};

/// Frames kept per traceback: the innermost ones matter, deep recursion does not.
const MAX_FRAMES: usize = 96;
/// Message lines kept after the exception line.
const MAX_MESSAGE_LINES: usize = 12;
/// Characters kept of a frame's file and function: no real path or name is
/// longer, and the tracebacks kept stay small whatever a line holds.
const MAX_FILE: usize = 1024;
const MAX_FUNCTION: usize = 256;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Traceback {
    pub frames: Vec<Frame>,
    /// Frames dropped from the outer end to keep the size bounded.
    pub frames_dropped: u64,
    /// `RuntimeError: CUDA error: device-side assert triggered`
    pub exception: Option<String>,
    /// The exception's class IPython's header names (`IndexError     Traceback
    /// (most recent call last)`): known even where the paste stops before
    /// the exception line.
    pub header_exception: Option<String>,
    /// The lines after the exception line (hints, DSA line, C++ frames).
    pub message: Vec<String>,
    pub rank: Option<i64>,
    /// Position of the first line: (input, 1-based line).
    pub input: usize,
    pub line: u64,
    /// Another traceback led to this one (`During handling…`, `…direct cause…`).
    pub chained: bool,
    /// Frames listed innermost first: faulthandler's `Stack (most recent
    /// call first):`, VS Code's `Exception has occurred:` banner.
    pub innermost_first: bool,
}

impl Traceback {
    pub fn text(&self) -> impl Iterator<Item = &str> {
        self.exception
            .iter()
            .map(String::as_str)
            .chain(self.message.iter().map(String::as_str))
    }
    /// Innermost frame of the user's code.
    pub fn user_frame(&self) -> Option<&Frame> {
        if self.innermost_first {
            return self.frames.iter().find(|f| f.is_user());
        }
        self.frames.iter().rev().find(|f| f.is_user())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Frames,
    Message,
}

#[derive(Debug)]
pub struct Builder {
    tb: Traceback,
    /// Strings of a dropped traceback to fill instead of allocating.
    spare: Spare,
    state: State,
    /// The last frame still waits for its code line.
    want_code: bool,
    /// Lines seen since the last frame or message line (bounds junk inside).
    idle: u32,
    /// Started by IPython's header or a cell's frame: its frames and
    /// numbered source lines are read in IPython's styles.
    ipython: bool,
}

/// What a line did to a builder.
pub enum Step {
    /// Consumed; the traceback goes on.
    More,
    /// The traceback is complete (the line may start another one: re-feed it).
    Done(Traceback, bool),
    /// Not part of a traceback.
    Ignored,
}

pub const CHAIN_MARKERS: [&str; 2] = [
    "During handling of the above exception",
    "The above exception was the direct cause of the following exception",
];

pub fn is_header(t: &str) -> bool {
    t.starts_with("Traceback (most recent call last)")
}

/// VS Code's exception banner: `Exception has occurred: RuntimeError`, then
/// the message, then the frames innermost first.
const BANNER: &str = "Exception has occurred:";

/// A header of frames listed innermost first: faulthandler's `Stack (most
/// recent call first):` / `Current thread 0x… (most recent call first):`,
/// or VS Code's banner.
pub fn is_reversed_header(t: &str) -> bool {
    t.ends_with("(most recent call first):") || t.starts_with(BANNER)
}

/// Whether a line (trimmed) starts a traceback: a header or a frame of
/// Python's, or IPython's header or a cell's frame.
pub fn starts(t: &str) -> bool {
    is_header(t) || is_reversed_header(t) || is_frame(t) || ipython::starts(t)
}

/// Whether a line (trimmed) is one of IPython's traceback lines that no
/// code line runs into: a header, a frame, an arrow line.
pub fn ipython_line(t: &str) -> bool {
    ipython::is_header(t) || ipython::arrow_line(t).is_some() || ipython::parse_frame(t).is_some()
}

/// Whether a line (trimmed) may start a traceback, cheaply: what
/// [`starts`] accepts begins with these words or holds IPython's header.
pub fn may_start(t: &str) -> bool {
    t.starts_with("Traceback")
        || t.starts_with(BANNER)
        || t.ends_with("(most recent call first):")
        || t.starts_with("File \"")
        || t.starts_with("Cell In[")
        || t.starts_with("Input In [")
        || t.starts_with("<ipython-input-")
        || ipython::holds_header(t)
}

/// `File "x.py", line 12, in f` (trimmed).
pub fn parse_frame(t: &str) -> Option<Frame> {
    let (file, line, function) = frame_parts(t)?;
    Some(Frame {
        file: ipython::cell_of_file(file).unwrap_or_else(|| file.to_string()),
        line,
        function: function.to_string(),
        code: None,
    })
}

/// Whether a line (trimmed) is a frame of Python's, without building it.
fn is_frame(t: &str) -> bool {
    frame_parts(t).is_some()
}

/// A frame line's file, line and function.
pub(crate) fn frame_parts(t: &str) -> Option<(&str, u64, &str)> {
    static LINE: crate::device_line::Searcher = crate::device_line::searcher!(b"\", line ");
    let rest = t.strip_prefix("File \"")?;
    let q = LINE.find(rest.as_bytes())?;
    let file = &rest[..q];
    let after = &rest[q + "\", line ".len()..];
    let n = after.bytes().take_while(u8::is_ascii_digit).count();
    let line = after[..n].parse().ok()?;
    // faulthandler's dumps print `line 14 in forward`, without the comma.
    let function = after[n..]
        .strip_prefix(", in ")
        .or_else(|| after[n..].strip_prefix(" in "))
        .map(str::trim)
        .unwrap_or("");
    Some((file, line, function))
}

impl Builder {
    /// A builder started by a header, a frame, or a chain marker's successor.
    pub fn new(input: usize, line: u64, rank: Option<i64>, chained: bool) -> Self {
        Builder {
            tb: Traceback {
                rank,
                input,
                line,
                chained,
                ..Traceback::default()
            },
            spare: Spare::default(),
            state: State::Frames,
            want_code: false,
            idle: 0,
            ipython: false,
        }
    }

    /// Builds into the strings and buffers of `spare` (see [`Spare`]).
    pub fn with_spare(mut self, mut spare: Spare) -> Self {
        self.tb.frames = std::mem::take(&mut spare.frame_buf);
        self.tb.message = std::mem::take(&mut spare.message_buf);
        self.spare = spare;
        self
    }

    /// What is left of its spare (see [`Spare::reclaim`]): the builder is
    /// done with it once its traceback is complete.
    pub fn take_spare(&mut self) -> Spare {
        std::mem::take(&mut self.spare)
    }

    pub fn has_frames(&self) -> bool {
        !self.tb.frames.is_empty()
    }

    pub fn finish(self) -> Traceback {
        self.tb
    }

    /// Feed one cleaned line (launcher prefix removed, indentation kept).
    pub fn step(&mut self, text: &str) -> Step {
        let t = text.trim();
        let indented = is_indented(text);
        match self.state {
            State::Frames => {
                // Python's header is none of IPython's lines (their header
                // has a name before the words): asked of every header first.
                if self.tb.frames.is_empty() && !self.ipython && !is_header(t) && ipython::starts(t)
                {
                    self.ipython = true;
                }
                if self.ipython {
                    return self.ipython_frames(text, t);
                }
                if is_header(t) || is_reversed_header(t) {
                    if self.tb.frames.is_empty() {
                        self.tb.innermost_first = is_reversed_header(t);
                        if let Some(kind) = t.strip_prefix(BANNER) {
                            // The message follows on the next line.
                            self.tb.exception = Some(clip(kind.trim(), 200));
                        }
                        return Step::More;
                    }
                    return Step::Done(std::mem::take(&mut self.tb), true);
                }
                if let Some((file, line, function)) = frame_parts(t) {
                    let f = self.spare.frame(file, line, function);
                    self.push_frame(f);
                    return Step::More;
                }
                if t.is_empty() {
                    return Step::More;
                }
                if indented {
                    // The code line of the last frame, or decoration.
                    return self.code_line(t, is_decoration(t));
                }
                self.exception_line(t)
            }
            State::Message => {
                if t.is_empty()
                    || is_header(t)
                    || is_frame(t)
                    || ipython::starts(t)
                    || (self.ipython && ipython::is_rule(t))
                    || CHAIN_MARKERS.iter().any(|m| t.starts_with(m))
                {
                    return Step::Done(std::mem::take(&mut self.tb), true);
                }
                self.message_line(t)
            }
        }
    }
}

impl Builder {
    fn push_frame(&mut self, mut f: Frame) {
        if f.file.len() > MAX_FILE {
            f.file = clip(&f.file, MAX_FILE);
        }
        if f.function.len() > MAX_FUNCTION {
            f.function = clip(&f.function, MAX_FUNCTION);
        }
        if self.tb.frames.len() == MAX_FRAMES {
            self.tb.frames.remove(0);
            self.tb.frames_dropped += 1;
        }
        self.tb.frames.push(f);
        self.want_code = true;
        self.idle = 0;
    }

    /// A line inside the traceback that is no frame, code or message: kept
    /// reading, up to a bound (a traceback never holds 40 such lines in a row).
    fn junk_inside(&mut self) -> Step {
        self.idle += 1;
        if self.idle > 40 {
            Step::Done(std::mem::take(&mut self.tb), false)
        } else {
            Step::More
        }
    }

    /// A line that is no frame nor code: the exception, once there are frames.
    fn exception_line(&mut self, t: &str) -> Step {
        if self.tb.innermost_first && self.tb.exception.is_some() {
            if self.tb.frames.is_empty() {
                // The banner's message, before its frames: `Type: message`.
                if let Some(kind) = self.tb.exception.take() {
                    if !kind.contains(':') {
                        self.tb.exception = Some(clip(&format!("{kind}: {t}"), 2000));
                        return Step::More;
                    }
                    self.tb.exception = Some(kind);
                }
                return self.junk_inside();
            }
            // The frames are over: the banner's traceback is complete.
            return Step::Done(std::mem::take(&mut self.tb), true);
        }
        if self.tb.frames.is_empty() {
            // A header followed by no frame: not a traceback after all.
            self.idle += 1;
            return if self.idle > 3 {
                Step::Done(std::mem::take(&mut self.tb), false)
            } else {
                Step::Ignored
            };
        }
        self.tb.exception = Some(self.spare.text(t, 2000));
        self.state = State::Message;
        self.idle = 0;
        Step::More
    }

    /// The frames part of an IPython traceback: frame lines, then numbered
    /// source lines of which the arrow's is the frame's line and code.
    fn ipython_frames(&mut self, text: &str, t: &str) -> Step {
        let ipython_header = ipython::header_exception(t);
        if ipython_header.is_some() || is_header(t) {
            if self.tb.frames.is_empty() {
                self.tb.header_exception = ipython_header.map(|n| clip(n, 100));
                return Step::More;
            }
            return Step::Done(std::mem::take(&mut self.tb), true);
        }
        if let Some(f) = ipython::parse_frame(t).or_else(|| parse_frame(t)) {
            self.push_frame(f);
            return Step::More;
        }
        if let Some((line, code)) = ipython::arrow_line(t) {
            if self.want_code {
                if let Some(f) = self.tb.frames.last_mut() {
                    if f.line == 0 {
                        f.line = line;
                    }
                    if f.line == line && !code.is_empty() {
                        f.code = Some(clip(code, 300));
                    }
                }
                self.want_code = false;
            }
            return Step::More;
        }
        if t.is_empty() || ipython::is_rule(t) {
            return Step::More;
        }
        let indented = is_indented(text);
        let context = ipython::context_line(text) || ipython::is_skip_note(t);
        if self.want_code && indented && !context {
            // `%xmode Plain` shows the code under its frame, as Python does.
            if let Some(f) = self.tb.frames.last_mut() {
                f.code = Some(clip(t, 300));
            }
            self.want_code = false;
            return Step::More;
        }
        if indented || context {
            // Context lines around the arrow, and code continued on more rows.
            return self.junk_inside();
        }
        self.exception_line(t)
    }
}

impl RowStep {
    /// `text.trim()`, for the `text` this was made of.
    pub fn trimmed<'a>(&self, text: &'a str) -> &'a str {
        text.get(self.trimmed.0..self.trimmed.1).unwrap_or("")
    }

    /// Whether the line is Python's header (not a reversed one).
    pub fn is_header(&self) -> bool {
        matches!(self.kind, Kind::Header)
    }

    /// Whether the line is known to be no chain marker (it is read by
    /// `step_known` itself: chain markers are left to `step`).
    pub fn no_chain(&self) -> bool {
        !matches!(self.kind, Kind::Other)
    }

    /// What `step` reads of `text` (a cleaned line, indentation kept).
    pub fn of(text: &str) -> Self {
        let t = text.trim();
        let start = text.len() - text.trim_start().len();
        let trimmed = (start, start + t.len());
        let indented = is_indented(text);
        // What sends `step` down another way whatever the state: IPython's
        // lines, a reversed header or a banner, a chain marker.
        let other = ipython::starts(t)
            || is_reversed_header(t)
            || CHAIN_MARKERS.iter().any(|m| t.starts_with(m));
        let kind = if other {
            Kind::Other
        } else if is_header(t) {
            Kind::Header
        } else if let Some((file, line, function)) = frame_parts(t) {
            Kind::Frame {
                file: file.into(),
                line,
                function: function.into(),
            }
        } else if t.is_empty() {
            Kind::Empty
        } else if indented {
            Kind::Indented {
                decoration: is_decoration(t),
            }
        } else {
            Kind::Other
        };
        RowStep { kind, trimmed }
    }
}

impl Builder {
    /// [`Builder::step`] of `text`, whose [`RowStep`] is `row`.
    pub fn step_known(&mut self, text: &str, row: &RowStep) -> Step {
        let t = row.trimmed(text);
        if self.ipython {
            return self.step(text);
        }
        match (self.state, &row.kind) {
            (_, Kind::Other) => self.step(text),
            (State::Frames, Kind::Header) => {
                if self.tb.frames.is_empty() {
                    self.tb.innermost_first = false;
                    return Step::More;
                }
                Step::Done(std::mem::take(&mut self.tb), true)
            }
            (
                State::Frames,
                Kind::Frame {
                    file,
                    line,
                    function,
                },
            ) => {
                let f = self.spare.frame(file, *line, function);
                self.push_frame(f);
                Step::More
            }
            (State::Frames, Kind::Empty) => Step::More,
            (State::Frames, Kind::Indented { decoration }) => self.code_line(t, *decoration),
            (State::Message, Kind::Header | Kind::Frame { .. } | Kind::Empty) => {
                Step::Done(std::mem::take(&mut self.tb), true)
            }
            (State::Message, Kind::Indented { .. }) => self.message_line(t),
        }
    }
}

impl Builder {
    /// An indented line in the frames: the last frame's code, or decoration.
    fn code_line(&mut self, t: &str, decoration: bool) -> Step {
        if self.want_code && !decoration {
            if !self.tb.frames.is_empty() {
                let code = self.spare.text(t, 300);
                if let Some(f) = self.tb.frames.last_mut() {
                    f.code = Some(code);
                }
            }
            self.want_code = false;
        }
        self.junk_inside()
    }

    /// A line of the exception's message.
    fn message_line(&mut self, t: &str) -> Step {
        let line = self.spare.text(t, 500);
        self.tb.message.push(line);
        if self.tb.message.len() >= MAX_MESSAGE_LINES {
            return Step::Done(std::mem::take(&mut self.tb), false);
        }
        Step::More
    }
}

/// Whether a line of the frames is indented (a code line or its carets).
fn is_indented(text: &str) -> bool {
    text.starts_with(' ') || text.starts_with('\t')
}

/// Whether an indented line (trimmed) carries nothing: caret lines
/// (3.11+) and `[Previous line repeated …]`.
fn is_decoration(t: &str) -> bool {
    t.bytes().all(|b| matches!(b, b'^' | b'~' | b' ')) || t.starts_with("[Previous line repeated")
}

/// The strings of tracebacks the reader dropped, refilled by the next
/// builder instead of allocated again: a job that logs a handled traceback
/// per sample makes thousands, of which the reader keeps the first and
/// the latest few (allocating and freeing their frames was a tenth of
/// reading them). Holds at most one traceback's worth, and the emptied
/// buffers of its frames and message (the next traceback's own, which
/// were allocated and grown for each traceback too).
#[derive(Debug, Default)]
pub struct Spare {
    frames: Vec<Frame>,
    texts: Vec<String>,
    /// Empty; given to the next builder's traceback as its own.
    frame_buf: Vec<Frame>,
    message_buf: Vec<String>,
}

impl Spare {
    /// Keeps the strings of a dropped traceback (up to one traceback's
    /// worth), and its buffers emptied.
    pub fn keep(&mut self, tb: Traceback) {
        let Traceback {
            mut frames,
            exception,
            mut message,
            ..
        } = tb;
        let room = MAX_FRAMES.saturating_sub(self.frames.len());
        self.frames.extend(frames.drain(..).take(room));
        let room = (MAX_FRAMES + MAX_MESSAGE_LINES + 1).saturating_sub(self.texts.len());
        let texts = exception.into_iter().chain(message.drain(..));
        self.texts.extend(texts.take(room));
        // `drain` empties them whatever `take` left.
        self.frame_buf = frames;
        self.message_buf = message;
    }

    /// Takes back what a finished builder left of the spare it was given
    /// (its buffers, grown to a traceback's size, and unused strings),
    /// where this spare holds nothing (the builder took it all): one rank's
    /// tracebacks then allocate nothing. A spare that holds something is
    /// kept as it is.
    pub fn reclaim(&mut self, left: Spare) {
        let holds = |s: &Spare| {
            s.frames.capacity()
                + s.texts.capacity()
                + s.frame_buf.capacity()
                + s.message_buf.capacity()
                > 0
        };
        if !holds(self) {
            *self = left;
        }
    }

    /// The frame `parse_frame` makes of these parts, in kept strings.
    fn frame(&mut self, file: &str, line: u64, function: &str) -> Frame {
        let Some(mut f) = self.frames.pop() else {
            return Frame {
                file: ipython::cell_of_file(file).unwrap_or_else(|| file.to_string()),
                line,
                function: function.to_string(),
                code: None,
            };
        };
        match ipython::cell_of_file(file) {
            Some(cell) => f.file = cell,
            None => {
                f.file.clear();
                f.file.push_str(file);
            }
        }
        f.line = line;
        f.function.clear();
        f.function.push_str(function);
        if let Some(code) = f.code.take() {
            self.texts.push(code);
        }
        f
    }

    /// A copy of `f`, in kept strings.
    fn copy(&mut self, f: &Frame) -> Frame {
        let Some(mut c) = self.frames.pop() else {
            return f.clone();
        };
        c.file.clone_from(&f.file);
        c.line = f.line;
        c.function.clone_from(&f.function);
        if let Some(code) = c.code.take() {
            self.texts.push(code);
        }
        c.code = f.code.as_deref().map(|code| self.text(code, usize::MAX));
        c
    }

    /// `clip(t, n)` in a kept string.
    fn text(&mut self, t: &str, n: usize) -> String {
        let mut s = self.texts.pop().unwrap_or_default();
        s.clear();
        clip_into(&mut s, t, n);
        s
    }
}

// A builder's body, saved and put in place again: a log that logs a
// handled traceback per sample repeats the rows after each header byte for
// byte, and a builder fresh from a header holds nothing that its next rows'
// steps read but the rows themselves, so what they leave is a function of
// the rows (the reader's `block` recognises the repeat).

/// A builder's state after its header and a run of rows, but for where it
/// started (input, line, rank, chained), which no step reads.
#[derive(Debug, Clone)]
pub struct Body {
    tb: Traceback,
    state: State,
    want_code: bool,
    idle: u32,
    ipython: bool,
}

impl Builder {
    /// Where its traceback starts: (input, line).
    pub fn start(&self) -> (usize, u64) {
        (self.tb.input, self.tb.line)
    }

    /// Whether it holds what `Builder::new` holds, as Python's header
    /// leaves it (`step` of the header changes none of it): what its next
    /// steps make then depends on their rows alone.
    pub fn is_fresh(&self) -> bool {
        let tb = &self.tb;
        tb.frames.is_empty()
            && tb.frames_dropped == 0
            && tb.exception.is_none()
            && tb.header_exception.is_none()
            && tb.message.is_empty()
            && !tb.innermost_first
            && self.state == State::Frames
            && !self.want_code
            && self.idle == 0
            && !self.ipython
    }

    /// Its state but for where it started (see [`Body`]).
    pub fn body(&self) -> Body {
        Body {
            tb: Traceback {
                rank: None,
                input: 0,
                line: 0,
                chained: false,
                ..self.tb.clone()
            },
            state: self.state,
            want_code: self.want_code,
            idle: self.idle,
            ipython: self.ipython,
        }
    }

    /// Puts `body` in place of a fresh builder's state ([`Builder::is_fresh`]),
    /// in its spare's strings: the builder is then as the rows `body` was
    /// saved after would have left it.
    pub fn put_body(&mut self, body: &Body) {
        let spare = &mut self.spare;
        let tb = &mut self.tb;
        tb.frames
            .extend(body.tb.frames.iter().map(|f| spare.copy(f)));
        tb.frames_dropped = body.tb.frames_dropped;
        tb.exception = body
            .tb
            .exception
            .as_deref()
            .map(|e| spare.text(e, usize::MAX));
        tb.header_exception.clone_from(&body.tb.header_exception);
        tb.message
            .extend(body.tb.message.iter().map(|m| spare.text(m, usize::MAX)));
        tb.innermost_first = body.tb.innermost_first;
        self.state = body.state;
        self.want_code = body.want_code;
        self.idle = body.idle;
        self.ipython = body.ipython;
    }
}

#[cfg(test)]
mod tests;
