//! Python tracebacks, one builder per rank (ranks interleave their output):
//! `Traceback (most recent call last):`, the `File "x.py", line N, in f`
//! frames with their code lines, the exception line and the lines of its
//! message, and the chaining markers between tracebacks.

/// Frames kept per traceback: the innermost ones matter, deep recursion does not.
const MAX_FRAMES: usize = 96;
/// Message lines kept after the exception line.
const MAX_MESSAGE_LINES: usize = 12;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub file: String,
    pub line: u64,
    pub function: String,
    pub code: Option<String>,
}

impl Frame {
    /// A frame of the user's own code: not the standard library, not an
    /// installed package, not PyTorch or Transformers.
    pub fn is_user(&self) -> bool {
        let f = self.file.replace('\\', "/");
        let library = [
            "site-packages/",
            "dist-packages/",
            "/torch/",
            "/transformers/",
            "/lib/python",
            "<frozen",
            "/conda/lib/",
            "/usr/lib/",
        ];
        !(library.iter().any(|l| f.contains(l)) || f.starts_with("torch/"))
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Traceback {
    pub frames: Vec<Frame>,
    /// Frames dropped from the outer end to keep the size bounded.
    pub frames_dropped: u64,
    /// `RuntimeError: CUDA error: device-side assert triggered`
    pub exception: Option<String>,
    /// The lines after the exception line (hints, DSA line, C++ frames).
    pub message: Vec<String>,
    pub rank: Option<i64>,
    /// Position of the first line: (input, 1-based line).
    pub input: usize,
    pub line: u64,
    /// Another traceback led to this one (`During handling…`, `…direct cause…`).
    pub chained: bool,
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
    state: State,
    /// The last frame still waits for its code line.
    want_code: bool,
    /// Lines seen since the last frame or message line (bounds junk inside).
    idle: u32,
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

/// `File "x.py", line 12, in f` (trimmed).
pub fn parse_frame(t: &str) -> Option<Frame> {
    let rest = t.strip_prefix("File \"")?;
    let q = rest.find("\", line ")?;
    let file = &rest[..q];
    let after = &rest[q + "\", line ".len()..];
    let n = after.bytes().take_while(u8::is_ascii_digit).count();
    let line = after[..n].parse().ok()?;
    let function = after[n..]
        .strip_prefix(", in ")
        .map(str::trim)
        .unwrap_or("");
    Some(Frame {
        file: file.to_string(),
        line,
        function: function.to_string(),
        code: None,
    })
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
            state: State::Frames,
            want_code: false,
            idle: 0,
        }
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
        let indented = text.starts_with(' ') || text.starts_with('\t');
        match self.state {
            State::Frames => {
                if is_header(t) {
                    if self.tb.frames.is_empty() {
                        return Step::More;
                    }
                    return Step::Done(std::mem::take(&mut self.tb), true);
                }
                if let Some(f) = parse_frame(t) {
                    if self.tb.frames.len() == MAX_FRAMES {
                        self.tb.frames.remove(0);
                        self.tb.frames_dropped += 1;
                    }
                    self.tb.frames.push(f);
                    self.want_code = true;
                    self.idle = 0;
                    return Step::More;
                }
                if t.is_empty() {
                    return Step::More;
                }
                if indented {
                    // The code line of the last frame; caret lines (3.11+) and
                    // `[Previous line repeated …]` carry nothing.
                    let decoration = t.bytes().all(|b| matches!(b, b'^' | b'~' | b' '))
                        || t.starts_with("[Previous line repeated");
                    if self.want_code && !decoration {
                        if let Some(f) = self.tb.frames.last_mut() {
                            f.code = Some(t.chars().take(300).collect());
                        }
                        self.want_code = false;
                    }
                    self.idle += 1;
                    return if self.idle > 40 {
                        Step::Done(std::mem::take(&mut self.tb), false)
                    } else {
                        Step::More
                    };
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
                self.tb.exception = Some(t.chars().take(2000).collect());
                self.state = State::Message;
                self.idle = 0;
                Step::More
            }
            State::Message => {
                if t.is_empty()
                    || is_header(t)
                    || parse_frame(t).is_some()
                    || CHAIN_MARKERS.iter().any(|m| t.starts_with(m))
                {
                    return Step::Done(std::mem::take(&mut self.tb), true);
                }
                self.tb.message.push(t.chars().take(500).collect());
                if self.tb.message.len() >= MAX_MESSAGE_LINES {
                    return Step::Done(std::mem::take(&mut self.tb), false);
                }
                Step::More
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lines: &[&str]) -> Vec<Traceback> {
        let mut out = Vec::new();
        let mut b: Option<Builder> = None;
        for l in lines {
            loop {
                let t = l.trim();
                if b.is_none() {
                    if is_header(t) || parse_frame(t).is_some() {
                        b = Some(Builder::new(0, 1, None, false));
                    } else {
                        break;
                    }
                }
                let Some(cur) = b.as_mut() else { break };
                match cur.step(l) {
                    Step::More | Step::Ignored => break,
                    Step::Done(tb, refeed) => {
                        out.push(tb);
                        b = None;
                        if !refeed {
                            break;
                        }
                        if !(is_header(t) || parse_frame(t).is_some()) {
                            break;
                        }
                    }
                }
            }
        }
        out.extend(b.map(Builder::finish));
        out
    }

    #[test]
    fn frames_code_and_message() {
        let tbs = run(&[
            "Traceback (most recent call last):",
            "  File \"train.py\", line 97, in main",
            "    loss.item()",
            "    ^^^^^^^^^^^",
            "  File \"/usr/lib/python3.10/site-packages/torch/nn/modules/module.py\", line 1501, in _call_impl",
            "    return forward_call(*args, **kwargs)",
            "RuntimeError: CUDA error: device-side assert triggered",
            "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
            "",
            "Traceback (most recent call last):",
        ]);
        assert_eq!(tbs.len(), 2);
        let tb = &tbs[0];
        assert_eq!(tb.frames.len(), 2);
        assert_eq!(tb.frames[0].code.as_deref(), Some("loss.item()"));
        assert_eq!(tb.user_frame().map(|f| f.line), Some(97));
        assert_eq!(
            tb.exception.as_deref(),
            Some("RuntimeError: CUDA error: device-side assert triggered")
        );
        assert_eq!(tb.message.len(), 1);
    }
}
