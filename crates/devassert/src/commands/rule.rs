use crate::global::{FormatArg, Global};
use crate::output;
use anyhow::{bail, Context};
use clap::Args;
use devassert_core::{docs, python_rules, Catalog};
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct RuleArgs {
    /// A rule id (DA101) or name (embedding-index-out-of-range); none lists them all.
    pub rule: Option<String>,
    /// Write every rule page into this folder (how docs/rules/ is generated).
    #[arg(long, value_name = "DIR", hide = true)]
    pub write_docs: Option<PathBuf>,
    /// Write the guard's rule table (python/devassert/_findings/rules.py) to this file.
    #[arg(long, value_name = "FILE", hide = true)]
    pub write_python: Option<PathBuf>,
}

pub fn run(args: RuleArgs, g: &Global) -> anyhow::Result<i32> {
    let catalog = Catalog::builtin();
    if let Some(path) = args.write_python {
        std::fs::write(&path, python_rules::module(catalog))
            .with_context(|| format!("cannot write {}", path.display()))?;
        return Ok(0);
    }
    if let Some(dir) = args.write_docs {
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        for (name, text) in docs::all_pages(catalog) {
            let path = dir.join(&name);
            std::fs::write(&path, text)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        return Ok(0);
    }
    let json = g.format == FormatArg::Json;
    match args.rule {
        None => {
            if json {
                let list: Vec<_> = catalog
                    .rules()
                    .iter()
                    .map(|r| serde_json::json!({"rule": r.id, "name": r.name, "op_family": r.op_family, "summary": r.summary, "internal": r.internal}))
                    .collect();
                print_json(list)?;
            } else {
                let color = output::use_color(g, std::io::stdout().is_terminal());
                let mut text = String::new();
                for r in catalog.rules() {
                    let id = if color {
                        format!("\x1b[1m{}\x1b[0m", r.id)
                    } else {
                        r.id.clone()
                    };
                    text.push_str(&format!(
                        "{id}  {:<42} {:<15} {}\n",
                        r.name,
                        r.op_family.as_str(),
                        r.summary
                    ));
                }
                output::print(text.as_bytes())?;
            }
        }
        Some(key) => {
            let Some(rule) = catalog.get(&key) else {
                bail!("no rule {key:?}; `devassert rule` lists them");
            };
            if json {
                let page = serde_json::json!({"rule": rule.id, "name": rule.name, "op_family": rule.op_family, "summary": rule.summary, "internal": rule.internal, "page": docs::rule_page(rule)});
                print_json(vec![page])?;
            } else {
                output::print(docs::rule_page(rule).as_bytes())?;
            }
        }
    }
    Ok(0)
}

/// The rules in the `devassert/1` envelope: `rules` holds every rule, or the
/// one asked for (with its `page`), so a reader handles one shape.
fn print_json(rules: Vec<serde_json::Value>) -> anyhow::Result<()> {
    // A struct, not a json! map: the envelope's fields come first, in order.
    #[derive(serde::Serialize)]
    struct Doc {
        schema: &'static str,
        command: &'static str,
        exit_code: i32,
        rules: Vec<serde_json::Value>,
    }
    let doc = Doc {
        schema: devassert_core::SCHEMA,
        command: "rule",
        exit_code: 0,
        rules,
    };
    output::print(format!("{}\n", serde_json::to_string_pretty(&doc)?).as_bytes())
}
