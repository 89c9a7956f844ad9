//! What a run of rows leaves in a builder that a header has just started,
//! saved once and put in place again: a log that logs a handled traceback
//! per sample repeats the rows after each header byte for byte, and a
//! builder fresh from a header holds nothing that its next rows' steps
//! read but the rows themselves, so what they leave is a function of the
//! rows (the reader's `block` recognises the repeat).

use super::{Builder, Frame, State, Traceback};

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
        tb.exception = body.tb.exception.as_deref().map(|e| spare.copy_text(e));
        tb.header_exception.clone_from(&body.tb.header_exception);
        tb.message
            .extend(body.tb.message.iter().map(|m| spare.copy_text(m)));
        tb.innermost_first = body.tb.innermost_first;
        self.state = body.state;
        self.want_code = body.want_code;
        self.idle = body.idle;
        self.ipython = body.ipython;
    }
}

impl super::Spare {
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
        c.code = f.code.as_deref().map(|code| self.copy_text(code));
        c
    }

    /// A copy of `t`, in a kept string.
    fn copy_text(&mut self, t: &str) -> String {
        let mut s = self.texts.pop().unwrap_or_default();
        s.clear();
        s.push_str(t);
        s
    }
}
