//! The tracebacks IPython and Jupyter print (and users paste from a
//! notebook), read into the same frames as Python's own:
//!
//! ```text
//! RuntimeError                              Traceback (most recent call last)
//! Cell In[12], line 7                        (IPython 8.5+; `, in f(x)` inside a function)
//! Input In [12], in <cell line: 7>()         (IPython 8.0–8.4)
//! <ipython-input-12-3f2a9c1d> in <module>    (IPython ≤ 7)
//! ----> 7     out = model(**batch)           (the frame's line, numbered)
//! File /site-packages/torch/x.py:1518, in Module._call_impl(self, *args)   (IPython 8+)
//! /site-packages/torch/x.py in _call_impl(self, *input, **kwargs)          (IPython ≤ 7)
//! -> 1518     return forward_call(*args)
//! ```
//!
//! A cell's frame is named as IPython 8 names it, `Cell In[12]`, whatever
//! the version: the name of a place in the notebook, not of a file. The
//! line and the code come from the arrow line, so nothing is ever read
//! from a file for them.

use super::frame::Frame;

/// What a cell's frame is called (`Cell In[12]`), the name `%devassert
/// explain` and the guard give it too.
pub fn cell_name(count: &str) -> String {
    format!("Cell In[{count}]")
}

/// How an old kernel names a cell's file: `<ipython-input-12-3f2a9c1d>`.
const OLD_CELL: &str = "<ipython-input-";

/// The cell an old IPython's file name stands for (`<ipython-input-12-3f2a…>`,
/// which Python's own tracebacks in such a kernel name).
pub fn cell_of_file(file: &str) -> Option<String> {
    let rest = file.strip_prefix(OLD_CELL)?.strip_suffix('>')?;
    Some(cell_name(digits(rest.split('-').next()?)?))
}

/// `RuntimeError                              Traceback (most recent call last)`:
/// the exception's name, padded, before Python's header words.
pub fn is_header(t: &str) -> bool {
    header_exception(t).is_some()
}

/// The exception's name of IPython's header line (`RuntimeError` above).
pub fn header_exception(t: &str) -> Option<&str> {
    let at = HEADER.find(t.as_bytes())?;
    let name = t[..at].trim_end();
    let named = at > name.len()
        && !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.');
    named.then_some(name)
}

/// Asked of every line a traceback reads: the searcher is built once.
static HEADER: crate::device_line::Searcher =
    crate::device_line::searcher!(b"Traceback (most recent call last)");

/// Whether `t` holds Python's header anywhere (IPython puts a name before it).
pub fn holds_header(t: &str) -> bool {
    HEADER.find(t.as_bytes()).is_some()
}

/// The dashes IPython prints above the header.
pub fn is_rule(t: &str) -> bool {
    t.len() >= 20 && t.bytes().all(|b| b == b'-')
}

/// A line that names a frame in any of IPython's styles (trimmed). Its line
/// is 0 when the arrow line below it gives it (IPython ≤ 8.4).
pub fn parse_frame(t: &str) -> Option<Frame> {
    any_cell_frame(t).or_else(|| file_frame(t))
}

/// A cell's frame in any IPython's style.
fn any_cell_frame(t: &str) -> Option<Frame> {
    cell_frame(t)
        .or_else(|| input_frame(t))
        .or_else(|| old_cell_frame(t))
}

/// Whether a line may start a traceback by itself: a cell's frame is
/// unmistakable; a library frame (`File x.py:3, in f`, `x.py in f(a)`) is
/// only read after a header or a cell.
pub fn starts(t: &str) -> bool {
    is_header(t) || any_cell_frame(t).is_some()
}

/// A numbered source line under a frame: (the arrow's line, code) for the
/// line that ran (`----> 7     out = model(x)`, `-> 1518 return f()`),
/// `None` for the context lines around it.
pub fn arrow_line(t: &str) -> Option<(u64, &str)> {
    let rest = t.trim_start_matches('-');
    if rest.len() == t.len() {
        return None;
    }
    let rest = rest.strip_prefix('>')?.trim_start();
    // VS Code links the number: `---> [13](vscode-notebook-cell:?execution_count=11&line=13) acc = f(x)`.
    let linked = rest.strip_prefix('[');
    let rest = linked.unwrap_or(rest);
    let n = rest.bytes().take_while(u8::is_ascii_digit).count();
    let line = rest[..n].parse().ok()?;
    let code = match linked {
        Some(_) => rest[n..].strip_prefix("](")?.split_once(')')?.1,
        None => &rest[n..],
    };
    Some((line, code.trim()))
}

/// `      5 for batch in loader:`, a context line around the arrow line.
pub fn context_line(text: &str) -> bool {
    let t = text.trim_start();
    let n = t.bytes().take_while(u8::is_ascii_digit).count();
    n > 0 && text.len() > t.len() && (t.len() == n || t.as_bytes()[n] == b' ')
}

/// `[... skipping hidden 1 frame]`, `[... skipping similar frames: f at line 3 (97 times)]`,
/// and Colab's `11 frames` (the library frames it folds away).
pub fn is_skip_note(t: &str) -> bool {
    t.starts_with("[... skipping") || is_folded_frames(t)
}

/// Colab's `11 frames` line: not the exception line, which comes after it.
fn is_folded_frames(t: &str) -> bool {
    t.strip_suffix(" frames")
        .or_else(|| t.strip_suffix(" frame"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

fn frame(file: String, line: u64, function: &str) -> Frame {
    Frame {
        file,
        line,
        function: function.to_string(),
        code: None,
    }
}

/// `f(x, y)` → `f`: IPython prints the arguments after the function's name.
fn function_name(s: &str) -> &str {
    let s = s.trim();
    // `<cell line: 7>()` and `<listcomp>(.0)`: the name is the bracketed part.
    let end = if s.starts_with('<') {
        s.find('>').map_or(s.len(), |e| e + 1)
    } else {
        s.find('(').unwrap_or(s.len())
    };
    s[..end].trim()
}

/// Module-level code of a cell is `<module>`, as Python's own traceback
/// says (IPython 8.0–8.4 wrote `<cell line: 7>`, 8.5+ writes nothing).
fn cell_function(s: Option<&str>) -> &str {
    match s.map(function_name) {
        None | Some("") => "<module>",
        Some(f) if f.starts_with("<cell line") => "<module>",
        Some(f) => f,
    }
}

/// The function after `, in ` (`%xmode Plain` writes ` in `).
fn after_in(s: &str) -> Option<&str> {
    let (i, len) = match s.find(", in ") {
        Some(i) => (i, ", in ".len()),
        None => (s.find(" in ")?, " in ".len()),
    };
    Some(&s[i + len..])
}

fn digits(s: &str) -> Option<&str> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then_some(s)
}

/// `Cell In[12], line 7` or `Cell In[12], line 7, in f(x)`; VS Code links the
/// number: `Cell In[12], [line 7](vscode-notebook-cell:…)`.
fn cell_frame(t: &str) -> Option<Frame> {
    let rest = t.strip_prefix("Cell In[")?;
    let (count, rest) = rest.split_once(']')?;
    let count = digits(count)?;
    let rest = rest.strip_prefix(", ")?;
    let rest = rest
        .strip_prefix('[')
        .unwrap_or(rest)
        .strip_prefix("line ")?;
    let n = rest.bytes().take_while(u8::is_ascii_digit).count();
    let line = rest[..n].parse().ok()?;
    Some(frame(cell_name(count), line, cell_function(after_in(rest))))
}

/// `Input In [12], in <cell line: 7>()` (IPython 8.0–8.4).
fn input_frame(t: &str) -> Option<Frame> {
    let rest = t.strip_prefix("Input In [")?;
    let (count, rest) = rest.split_once(']')?;
    let count = digits(count)?;
    let function = rest.strip_prefix(", in ");
    Some(frame(cell_name(count), 0, cell_function(function)))
}

/// `<ipython-input-12-3f2a9c1d> in <module>` (IPython ≤ 7, `<module>()` in the oldest).
fn old_cell_frame(t: &str) -> Option<Frame> {
    // The name starts the line (`cell_of_file`) and holds no `>`: asked
    // first, most lines are not searched for the `>` (every line a
    // traceback's message reads is asked whether it starts IPython's).
    if !t.starts_with(OLD_CELL) {
        return None;
    }
    let end = t.find('>')? + 1;
    let cell = cell_of_file(&t[..end])?;
    let function = t[end..].strip_prefix(" in ")?;
    Some(frame(cell, 0, cell_function(Some(function))))
}

/// A file's frame: `File /x/module.py:1518, in Module._call_impl(self, *args)`
/// (IPython 8+; VS Code links the path: `File [/x/module.py:1518](…), in …`)
/// or `/x/module.py in _call_impl(self, *input)` (IPython ≤ 7).
fn file_frame(t: &str) -> Option<Frame> {
    if let Some(rest) = t.strip_prefix("File ") {
        // Python's own `File "x.py", line 3` is not this.
        if rest.starts_with('"') {
            return None;
        }
        let (place, function) = match rest.strip_prefix('[') {
            Some(linked) => {
                let (place, after) = linked.split_once("](")?;
                (place, after.split_once("), in ").map(|(_, f)| f))
            }
            None => match rest.split_once(", in ").or_else(|| rest.split_once(" in ")) {
                Some((p, f)) => (p, Some(f)),
                None => (rest, None),
            },
        };
        let (file, line) = place.rsplit_once(':')?;
        let line = digits(line)?.parse().ok()?;
        if file.is_empty() {
            return None;
        }
        return Some(frame(
            file.to_string(),
            line,
            function.map_or("", function_name),
        ));
    }
    let (file, function) = t.split_once(" in ")?;
    let plausible = file.ends_with(".py") && !file.contains(' ') && !function.is_empty();
    let name = function_name(function);
    let identifier = name.starts_with('<')
        || name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.');
    (plausible && identifier && !name.is_empty()).then(|| frame(file.to_string(), 0, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `old_cell_frame` as it was, searching every line for its `>`.
    fn old_cell_frame_searched(t: &str) -> Option<Frame> {
        let end = t.find('>')? + 1;
        let cell = cell_of_file(&t[..end])?;
        let function = t[end..].strip_prefix(" in ")?;
        Some(frame(cell, 0, cell_function(Some(function))))
    }

    proptest::proptest! {
        /// The check of the line's start turns away no old cell's frame:
        /// lines of its parts and their near misses (about one line in
        /// twelve reads as a frame).
        #[test]
        fn an_old_cell_frame_is_read_as_searched(
            pieces in (
                proptest::sample::select(vec!["<ipython-input-", "<ipython-input-", "<ipython-", "", " <"]),
                proptest::sample::select(vec!["12", "3-aa", "12-3f2a", "", "é"]),
                proptest::sample::select(vec![">", ">", "", "-"]),
                proptest::sample::select(vec![" in ", " in ", ""]),
                proptest::sample::select(vec!["<module>", "<module>()", "f(x)", "", ">"]),
            ),
        ) {
            let pieces = [pieces.0, pieces.1, pieces.2, pieces.3, pieces.4];
            let t = pieces.concat();
            proptest::prop_assert_eq!(old_cell_frame(&t), old_cell_frame_searched(&t), "{:?}", t);
        }
    }

    /// (file, line, function) of a frame.
    type Place<'a> = (&'a str, u64, &'a str);

    fn place(t: &str) -> Option<(String, u64, String)> {
        parse_frame(t).map(|f| (f.file, f.line, f.function))
    }

    #[test]
    fn frames_of_every_style() {
        let cases: &[(&str, Option<Place>)] = &[
            ("Cell In[12], line 7", Some(("Cell In[12]", 7, "<module>"))),
            (
                "Cell In[3], line 5, in lookup(table, ids)",
                Some(("Cell In[3]", 5, "lookup")),
            ),
            (
                "Cell In[3], line 5, in <listcomp>(.0)",
                Some(("Cell In[3]", 5, "<listcomp>")),
            ),
            (
                "Cell In[11], [line 13](vscode-notebook-cell:?execution_count=11&line=13)",
                Some(("Cell In[11]", 13, "<module>")),
            ),
            (
                "Input In [12], in <cell line: 7>()",
                Some(("Cell In[12]", 0, "<module>")),
            ),
            ("Input In [4], in f(x)", Some(("Cell In[4]", 0, "f"))),
            (
                "<ipython-input-12-3f2a9c1d7e2b> in <module>",
                Some(("Cell In[12]", 0, "<module>")),
            ),
            (
                "<ipython-input-3-aa> in <module>()",
                Some(("Cell In[3]", 0, "<module>")),
            ),
            (
                "File /opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py:1518, in Module._wrapped_call_impl(self, *args, **kwargs)",
                Some((
                    "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py",
                    1518,
                    "Module._wrapped_call_impl",
                )),
            ),
            (
                "File ~/work/model.py:42",
                Some(("~/work/model.py", 42, "")),
            ),
            (
                "File [~/work/model.py:42](~/work/model.py:42), in Net.forward(self, x)",
                Some(("~/work/model.py", 42, "Net.forward")),
            ),
            (
                "/opt/conda/lib/python3.7/site-packages/torch/nn/modules/module.py in _call_impl(self, *input, **kwargs)",
                Some((
                    "/opt/conda/lib/python3.7/site-packages/torch/nn/modules/module.py",
                    0,
                    "_call_impl",
                )),
            ),
            (
                "/tmp/ipykernel_1234/567.py in lookup(table, ids)",
                Some(("/tmp/ipykernel_1234/567.py", 0, "lookup")),
            ),
            // `%xmode Plain`.
            (
                "Cell In[1], line 6 in lookup",
                Some(("Cell In[1]", 6, "lookup")),
            ),
            (
                "File /tmp/pkg/lib/__init__.py:2 in call",
                Some(("/tmp/pkg/lib/__init__.py", 2, "call")),
            ),
            ("File \"train.py\", line 5, in f", None),
            ("Cell In[x], line 3", None),
            ("Cell In[3]", None),
            ("loss went up in epoch 3", None),
            ("see model.py in the repo for details", None),
            ("File :12, in f", None),
        ];
        for (line, want) in cases {
            let want = want.map(|(f, l, func)| (f.to_string(), l, func.to_string()));
            assert_eq!(place(line), want, "{line}");
        }
        // Every cut of every line (a log ends anywhere) reads without a panic.
        for (line, _) in cases {
            for (at, _) in line.char_indices() {
                for part in [&line[..at], &line[at..]] {
                    let _ = (parse_frame(part), starts(part), arrow_line(part));
                    let _ = (context_line(part), is_header(part), cell_of_file(part));
                }
            }
        }
    }

    #[test]
    fn colabs_folded_frames_are_a_skip_note() {
        assert!(is_skip_note("11 frames"));
        assert!(is_skip_note("1 frame"));
        assert!(!is_skip_note("frames"));
        assert!(!is_skip_note("IndexError: 11 frames"));
        assert!(!is_skip_note("x1 frames"));
    }

    #[test]
    fn headers_and_numbered_lines() {
        assert!(is_header(
            "RuntimeError                              Traceback (most recent call last)"
        ));
        assert!(is_header(
            "torch.cuda.OutOfMemoryError               Traceback (most recent call last)"
        ));
        assert!(!is_header("Traceback (most recent call last):"));
        assert!(!is_header("see: Traceback (most recent call last)"));
        assert_eq!(
            arrow_line("----> 7     out = model(**batch)"),
            Some((7, "out = model(**batch)"))
        );
        assert_eq!(
            arrow_line("-> 1518     return self._call_impl(*args, **kwargs)"),
            Some((1518, "return self._call_impl(*args, **kwargs)"))
        );
        assert_eq!(arrow_line("--> 232 x = 1"), Some((232, "x = 1")));
        assert_eq!(
            arrow_line("---> [13](vscode-notebook-cell:?execution_count=11&line=13) acc = f(y)"),
            Some((13, "acc = f(y)"))
        );
        assert_eq!(arrow_line("---> [13](vscode-notebook-cell:"), None);
        assert_eq!(arrow_line("---------"), None);
        assert_eq!(arrow_line("-> x"), None);
        assert!(context_line("      5 for batch in loader:"));
        assert!(context_line("   1517 else:"));
        assert!(!context_line("5 for batch"));
        assert!(!context_line("    out = model(x)"));
        assert!(is_rule(
            "---------------------------------------------------------------------------"
        ));
    }
}
