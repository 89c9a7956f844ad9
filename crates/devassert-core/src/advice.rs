//! Advice from one place: every command's findings pass through [`settle`]
//! before they are rendered, in any format. It ranks established causes
//! first, turns the causes' confidences into shares that sum to at most 1
//! ([`calibrate`]) and derives the next steps from the ranked causes
//! ([`next_steps`]): each cause's fixes in rank order, then the rule's
//! general ones, each step once, with the values the finding knows filled
//! into suggested commands and notebook advice for a notebook's traceback.

use crate::facts::blend::cites;
use crate::finding::{Cause, Finding, Report};
use crate::place::{Bound, Scalar};
use crate::vocabulary::OpFamily;
use serde_json::Value;

/// What the command knows beyond the finding.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context<'a> {
    /// The user's command line, when known (`devassert run -- <this>`).
    pub rerun_hint: Option<&'a str>,
    /// The report is `devassert run`'s: the program already ran under the
    /// guard, so no generic "rerun under devassert run" step is added.
    pub under_run: bool,
}

/// Settle every finding of `report`: causes ranked and calibrated, next
/// steps derived. Idempotent: a settled report settles to itself.
pub fn settle(report: &mut Report, ctx: &Context<'_>) {
    for f in &mut report.findings {
        settle_finding(f, ctx);
    }
}

pub fn settle_finding(f: &mut Finding, ctx: &Context<'_>) {
    // Stable: the likely ones keep their order after the established ones.
    f.causes.sort_by_key(|c| !c.established);
    calibrate(&mut f.causes);
    f.fixes = next_steps(f, ctx);
}

/// The share established causes take together: measured facts (the
/// user's script, model or data) outweigh what a log makes likely.
pub const ESTABLISHED_SHARE: f64 = 0.9;
/// The share left for a cause nobody listed, when no `unknown` cause is.
pub const UNLISTED_SHARE: f64 = 0.05;

/// Turn the causes' scores (the catalog's prior plus the weights of the
/// evidence that fired, or the share of the bad values a pattern covers)
/// into shares of one finding that sum to at most 1: established causes
/// share [`ESTABLISHED_SHARE`]; the others share the rest in proportion to
/// their scores, scaled down only when they would exceed it; without an
/// `unknown` cause, [`UNLISTED_SHARE`] stays free for one nobody listed.
/// Idempotent, and the order of scores is kept.
pub fn calibrate(causes: &mut [Cause]) {
    let room = if causes.iter().any(|c| c.id == "unknown") {
        0.0
    } else {
        UNLISTED_SHARE
    };
    let cap = 1.0 - room;
    let score = |c: &Cause| {
        if c.confidence.is_finite() {
            c.confidence.max(0.0)
        } else {
            0.0
        }
    };
    let est: f64 = causes.iter().filter(|c| c.established).map(score).sum();
    let n_est = causes.iter().filter(|c| c.established).count();
    let likely: f64 = causes.iter().filter(|c| !c.established).map(score).sum();
    let likely_cap = if n_est > 0 {
        cap - ESTABLISHED_SHARE
    } else {
        cap
    };
    let likely_scale = if likely > likely_cap {
        likely_cap / likely
    } else {
        1.0
    };
    for c in causes.iter_mut() {
        let s = score(c);
        let share = if c.established {
            if est > 0.0 {
                ESTABLISHED_SHARE * s / est
            } else {
                ESTABLISHED_SHARE / n_est as f64
            }
        } else {
            s * likely_scale
        };
        // Rounded down (with slack for the float's last bit), so the
        // rounded shares still sum to at most 1 and a second pass keeps them.
        c.confidence = (share * 1000.0 + 1e-6).floor() / 1000.0;
    }
}

/// What a notebook's traceback is told instead of `devassert run -- python …`.
pub const NOTEBOOK_GUARD: &str = "in the notebook: restart the kernel (a device-side assert leaves CUDA unusable), run `%load_ext devassert` (or `import devassert; devassert.guard()`) in the first cell, then rerun the cells: the guard stops the failing op at its line and names the argument and its bad values";
/// The notebook's way to make CUDA report the failing op at its line.
pub const NOTEBOOK_BLOCKING: &str = "or set `os.environ[\"CUDA_LAUNCH_BLOCKING\"] = \"1\"` in the first cell, before torch is imported, after restarting the kernel";

/// Whether the finding's traceback came from IPython / Jupyter.
pub fn is_notebook(f: &Finding) -> bool {
    f.evidence.get("notebook").is_some_and(|v| !v.is_null())
}

/// The next steps of a finding: the fixes of its causes in rank order,
/// then its general fixes, then (outside `devassert run`) the rerun that
/// finds the real line, each step once.
pub fn next_steps(f: &Finding, ctx: &Context<'_>) -> Vec<String> {
    let notebook = is_notebook(f);
    let mut steps = Steps {
        notebook,
        ..Steps::default()
    };
    // A command `run` already worked out for this finding leads.
    if let Some(rerun) = f.evidence.get("rerun").and_then(Value::as_str) {
        for x in f.fixes.iter().filter(|x| x.contains(rerun)) {
            steps.push(x.clone());
        }
    }
    // A compiled kernel's assert: the step Inductor's reader puts first
    // (the eager op it found, or how to get the generated code) leads, since
    // it is what tells the op and the causes apart.
    // A log cut before its error line: getting that line leads, as it is
    // what tells whether any cause below applies at all.
    if f.evidence.contains_key("generated_code") || f.evidence.contains_key("error_line_missing") {
        if let Some(x) = f.fixes.first() {
            steps.push(x.clone());
        }
    }
    // A finding that cannot name its op (no kernel line) and whose log
    // singles out no cause: they are guesses, by how common each is or by
    // where the traceback runs, and the rule's own steps, which find the
    // op, come first.
    let guessed = f.op_family == OpFamily::Unknown
        && !f.causes.iter().any(|c| c.established)
        && !singled_out(&f.causes);
    if guessed {
        for x in &f.fixes {
            steps.push(fill(x, f, ctx));
        }
    }
    for c in contenders(&f.causes) {
        for x in &c.fixes {
            steps.push(fill(x, f, ctx));
        }
    }
    if !guessed {
        for x in &f.fixes {
            steps.push(fill(x, f, ctx));
        }
    }
    let unsure_place = f.location.is_none() && (f.noticed_at.is_some() || notebook);
    if unsure_place && !ctx.under_run && !steps.has_rerun {
        steps.push(if notebook {
            NOTEBOOK_GUARD.to_string()
        } else {
            format!(
                "find the real line and the values: devassert run -- {}",
                rerun_command(f, ctx)
            )
        });
    }
    steps.list
}

/// Whether the log's evidence singles out the best cause: it cites some and
/// its share is [`STANDS_OUT`] times the next one's. Evidence that lifts two
/// causes alike (a traceback in the model's forward: ids and positions)
/// tells where to look, not which it is.
fn singled_out(causes: &[Cause]) -> bool {
    let lead =
        |b: &Cause, n: Option<&Cause>| n.is_none_or(|n| b.confidence >= STANDS_OUT * n.confidence);
    causes
        .first()
        .is_some_and(|b| cites(&b.why) && lead(b, causes.get(1)))
}
pub const STANDS_OUT: f64 = 1.5;

/// Causes whose fixes are worth a step: the established ones, and the
/// likely ones within [`CONTENDER_RATIO`] of the best cause's share, at most
/// [`CONTENDERS`], in rank order. A cause far behind the leader (the 5 %
/// alternatives of a rule with a dozen) would bury the steps that matter.
fn contenders(causes: &[Cause]) -> impl Iterator<Item = &Cause> {
    let top = causes.iter().map(|c| c.confidence).fold(0.0, f64::max);
    causes
        .iter()
        .filter(move |c| {
            c.established || (c.confidence > 0.0 && c.confidence * CONTENDER_RATIO >= top)
        })
        .take(CONTENDERS)
}

/// A likely cause gives steps when its share is at least the best one's / this.
pub const CONTENDER_RATIO: f64 = 4.0;
/// At most this many causes give steps.
pub const CONTENDERS: usize = 3;

/// The command `devassert run --` should run: the known command line, else
/// the user's script Python noticed the failure in (the best guess; an
/// installed library's file is no program to run).
fn rerun_command(f: &Finding, ctx: &Context<'_>) -> String {
    match (ctx.rerun_hint, user_script(f)) {
        (Some(hint), _) => hint.to_string(),
        (None, Some(file)) => format!("python {} …", crate::render::inert::shell_word(file)),
        (None, None) => "python train.py …".to_string(),
    }
}

fn user_script(f: &Finding) -> Option<&str> {
    let file = f.noticed_at.as_ref()?.file.as_str();
    // Installed packages, and the modules Inductor generates in its cache.
    let library = [
        "site-packages",
        "dist-packages",
        "/lib/python",
        "<",
        "torchinductor_",
    ];
    (file.ends_with(".py") && !library.iter().any(|l| file.contains(l))).then_some(file)
}

#[derive(Default)]
struct Steps {
    list: Vec<String>,
    notebook: bool,
    /// A step already says to rerun under `devassert run` (or, in a
    /// notebook, to install the guard).
    has_rerun: bool,
    blocking: bool,
}

impl Steps {
    fn push(&mut self, step: String) {
        let step = if self.notebook {
            match notebook_step(&step) {
                Some(s) => s,
                None => return,
            }
        } else {
            step
        };
        let reruns = mentions_rerun(&step);
        if reruns && self.has_rerun {
            return;
        }
        if self.notebook && step == NOTEBOOK_BLOCKING {
            if self.blocking {
                return;
            }
            self.blocking = true;
        }
        if self.list.iter().any(|s| same_step(s, &step)) {
            return;
        }
        self.has_rerun |= reruns;
        self.list.push(step);
    }
}

/// A step that reruns the program under the guard.
fn mentions_rerun(step: &str) -> bool {
    step.contains("devassert run") || step == NOTEBOOK_GUARD
}

/// A step as a notebook user can follow it: the guard instead of
/// `devassert run`, the environment variable set in a cell instead of on a
/// command line; `None` drops a step that only makes sense for a script.
fn notebook_step(step: &str) -> Option<String> {
    if step.contains("devassert run") {
        return Some(NOTEBOOK_GUARD.to_string());
    }
    if step.contains("CUDA_LAUNCH_BLOCKING") && step.contains("python ") {
        return Some(NOTEBOOK_BLOCKING.to_string());
    }
    if step.contains("python train.py") {
        return None;
    }
    Some(step.to_string())
}

/// Two steps say the same thing: one extends the other, or both lead with
/// the same code (`ignore_index=255`, `devassert run -- …`).
fn same_step(a: &str, b: &str) -> bool {
    if a.starts_with(b) || b.starts_with(a) {
        return true;
    }
    matches!((first_code(a), first_code(b)), (Some(x), Some(y)) if x == y)
}

/// The first `backticked` span of a step.
fn first_code(s: &str) -> Option<&str> {
    let start = s.find('`')? + 1;
    let len = s[start..].find('`')?;
    let code = s[start..start + len].trim();
    (!code.is_empty()).then_some(code)
}

/// A step with what the finding knows filled in: the size in a suggested
/// `devassert scan … --vocab N` / `--classes C`, the program in a suggested
/// `devassert run -- python train.py …`.
fn fill(step: &str, f: &Finding, ctx: &Context<'_>) -> String {
    let mut out = step.to_string();
    if out.contains("devassert scan") {
        if let Some(high) = bound_high(f.bound.as_ref()) {
            for flag in ["--vocab", "--classes"] {
                for placeholder in ["N", "C", "V"] {
                    let from = format!("{flag} {placeholder}");
                    if let Some(at) = out.find(&from) {
                        let end = at + from.len();
                        // Only a whole word: `--vocab N` but not `--vocab NUM`.
                        if out[end..]
                            .chars()
                            .next()
                            .is_none_or(|c| !c.is_alphanumeric() && c != '_')
                        {
                            out.replace_range(at..end, &format!("{flag} {high}"));
                        }
                    }
                }
            }
        }
    }
    let known_program = ctx.rerun_hint.is_some() || user_script(f).is_some();
    if out.contains("devassert run") && known_program {
        let cmd = rerun_command(f, ctx);
        for placeholder in ["python train.py ...", "python train.py …"] {
            out = out.replace(placeholder, &cmd);
        }
        // `devassert run -- ...` / `devassert run --blocking -- ...`
        for placeholder in ["-- ...`", "-- …`"] {
            out = out.replace(placeholder, &format!("-- {cmd}`"));
        }
    }
    out
}

fn bound_high(b: Option<&Bound>) -> Option<i64> {
    match b?.high? {
        Scalar::Int(h) if h > 0 => Some(h),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::place::SourceLocation;
    use serde_json::json;

    fn cause(id: &str, confidence: f64, fixes: &[&str]) -> Cause {
        Cause::new(id, confidence, "why").with_fixes(fixes.iter().copied())
    }

    #[test]
    fn shares_sum_to_at_most_one_and_keep_the_order() {
        let mut c = vec![
            cause("a", 0.95, &[]),
            cause("b", 0.35, &[]),
            cause("c", 0.1, &[]),
        ];
        calibrate(&mut c);
        let sum: f64 = c.iter().map(|c| c.confidence).sum();
        assert!(sum <= 1.0 - UNLISTED_SHARE + 1e-9, "{sum}");
        assert!(c[0].confidence > c[1].confidence && c[1].confidence > c[2].confidence);
        let again = c.clone();
        calibrate(&mut c);
        assert_eq!(c, again, "a second pass changes nothing");
        // A small list keeps its scores: they need no scaling.
        let mut small = vec![cause("a", 0.3, &[]), cause("unknown", 0.05, &[])];
        calibrate(&mut small);
        assert_eq!((small[0].confidence, small[1].confidence), (0.3, 0.05));
    }

    #[test]
    fn established_causes_take_most_of_the_weight() {
        let mut c = vec![
            cause("a", 0.3, &[]),
            cause("b", 0.95, &[]),
            cause("unknown", 0.05, &[]),
        ];
        c[0].established = true;
        calibrate(&mut c);
        assert_eq!(c[0].confidence, ESTABLISHED_SHARE);
        let sum: f64 = c.iter().map(|c| c.confidence).sum();
        assert!(sum <= 1.0 + 1e-9, "{sum}");
    }

    fn finding() -> Finding {
        let mut f = Finding::new("DA202", "x", OpFamily::NllLoss2d, "s");
        f.causes = vec![
            cause(
                "label_ge_num_classes",
                0.35,
                &["set n_classes = max label + 1"],
            ),
            cause(
                "ignore_label_not_ignored",
                0.3,
                &["pass `ignore_index=255`, or convert 0/255 masks"],
            ),
        ];
        f.fixes = vec![
            "pass `ignore_index=255` for VOC masks".into(),
            "devassert scan MASKS_DIR --classes C --ignore 255".into(),
            "rerun under `devassert run -- python train.py ...` to see the op".into(),
            "rerun under `devassert run -- python train.py ...` (keeps stdout)".into(),
        ];
        f.noticed_at = Some(SourceLocation {
            file: "seg train.py".into(),
            line: 3,
            function: None,
            code: None,
        });
        f
    }

    #[test]
    fn steps_follow_the_ranked_causes_once_each() {
        let mut f = finding();
        settle_finding(&mut f, &Context::default());
        assert_eq!(
            f.fixes,
            vec![
                "set n_classes = max label + 1",
                "pass `ignore_index=255`, or convert 0/255 masks",
                "devassert scan MASKS_DIR --classes C --ignore 255",
                "rerun under `devassert run -- python 'seg train.py' …` to see the op",
            ]
        );
        let settled = f.clone();
        settle_finding(&mut f, &Context::default());
        assert_eq!(f, settled, "settling is idempotent");
        // Established, the second cause leads, and the one far behind it
        // now gives no step.
        let mut f = finding();
        f.causes[1].established = true;
        settle_finding(&mut f, &Context::default());
        assert_eq!(f.causes[0].id, "ignore_label_not_ignored");
        assert_eq!(
            f.fixes[0],
            "pass `ignore_index=255`, or convert 0/255 masks"
        );
        assert!(!f.fixes.iter().any(|s| s.starts_with("set n_classes")));
    }

    #[test]
    fn known_sizes_fill_the_suggested_scan() {
        let mut f = finding();
        f.bound = Some(Bound::index(0, 21));
        settle_finding(&mut f, &Context::default());
        assert!(f
            .fixes
            .contains(&"devassert scan MASKS_DIR --classes 21 --ignore 255".to_string()));
    }

    #[test]
    fn a_notebook_is_told_to_guard_the_notebook() {
        let mut f = finding();
        f.noticed_at = None;
        f.fixes.push(
            "or rerun with `CUDA_LAUNCH_BLOCKING=1` and capture both streams (`python train.py > log.txt 2>&1`)".into(),
        );
        f.evidence
            .insert("notebook".into(), json!("Cell In[12], line 3"));
        settle_finding(&mut f, &Context::default());
        assert!(
            f.fixes.iter().all(|s| !s.contains("devassert run")),
            "{:?}",
            f.fixes
        );
        assert!(f.fixes.iter().all(|s| !s.contains("python train.py")));
        assert_eq!(f.fixes.iter().filter(|s| *s == NOTEBOOK_GUARD).count(), 1);
        assert!(f.fixes.contains(&NOTEBOOK_BLOCKING.to_string()));
    }

    #[test]
    fn a_bare_finding_is_told_to_rerun_once() {
        let mut f = Finding::new("DA101", "x", OpFamily::IndexSelect, "s");
        f.noticed_at = finding().noticed_at;
        settle_finding(&mut f, &Context::default());
        assert_eq!(
            f.fixes,
            vec!["find the real line and the values: devassert run -- python 'seg train.py' …"]
        );
        let mut f = Finding::new("DA101", "x", OpFamily::IndexSelect, "s");
        f.noticed_at = finding().noticed_at;
        settle_finding(
            &mut f,
            &Context {
                under_run: true,
                ..Context::default()
            },
        );
        assert!(f.fixes.is_empty());
    }
}
