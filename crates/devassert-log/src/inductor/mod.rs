//! Inductor asserts traced back to the user's op. An assert of generated
//! code names temporaries (`index out of bounds: 0 <= tmp7 < ks2`); the
//! generated code says which kernel holds that text, which ATen ops and
//! source nodes the kernel was built from, what `ks2` is (a size the
//! wrapper passes), and the readable FX graph gives each node's user line.
//! With no generated code at hand the finding says which flag or folder
//! would give it.

mod code;
mod collect;

pub use code::{Graph, Kernel, Module, Node};
pub use collect::{read_dir, Generated, LogCode, Origin};

use devassert_core::{ids, Catalog, Finding, Report, SourceLocation};
use regex::Regex;
use serde_json::{json, Map, Value};
use std::path::Path;
use std::sync::OnceLock;

/// What an Inductor index assert says: its text, the temporary, the bound.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Assert {
    text: String,
    bound: Option<String>,
}

fn assert_of(f: &Finding) -> Option<Assert> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r"index out of bounds: (?:-?\d+ <= )?tmp\d+(?: < ([^`\x22\n]+?))?\s*(?:`|\x22|$)",
        )
        .expect("a valid pattern")
    });
    let texts = f.evidence.values().filter_map(Value::as_str);
    for t in texts {
        for line in t.lines() {
            if let Some(c) = re.captures(line) {
                let whole = c.get(0).map_or("", |m| m.as_str());
                let text = whole.trim_end_matches(['`', '"']).trim_end().to_string();
                return Some(Assert {
                    text,
                    bound: c.get(1).map(|b| b.as_str().trim().to_string()),
                });
            }
        }
    }
    None
}

/// The launch the traceback shows (`cpp_fused_index_sum_0(arg4_1, …)` in
/// the wrapper's `call`), and the wrapper's file.
fn launch_of(f: &Finding) -> Option<(String, Vec<String>, String)> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| Regex::new(r"^\s*(\w+)(?:\.run)?\(").expect("a valid pattern"));
    for loc in [&f.location, &f.noticed_at].into_iter().flatten() {
        let Some(code) = &loc.code else { continue };
        if loc.function.as_deref() != Some("call") {
            continue;
        }
        if let Some(c) = re.captures(code) {
            let name = c[1].to_string();
            let args = code::launch_args(code, &name).unwrap_or_default();
            return Some((name, args, loc.file.clone()));
        }
    }
    None
}

fn file_name(p: &str) -> &str {
    p.rsplit(['/', '\\']).next().unwrap_or(p)
}

/// The kernel holding the assert: by its text, then by the launch and
/// wrapper the traceback names. With how many other kernels hold the text.
fn find_kernel<'g>(
    gen: &'g Generated,
    a: &Assert,
    launch: Option<&(String, Vec<String>, String)>,
) -> Option<(&'g Module, Kernel, usize)> {
    let quoted = format!("\"{}\"", a.text);
    let mut best: Option<(u8, &Module, Kernel)> = None;
    // The same module may come from the log and from a folder: count each kernel once.
    let mut holders: Vec<(String, String)> = Vec::new();
    for m in &gen.modules {
        for k in m.kernels() {
            if !k.source.contains(&quoted) {
                continue;
            }
            if !holders.iter().any(|(n, s)| *n == k.name && *s == k.source) {
                holders.push((k.name.clone(), k.source.clone()));
            }
            let mut score = 0;
            if let Some((name, _, wrapper)) = launch {
                if *name == k.name {
                    score += 1;
                }
                if m.path.as_deref().map(file_name) == Some(file_name(wrapper)) {
                    score += 2;
                }
            }
            if best.as_ref().is_none_or(|(s, _, _)| score > *s) {
                best = Some((score, m, k));
            }
        }
    }
    best.map(|(_, m, k)| (m, k, holders.len()))
}

/// `[a, b]` after `label` in a comment (`Original ATen: [aten.embedding]`).
fn bracket_list(comments: &[String], label: &str) -> Vec<String> {
    for c in comments {
        if let Some(i) = c.find(label) {
            let rest = &c[i + label.len()..];
            if let (Some(o), Some(e)) = (rest.find('['), rest.find(']')) {
                if o < e {
                    return rest[o + 1..e]
                        .split(',')
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect();
                }
            }
        }
    }
    Vec::new()
}

/// The ATen node names of `Source node to ATen node mapping:` lines (`h => embedding`).
fn mapped_nodes(comments: &[String]) -> Vec<String> {
    comments
        .iter()
        .filter_map(|c| c.split_once(" => ").map(|(_, r)| r))
        .flat_map(|r| r.split(',').map(|s| s.trim().to_string()))
        .filter(|s| !s.is_empty())
        .collect()
}

/// The ops a kernel's name was built from (`cpp_fused_index_sum_0`: index,
/// sum), those the catalog knows first, as `aten.` names.
fn ops_from_name(name: &str, catalog: &Catalog) -> Vec<String> {
    let body = name
        .split_once("fused_")
        .map_or(name, |(_, b)| b)
        .trim_end_matches(|c: char| c.is_ascii_digit())
        .trim_end_matches('_');
    let words: Vec<&str> = body.split('_').filter(|w| !w.is_empty()).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        // The longest run of words that names an op of the catalog (`index_select`).
        let hit = (i + 1..=words.len())
            .rev()
            .find(|&j| catalog.rule_for_aten(&words[i..j].join("_")).is_some());
        match hit {
            Some(j) => {
                out.push(format!("aten.{}", words[i..j].join("_")));
                i = j;
            }
            None => {
                out.push(format!("aten.{}", words[i]));
                i += 1;
            }
        }
    }
    out
}

/// Annotate the report's Inductor index asserts with what `gen` says.
pub fn annotate(report: &mut Report, gen: &Generated, catalog: &Catalog) {
    for f in &mut report.findings {
        if f.rule == ids::INDUCTOR_INDEX_OUT_OF_BOUNDS.as_str() {
            annotate_one(f, gen, catalog);
        }
    }
}

fn annotate_one(f: &mut Finding, gen: &Generated, catalog: &Catalog) {
    let Some(a) = assert_of(f) else { return };
    let launch = launch_of(f);
    if gen.is_empty() {
        missing(f, launch.as_ref(), gen);
        return;
    }
    let Some((module, kernel, holders)) = find_kernel(gen, &a, launch.as_ref()) else {
        let from = origin_text(gen);
        f.evidence.insert(
            "generated_code".into(),
            json!({"from": from, "kernel_found": false}),
        );
        f.fixes.insert(0, format!("the generated code in {from} holds no kernel asserting `{}`: it is from another compile; pass this run's own (TORCH_LOGS=output_code in the same log, or its TORCH_COMPILE_DEBUG folder as --inductor-dir)", a.text));
        return;
    };
    let launches = module.launches(&kernel.name);
    // The launch the traceback shows, else the module's own.
    let call_args = match &launch {
        Some((name, args, _)) if *name == kernel.name => args.clone(),
        _ => launches.first().map(|l| l.args.clone()).unwrap_or_default(),
    };
    let mut comments = kernel.comments.clone();
    for l in &launches {
        comments.extend(l.comments.iter().cloned());
    }
    let mut node_names = mapped_nodes(&comments);
    for (group, name, nodes) in &gen.provenance {
        if *name == kernel.name
            && (module.group == *group || module.group.starts_with(group.as_str()))
        {
            node_names.extend(nodes.iter().cloned());
        }
    }
    let graphs: Vec<&Graph> = {
        let same: Vec<&Graph> = gen
            .graphs
            .iter()
            .filter(|g| g.group == module.group)
            .collect();
        if same.is_empty() {
            gen.graphs.iter().collect()
        } else {
            same
        }
    };
    let mut aten = bracket_list(&comments, "Original ATen:");
    if aten.is_empty() {
        for g in &graphs {
            for n in &g.nodes {
                if node_names.contains(&n.name) && !aten.contains(&n.aten) {
                    aten.push(n.aten.clone());
                }
            }
        }
    }
    if aten.is_empty() {
        aten = ops_from_name(&kernel.name, catalog);
    }
    let source_nodes = bracket_list(&comments, "Source Nodes:");
    // The op that reads an index: the first the catalog has a rule for.
    let indexing = aten
        .iter()
        .find_map(|op| catalog.rule_for_aten(op).map(|r| (op.clone(), r)));
    let op = indexing.as_ref().map(|(op, _)| op.clone());
    // Its node in the graph: among the kernel's own nodes when known.
    let pick = |same_op: &dyn Fn(&Node) -> bool| -> Vec<&Node> {
        let own = |n: &Node| node_names.is_empty() || node_names.contains(&n.name);
        graphs
            .iter()
            .flat_map(|g| &g.nodes)
            .filter(|n| same_op(n) && own(n) && n.line.is_some())
            .collect()
    };
    let mut nodes: Vec<&Node> = Vec::new();
    if let Some(op) = &op {
        nodes = pick(&|n: &Node| n.aten == *op);
        if nodes.is_empty() {
            // A post-grad graph holds the op decomposed (nll_loss_forward
            // as a gather): its indexing node carries the same user line.
            nodes = pick(&|n: &Node| catalog.rule_for_aten(&n.aten).is_some());
        }
    }
    let mut places: Vec<(&str, u64)> = nodes
        .iter()
        .filter_map(|n| Some((n.file.as_deref()?, n.line?)))
        .collect();
    places.sort_unstable();
    places.dedup();
    let node = (places.len() == 1).then(|| nodes[0]);

    let bound = a
        .bound
        .as_deref()
        .map(|b| bound_meaning(b, op.as_deref(), &kernel, &call_args, module, node, &graphs));
    let mut info = Map::new();
    info.insert("from".into(), json!(origin_text(gen)));
    info.insert("kernel".into(), json!(kernel.name));
    if let Some(p) = &module.path {
        info.insert("wrapper".into(), json!(p));
    }
    if holders > 1 {
        info.insert("kernels_with_this_assert".into(), json!(holders));
    }
    info.insert("aten_ops".into(), json!(aten));
    if !source_nodes.is_empty() {
        info.insert("source_nodes".into(), json!(source_nodes));
    }
    if let Some(b) = &bound {
        info.insert("bound".into(), b.clone());
    }
    f.evidence
        .insert("generated_code".into(), Value::Object(info));
    let kernel_known = f
        .evidence
        .get("kernel")
        .and_then(Value::as_str)
        .is_some_and(|k| k != "unknown");
    if !kernel_known {
        f.evidence.insert("kernel".into(), json!(kernel.name));
    }
    let mut note = Vec::new();
    if let Some((op, rule)) = &indexing {
        f.evidence.insert("op".into(), json!(op));
        f.evidence.insert("op_rule".into(), json!(rule.id));
        note.push(format!(
            "the assert is {op}'s, fused into {} ({} {}: {})",
            kernel.name, rule.id, rule.name, rule.bad_argument
        ));
    } else {
        note.push(format!(
            "the assert is in {}, built from {}",
            kernel.name,
            aten.join(", ")
        ));
    }
    if let Some(b) = bound
        .as_ref()
        .and_then(|b| b.get("meaning"))
        .and_then(Value::as_str)
    {
        note.push(b.to_string());
    }
    if let Some(n) = node {
        let old = f.location.take();
        if f.noticed_at.is_none() {
            f.noticed_at = old;
        }
        f.location = Some(SourceLocation {
            file: n.file.clone().unwrap_or_default(),
            line: n.line.unwrap_or(0),
            function: n.function.clone(),
            code: n.code.clone(),
        });
    } else if places.len() > 1 {
        let list: Vec<String> = places.iter().map(|(f, l)| format!("{f}:{l}")).collect();
        note.push(format!(
            "one of {} calls of {}: {}",
            list.len(),
            op.as_deref().unwrap_or("the op"),
            list.join(", ")
        ));
    } else if graphs.is_empty() {
        note.push("the user's line is in the FX graph, which this generated code lacks: add post_grad_graphs to TORCH_LOGS (TORCH_LOGS=output_code,post_grad_graphs), or pass the TORCH_COMPILE_DEBUG=1 folder as --inductor-dir".into());
    }
    f.evidence.insert("note".into(), json!(note.join("; ")));
    if let Some((_, rule)) = &indexing {
        let at = node
            .and_then(|n| Some(format!(" at {}:{}", n.file.as_deref()?, n.line?)))
            .unwrap_or_default();
        f.fixes.insert(
            0,
            format!(
                "check the index of {}{at} as for the eager op: `devassert rule {}`; `devassert run -- …` checks it at the compiled function's boundary",
                indexing.as_ref().map_or("the op", |(o, _)| o.as_str()),
                rule.id
            ),
        );
    }
}

/// What each `ksN` of the bound is: the size the wrapper passes, and which
/// input's dimension it is.
fn bound_meaning(
    bound: &str,
    op: Option<&str>,
    kernel: &Kernel,
    call_args: &[String],
    module: &Module,
    node: Option<&Node>,
    graphs: &[&Graph],
) -> Value {
    static KS: OnceLock<Regex> = OnceLock::new();
    let ks = KS.get_or_init(|| Regex::new(r"\bks\d+\b").expect("a valid pattern"));
    let number = bound.trim_end_matches('L');
    if let Ok(n) = number.parse::<u64>() {
        let what = op.map_or(String::new(), |op| format!(" of {op}"));
        return json!({"expr": bound, "meaning": format!("the bound {n} is a fixed size: the indexed dimension{what} has {n} entries")});
    }
    let mut symbols = Map::new();
    let mut words = Vec::new();
    for m in ks.find_iter(bound) {
        let name = m.as_str();
        let Some(pos) = kernel.params.iter().position(|p| p == name) else {
            continue;
        };
        let Some(sym) = call_args.get(pos) else {
            continue;
        };
        let s = module.size_symbol(sym);
        let mut what = format!("{name} is {sym}");
        if let Some((input, dim, shape)) = &s.dim_of {
            // The graph's annotation (`f32[s70, s44]`) says the dtype too.
            let ty = graphs
                .iter()
                .find_map(|g| g.inputs.get(input))
                .map_or_else(|| shape.clone(), |t| t.clone());
            what.push_str(&format!(", the size of dimension {dim} of {input} ({ty})"));
            if let Some(n) = node {
                if let Some(i) = n.args.iter().position(|a| a == input) {
                    what.push_str(&format!(
                        ", argument {i} of {} (`{}`)",
                        n.aten,
                        n.code.as_deref().unwrap_or("")
                    ));
                }
            }
        } else if let Some(input) = &s.from_input {
            what.push_str(&format!(", a size passed as {input}"));
        }
        symbols.insert(name.into(), json!({"symbol": sym, "input": s.dim_of.as_ref().map(|d| &d.0), "dim": s.dim_of.as_ref().map(|d| d.1)}));
        words.push(what);
    }
    let meaning = if words.is_empty() {
        format!("the bound is {bound}")
    } else {
        format!("bound {bound}: {}", words.join("; "))
    };
    json!({"expr": bound, "symbols": symbols, "meaning": meaning})
}

fn origin_text(gen: &Generated) -> String {
    match &gen.origin {
        Origin::Log => "the log (TORCH_LOGS=output_code)".into(),
        Origin::Dir(d) => d.display().to_string(),
    }
}

/// Whether two paths name one folder (as given, or where they lead).
fn same_dir(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// No generated code: say which flag or folder would give it.
fn missing(f: &mut Finding, launch: Option<&(String, Vec<String>, String)>, gen: &Generated) {
    let mut how = String::from(
        "rerun with TORCH_LOGS=output_code,post_grad_graphs (the generated code and the graph with your lines go into the log), or with TORCH_COMPILE_DEBUG=1 and pass its torch_compile_debug/ folder as --inductor-dir",
    );
    let mut info = Map::new();
    info.insert("from".into(), Value::Null);
    let used = match &gen.origin {
        Origin::Dir(d) => Some(d.as_path()),
        Origin::Log => None,
    };
    if let Some((name, _, wrapper)) = launch {
        info.insert("kernel".into(), json!(name));
        // The cache folder of this very crash, while it is still there.
        let cache = Path::new(wrapper).parent().and_then(Path::parent);
        if let Some(dir) = cache.filter(|_| wrapper.contains("torchinductor")) {
            // Not the folder just read: advising it again would say nothing.
            if !used.is_some_and(|u| same_dir(u, dir)) {
                how = format!(
                    "{how}; this run's wrapper {wrapper} is in Inductor's cache: `--inductor-dir {}` reads its kernel {name} (ops, bound) while the cache is kept",
                    dir.display()
                );
            }
            info.insert("cache_dir".into(), json!(dir.display().to_string()));
        }
    }
    if let Some(d) = used {
        how = if gen.truncated {
            format!(
                "{} was read only in part (a bound of the read was reached; see the warnings) and what was read holds no Inductor output code: name the folder of this compile alone (its torch_compile_debug/run_*/ folder, or the cache's subfolder holding the wrapper) as --inductor-dir; or {how}",
                d.display()
            )
        } else {
            format!(
                "{} holds no Inductor output code (output_code.py, or a cached wrapper starting `# AOT ID:`); {how}",
                d.display()
            )
        };
    } else if gen.truncated {
        how.push_str(" (some generated code was past the read limit)");
    }
    info.insert("how".into(), json!(how));
    f.evidence
        .insert("generated_code".into(), Value::Object(info));
    f.fixes
        .insert(0, format!("to name the op and your line: {how}"));
}
