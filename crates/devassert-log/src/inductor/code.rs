//! Inductor's generated code as explain reads it: wrapper modules (the
//! `output_code` Inductor writes: kernels with their sources and the `call`
//! that launches them) and readable FX graphs (`# File: … code: …` above
//! each ATen node). Parsed from text only; nothing here is run.

use regex::Regex;
use std::collections::HashMap;
use std::sync::OnceLock;

/// One wrapper module (the output code of one compiled graph).
#[derive(Debug, Clone, Default)]
pub struct Module {
    /// Which compiled graph it belongs to (`0/0` of the log's `[0/0]`, or its folder).
    pub group: String,
    /// Where Inductor wrote it, when the log or the folder says.
    pub path: Option<String>,
    pub text: String,
}

/// One kernel defined in a module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kernel {
    pub name: String,
    /// The kernel's source (between the quotes of `async_compile.…(…)`).
    pub source: String,
    /// Its parameters, in order (`in_ptr0`, …, `ks0`, `xnumel`).
    pub params: Vec<String>,
    /// The comment lines right above its definition (Triton: `# Topologically
    /// Sorted Source Nodes: [h], Original ATen: [aten.embedding]`).
    pub comments: Vec<String>,
}

/// A launch of a kernel in the module's `call`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub kernel: String,
    pub args: Vec<String>,
    /// The comment lines right above it (source nodes, provenance handle).
    pub comments: Vec<String>,
}

fn re(cell: &'static OnceLock<Regex>, pat: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pat).expect("a valid pattern"))
}

impl Module {
    pub fn kernels(&self) -> Vec<Kernel> {
        static DEF: OnceLock<Regex> = OnceLock::new();
        let def = re(&DEF, r"^(\w+) = async_compile\.\w+\(");
        let lines: Vec<&str> = self.text.lines().collect();
        let mut out = Vec::new();
        let mut i = 0;
        while i < lines.len() {
            let Some(c) = def.captures(lines[i]) else {
                i += 1;
                continue;
            };
            let name = c[1].to_string();
            let comments = comments_above(&lines, i);
            // The source runs to the line that closes its triple quote.
            let start = i + 1;
            let mut end = start;
            while end < lines.len() && !lines[end].trim_start().starts_with("'''") {
                end += 1;
            }
            let source = lines[start..end.min(lines.len())].join("\n");
            let params = params(&source, &name);
            out.push(Kernel {
                name,
                source,
                params,
                comments,
            });
            i = end + 1;
        }
        out
    }

    /// Every launch of `kernel` in the module (`k(a, b)` or `k.run(a, b, …)`).
    pub fn launches(&self, kernel: &str) -> Vec<Launch> {
        let lines: Vec<&str> = self.text.lines().collect();
        let mut out = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            if let Some(args) = launch_args(line, kernel) {
                out.push(Launch {
                    kernel: kernel.to_string(),
                    args,
                    comments: comments_above(&lines, i),
                });
            }
        }
        out
    }

    /// What a size symbol (`s70`) is in the module's `call`: the input it is
    /// read from (`s70 = arg0_1`) and the (input, dimension, shape) whose
    /// asserted size names it (`assert_size_stride(arg2_1, (s70, s44), …)`).
    pub fn size_symbol(&self, sym: &str) -> SizeSymbol {
        static ASSIGN: OnceLock<Regex> = OnceLock::new();
        let assign = re(&ASSIGN, r"^\s*(\w+) = (\w+)\s*$");
        let mut out = SizeSymbol::default();
        for line in self.text.lines() {
            if let Some(c) = assign.captures(line) {
                if &c[1] == sym && out.from_input.is_none() {
                    out.from_input = Some(c[2].to_string());
                }
            }
            if out.dim_of.is_none() {
                out.dim_of = asserted_dim(line, sym);
            }
        }
        out
    }
}

/// (input, dimension, shape) where `line` asserts a size named `sym`:
/// `assert_size_stride(arg2_1, (s70, s44), …)` or the grouped form
/// `assert_size_stride_grouped((arg4_1, arg2_1), ((s95, ), (s70, s44)), …)`.
fn asserted_dim(line: &str, sym: &str) -> Option<(String, usize, String)> {
    let t = line.trim();
    let (grouped, inner) = if let Some(r) = t.strip_prefix("assert_size_stride_grouped(") {
        (true, r)
    } else {
        (false, t.strip_prefix("assert_size_stride(")?)
    };
    let args = split_args(inner.strip_suffix(')').unwrap_or(inner));
    // One layer of parentheses: `((s95, ), (s70, s44))` holds two shapes.
    let strip = |s: &str| {
        let t = s.trim();
        t.strip_prefix('(')
            .and_then(|t| t.strip_suffix(')'))
            .unwrap_or(t)
            .to_string()
    };
    let (names, shapes): (Vec<String>, Vec<String>) = if grouped {
        let names = split_args(&strip(args.first()?))
            .iter()
            .map(|n| n.to_string())
            .collect();
        (names, split_args(&strip(args.get(1)?)))
    } else {
        (vec![args.first()?.clone()], vec![args.get(1)?.clone()])
    };
    for (name, shape) in names.iter().zip(&shapes) {
        let dims: Vec<String> = split_args(&strip(shape));
        if let Some(d) = dims.iter().position(|d| d == sym) {
            return Some((name.clone(), d, format!("[{}]", dims.join(", "))));
        }
    }
    None
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SizeSymbol {
    pub from_input: Option<String>,
    /// (input, dimension, its shape as asserted).
    pub dim_of: Option<(String, usize, String)>,
}

/// The `#` lines right above line `i` (nearest last), stripped of `# `.
fn comments_above(lines: &[&str], i: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut j = i;
    while j > 0 {
        let t = lines[j - 1].trim_start();
        let Some(c) = t.strip_prefix('#') else { break };
        out.push(c.trim().to_string());
        j -= 1;
    }
    out.reverse();
    out
}

/// The arguments of a launch of `kernel` on `line`, if it is one.
pub fn launch_args(line: &str, kernel: &str) -> Option<Vec<String>> {
    let t = line.trim();
    let rest = t.strip_prefix(kernel)?;
    let rest = rest.strip_prefix(".run").unwrap_or(rest);
    let inner = rest.strip_prefix('(')?;
    let inner = inner.strip_suffix(')').unwrap_or(inner);
    Some(split_args(inner))
}

/// Top-level comma-separated arguments (nested brackets kept whole).
fn split_args(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for ch in s.chars() {
        match ch {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// A kernel's parameters: the C++ `kernel(const int64_t* in_ptr0, …)` or the
/// Triton `def name(in_ptr0, …, XBLOCK : tl.constexpr)`.
fn params(source: &str, name: &str) -> Vec<String> {
    let open = source
        .find(&format!("def {name}("))
        .map(|i| i + name.len() + 5)
        .or_else(|| source.find("kernel(").map(|i| i + 7));
    let Some(open) = open else { return Vec::new() };
    let Some(len) = source[open..].find(')') else {
        return Vec::new();
    };
    split_args(&source[open..open + len])
        .iter()
        .filter_map(|p| {
            let p = p.split(':').next().unwrap_or(p).trim();
            p.rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
                .filter(|w| !w.is_empty())
                .map(str::to_string)
        })
        .collect()
}

/// A node of a readable FX graph: an ATen call and the user's line above it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub name: String,
    /// `aten.index` (no overload).
    pub aten: String,
    pub args: Vec<String>,
    /// The line the graph's `# File:` comment gives.
    pub file: Option<String>,
    pub line: Option<u64>,
    pub function: Option<String>,
    pub code: Option<String>,
}

/// A readable FX graph (`fx_graph_readable.py`, `TORCH_LOGS=aot_graphs` /
/// `post_grad_graphs`).
#[derive(Debug, Clone, Default)]
pub struct Graph {
    pub group: String,
    pub nodes: Vec<Node>,
    /// Input name → its annotated type (`f32[s70, s44]`).
    pub inputs: HashMap<String, String>,
}

impl Graph {
    pub fn parse(group: &str, text: &str) -> Graph {
        static FILE: OnceLock<Regex> = OnceLock::new();
        static NODE: OnceLock<Regex> = OnceLock::new();
        static INPUT: OnceLock<Regex> = OnceLock::new();
        let file = re(&FILE, r"^\s*# File: (.+):(\d+) in ([\w<>.]+), code: (.*)$");
        let node = re(
            &NODE,
            r#"^\s*(\w+)(?:: "[^"]*")? = torch\.ops\.(aten\.\w+)(?:\.\w+)?\((.*)\)"#,
        );
        let input = re(&INPUT, r#"(\w+): "([^"]*)""#);
        let mut g = Graph {
            group: group.to_string(),
            ..Default::default()
        };
        let mut at: Option<(String, u64, String, String)> = None;
        for line in text.lines() {
            let t = line.trim_start();
            if t.starts_with("def forward(") {
                for c in input.captures_iter(t) {
                    g.inputs.insert(c[1].to_string(), c[2].to_string());
                }
                continue;
            }
            if t.is_empty() {
                at = None;
                continue;
            }
            if let Some(c) = file.captures(line) {
                let n = c[2].parse().unwrap_or(0);
                at = Some((c[1].to_string(), n, c[3].to_string(), c[4].to_string()));
                continue;
            }
            if let Some(c) = node.captures(line) {
                let inner = c[3].split(");").next().unwrap_or(&c[3]);
                g.nodes.push(Node {
                    name: c[1].to_string(),
                    aten: c[2].to_string(),
                    args: split_args(inner),
                    file: at.as_ref().map(|a| a.0.clone()),
                    line: at.as_ref().map(|a| a.1),
                    function: at.as_ref().map(|a| a.2.clone()),
                    code: at.as_ref().map(|a| a.3.clone()),
                });
            }
        }
        g
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpp_and_triton_kernels_with_params_and_comments() {
        let text = "\
cpp_fused_index_sum_0 = async_compile.cpp_pybinding(['const int64_t*', 'const int64_t'], r'''
#include <torch/csrc/inductor/cpp_prefix.h>
extern \"C\"  void  kernel(const int64_t* in_ptr0,
                       const int64_t ks0)
{
    TORCH_CHECK((0 <= tmp7) & (tmp7 < ks0), \"index out of bounds: 0 <= tmp7 < ks0\");
}
''')

# kernel path: /tmp/torchinductor_u/ab/cab.py
# Topologically Sorted Source Nodes: [h], Original ATen: [aten.embedding]
triton_poi_fused_embedding_0 = async_compile.triton('triton_poi_fused_embedding_0', '''
@triton.jit
def triton_poi_fused_embedding_0(in_ptr0, in_ptr1, out_ptr0, ks0, xnumel, XBLOCK : tl.constexpr):
    tl.device_assert(((0 <= tmp4) & (tmp4 < ks0)) | ~(xmask), \"index out of bounds: 0 <= tmp4 < ks0\")
''', device_str='cuda')

def call(self, args):
    s70 = arg0_1
    assert_size_stride(arg2_1, (s70, 4), (4, 1))
    # Topologically Sorted Source Nodes: [h], Original ATen: [aten.embedding]
    triton_poi_fused_embedding_0.run(arg1_1, arg2_1, buf0, s70, 12, stream=stream0)
";
        let m = Module {
            text: text.into(),
            ..Default::default()
        };
        let k = m.kernels();
        assert_eq!(k.len(), 2);
        assert_eq!(k[0].params, ["in_ptr0", "ks0"]);
        assert_eq!(
            k[1].params,
            ["in_ptr0", "in_ptr1", "out_ptr0", "ks0", "xnumel", "XBLOCK"]
        );
        assert!(k[1].comments[1].starts_with("Topologically"));
        let l = m.launches("triton_poi_fused_embedding_0");
        assert_eq!(l[0].args[3], "s70");
        assert!(l[0].comments[0].contains("aten.embedding"));
        let s = m.size_symbol("s70");
        assert_eq!(s.from_input.as_deref(), Some("arg0_1"));
        assert_eq!(s.dim_of, Some(("arg2_1".into(), 0, "[s70, 4]".into())));
        let grouped = "    assert_size_stride_grouped((arg4_1, arg2_1), ((s95, ), (s70, s44)), ((1, ), (s44, 1)), 'input')";
        assert_eq!(
            asserted_dim(grouped, "s44"),
            Some(("arg2_1".into(), 1, "[s70, s44]".into()))
        );
        assert_eq!(
            asserted_dim(grouped, "s95"),
            Some(("arg4_1".into(), 0, "[s95]".into()))
        );
    }

    #[test]
    fn graph_nodes_keep_the_users_line() {
        let text = r#"class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "Sym(s70)", arg2_1: "f32[s70, s44]", arg4_1: "i64[s95]"):
        # File: /w/lookup.py:5 in lookup, code: rows = table[idx]
        index: "f32[s95, s44]" = torch.ops.aten.index.Tensor(arg2_1, [arg4_1]);  arg2_1 = arg4_1 = None

        sum_1 = torch.ops.aten.sum.dim_IntList(index, [-1]);  index = None
"#;
        let g = Graph::parse("0/0", text);
        assert_eq!(g.inputs["arg2_1"], "f32[s70, s44]");
        assert_eq!(g.nodes[0].aten, "aten.index");
        assert_eq!(g.nodes[0].args, ["arg2_1", "[arg4_1]"]);
        assert_eq!(g.nodes[0].line, Some(5));
        assert_eq!(g.nodes[0].code.as_deref(), Some("rows = table[idx]"));
        assert_eq!(
            g.nodes[1].line, None,
            "a blank line ends the comment's reach"
        );
    }
}
