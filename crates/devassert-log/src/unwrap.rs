//! Terminal-wrapped logs: a log copied from a terminal (or a CI viewer) is
//! hard-wrapped at its width, so one assertion line becomes two to four
//! rows, broken anywhere (`…TensorInfo<T, In` / `dexType>, …`, before
//! ` failed.`), the first rows sometimes padded with spaces. A row that holds
//! part of a device line but does not parse as one on its own is joined with
//! its neighbours when the joined text parses where the parts do not.

use crate::device_line::{self, DeviceLine};
use crate::errors;
use crate::traceback;

/// A row shorter than this is not a wrapped one (terminals are wider).
pub const MIN_WIDTH: usize = 60;
/// Rows one device line spans at most (a prefixed THC signature at 80 columns: five).
pub const MAX_ROWS: usize = 6;

/// The row as text, without its line end.
pub fn row(raw: &[u8]) -> std::borrow::Cow<'_, str> {
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    crate::clean::lossy(raw)
}

/// Whether a row may continue on the next one: as wide as a terminal.
pub fn full_width(raw: &[u8]) -> bool {
    raw.strip_suffix(b"\r").unwrap_or(raw).len() >= MIN_WIDTH
}

/// Whether a row may go on in the next: as wide as a terminal, or padded
/// with spaces to its width by a word-wrapping viewer.
fn may_continue(raw: &[u8]) -> bool {
    full_width(raw) || raw.ends_with(b" ")
}

/// Whether a row starts with a launcher or logger prefix (`[rank0]:`,
/// `(Worker pid=…)`, `ERROR 05-14 10:22:33 [x.py:1]`): in a log whose every
/// line carries one, a row without one continues the row before it.
pub fn prefixed(row: &str) -> bool {
    crate::clean::strip_prefixes(row).0.len() < row.len()
}

/// Whether a line says something the reader parses behind its prefixes: a
/// whole frame, a traceback header, a host error, a device line.
fn readable(s: &str) -> bool {
    let b = crate::clean::strip_prefixes(s).0.trim();
    frame_done(b) || traceback::is_header(b) || errors::classify(b).is_some() || score(b).0 > 0
}

/// Whether a prefixed row as wide as the terminal may be cut: alone it says
/// nothing the reader parses (joined, it must).
pub fn prefixed_cut(row: &str) -> bool {
    prefixed(row) && !readable(row)
}

/// The columns a row fills on a terminal: its escape sequences take none,
/// an East Asian wide character two.
pub fn columns(row: &str) -> usize {
    let wide = |c: char| {
        matches!(u32::from(c),
            0x1100..=0x115f | 0x2e80..=0xa4cf | 0xac00..=0xd7a3 | 0xf900..=0xfaff
            | 0xfe30..=0xfe4f | 0xff00..=0xff60 | 0xffe0..=0xffe6 | 0x20000..=0x3fffd)
    };
    crate::clean::strip_escapes(row)
        .chars()
        .map(|c| if wide(c) { 2 } else { 1 })
        .sum()
}

/// Two rows as one: a padded first row (a word-wrapping terminal) broke at
/// a space, a full one anywhere.
fn join(a: &str, b: &str) -> String {
    let t = a.trim_end();
    if t.len() < a.len() {
        format!("{t} {b}")
    } else {
        format!("{a}{b}")
    }
}

/// Whether a row holds a piece of a device assertion line (one search for
/// all the markers: every row a traceback holds open is asked). No marker
/// holds a digit: the reader keeps unmarked rows by shape (`quiet`).
pub fn has_marker(row: &str) -> bool {
    static MARKERS: std::sync::OnceLock<Option<aho_corasick::AhoCorasick>> =
        std::sync::OnceLock::new();
    let markers = [
        "ssertion",
        ".cu",
        "block: [",
        "thread: [",
        "global id: [",
        "local id: [",
        // The end of an assertion whose word `Assertion` the break cut.
        "` failed",
        "' failed",
    ];
    match MARKERS.get_or_init(|| aho_corasick::AhoCorasick::new(markers).ok()) {
        Some(ac) => ac.is_match(row),
        None => markers.iter().any(|m| row.contains(m)),
    }
}

/// A parsed device line that stands on its own (a place or coordinates).
pub fn whole(d: &DeviceLine<'_>) -> bool {
    d.file.is_some() || d.block.is_some() || d.rocm
}

/// How well `text` parses: whole device lines, the first one's path
/// length, and the length of a path left dangling at its end (the
/// assertion follows on the next line of the log).
fn score(text: &str) -> (usize, usize, usize) {
    let found = device_line::parse_all(text);
    let n = found.iter().filter(|d| whole(d)).count();
    let path = found
        .iter()
        .find(|d| whole(d))
        .and_then(|d| d.file)
        .map_or(0, str::len);
    let dangling = device_line::dangling_path(text).map_or(0, str::len);
    (n, path, dangling)
}

/// Whether a row's first whole device line starts with a path that may be
/// the tail of one broken on the row before (`ing.cu:1289: …`).
pub fn path_may_be_cut(row: &str) -> bool {
    let t = row.trim_start();
    let first = t.split_whitespace().next().unwrap_or("");
    if !first.contains(':') {
        // No place at the start: a row that begins inside the coordinates or the assertion.
        return !t.starts_with("block: [");
    }
    let b = first.as_bytes();
    let rooted = matches!(b.first(), Some(b'/' | b'\\' | b'[' | b'(' | b'`'))
        || first.starts_with("./")
        || first.starts_with("../")
        || (b.len() > 2
            && b[0].is_ascii_alphabetic()
            && b[1] == b':'
            && matches!(b[2], b'/' | b'\\'))
        || first.starts_with("unknown:");
    !rooted
}

/// What kind of cut row is waiting for the rest of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A device assertion line whose assertion has not closed yet.
    Device,
    /// A frame's `File "…", line` without its `, in f`.
    Frame,
    /// The code line under a frame.
    Code,
    /// A whole assertion with no place (XPU's `AssertHandler::printMessage`):
    /// the place may follow alone on the next row.
    Placeless,
    /// A prefixed row as wide as the widest row (the terminal's width, given,
    /// in [`columns`]): the rows after it without a prefix are the rest of its
    /// line.
    Prefixed(usize),
}

/// What the next row does to a waiting one.
pub enum Resume {
    /// The joined text is whole: read it as one line.
    Joined(String),
    /// Still cut: wait for one more row.
    More(String),
    /// The next row starts something else: read the waiting text alone.
    Apart,
}

fn frame_done(s: &str) -> bool {
    let (body, _) = crate::clean::strip_prefixes(s);
    traceback::frame_parts(body.trim()).is_some_and(|(_, _, function)| !function.is_empty())
}

/// [`cut_marked`], finding the device marker itself.
#[cfg(test)]
pub fn cut(cur: &str, in_traceback: bool) -> Option<Kind> {
    cut_marked(cur, in_traceback, has_marker(cur))
}

/// Whether row `cur` may go on in the next row, and as what: it is as wide
/// as a terminal and does not parse alone. `in_traceback`: a traceback is
/// being read (a code row is only waited on inside one). `marked`: whether
/// it holds a device marker ([`has_marker`]; the reader knows already).
pub fn cut_marked(cur: &str, in_traceback: bool, marked: bool) -> Option<Kind> {
    let last = marked.then(|| device_line::parse_last_with(cur, device_line::Ends::default()));
    cut_after(cur, in_traceback, last)
}

/// [`cut_marked`] once the row's assertions are walked: `last` is the
/// row's last assertion occurrence (`device_line::parse_last_with`) when it
/// holds a device marker, found by that walk or by one shown to end where
/// it does (`reader::glued`).
pub fn cut_after(
    cur: &str,
    in_traceback: bool,
    last: Option<Option<DeviceLine<'_>>>,
) -> Option<Kind> {
    if let Some(last) = last {
        if last.as_ref().is_some_and(|d| !whole(d)) {
            return Some(Kind::Placeless);
        }
        // A path the log itself left dangling before the coordinates is
        // reassembled by the reader (other output may sit between them).
        let cut = last.is_none()
            && may_continue(cur.as_bytes())
            && device_line::dangling_path(cur).is_none();
        if cut {
            return Some(Kind::Device);
        }
        if last.is_some() {
            return None;
        }
    }
    if !full_width(cur.as_bytes()) {
        return None;
    }
    // Behind a launcher prefix, the frame or code line is what follows it.
    let (body, _) = crate::clean::strip_prefixes(cur);
    let t = body.trim_start();
    if t.starts_with("File \"") {
        return (!frame_done(t)).then_some(Kind::Frame);
    }
    (in_traceback && t.len() < body.len()).then_some(Kind::Code)
}

/// Row `next` after a waiting `text` of `rows` rows.
pub fn resume(kind: Kind, text: &str, rows: usize, next: &str) -> Resume {
    // Made only where a row goes on: most waiting rows end apart.
    let joined = || join(text, next);
    let more = |j: String| {
        if may_continue(next.as_bytes()) && rows + 1 < MAX_ROWS {
            Resume::More(j)
        } else {
            Resume::Apart
        }
    };
    match kind {
        Kind::Prefixed(width) => {
            // In a log whose lines all carry a prefix, a row without one goes
            // on with the row before, unless it is a line of its own. The rows
            // a terminal wraps one line into are never wider than the first.
            let n = next.trim();
            let cols = columns(next);
            if n.is_empty() || prefixed(next) || cols > width {
                return Resume::Apart;
            }
            let joined = if rows == 1 && crate::clean::strip_prefixes(text).0.trim().is_empty() {
                // The prefix alone filled the row; the rest of that row was
                // the line's indentation, which a wrapper may have dropped.
                let own = looks_like_exception(n) || traceback::is_header(n);
                format!("{} {}{next}", text.trim_end(), if own { "" } else { " " })
            } else if readable(next) || traceback::CHAIN_MARKERS.iter().any(|m| n.starts_with(m)) {
                return Resume::Apart;
            } else {
                joined()
            };
            if cols == width && rows + 1 < MAX_ROWS && !readable(&joined) {
                Resume::More(joined)
            } else {
                Resume::Joined(joined)
            }
        }
        Kind::Placeless => {
            // The place alone on the next row, or the rest of a place the terminal cut.
            let placed = |t: &String| {
                device_line::parse_all(t)
                    .last()
                    .is_some_and(|d| d.file.is_some())
            };
            [joined(), format!("{} {}", text.trim_end(), next.trim())]
                .into_iter()
                .find(placed)
                .map_or(Resume::Apart, Resume::Joined)
        }
        Kind::Device => {
            let joined = joined();
            if score(&joined).0 > 0 {
                Resume::Joined(joined)
            } else {
                more(joined)
            }
        }
        Kind::Frame => {
            if prefixed(next) {
                return Resume::Apart;
            }
            let joined = joined();
            if frame_done(&joined) {
                Resume::Joined(joined)
            } else if rows < 3 {
                more(joined)
            } else {
                Resume::Apart
            }
        }
        Kind::Code => {
            // The code under a frame is indented; a row after it that is not,
            // and is no frame, header or exception, is the rest of it.
            let n = next.trim();
            let starts_new = next.starts_with([' ', '\t'])
                || prefixed(next)
                || n.is_empty()
                || n.starts_with("File \"")
                || traceback::is_header(n)
                || traceback::CHAIN_MARKERS.iter().any(|m| n.starts_with(m))
                || traceback::ipython_line(n)
                || looks_like_exception(n);
            if starts_new {
                Resume::Apart
            } else {
                Resume::Joined(joined())
            }
        }
    }
}

/// `RuntimeError: …`, `torch.AcceleratorError: …`, `KeyboardInterrupt`.
fn looks_like_exception(t: &str) -> bool {
    let name = t.split([':', ' ']).next().unwrap_or("");
    let last = name.rsplit('.').next().unwrap_or("");
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
        && ["Error", "Exception", "Warning", "Interrupt", "Exit"]
            .iter()
            .any(|k| last.ends_with(k))
}

/// Row `cur` (or rows already joined) with the rows before it that the
/// terminal cut off its start (`…/native/cuda/Loss.c` / `u:95: operator(): …`),
/// when that makes it parse better. `before` holds the rows before it,
/// nearest last.
pub fn backward<R: AsRef<[u8]>>(before: &[R], cur: &str) -> Option<String> {
    if !path_may_be_cut(cur) {
        return None;
    }
    let alone = score(cur);
    let mut best = alone;
    let mut text = None;
    let mut t = cur.to_string();
    for (i, prev) in before.iter().rev().take(MAX_ROWS - 1).enumerate() {
        let prev = prev.as_ref();
        // A log may break the line itself right before the coordinates
        // (`…Kernel.cu:367:` / `block: […]…`): that row need not be full.
        let log_break = i == 0 && device_line::continues_path(cur);
        if !full_width(prev) && !log_break {
            break;
        }
        let p = row(prev);
        if score(&p).0 > 0 {
            break;
        }
        t = join(&p, &t);
        let s = score(&t);
        if s.0 > best.0
            || (s.0 == best.0 && s.0 > 0 && s.1 > best.1)
            || (s.0 == 0 && best.0 == 0 && s.2 > best.2)
        {
            text = Some(t.clone());
            best = s;
        }
    }
    text
}

/// Up to `MAX_ROWS - 1` rows before `region[start..]` (nearest last),
/// continuing into `earlier` (the rows before the region, nearest last).
pub fn rows_before(region: &[u8], start: usize, earlier: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    let mut at = start;
    while out.len() < MAX_ROWS - 1 && at > 0 {
        let e = at - 1;
        let s = memchr::memrchr(b'\n', &region[..e]).map_or(0, |i| i + 1);
        out.push(region[s..e].to_vec());
        at = s;
    }
    if at == 0 {
        let need = (MAX_ROWS - 1).saturating_sub(out.len());
        out.extend(earlier.iter().rev().take(need).cloned());
    }
    out.reverse();
    out
}

/// What the rows after `region` (whole rows, each ending in `\n`) look
/// back at: its last rows, continuing into `earlier`.
pub fn keep_last(region: &[u8], earlier: &mut Vec<Vec<u8>>) {
    if !region.is_empty() {
        *earlier = rows_before(region, region.len(), earlier);
    }
}

/// One more row (a line completed from pieces) to look back at.
pub fn keep_row(row: &[u8], earlier: &mut Vec<Vec<u8>>) {
    earlier.push(row.to_vec());
    if earlier.len() > MAX_ROWS - 1 {
        earlier.remove(0);
    }
}

#[cfg(test)]
mod tests;
