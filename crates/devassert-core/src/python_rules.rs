//! The guard's rule table, generated from the catalog as a Python module
//! (`python/devassert/_findings/rules.py`), the way `docs/rules/` is: the guard names
//! its findings with the catalog's words instead of a copy that drifts. A
//! test fails when the file on disk is not what this writes.

use crate::advice::{ESTABLISHED_SHARE, UNLISTED_SHARE};
use crate::catalog::Catalog;
use crate::render::inert::{LINE_MAX, UNSAFE_RANGES};
use crate::vocab::BASE_VOCABS;
use std::fmt::Write;

/// Where the module lives, relative to the repository root.
pub const PATH: &str = "python/devassert/_findings/rules.py";

/// A Python string literal (a JSON string is one; non-ASCII stays UTF-8).
fn lit(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

fn list(items: &[String]) -> String {
    let parts: Vec<String> = items.iter().map(|s| lit(s)).collect();
    format!("[{}]", parts.join(", "))
}

fn opt(v: &Option<String>) -> String {
    v.as_deref().map_or_else(|| "None".to_string(), lit)
}

/// `catalog/causes.toml` as `FACT_CAUSES`, evaluated by `_findings/facts.py`.
fn fact_causes(s: &mut String) {
    s.push_str(
        "\n# The causes decided by measured facts (catalog/causes.toml; its header\n\
         # says what the facts and expressions mean), evaluated by _findings/facts.py.\n\
         FACT_CAUSES = [\n",
    );
    let rows = toml::from_str::<crate::facts::table::File>(crate::facts::source())
        .map(|f| f.cause)
        .unwrap_or_default();
    for c in rows {
        let _ = writeln!(s, "    {{");
        let _ = writeln!(
            s,
            "        \"id\": {}, \"kind\": {},",
            lit(&c.id),
            lit(&c.kind)
        );
        let _ = writeln!(
            s,
            "        \"requires\": {}, \"prior\": {:?},",
            lit(&c.requires),
            c.prior
        );
        let _ = writeln!(s, "        \"fits\": {},", opt(&c.fits));
        let _ = writeln!(s, "        \"why\": {},", lit(&c.why));
        let _ = writeln!(s, "        \"support\": [");
        for x in &c.support {
            let _ = writeln!(
                s,
                "            {{\"when\": {}, \"weight\": {}, \"fact\": {}}},",
                lit(&x.when),
                lit(&x.weight),
                lit(&x.fact)
            );
        }
        let _ = writeln!(s, "        ],");
        let _ = writeln!(s, "        \"refute\": [");
        for x in &c.refute {
            let _ = writeln!(
                s,
                "            {{\"when\": {}, \"fact\": {}}},",
                lit(&x.when),
                lit(&x.fact)
            );
        }
        let _ = writeln!(s, "        ],");
        let _ = writeln!(s, "        \"fix\": [");
        for x in &c.fix {
            let _ = writeln!(
                s,
                "            {{\"text\": {}, \"when\": {}, \"check\": {}}},",
                lit(&x.text),
                opt(&x.when),
                opt(&x.check)
            );
        }
        let _ = writeln!(s, "        ],");
        let _ = writeln!(s, "    }},");
    }
    s.push_str("]\n");
}

/// The module's text.
pub fn module(catalog: &Catalog) -> String {
    let mut s = String::from(
        "\"\"\"The catalog's rules as the guard needs them: id, name, op family,\n\
         summary, fixes, and each cause's text and fixes; the base vocabulary\n\
         sizes of common tokenizers; and the shares causes are given.\n\n\
         It is over 500 lines because it is data, one entry per rule and per\n\
         fact-decided cause, not code to read.\n\n\
         Generated from catalog/ by `make docs`\n\
         (`devassert rule --write-python python/devassert/_findings/rules.py`); do not edit.\n\
         \"\"\"\n\n\
         # rule id -> {name, op_family, summary, fixes, values, causes: {cause id -> {why, fixes}}}\n\
         RULES = {\n",
    );
    for r in catalog.rules() {
        let _ = writeln!(s, "    {}: {{", lit(&r.id));
        let _ = writeln!(s, "        \"name\": {},", lit(&r.name));
        let _ = writeln!(s, "        \"op_family\": {},", lit(r.op_family.as_str()));
        let _ = writeln!(s, "        \"summary\": {},", lit(&r.summary));
        let _ = writeln!(s, "        \"fixes\": {},", list(&r.fixes));
        let values = r.values.map(|k| k.as_str().to_string());
        let _ = writeln!(s, "        \"values\": {},", opt(&values));
        if r.causes.is_empty() {
            let _ = writeln!(s, "        \"causes\": {{}},");
        } else {
            let _ = writeln!(s, "        \"causes\": {{");
            for c in &r.causes {
                let _ = writeln!(
                    s,
                    "            {}: {{\"why\": {}, \"fixes\": {}}},",
                    lit(&c.id),
                    lit(&c.why),
                    list(&c.fixes)
                );
            }
            let _ = writeln!(s, "        }},");
        }
        let _ = writeln!(s, "    }},");
    }
    s.push_str("}\n\n");
    s.push_str(
        "# Vocabulary sizes of common base tokenizers (catalog/base-vocabs.toml): a\n\
         # table of exactly this size with ids a little past it means tokens were\n\
         # added without resizing the embeddings.\n\
         BASE_VOCABS = frozenset({\n",
    );
    for chunk in BASE_VOCABS.chunks(8) {
        let row: Vec<String> = chunk.iter().map(i64::to_string).collect();
        let _ = writeln!(s, "    {},", row.join(", "));
    }
    s.push_str("})\n");
    fact_causes(&mut s);
    let _ = write!(
        s,
        "\n# The shares `advice::calibrate` gives causes (docs/how-it-works.md): established\n\
         # causes together; left free for a cause nobody listed when no `unknown` is.\n\
         ESTABLISHED_SHARE = {ESTABLISHED_SHARE:?}\n\
         UNLISTED_SHARE = {UNLISTED_SHARE:?}\n"
    );
    let ranges: Vec<String> = UNSAFE_RANGES
        .iter()
        .map(|(lo, hi)| format!("(0x{lo:04x}, 0x{hi:04x})"))
        .collect();
    let _ = write!(
        s,
        "\n# Characters text quoted from an input must not print raw (render/inert.rs):\n\
         # inclusive code point ranges; and the most bytes one quoted text prints.\n\
         UNSAFE_RANGES = ({},)\n\
         LINE_MAX = {LINE_MAX}\n",
        ranges.join(", ")
    );
    s
}
