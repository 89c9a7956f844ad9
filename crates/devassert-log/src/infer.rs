//! When no rule's patterns own a device line as printed: what is left of it
//! still says which op failed. In order: the rule whose kernel and assertion
//! match whatever the path says; the reference assertion (every one PyTorch
//! wheels print) nearest to a retyped one, by edit distance; the kernel's or
//! the source file's name. Inductor's rules are taken only on Triton's own
//! signatures (`tmpN`, `ks0`, a generated `.py` kernel, `unknown:0:`), never
//! because an unknown assertion says "index out of bounds".

use crate::normalize::{normalize_kernel, normalize_path};
use devassert_core::catalog::fallback;
use devassert_core::{ids, Catalog, CompiledRule, DeviceAssert, OpFamily, RuleId};
use regex::Regex;
use std::sync::OnceLock;

/// Every assertion PyTorch's wheels print: file, function, assertion.
const REFERENCE: &str = include_str!("../../../catalog/reference/pytorch-device-asserts-lines.tsv");

/// Kernel names and source files that name their op whatever the assertion
/// says (first match wins: the specific before the general).
const NAMES: &[(&str, RuleId)] = &[
    (r"(?i)embedding_?bag", ids::EMBEDDING_BAG_INDEX_OUT_OF_RANGE),
    (
        r"(?i)multinomial|renormRows|Distributions",
        ids::MULTINOMIAL_INVALID_PROBABILITIES,
    ),
    (r"(?i)ctc", ids::CTC_LOSS_INVALID_TARGET),
    (
        r"(?i)Spatial\w*ClassNLLCriterion|nll_loss2d|NLLLoss2d",
        ids::SPATIAL_CROSS_ENTROPY_TARGET_OUT_OF_RANGE,
    ),
    (
        r"(?i)ClassNLLCriterion|nll_loss",
        ids::CROSS_ENTROPY_TARGET_OUT_OF_RANGE,
    ),
    (
        r"(?i)scatter|gather",
        ids::GATHER_SCATTER_INDEX_OUT_OF_RANGE,
    ),
    (
        r"(?i)indexSelect|embedding|(^|/)Indexing\.cu$|THCTensorIndex",
        ids::EMBEDDING_INDEX_OUT_OF_RANGE,
    ),
    // Ascend CANN's bounds check, inserted before an index op's gather/put.
    (r"(?i)(^|_)index_?check", ids::ADVANCED_INDEX_OUT_OF_RANGE),
];

/// Framework bounds checks that are not in PyTorch's sources but are not a
/// user's kernel either: Ascend's `ascendc/index_check/index_check.h`.
fn vendor_check(file: &str) -> bool {
    let f = file.replace('\\', "/").to_ascii_lowercase();
    f.ends_with("/index_check.h") && f.contains("ascendc")
}

/// Signs that a line comes from a Triton kernel.
fn triton(a: &DeviceAssert<'_>) -> bool {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    let re = RE.get_or_init(|| Regex::new(r"\b(tmp|ks|xindex|rindex|r0_index)\d*\b").ok());
    a.file.contains("torchinductor")
        || a.file.ends_with(".py")
        || a.file == "unknown"
        || a.kernel == Some("unknown")
        || re.as_ref().is_some_and(|r| r.is_match(a.assertion))
}

/// How a rule was found for a line no rule's patterns own.
pub struct Inferred<'c> {
    pub rule: &'c CompiledRule,
    /// What the finding says about it.
    pub how: String,
}

/// The rule for a line whose exact match was the fallback `matched`;
/// `None` keeps it.
pub fn rule_for<'c>(
    catalog: &'c Catalog,
    a: &DeviceAssert<'_>,
    matched: &CompiledRule,
) -> Option<Inferred<'c>> {
    let fallbacks = [
        fallback::UNRECOGNISED_ASSERT,
        fallback::INDUCTOR_ASSERT,
        fallback::CUSTOM_KERNEL,
    ];
    if !fallbacks.contains(&matched.id.as_str()) {
        return None;
    }
    // Python's own pseudo-files (`<frozen importlib._bootstrap_external>`, the
    // module loader that ran Inductor's generated code) are nobody's kernel.
    let pseudo = a.file.starts_with('<') || a.file.contains("importlib._bootstrap");
    if matched.id == fallback::CUSTOM_KERNEL
        && !pseudo
        && !pytorch_name(a.file)
        && !vendor_check(a.file)
    {
        // A user's own kernel may assert anything; its path says it is theirs.
        return None;
    }
    if triton(a) {
        // A Triton index bound whose path was lost is still Inductor's index rule.
        let bound = a.assertion.contains("index out of bounds");
        let index_rule = ids::INDUCTOR_INDEX_OUT_OF_BOUNDS.as_str();
        return (bound && matched.id != index_rule)
            .then(|| catalog.get(index_rule))
            .flatten()
            .map(|rule| Inferred {
                rule,
                how: "a Triton kernel's index bound (`tmpN`)".into(),
            });
    }
    // With no kernel printed, a source file's name is surer than an assertion
    // shared by several kernels (`SpatialClassNLLCriterion.c` is the 2d loss).
    if a.kernel.is_none() {
        if let Some((rule, what)) = by_name(catalog, a) {
            return Some(Inferred {
                rule,
                how: format!("named by the {what}, not by a known assertion"),
            });
        }
    }
    if let Some(rule) = catalog.match_assert_any_file(a) {
        return Some(Inferred {
            rule,
            how: format!(
                "kernel and assertion of {} (the path is garbled or missing)",
                rule.id
            ),
        });
    }
    if let Some((rule, text)) = nearest_reference(catalog, a) {
        return Some(Inferred {
            rule,
            how: format!("the assertion reads like PyTorch's `{text}` (retyped or cut)"),
        });
    }
    if let Some((rule, what)) = by_name(catalog, a) {
        return Some(Inferred {
            rule,
            how: format!("named by the {what}, not by a known assertion"),
        });
    }
    if matched.id == fallback::INDUCTOR_ASSERT {
        // No Triton signature: not Inductor's.
        let rule = catalog.get(fallback::UNRECOGNISED_ASSERT)?;
        return Some(Inferred {
            rule,
            how: "an assertion no rule knows, with no sign of a Triton kernel".into(),
        });
    }
    None
}

/// Whether a path cut to its file name (`Indexing.cu`, a paste that starts
/// mid-path) names one of PyTorch's own kernel sources.
fn pytorch_name(file: &str) -> bool {
    let base = |f: &str| f.rsplit(['/', '\\']).next().unwrap_or(f).to_string();
    let b = base(file);
    !b.is_empty() && reference().iter().any(|r| base(&r.file) == b)
}

/// The op family a kernel or file name gives, for a rule whose patterns
/// own the line but which names no family of its own (PyTorch's internal
/// invariants: the NLL overflow guard `input_index >= 0` is still an NLL 2d).
pub fn family_by_name(catalog: &Catalog, a: &DeviceAssert<'_>) -> Option<OpFamily> {
    by_name(catalog, a).map(|(r, _)| r.op_family)
}

/// The rule a CUDA source file named in a host error line gives: THC's
/// `THCudaCheck FAIL file=…/ClassNLLCriterion.cu line=110 error=59` and
/// `device-side assert triggered at …/ClassNLLCriterion.cu:110` both name
/// the kernel's source when no device line was printed.
pub fn rule_for_host_message<'c>(catalog: &'c Catalog, message: &str) -> Option<&'c CompiledRule> {
    static FILE: OnceLock<Option<Regex>> = OnceLock::new();
    let re = FILE
        .get_or_init(|| Regex::new(r"(?:file=|triggered at )(\S+\.(?:cu|cuh|c|cpp|hip))\b").ok())
        .as_ref()?;
    let file = re.captures(message)?.get(1)?.as_str();
    let a = DeviceAssert {
        file,
        kernel: None,
        assertion: "",
    };
    by_name(catalog, &a).map(|(r, _)| r)
}

fn by_name<'c>(
    catalog: &'c Catalog,
    a: &DeviceAssert<'_>,
) -> Option<(&'c CompiledRule, &'static str)> {
    static RE: OnceLock<Vec<(Regex, RuleId)>> = OnceLock::new();
    let table = RE.get_or_init(|| {
        NAMES
            .iter()
            .filter_map(|(p, id)| Regex::new(p).ok().map(|r| (r, *id)))
            .collect()
    });
    let file = a.file.rsplit(['/', '\\']).next().unwrap_or(a.file);
    for (what, text) in [
        ("kernel name", a.kernel.unwrap_or("")),
        ("source file", file),
    ] {
        if text.is_empty() || text == "unknown" {
            continue;
        }
        if let Some((_, id)) = table.iter().find(|(r, _)| r.is_match(text)) {
            if let Some(rule) = catalog.get(id.as_str()) {
                return Some((rule, what));
            }
        }
    }
    None
}

/// One reference assertion, squashed for comparison (no spaces, backticks
/// or quotes, lower case).
struct RefRow {
    file: String,
    kernel: String,
    assertion: String,
    squashed: Vec<char>,
}

fn squash(s: &str) -> Vec<char> {
    s.chars()
        .filter(|c| !c.is_whitespace() && !matches!(c, '`' | '\'' | '"' | '*'))
        .flat_map(char::to_lowercase)
        .collect()
}

fn reference() -> &'static [RefRow] {
    static ROWS: OnceLock<Vec<RefRow>> = OnceLock::new();
    ROWS.get_or_init(|| {
        REFERENCE
            .lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with("file\t"))
            .filter_map(|l| {
                let mut cols = l.split('\t');
                let (file, kernel, assertion) = (cols.next()?, cols.next()?, cols.next()?);
                if assertion.starts_with('<') {
                    // `<runtime message>`: the text comes at run time.
                    return None;
                }
                Some(RefRow {
                    file: normalize_path(file),
                    kernel: normalize_kernel(kernel),
                    assertion: assertion.to_string(),
                    squashed: squash(assertion),
                })
            })
            .collect()
    })
}

/// Edit distance between `a` and `b`, or `None` once it must exceed `max`.
fn distance(a: &[char], b: &[char], max: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        let mut row_min = cur[0];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
            row_min = row_min.min(cur[j + 1]);
        }
        if row_min > max {
            return None;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    (prev[b.len()] <= max).then_some(prev[b.len()])
}

/// The rule of the reference assertion nearest to a retyped one: at most
/// one edit in six (short assertions must match exactly, squashed).
fn nearest_reference<'c>(
    catalog: &'c Catalog,
    a: &DeviceAssert<'_>,
) -> Option<(&'c CompiledRule, String)> {
    let s = squash(a.assertion);
    if s.is_empty() {
        return None;
    }
    let max = if s.len() < 12 { 0 } else { s.len() / 6 };
    let mut best: Option<(usize, bool, &RefRow)> = None;
    for r in reference() {
        let Some(d) = distance(&s, &r.squashed, max) else {
            continue;
        };
        // The same kernel breaks a tie.
        let same = a.kernel.is_some_and(|k| k == r.kernel);
        if best.is_none_or(|(bd, bs, _)| (d, !same) < (bd, !bs)) {
            best = Some((d, same, r));
        }
    }
    let (_, _, r) = best?;
    let rule = catalog.match_assert(&DeviceAssert {
        file: &r.file,
        kernel: Some(&r.kernel),
        assertion: &r.assertion,
    });
    let fallbacks = [
        fallback::UNRECOGNISED_ASSERT,
        fallback::INDUCTOR_ASSERT,
        fallback::CUSTOM_KERNEL,
    ];
    (!fallbacks.contains(&rule.id.as_str())).then(|| (rule, r.assertion.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(file: &str, kernel: Option<&str>, assertion: &str) -> String {
        let c = Catalog::builtin();
        let a = DeviceAssert {
            file,
            kernel,
            assertion,
        };
        let m = c.match_assert(&a);
        rule_for(c, &a, m).map_or(m.id.clone(), |i| i.rule.id.clone())
    }

    #[test]
    fn distances() {
        let d = |a: &str, b: &str| distance(&squash(a), &squash(b), 5);
        assert_eq!(
            d("srcIndex < srcSelectDimSize", "srcIndex<srcSelectDimsize"),
            Some(0)
        );
        assert_eq!(
            d("t >= 0 && t < n_classes", "t >= 0 && t < n_clases"),
            Some(1)
        );
        assert_eq!(d("abc", "completely different text"), None);
    }

    #[test]
    fn ascend_index_check_is_an_index_op_not_a_user_kernel() {
        let f = ".../ascendc/index_check/index_check.h";
        assert_eq!(rule(f, None, "(idx < bound)"), "DA111");
        // The same assertion in a user's own header stays a custom kernel.
        assert_eq!(rule("/home/u/ext/check.h", None, "(idx < bound)"), "DA403");
    }

    #[test]
    fn retyped_and_pathless_lines_find_their_rule() {
        // A typo in the assertion, no path.
        assert_eq!(rule("", None, "srcIndex < srcSelectDimSise"), "DA101");
        assert_eq!(rule("", None, "t >= 0 && t < n_clases"), "DA201");
        // No path at all, kernel and assertion known.
        assert_eq!(
            rule(
                "",
                Some("indexSelectLargeIndex"),
                "srcIndex < srcSelectDimSize"
            ),
            "DA101"
        );
        // Kernel names alone.
        assert_eq!(
            rule("", Some("sampleMultinomialOnce"), "val >= zero"),
            "DA301"
        );
        assert_eq!(
            rule(
                "",
                Some("cunn_SpatialClassNLLCriterion_updateOutput_kernel"),
                "x"
            ),
            "DA202"
        );
        assert_eq!(
            rule(
                "",
                Some("THCudaTensor_scatterFillKernel"),
                "indexValue >= 0 && indexValue < tensor.sizes[dim]"
            ),
            "DA121"
        );
    }

    #[test]
    fn a_triton_bound_behind_a_frozen_importlib_path_is_inductors() {
        let c = Catalog::builtin();
        for file in [
            "<frozen importlib._bootstrap_external>",
            "importlib._bootstrap_external>",
        ] {
            let a = DeviceAssert {
                file,
                kernel: Some("triton_poi_fused_embedding_0"),
                assertion: "index out of bounds: 0 <= tmp4 < 24",
            };
            let matched = c.match_assert(&a);
            let got = rule_for(c, &a, matched).map_or(matched.id.clone(), |i| i.rule.id.clone());
            assert_eq!(got, ids::INDUCTOR_INDEX_OUT_OF_BOUNDS.as_str(), "{file}");
        }
    }

    #[test]
    fn a_host_error_naming_a_kernel_source_names_its_rule() {
        let c = Catalog::builtin();
        let id = |m: &str| rule_for_host_message(c, m).map(|r| r.id.clone());
        let thc = "THCudaCheck FAIL file=/pytorch/aten/src/THCUNN/generic/ClassNLLCriterion.cu line=110 error=59 : device-side assert triggered";
        assert_eq!(id(thc).as_deref(), Some("DA201"));
        let at = "RuntimeError: cuda runtime error (59) : device-side assert triggered at /x/THCUNN/generic/SpatialClassNLLCriterion.cu:106";
        assert_eq!(id(at).as_deref(), Some("DA202"));
        // A reduction names no op.
        assert_eq!(
            id("THCudaCheck FAIL file=/x/THC/THCReduceAll.cuh line=339 error=59"),
            None
        );
        assert_eq!(
            id("RuntimeError: CUDA error: device-side assert triggered"),
            None
        );
    }

    #[test]
    fn inductor_only_on_triton_signatures() {
        assert_eq!(
            rule(
                "unknown",
                Some("unknown"),
                "index out of bounds: 0 <= tmp7 < 50304"
            ),
            "DA401"
        );
        // An unknown assertion that says "index out of bounds" is not Inductor's.
        let r = rule("", None, "my index out of bounds check");
        assert_ne!(r, "DA401");
        assert_ne!(r, "DA402");
    }
}
