//! Whether the program was a notebook: the place an IPython / Jupyter
//! traceback names.

/// The place an IPython / Jupyter traceback names: `Cell In[12], line 3`
/// (IPython 8.5+; VS Code links the line number: `[line 3](vscode-…)`),
/// `Input In [3]` (IPython 8.0–8.4), `<ipython-input-3-…>` (older
/// IPython), or a cell's code file
/// `/tmp/ipykernel_1234/567.py` (a function defined in a cell), or Python's
/// frame of a cell IPython named (`File "Cell In[12]", line 3`), cut to what
/// identifies it.
pub(super) fn notebook_place(t: &str) -> Option<String> {
    // A cell's place starts the line (`Cell In[`, `Input In [`, `File
    // "Cell In[`), and the others hold a `<` or a `_` (`<ipython-input-`,
    // `/ipykernel_`): one scan turns away the lines that start otherwise and
    // hold neither, as most do, instead of `place`'s two searches (the two
    // rows of every logged traceback that never repeat are read in full).
    if !may_hold_place(t) {
        return None;
    }
    place(t)
}

/// Whether `t` may hold a notebook place: it starts with `C`, `I` or `F`,
/// or holds a `<` or a `_` (a function of its shape: no digit is read).
pub(super) fn may_hold_place(t: &str) -> bool {
    let b = t.as_bytes();
    matches!(b.first(), Some(b'C' | b'I' | b'F')) || memchr::memchr2(b'<', b'_', b).is_some()
}

/// [`notebook_place`] without its first scan.
fn place(t: &str) -> Option<String> {
    // Python's own frame of a cell IPython named (`%devassert explain` sends these).
    let cell = t.strip_prefix("File \"").unwrap_or(t);
    if let Some(rest) = cell.strip_prefix("Cell In[") {
        let n = rest.find(']')?;
        let digits = !rest[..n].is_empty() && rest[..n].bytes().all(|b| b.is_ascii_digit());
        return digits.then(|| format!("Cell In[{}]", &rest[..n]));
    }
    if let Some(rest) = t.strip_prefix("Input In [") {
        let n = rest.find(']')?;
        let digits = !rest[..n].is_empty() && rest[..n].bytes().all(|b| b.is_ascii_digit());
        return digits.then(|| format!("Input In [{}]", &rest[..n]));
    }
    use crate::device_line::{searcher, Searcher};
    // Built once: a `find` builds its searcher on every line read.
    static INPUT: Searcher = searcher!(b"<ipython-input-");
    static KERNEL: Searcher = searcher!(b"/ipykernel_");
    if let Some(at) = INPUT.find(t.as_bytes()) {
        let end = t[at..].find('>')?;
        return Some(t[at..=at + end].to_string());
    }
    let at = KERNEL.find(t.as_bytes())? + 1;
    let end = t[at..].find(|c: char| c == '"' || c == ',' || c.is_whitespace());
    let place = &t[at..end.map_or(t.len(), |e| at + e)];
    let file = place.strip_prefix("ipykernel_")?;
    let (pid, rest) = file.split_once('/')?;
    (pid.bytes().all(|b| b.is_ascii_digit()) && rest.contains(".py")).then(|| place.to_string())
}

#[cfg(test)]
mod notebook_tests {
    use super::notebook_place;

    #[test]
    fn notebook_places() {
        let cases = [
            ("Cell In[12], line 3", Some("Cell In[12]")),
            (
                "Cell In[11], [line 13](vscode-notebook-cell:?execution_count=11&line=13)",
                Some("Cell In[11]"),
            ),
            (
                "<ipython-input-7-3f2a9c1d> in <module>",
                Some("<ipython-input-7-3f2a9c1d>"),
            ),
            (
                "File \"/tmp/ipykernel_4021/1893452.py\", line 5, in f",
                Some("ipykernel_4021/1893452.py"),
            ),
            (
                "File /tmp/ipykernel_77/12.py:9, in g(x)",
                Some("ipykernel_77/12.py:9"),
            ),
            ("Input In [12], in <cell line: 7>()", Some("Input In [12]")),
            (
                "File \"Cell In[4]\", line 2, in <module>",
                Some("Cell In[4]"),
            ),
            ("Cell In[x], line 3", None),
            ("File \"train.py\", line 5, in f", None),
        ];
        for (line, want) in cases {
            assert_eq!(notebook_place(line).as_deref(), want, "{line}");
        }
    }

    proptest::proptest! {
        /// The first scan turns away no line that names a place: lines of
        /// pieces of places, cut anywhere, read as `place` reads them.
        #[test]
        fn the_scan_turns_away_no_place(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "Cell In", "[12]", "Cell In[", "In [", "Input In ", "Input In [7]", "<ipython-input-",
                "3-ab>", "/tmp/ipykernel_", "ipykernel_", "4021/1893452.py", "File \"", " line 3",
                ", ", "12", "x", ".py", "/", "\"",
            ]), 0..8),
            cut in 0usize..4,
        ) {
            let line: String = pieces.concat();
            let line = line.get(cut..).unwrap_or("");
            proptest::prop_assert_eq!(notebook_place(line), super::place(line));
        }
    }
}
