//! explain's causes re-decided by the facts a log states. A rule's causes
//! come scored by their prior plus the log's pattern evidence (a frame is
//! the position embedding, the log shows `add_tokens` …); the engine's
//! [`Decision`] over the offending values, the bound and the facts read
//! from the lines then adds what its supports weigh, drops the causes a
//! fact refutes, and brings in the causes the facts call for that the rule
//! does not list (`off_by_one`). A cause that nothing in the log bears on
//! says it is ranked by its prior.

use super::decision::Decision;
use crate::finding::Cause;

/// The causes, best first, and the ones the log's facts refute.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Blended {
    pub causes: Vec<Cause>,
    pub ruled_out: Vec<String>,
    /// The fixes of the refuted causes and of the causes no stated value
    /// fits: a general fix that says the same (`x` / `x after y`) must not
    /// be shown either.
    pub refuted_fixes: Vec<String>,
}

impl Blended {
    /// Whether `fix` is one of a refuted cause's fixes.
    pub fn refutes_fix(&self, fix: &str) -> bool {
        self.refuted_fixes
            .iter()
            .any(|g| fix.starts_with(g.as_str()) || g.starts_with(fix))
    }
}

/// Said of a cause the log gives no evidence for.
pub const BY_PRIOR: &str = "(nothing in the log bears on it: ranked by its prior)";

/// Said of a cause none of the log's offending values fits (no negative
/// value for a negative-label cause …): the log states some of the bad
/// values, not all, so it is not ruled out; its fixes could not make the
/// stated values valid, so none is shown.
pub const UNFIT: &str =
    "(none of the offending values the log states fits it, though values it does not state might; no fix shown)";
pub const UNFIT_BY_PRIOR: &str =
    "(none of the offending values the log states fits it, though values it does not state might: ranked by its prior, no fix shown)";

/// Said of a kept cause whose every fix, applied to the facts, fails.
pub const CHECKED_OUT: &str =
    "(its fixes, applied to the facts the log states, would not make them valid: none shown)";
pub const CHECKED_OUT_BY_PRIOR: &str =
    "(ranked by its prior; its fixes, applied to the facts the log states, would not make them valid: none shown)";

/// Whether `why` already cites the log's evidence.
pub(crate) fn cites(why: &str) -> bool {
    why.contains("(evidence:") || why.contains("(facts:") || why.ends_with(CHECKED_OUT_BY_PRIOR)
}

pub fn blend(ranked: Vec<Cause>, d: &Decision) -> Blended {
    let mut out = Blended::default();
    let supported = |id: &str| {
        d.causes
            .iter()
            .position(|c| c.id == id)
            .filter(|&k| !d.support[k].is_empty())
    };
    for mut c in ranked {
        if d.fixes_refuted.contains(&c.id) && !c.established {
            // Every checked fix of the cause fails on the facts: its
            // general fixes say the same, unchecked.
            out.refuted_fixes.append(&mut c.fixes);
            let said = if supported(&c.id).is_some() || cites(&c.why) {
                CHECKED_OUT
            } else {
                CHECKED_OUT_BY_PRIOR
            };
            c.why = format!("{} {said}", c.why);
        }
        if let Some(k) = supported(&c.id) {
            c.confidence += d.gain[k];
            c.why = format!("{} (facts: {})", c.why, d.support[k].join("; "));
            // The engine's fixes are checked against the facts: they go first.
            let mut fixes = d.causes[k].fixes.clone();
            for x in c.fixes {
                if !fixes.contains(&x) {
                    fixes.push(x);
                }
            }
            c.fixes = fixes;
        } else if !d.causes.iter().any(|m| m.id == c.id) {
            if let Some(r) = d.ruled_out.iter().find(|r| {
                r.strip_prefix(c.id.as_str())
                    .is_some_and(|t| t.starts_with(':'))
            }) {
                out.ruled_out.push(r.clone());
                out.refuted_fixes.extend(c.fixes);
                continue;
            }
            if d.unfit.contains(&c.id) && !c.established {
                out.refuted_fixes.append(&mut c.fixes);
                let said = if cites(&c.why) { UNFIT } else { UNFIT_BY_PRIOR };
                c.why = format!("{} {said}", c.why);
                out.causes.push(c);
                continue;
            }
        }
        if !cites(&c.why) && !c.established && c.id != "unknown" {
            c.why = format!("{} {BY_PRIOR}", c.why);
        }
        out.causes.push(c);
    }
    // Causes the facts call for that the rule does not list.
    for (k, c) in d.causes.iter().enumerate() {
        if !d.support[k].is_empty() && !out.causes.iter().any(|m| m.id == c.id) {
            let mut c = c.clone();
            c.why = format!(
                "{} (facts: {})",
                strip_support(&c.why),
                d.support[k].join("; ")
            );
            out.causes.push(c);
        }
    }
    // A fix a kept cause still shows is not refuted by another's.
    let shown: Vec<&String> = out.causes.iter().flat_map(|c| &c.fixes).collect();
    out.refuted_fixes.retain(|x| !shown.contains(&x));
    // Best first; equal scores keep the rule's order. A cause none of the
    // stated values fits goes after every cause one of them fits: the
    // values the log states are the only ones explain knows.
    let unfit = |c: &Cause| !c.established && d.unfit.contains(&c.id);
    out.causes.sort_by(|a, b| {
        unfit(a)
            .cmp(&unfit(b))
            .then(b.confidence.total_cmp(&a.confidence))
    });
    out
}

/// The engine's `why` is `text: support; support`: the text alone.
fn strip_support(why: &str) -> &str {
    why.split_once(": ").map_or(why, |(t, _)| t)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    // Blending the engine's own decisions is tested in `facts`' tests:
    // this module must not import the engine it sits under.
    pub(crate) fn rule_causes() -> Vec<Cause> {
        vec![
            Cause::new("token_id_ge_vocab", 0.30, "ids past the table"),
            Cause::new(
                "seq_len_gt_max_positions",
                0.55,
                "too long (evidence: a frame is the position embedding)",
            )
            .with_fixes(["truncate the inputs".to_string()]),
            Cause::new("negative_index", 0.10, "negative ids"),
        ]
    }

    #[test]
    fn without_facts_the_rule_order_stays_and_says_so() {
        let b = blend(rule_causes(), &Decision::default());
        let ids: Vec<_> = b.causes.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "seq_len_gt_max_positions",
                "token_id_ge_vocab",
                "negative_index"
            ]
        );
        assert!(!b.causes[0].why.contains(BY_PRIOR));
        assert!(b.causes[1].why.ends_with(BY_PRIOR));
    }

    #[test]
    fn a_cause_no_stated_value_fits_stays_after_the_fitting_ones_without_its_fixes() {
        let ranked = vec![
            Cause::new("label_ge_num_classes", 0.35, "too few classes").with_fixes([
                "set num_labels = max label + 1".to_string(),
                "check".to_string(),
            ]),
            Cause::new("negative_label", 0.2, "negative labels")
                .with_fixes(["map negative labels".to_string(), "check".to_string()]),
        ];
        let d = Decision {
            unfit: vec!["label_ge_num_classes".into()],
            ..Decision::default()
        };
        let b = blend(ranked, &d);
        // Its prior is the higher one, but a cause a stated value fits goes first.
        assert_eq!(b.causes[0].id, "negative_label", "{b:#?}");
        let c = &b.causes[1];
        assert_eq!(c.id, "label_ge_num_classes", "not ruled out: {b:#?}");
        assert!(c.fixes.is_empty(), "{c:#?}");
        assert!(c.why.ends_with(UNFIT_BY_PRIOR), "{}", c.why);
        assert!(b.ruled_out.is_empty());
        assert!(b.refutes_fix("set num_labels = max label + 1"));
        // A fix a fitting cause shows too stays.
        assert!(!b.refutes_fix("check"), "{b:#?}");
    }

    #[test]
    fn a_kept_cause_whose_every_checked_fix_fails_shows_no_general_fix() {
        let ranked = vec![
            Cause::new("label_ge_num_classes", 0.35, "too few classes")
                .with_fixes(["set num_labels = max label + 1".to_string()]),
            Cause::new("off_by_one", 0.3, "counted from 1").with_fixes([
                "subtract 1 from the labels".to_string(),
                "check".to_string(),
            ]),
        ];
        let d = Decision {
            causes: vec![
                Cause::new("label_ge_num_classes", 0.8, "too few classes"),
                Cause::new("off_by_one", 0.3, "counted from 1"),
            ],
            support: vec![vec!["labels reach 3".into()], vec![]],
            gain: vec![0.6, 0.0],
            fixes_refuted: vec!["off_by_one".into()],
            ..Decision::default()
        };
        let b = blend(ranked, &d);
        let c = b
            .causes
            .iter()
            .find(|c| c.id == "off_by_one")
            .expect("kept");
        assert!(c.fixes.is_empty(), "{c:#?}");
        assert!(c.why.ends_with(CHECKED_OUT_BY_PRIOR), "{}", c.why);
        assert!(b.refutes_fix("subtract 1 from the labels"));
        assert!(b.ruled_out.is_empty());
        // The other cause's general fix stays.
        assert!(!b.refutes_fix("set num_labels = max label + 1"));
    }
}
