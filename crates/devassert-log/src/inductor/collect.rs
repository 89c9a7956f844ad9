//! Gathering Inductor's generated code: from the log itself (the records
//! `TORCH_LOGS=output_code,post_grad_graphs` writes, every line prefixed by
//! `… [0/0] [__output_code] `), or from a folder the user names
//! (`TORCH_COMPILE_DEBUG`'s `torch_compile_debug/`, or Inductor's cache
//! `/tmp/torchinductor_<user>/`), read with bounds and without following a
//! symlink out of it.

use super::code::{Graph, Module};
use crate::error::{LogError, Skipped};
use crate::folder::Walk;
use devassert_core::inside::Inside;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Where the generated code came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    Log,
    Dir(PathBuf),
}

/// The generated code explain has at hand.
#[derive(Debug, Clone)]
pub struct Generated {
    pub origin: Origin,
    pub modules: Vec<Module>,
    pub graphs: Vec<Graph>,
    /// (group, kernel name, the post-grad nodes it was built from), from
    /// `inductor_provenance_tracking_node_mappings.json`.
    pub provenance: Vec<(String, String, Vec<String>)>,
    /// Some input was left out (a bound was reached).
    pub truncated: bool,
}

impl Generated {
    pub fn empty(origin: Origin) -> Generated {
        Generated {
            origin,
            modules: Vec::new(),
            graphs: Vec::new(),
            provenance: Vec::new(),
            truncated: false,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.modules.is_empty()
    }

    /// Another source's code added to this one (the folder's after the log's).
    pub fn extend(&mut self, other: Generated) {
        self.modules.extend(other.modules);
        self.graphs.extend(other.graphs);
        self.provenance.extend(other.provenance);
        self.truncated |= other.truncated;
        if let Origin::Dir(_) = other.origin {
            self.origin = other.origin;
        }
    }
}

/// At most this much generated code is kept from a log (a log of many
/// compiles holds many modules; the asserting one is usually among them).
const LOG_LIMIT: usize = 64 << 20;
/// A line longer than this is not a record of generated code.
const LINE_LIMIT: usize = 1 << 20;
const TAGS: [&str; 3] = ["output_code", "post_grad_graphs", "aot_graphs"];

/// The records of generated code in a log, fed in chunks of any size.
#[derive(Default)]
pub struct LogCode {
    carry: Vec<u8>,
    /// The partial line in `carry` is past LINE_LIMIT: drop it to its end.
    skipping: bool,
    /// (tag, prefix, group, text) of the record being read.
    current: Option<(String, String, String, String)>,
    modules: Vec<Module>,
    graphs: Vec<(String, String)>,
    kept: usize,
    truncated: bool,
}

impl LogCode {
    pub fn feed(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        if !self.carry.is_empty() || self.skipping {
            let Some(nl) = memchr::memchr(b'\n', rest) else {
                self.keep_partial(rest);
                return;
            };
            self.keep_partial(&rest[..nl]);
            let line = std::mem::take(&mut self.carry);
            if !std::mem::take(&mut self.skipping) {
                self.line(&line);
            }
            rest = &rest[nl + 1..];
        }
        let finder = memchr::memmem::Finder::new(b"] [__");
        let mut at = 0;
        while let Some(hit) = finder.find(&rest[at..]) {
            let hit = at + hit;
            let start = memchr::memrchr(b'\n', &rest[..hit]).map_or(0, |i| i + 1);
            match memchr::memchr(b'\n', &rest[hit..]) {
                Some(n) => {
                    self.line(&rest[start..hit + n]);
                    at = hit + n + 1;
                }
                None => {
                    self.keep_partial(&rest[start..]);
                    return;
                }
            }
        }
        // A record's line may be cut at the chunk's end before its tag.
        let tail = memchr::memrchr(b'\n', rest).map_or(0, |i| i + 1).max(at);
        if tail < rest.len() {
            self.keep_partial(&rest[tail..]);
        }
    }

    fn keep_partial(&mut self, bytes: &[u8]) {
        if self.skipping {
            return;
        }
        if self.carry.len() + bytes.len() > LINE_LIMIT {
            self.carry.clear();
            self.skipping = true;
            return;
        }
        self.carry.extend_from_slice(bytes);
    }

    fn line(&mut self, raw: &[u8]) {
        let line = String::from_utf8_lossy(raw);
        let line = line.trim_end_matches('\r');
        let Some(i) = line.find("] [__") else { return };
        let after = &line[i + 5..];
        let Some(close) = after.find(']') else { return };
        let tag = &after[..close];
        if !TAGS.contains(&tag) {
            return;
        }
        let text = after[close + 1..]
            .strip_prefix(' ')
            .unwrap_or(&after[close + 1..]);
        let prefix = &line[..i];
        let group = compile_id(prefix);
        if tag == "output_code" {
            if let Some(path) = text.strip_prefix("Output code written to: ") {
                self.end_record();
                if let Some(m) = self
                    .modules
                    .iter_mut()
                    .rev()
                    .find(|m| m.group == group && m.path.is_none())
                {
                    m.path = Some(path.trim().to_string());
                }
                return;
            }
        }
        let same = matches!(&self.current, Some((t, p, _, _)) if t == tag && p == prefix);
        let starts = tag == "output_code" && text.trim_end() == "Output code:";
        if !same || starts {
            self.end_record();
            self.current = Some((tag.to_string(), prefix.to_string(), group, String::new()));
            if starts {
                return;
            }
        }
        if self.kept + text.len() > LOG_LIMIT {
            self.truncated = true;
            return;
        }
        self.kept += text.len() + 1;
        if let Some((_, _, _, buf)) = &mut self.current {
            buf.push_str(text);
            buf.push('\n');
        }
    }

    fn end_record(&mut self) {
        if let Some((tag, _, group, text)) = self.current.take() {
            if tag == "output_code" {
                self.modules.push(Module {
                    group,
                    path: None,
                    text,
                });
            } else {
                self.graphs.push((group, text));
            }
        }
    }

    pub fn finish(mut self) -> Generated {
        if !self.carry.is_empty() && !self.skipping {
            let line = std::mem::take(&mut self.carry);
            self.line(&line);
        }
        self.end_record();
        let mut g = Generated::empty(Origin::Log);
        g.modules = self.modules;
        g.graphs = self
            .graphs
            .iter()
            .map(|(group, text)| Graph::parse(group, text))
            .collect();
        g.truncated = self.truncated;
        g
    }
}

/// The compile id of a record's prefix (`0/0` of `… [0/0_1]`), or "".
fn compile_id(prefix: &str) -> String {
    let Some(open) = prefix.rfind('[') else {
        return String::new();
    };
    let id = &prefix[open + 1..];
    let id = id.split('_').next().unwrap_or(id);
    if id.contains('/') && id.bytes().all(|b| b.is_ascii_digit() || b == b'/') {
        id.to_string()
    } else {
        String::new()
    }
}

/// Bounds of a folder read: it is the user's, but may be a cache of
/// thousands of compiles.
const DIR_ENTRIES: usize = 100_000;
const DIR_DEPTH: usize = 12;
const FILE_LIMIT: u64 = 32 << 20;
/// The code kept in memory in all: within explain's 256 MiB budget with
/// what is built from it (512 MiB of kept text peaked at 562 MB).
const DIR_LIMIT: u64 = 96 << 20;

/// The generated code under `dir`: `output_code.py`, `fx_graph_readable.py`
/// and the provenance mapping of each compiled graph's debug folder, and the
/// wrapper modules (`# AOT ID:` …) of a cache folder. Symlinks are followed
/// only inside `dir`; what is skipped is returned.
pub fn read_dir(dir: &Path) -> Result<(Generated, Vec<Skipped>), LogError> {
    let meta = std::fs::metadata(dir).map_err(|e| LogError::from_io(dir, e))?;
    if !meta.is_dir() {
        return Err(LogError::Io {
            path: dir.to_path_buf(),
            source: std::io::Error::other("--inductor-dir is not a directory"),
        });
    }
    let inside = Inside::new(dir).map_err(|e| LogError::from_io(dir, e))?;
    let mut skipped = Vec::new();
    let code = Walk {
        skip_hidden: false,
        max_depth: DIR_DEPTH,
        max_entries: DIR_ENTRIES,
    };
    let found = code.files(&inside, dir, &mut |p| Ok(wanted(p)), &mut skipped);
    let mut g = Generated::empty(Origin::Dir(dir.to_path_buf()));
    g.truncated = found.truncated;
    let mut total = 0u64;
    let mut provenance: HashMap<String, serde_json::Value> = HashMap::new();
    for path in found.files {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let group = path
            .parent()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Some(text) = read_bounded(&path, &mut total, &mut skipped, &mut g.truncated) else {
            continue;
        };
        match name.as_str() {
            "output_code.py" => g.modules.push(Module {
                group,
                path: None,
                text,
            }),
            "fx_graph_readable.py" | "fx_graph_transformed.py" => {
                g.graphs.push(Graph::parse(&group, &text))
            }
            "inductor_provenance_tracking_node_mappings.json" => {
                match serde_json::from_str(&text) {
                    Ok(v) => {
                        provenance.insert(group, v);
                    }
                    Err(e) => skipped.push(Skipped {
                        path: path.clone(),
                        why: format!("not the provenance JSON Inductor writes: {e}"),
                    }),
                }
            }
            _ if text.starts_with("# AOT ID:") => g.modules.push(Module {
                group: path.to_string_lossy().into_owned(),
                path: Some(path.to_string_lossy().into_owned()),
                text,
            }),
            _ => {}
        }
    }
    for (group, v) in provenance {
        let Some(map) = v.as_object() else { continue };
        for (key, table) in map {
            if !key.ends_with("CodeToPost") {
                continue;
            }
            for (kernel, nodes) in table.as_object().into_iter().flatten() {
                let name = kernel.split(':').next().unwrap_or(kernel).to_string();
                let nodes = nodes
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|n| n.as_str().map(str::to_string))
                    .collect();
                g.provenance.push((group.clone(), name, nodes));
            }
        }
    }
    Ok((g, skipped))
}

fn read_bounded(
    path: &Path,
    total: &mut u64,
    skipped: &mut Vec<Skipped>,
    truncated: &mut bool,
) -> Option<String> {
    let skip = |skipped: &mut Vec<Skipped>, why: String| {
        skipped.push(Skipped {
            path: path.to_path_buf(),
            why,
        });
        None
    };
    if *total > DIR_LIMIT {
        // Past the total: said once, at the first file left out.
        return None;
    }
    // Non-blocking, a regular file only: a FIFO in the folder never hangs it.
    let f = match devassert_core::regular::open(path) {
        Ok(f) => f,
        Err(e) => return skip(skipped, format!("cannot open it: {e}")),
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if len > FILE_LIMIT {
        return skip(
            skipped,
            format!(
                "{len} bytes, over the {} MiB read per file",
                FILE_LIMIT >> 20
            ),
        );
    }
    if *total + len > DIR_LIMIT {
        *truncated = true;
        *total = DIR_LIMIT + 1;
        return skip(
            skipped,
            format!(
                "past the {} MiB of generated code read from a folder in all (explain's memory budget): this file and the ones after it were not read",
                DIR_LIMIT >> 20
            ),
        );
    }
    let mut buf = Vec::with_capacity(len as usize);
    if let Err(e) = f.take(FILE_LIMIT).read_to_end(&mut buf) {
        return skip(skipped, format!("cannot read it: {e}"));
    }
    *total += buf.len() as u64;
    Some(String::from_utf8_lossy(&buf).into_owned())
}

fn wanted(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    name.ends_with(".py") || name == "inductor_provenance_tracking_node_mappings.json"
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\
V1205 19:52:05.031000 5121 torch/_inductor/graph.py:3166] [0/0_1] [__output_code] Output code: 
V1205 19:52:05.031000 5121 torch/_inductor/graph.py:3166] [0/0_1] [__output_code] # AOT ID: ['1_forward']
V1205 19:52:05.031000 5121 torch/_inductor/graph.py:3166] [0/0_1] [__output_code]     x = 1
unrelated line
I1205 19:52:05.040000 5121 torch/_inductor/graph.py:3137] [0/0_1] [__output_code] Output code written to: /tmp/torchinductor_u/ab/cab.py
V1205 19:52:06.000000 5121 torch/_inductor/graph.py:1] [0/0_1] [__post_grad_graphs] def forward(self, arg0_1: \"i64[4]\"):
";

    #[test]
    fn records_of_a_log_in_chunks_of_any_size() {
        for size in [1, 2, 7, 64, LOG.len()] {
            let mut c = LogCode::default();
            for chunk in LOG.as_bytes().chunks(size) {
                c.feed(chunk);
            }
            let g = c.finish();
            assert_eq!(g.modules.len(), 1, "chunk {size}");
            assert_eq!(g.modules[0].text, "# AOT ID: ['1_forward']\n    x = 1\n");
            assert_eq!(g.modules[0].group, "0/0");
            assert_eq!(
                g.modules[0].path.as_deref(),
                Some("/tmp/torchinductor_u/ab/cab.py")
            );
            assert_eq!(g.graphs.len(), 1);
            assert_eq!(g.graphs[0].inputs["arg0_1"], "i64[4]");
        }
    }

    #[test]
    fn a_log_without_generated_code_gives_none() {
        let mut c = LogCode::default();
        c.feed(b"RuntimeError: index out of bounds: 0 <= tmp2 < 10L\n[rank0] [__x] y\n");
        assert!(c.finish().is_empty());
    }
}
