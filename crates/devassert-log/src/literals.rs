//! The literals every match of a catalog regex must contain, read from the
//! parsed pattern (regex-syntax's HIR, parsed as the regex crate parses it),
//! so that case folding is the regex's own: `(?i)unet` must see `UNet` as
//! well as `unet`, and `(?i)mask` the `ſ` and `K` its Unicode folding accepts.
//!
//! A regex's requirement is a list of literal sets: every match holds one
//! literal of each set. Literals may carry word-boundary marks (`\b`), which
//! the search honours (`INFO` is not `inf`).

use regex_syntax::hir::{Class, Hir, HirKind, Look};

/// Largest character class expanded into literals (`\s` has 25 characters;
/// a case-folded letter two or three).
const MAX_CLASS: usize = 32;

/// Most literals a set may grow to by joining neighbours: beyond it the run
/// is cut into two sets.
const MAX_SET: usize = 64;

/// Words in nearly every line of a training log: a literal set holding one
/// of them is a poor filter when the regex offers another.
const COMMON: &[&str] = &[
    "loss", "grad", "step", "epoch", "info", "lr", "rate", "time", "train", "batch", "iter",
    "it/s", "warn", "model",
];

/// A regex's requirement: every match contains one literal of each set.
/// Literals may hold `BOUNDARY` marks.
pub type Requirement = Vec<Vec<Vec<u8>>>;

/// Marks a word boundary (`\b`) in a derived literal. No catalog literal
/// holds a NUL; the marks come out before any automaton is built.
const BOUNDARY: u8 = 0;

/// Leads a literal whose ASCII letters match in either case (a
/// case-insensitive word is one literal, not its 2^n spellings). Joining a
/// folded part to an exact one folds the whole: a looser filter, never a
/// missed line. No catalog literal holds this byte either.
const FOLD: u8 = 1;

/// The requirement of a catalog regex, None when some match need hold no
/// literal of two bytes or more (the line must then be checked whatever it
/// holds). The pattern is parsed with the regex crate's defaults (Unicode,
/// case-sensitive unless `(?i)`), so case-insensitive parts come out as the
/// classes the regex matches.
pub fn pattern_requirement(pattern: &str) -> Option<Requirement> {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .ok()?;
    let mut req = requirement(&hir)?;
    // Single bytes filter nothing.
    req.retain(|s| s.iter().all(|l| bare_len(l) >= 2));
    (!req.is_empty()).then_some(req)
}

/// A derived literal as the automata take it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Literal {
    /// Without its marks.
    pub bytes: Vec<u8>,
    /// Its regex wants a word boundary before / after it (marks inside it
    /// are dropped: a looser filter, never a missed line).
    pub before: bool,
    pub after: bool,
    /// ASCII letters match in either case.
    pub fold: bool,
}

/// A derived literal (with its marks) as the automata take it.
pub fn unmark(l: &[u8]) -> Literal {
    let fold = l.first() == Some(&FOLD);
    let l = if fold { &l[1..] } else { l };
    Literal {
        bytes: l.iter().copied().filter(|&b| b != BOUNDARY).collect(),
        before: l.first() == Some(&BOUNDARY),
        after: l.len() > 1 && l.last() == Some(&BOUNDARY),
        fold,
    }
}

/// The set of a requirement that filters best: its shortest literal the
/// longest, and no common word.
pub fn best_set(req: &Requirement) -> Option<&Vec<Vec<u8>>> {
    best_index(req).map(|i| &req[i])
}

/// Where [`best_set`] is in `req`.
pub fn best_index(req: &Requirement) -> Option<usize> {
    (0..req.len())
        .filter(|&i| !req[i].is_empty())
        .max_by_key(|&i| score(&req[i]))
}

fn bare_len(l: &[u8]) -> usize {
    l.iter().filter(|&&b| b != BOUNDARY && b != FOLD).count()
}

/// `a` then `b`, folded when either is.
fn join(a: &[u8], b: &[u8]) -> Vec<u8> {
    let (fa, fb) = (a.first() == Some(&FOLD), b.first() == Some(&FOLD));
    let mut out = Vec::with_capacity(a.len() + b.len() + 1);
    if fa || fb {
        out.push(FOLD);
    }
    out.extend_from_slice(if fa { &a[1..] } else { a });
    out.extend_from_slice(if fb { &b[1..] } else { b });
    out
}

fn requirement(h: &Hir) -> Option<Requirement> {
    match h.kind() {
        HirKind::Literal(l) => Some(vec![vec![l.0.to_vec()]]),
        HirKind::Capture(c) => requirement(&c.sub),
        HirKind::Repetition(r) if r.min >= 1 => requirement(&r.sub),
        HirKind::Concat(subs) => {
            // Runs of exactly-known parts join into longer literals (`-` + `(1|100)` → `-1`, `-100`).
            let mut all: Requirement = Vec::new();
            let mut run: Option<Exact> = None;
            for sub in subs {
                match (exact(sub), run.take()) {
                    (Some(e), None) => run = Some(e),
                    (Some(e), Some(r)) => match cross(&r, &e) {
                        Some(c) => run = Some(c),
                        None => {
                            all.push(r.all);
                            run = Some(e);
                        }
                    },
                    (None, r) => {
                        all.extend(r.map(|r| r.all));
                        all.extend(requirement(sub).into_iter().flatten());
                    }
                }
            }
            all.extend(run.map(|r| r.all));
            (!all.is_empty()).then_some(all)
        }
        HirKind::Alternation(subs) => {
            let mut union = Vec::new();
            for s in subs {
                union.extend(best_set(&requirement(s)?)?.iter().cloned());
            }
            Some(vec![union])
        }
        _ => None,
    }
}

/// The finite set of strings a part of a regex matches exactly.
struct Exact {
    all: Vec<Vec<u8>>,
    /// The strings are cut short (only the first byte of a character is
    /// known): nothing may be joined after them.
    cut: bool,
}

impl Exact {
    fn whole(all: Vec<Vec<u8>>) -> Option<Self> {
        Some(Exact { all, cut: false })
    }
}

/// What a raw line may hold right after text that ends the line the regex
/// sees (`$`): the regexes see the line cleaned, so its end may be followed
/// by trailing white space (Unicode's too, here by its first byte), an
/// escape sequence (`ESC`, or the pasted `ESC[` and `^M` forms), a carriage
/// return, a repr's `\n`, or the line's own `\n`.
const LINE_END: &[u8] = b"\n\r\x1b^E\\ \t\x0b\x0c\xc2\xe1\xe2\xe3";

/// The finite set of strings `h` matches exactly, when small.
fn exact(h: &Hir) -> Option<Exact> {
    match h.kind() {
        HirKind::Literal(l) => Exact::whole(vec![l.0.to_vec()]),
        HirKind::Look(Look::End | Look::EndLF | Look::EndCRLF) => Some(Exact {
            all: LINE_END.iter().map(|&b| vec![b]).collect(),
            cut: true,
        }),
        HirKind::Look(Look::WordAscii | Look::WordUnicode) => Exact::whole(vec![vec![BOUNDARY]]),
        // A small class joins its neighbours: `-1` followed by `[\s\]),]` is
        // `-1,`, `-1]`, … and not the `-1` of every `-1.2e-05` in a log; a
        // case-folded letter is one folded literal, plus the other
        // characters its Unicode folding brings (`ſ` for `s`).
        HirKind::Class(Class::Unicode(c)) => {
            let chars = c
                .ranges()
                .iter()
                .map(|r| u32::from(r.end()) - u32::from(r.start()) + 1)
                .sum::<u32>();
            if chars as usize > MAX_CLASS {
                return None;
            }
            let each: Vec<char> = c
                .ranges()
                .iter()
                .flat_map(|r| r.start()..=r.end())
                .collect();
            let has = |ch: char| each.contains(&ch);
            if each.iter().filter(|ch| !ch.is_ascii()).count() <= 2 {
                let mut all: Vec<Vec<u8>> = Vec::new();
                for &ch in &each {
                    let lit = if ch.is_ascii_alphabetic()
                        && has(ch.to_ascii_lowercase())
                        && has(ch.to_ascii_uppercase())
                    {
                        vec![FOLD, ch.to_ascii_lowercase() as u8]
                    } else {
                        ch.to_string().into_bytes()
                    };
                    if !all.contains(&lit) {
                        all.push(lit);
                    }
                }
                return Exact::whole(all);
            }
            // Many characters outside ASCII (`\s`): each stands as its first
            // byte, and the literal ends there.
            let mut leads: Vec<Vec<u8>> = each
                .iter()
                .map(|ch| vec![ch.to_string().as_bytes()[0]])
                .collect();
            leads.sort();
            leads.dedup();
            Some(Exact {
                all: leads,
                cut: true,
            })
        }
        HirKind::Class(Class::Bytes(c)) => {
            let n: usize = c
                .ranges()
                .iter()
                .map(|r| usize::from(r.end() - r.start()) + 1)
                .sum();
            (n <= MAX_CLASS).then(|| Exact {
                all: c
                    .ranges()
                    .iter()
                    .flat_map(|r| (r.start()..=r.end()).map(|b| vec![b]))
                    .collect(),
                cut: false,
            })
        }
        HirKind::Capture(c) => exact(&c.sub),
        // An optional part (`ids?`, `token[ _]?id`) is its strings or none:
        // the literal runs on across it instead of stopping before it.
        HirKind::Repetition(r) if r.max == Some(1) => {
            let mut e = exact(&r.sub)?;
            if r.min == 0 {
                e.all.push(Vec::new());
                e.all.sort();
                e.all.dedup();
            }
            Some(e)
        }
        HirKind::Alternation(subs) => {
            let (mut all, mut cut) = (Vec::new(), false);
            for s in subs {
                let e = exact(s)?;
                all.extend(e.all);
                cut |= e.cut;
            }
            all.sort();
            all.dedup();
            (all.len() <= MAX_SET).then_some(Exact { all, cut })
        }
        HirKind::Concat(subs) => subs.iter().try_fold(
            Exact {
                all: vec![Vec::new()],
                cut: false,
            },
            |acc, s| cross(&acc, &exact(s)?),
        ),
        _ => None,
    }
}

/// `a` followed by `b`, when `a` may be followed and the product is small.
fn cross(a: &Exact, b: &Exact) -> Option<Exact> {
    if a.cut || a.all.len() * b.all.len() > MAX_SET {
        return None;
    }
    let all = a
        .all
        .iter()
        .flat_map(|x| b.all.iter().map(move |y| join(x, y)))
        .collect();
    Some(Exact { all, cut: b.cut })
}

/// How good a literal set is as a filter: longer shortest literal, no common words.
fn score(set: &[Vec<u8>]) -> (bool, usize) {
    let common = set.iter().any(|l| {
        let s = String::from_utf8_lossy(l).to_ascii_lowercase();
        COMMON.iter().any(|c| s.contains(c))
    });
    (!common, set.iter().map(|l| bare_len(l)).min().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lits(p: &str) -> Vec<Vec<String>> {
        pattern_requirement(p)
            .unwrap_or_default()
            .into_iter()
            .map(|s| {
                s.into_iter()
                    .map(|l| String::from_utf8_lossy(&l).to_string())
                    .collect()
            })
            .collect()
    }

    /// Whether `text` holds a literal of every set of the requirement.
    fn meets(p: &str, text: &str) -> bool {
        let req = pattern_requirement(p).unwrap_or_default();
        !req.is_empty()
            && req.iter().all(|set| {
                set.iter().any(|l| {
                    let l = unmark(l);
                    text.as_bytes().windows(l.bytes.len()).any(|w| {
                        if l.fold {
                            w.eq_ignore_ascii_case(&l.bytes)
                        } else {
                            w == l.bytes
                        }
                    })
                })
            })
    }

    #[test]
    fn requirements_of_patterns() {
        let r = lits(
            r"Token indices sequence length is longer than the specified maximum sequence length .*\((?P<value>\d+) > (?P<high>\d+)\)",
        );
        assert!(r
            .iter()
            .any(|s| s.iter().all(|l| l.starts_with("Token indices"))));
        assert!(lits(r"\d+>\d+").is_empty());
        // Optional parts are spelled out: every spelling, and no bare `token`
        // (in every tokenizer warning) to filter on.
        let r = lits(r"(?i)\btoken[ _]?ids?\W{1,3}\d+\b");
        assert_eq!(r.len(), 1, "{r:?}");
        for l in ["token id", "token_ids", "tokenid"] {
            assert!(r[0].iter().any(|x| x.ends_with(l)), "{l:?} in {r:?}");
        }
        assert!(r[0].iter().all(|l| l.contains("id")), "{r:?}");
        // `-1` or `-100`, then a space, `]`, `)`, `,` or the line's end
        // (`\n`): not the `-1` of every `-1.2e-05` in a log.
        let r = lits(r"(^|[\s\[(,=])-(1|100)([\s\]),]|$)");
        assert_eq!(r.len(), 1, "{r:?}");
        for l in [
            "-1,", "-1 ", "-1]", "-1\n", "-1\r", "-1\x1b", "-100)", "-100\n",
        ] {
            assert!(r[0].contains(&l.to_string()), "{l:?} in {r:?}");
        }
        assert!(
            !r[0].iter().any(|l| l == "-1" || l.starts_with("-1.")),
            "{r:?}"
        );
        assert_eq!(
            lits(r"(^|[^\d.])255([^\d.]|$)"),
            vec![vec!["255".to_string()]]
        );
        let r =
            pattern_requirement(r"(?i)\b(loss|grad\w*|logits?|probs?)\b[^\n]{0,40}\b(nan|inf)\b")
                .unwrap_or_default();
        assert_eq!(r.len(), 2);
        let best: Vec<Literal> = best_set(&r)
            .map(|s| s.iter().map(|l| unmark(l)).collect())
            .unwrap_or_default();
        // One literal for every casing, wanted at word boundaries on both sides.
        for w in ["nan", "inf"] {
            let want = Literal {
                bytes: w.as_bytes().to_vec(),
                before: true,
                after: true,
                fold: true,
            };
            assert!(best.contains(&want), "{w} in {best:?}");
        }
    }

    #[test]
    fn case_insensitive_patterns_see_every_casing() {
        let seg = r"(?i)\b(seg\w*|deeplab\w*|unet\w*|cityscapes|voc\w*|ade20k|pspnet|mask\w*)\b";
        for word in [
            "UNet",
            "unet",
            "DeepLabV3",
            "PSPNet",
            "ADE20K",
            "CityScapes",
            "VOC2012",
            "MaskFormer",
            // Unicode folding: `s` is also `ſ`, `k` also the Kelvin sign.
            "maſk",
            "ade20\u{212a}",
        ] {
            assert!(
                regex::Regex::new(seg).is_ok_and(|re| re.is_match(word)),
                "{word}"
            );
            assert!(meets(seg, word), "{word} holds no literal of {seg}");
        }
        assert!(!meets(seg, "step 8: throughput 9000 tokens/s"));
        let temp = r"(?i)\btemperature\b\W{1,3}0(\.0)?\b";
        for word in ["TeMpErAtUrE=0", "Temperature: 0.0", "TEMPERATURE 0"] {
            assert!(meets(temp, word), "{word}");
        }
        // One folded literal, not 2^11 spellings (nor a cut after six letters).
        let r = pattern_requirement(temp).unwrap_or_default();
        let best: Vec<Literal> = best_set(&r)
            .map(|s| s.iter().map(|l| unmark(l)).collect())
            .unwrap_or_default();
        assert_eq!(
            best,
            vec![Literal {
                bytes: b"temperature".to_vec(),
                before: true,
                after: true,
                fold: true
            }]
        );
        // A case-sensitive pattern stays so.
        assert!(!meets(
            "Class values must be non-negative",
            "class values must be non-negative"
        ));
    }
}
