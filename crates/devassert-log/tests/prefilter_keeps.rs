//! The prefilter skips almost every line of a log unread, so it must never
//! skip one that a catalog regex matches. The reference is the catalog
//! itself: `Catalog::observe_log_line` (and `match_cpu_message` for the
//! host-side messages) run on the line as the reader sees it, once its
//! launcher prefix and colour codes are off. The lines are written from the
//! catalog's own patterns (a random walk of each parsed regex), with noise
//! around them, letters in other cases, prefixes, and progress lines between.

use devassert_core::{Catalog, LogHits};
use devassert_log::{readable, Facts, LogAnalyzer};
use proptest::prelude::*;
use regex_syntax::hir::{Class, ClassUnicode, Hir, HirKind, Look};

/// A small deterministic generator: proptest picks the seed, so a failure
/// replays and shrinks towards small seeds.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        // xorshift64*
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n.max(1)
    }
}

/// Characters a generated line may hold: no line breaks, controls or
/// backslashes (the reader reads `\n` in a repr as a line break).
fn printable(c: char) -> bool {
    !c.is_control() && c != '\\' && c != '\u{2028}' && c != '\u{2029}'
}

fn pick(class: &ClassUnicode, rng: &mut Rng) -> Option<char> {
    let within = |c: char| {
        class
            .ranges()
            .iter()
            .any(|r| r.start() <= c && c <= r.end())
    };
    let tame: Vec<char> = (' '..='~').filter(|&c| printable(c) && within(c)).collect();
    if !tame.is_empty() && rng.below(8) != 0 {
        return Some(tame[rng.below(tame.len())]);
    }
    // Now and then any character of the class (`ſ` for `(?i)s`, `\u{a0}` for `\s`).
    let ranges = class.ranges();
    for _ in 0..16 {
        let r = ranges.get(rng.below(ranges.len()))?;
        let span = u32::from(r.end()) - u32::from(r.start());
        let at = u32::from(r.start()) + rng.below(span as usize + 1) as u32;
        if let Some(c) = char::from_u32(at).filter(|&c| printable(c)) {
            return Some(c);
        }
    }
    tame.first().copied()
}

/// A random string the regex `h` may match (the reference decides whether it does).
fn walk(h: &Hir, rng: &mut Rng, out: &mut String) {
    match h.kind() {
        HirKind::Empty => {}
        HirKind::Look(Look::WordAscii | Look::WordUnicode) => match rng.below(4) {
            0 => out.push(' '),
            1 => out.push('x'),
            _ => {}
        },
        HirKind::Look(_) => {}
        HirKind::Literal(l) => out.push_str(&String::from_utf8_lossy(&l.0)),
        HirKind::Class(Class::Unicode(c)) => out.extend(pick(c, rng)),
        HirKind::Class(Class::Bytes(c)) => {
            let bytes: Vec<u8> = c
                .ranges()
                .iter()
                .flat_map(|r| r.start()..=r.end())
                .filter(|&b| printable(char::from(b)) && b.is_ascii())
                .collect();
            if let Some(&b) = bytes.get(rng.below(bytes.len())) {
                out.push(char::from(b));
            }
        }
        HirKind::Repetition(r) => {
            let max = r.max.unwrap_or(r.min + 3).min(r.min + 3);
            let n = r.min as usize + rng.below((max - r.min) as usize + 1);
            for _ in 0..n {
                walk(&r.sub, rng, out);
            }
        }
        HirKind::Capture(c) => walk(&c.sub, rng, out),
        HirKind::Concat(subs) => subs.iter().for_each(|s| walk(s, rng, out)),
        HirKind::Alternation(subs) => walk(&subs[rng.below(subs.len())], rng, out),
    }
}

/// Every `log` and `cpu_messages` regex of the catalog, parsed.
fn patterns(catalog: &Catalog) -> Vec<Hir> {
    catalog
        .log_patterns()
        .iter()
        .chain(catalog.cpu_patterns())
        .map(|re| {
            regex_syntax::ParserBuilder::new()
                .build()
                .parse(re.as_str())
                .unwrap_or_else(|e| panic!("{}: {e}", re.as_str()))
        })
        .collect()
}

/// Text around a generated line: words of training logs, near misses of
/// catalog literals, and random characters.
const NOISE: &[&str] = &[
    "",
    "",
    "",
    " ",
    "loss ",
    "INFO - ",
    "step 8: ",
    "tokens/s ",
    "=",
    ", ",
    "é",
    "█",
    "x",
    "42 ",
    "-1.5e-05 ",
    "lr ",
    "[",
    "]",
    "(",
    ")",
    "'",
    "\"",
    ": ",
    "_",
    "seg",
    "inf",
    "nanny ",
    "Assert",
    "UNet",
    "tmp",
    "<",
    ">",
    "#",
    "\t",
];

/// Prefixes the reader takes off before the regexes see the line, and what
/// closes them.
const PREFIXES: &[(&str, &str)] = &[
    ("", ""),
    ("", ""),
    ("[rank3]:", ""),
    ("[1,0]<stderr>:", ""),
    ("(RayTrainWorker pid=112196) ", ""),
    ("\x1b[31m", "\x1b[0m"),
    // Progress bars redrawn on the same line with carriage returns.
    (" 45%|████▌     | 450/1000 [00:45<00:55, 9.98it/s]\r", ""),
    ("", "\r 46%|████▌     | 460/1000"),
    ("", "^M"),
    ("", "\r\n"),
];

/// Lines between the generated ones, like a training log's.
const PROGRESS: &[&str] = &[
    "{'loss': 2.5149, 'grad_norm': 1.9528, 'learning_rate': 5.000e-05, 'epoch': 0.01}",
    " 45%|████▌     | 450/1000 [00:45<00:55, 9.98it/s]",
    "2024-05-01 12:00:01,234 - INFO - trainer - step 450: throughput 9876 tokens/s, mem 41 GiB",
    "",
];

/// One generated line: (what the regexes see, the raw line).
#[derive(Debug, Clone)]
struct Made {
    texts: Vec<String>,
    raw: String,
}

#[derive(Debug, Clone)]
struct Recipe {
    pattern: usize,
    seed: u64,
    before: usize,
    after: usize,
    prefix: usize,
    flip: bool,
}

fn make(hirs: &[Hir], r: &Recipe) -> Made {
    let mut rng = Rng(r.seed | 1);
    let mut body = String::new();
    walk(&hirs[r.pattern % hirs.len()], &mut rng, &mut body);
    if r.flip {
        body = body
            .chars()
            .map(|c| match rng.below(2) {
                0 if c.is_ascii_lowercase() => c.to_ascii_uppercase(),
                0 if c.is_ascii_uppercase() => c.to_ascii_lowercase(),
                _ => c,
            })
            .collect();
    }
    let text = format!(
        "{}{}{}",
        NOISE[r.before % NOISE.len()],
        body,
        NOISE[r.after % NOISE.len()]
    );
    let (open, close) = PREFIXES[r.prefix % PREFIXES.len()];
    let raw = format!("{open}{text}{close}");
    // What the reader sees: the segments of the line, their prefixes off (a
    // generated line can itself look like one: `255: ` is `srun --label`'s).
    let texts = readable(&raw)
        .into_iter()
        .map(|(body, _)| body.trim().to_string())
        .collect();
    Made { raw, texts }
}

/// The reader's facts on `lines`, each followed by a progress line.
fn read(lines: &[Made], gap: usize) -> Facts {
    let mut log = String::new();
    for (i, m) in lines.iter().enumerate() {
        for k in 0..gap {
            log.push_str(PROGRESS[(i + k) % PROGRESS.len()]);
            log.push('\n');
        }
        log.push_str(&m.raw);
        log.push('\n');
    }
    let mut a = LogAnalyzer::new(Catalog::builtin());
    a.begin_input("train.log");
    a.feed(log.as_bytes());
    a.facts()
}

/// The log patterns the catalog says `lines` match, and the rules of their
/// host-side messages; and what the reader found of them that it missed.
fn missed(lines: &[Made], facts: &Facts) -> Vec<String> {
    let catalog = Catalog::builtin();
    let mut missing = Vec::new();
    for (m, text) in lines
        .iter()
        .flat_map(|m| m.texts.iter().map(move |t| (m, t)))
    {
        let mut want = LogHits::default();
        catalog.observe_log_line(text, &mut want);
        for (i, re) in catalog.log_patterns().iter().enumerate() {
            if want.contains(i) && !facts.hits.contains(i) {
                missing.push(format!(
                    "log {:?} in {:?} (raw {:?})",
                    re.as_str(),
                    text,
                    m.raw
                ));
            }
        }
        if let Some(rule) = catalog.match_cpu_message(text) {
            if !facts.cpu.iter().any(|h| h.rule == rule.id) {
                missing.push(format!("cpu {} in {:?} (raw {:?})", rule.id, text, m.raw));
            }
        }
    }
    missing
}

fn recipe() -> impl Strategy<Value = Recipe> {
    (
        any::<usize>(),
        any::<u64>(),
        any::<usize>(),
        any::<usize>(),
        any::<usize>(),
        any::<bool>(),
    )
        .prop_map(|(pattern, seed, before, after, prefix, flip)| Recipe {
            pattern,
            seed,
            before,
            after,
            prefix,
            flip,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// A few generated lines among progress lines: every pattern and host
    /// message the catalog finds in them, the reader finds too.
    #[test]
    fn the_prefilter_keeps_every_line_a_catalog_regex_matches(
        recipes in proptest::collection::vec(recipe(), 1..8),
        gap in 0usize..3,
    ) {
        let hirs = patterns(Catalog::builtin());
        let lines: Vec<Made> = recipes.iter().map(|r| make(&hirs, r)).collect();
        let facts = read(&lines, gap);
        let missing = missed(&lines, &facts);
        prop_assert!(missing.is_empty(), "missed:\n{}", missing.join("\n"));
    }
}

/// Every pattern, many times, in one buffer large enough to be searched in
/// pieces on several threads. Host messages are left to the property above
/// (the reader keeps the first few only).
#[test]
fn every_pattern_is_found_in_a_large_buffer() {
    let catalog = Catalog::builtin();
    let hirs = patterns(catalog);
    let mut lines = Vec::new();
    for seed in 0..24u64 {
        for pattern in 0..catalog.log_patterns().len() {
            lines.push(make(
                &hirs,
                &Recipe {
                    pattern,
                    seed: seed * 7919 + pattern as u64,
                    before: seed as usize,
                    after: seed as usize / 3,
                    prefix: seed as usize,
                    flip: seed % 2 == 1,
                },
            ));
        }
    }
    let facts = read(&lines, 10);
    let missing: Vec<String> = missed(&lines, &facts)
        .into_iter()
        .filter(|m| m.starts_with("log "))
        .collect();
    assert!(missing.is_empty(), "missed:\n{}", missing.join("\n"));
    // The generator reaches most patterns (a walk can miss a `\b`).
    let mut want = LogHits::default();
    lines
        .iter()
        .flat_map(|m| &m.texts)
        .for_each(|t| catalog.observe_log_line(t, &mut want));
    assert!(
        want.len() * 10 >= catalog.log_patterns().len() * 9,
        "{} of {} patterns generated",
        want.len(),
        catalog.log_patterns().len()
    );
}

/// Found by the property above: a prefixed row padded to the widest row's
/// width, then unprefixed rows, are read apart when
/// - the second row is wider than the first: a terminal never wraps one line
///   into a row wider than its first, so the third row (`UNet…`) is not
///   glued to its last word (`…tmpUNet`);
/// - the first row already states a host message: the second one's is read
///   too (the reader takes one message a line).
#[test]
fn rows_after_a_padded_prefixed_row_are_read_apart_where_they_cannot_be_its_rest() {
    let cases: [&[&str]; 2] = [
        &[
            "[rank3]: input value should be between 0~1, but got i\u{e899e}loss ",
            "\u{1b}[31mtmpToken indices sequence length is longer than the specified maximum sequence length for this model (\u{17e4}6 > 94)tmp\u{1b}[0m",
            "UNetTArGEt -\u{17e4}6 Is OUT Of BoUNDS\r 46%|████▌     | 460/1000",
        ],
        &[
            "[rank3]:index out of range: Tried to access index -\u{966} out of table with 249 rows ",
            "\u{1b}[31mis not satisfied.\t\u{1b}[0m",
        ],
    ];
    for raws in cases {
        let lines: Vec<Made> = raws
            .iter()
            .map(|raw| Made {
                texts: readable(raw)
                    .into_iter()
                    .map(|(body, _)| body.trim().to_string())
                    .collect(),
                raw: raw.to_string(),
            })
            .collect();
        let missing = missed(&lines, &read(&lines, 0));
        assert!(missing.is_empty(), "missed:\n{}", missing.join("\n"));
    }
}
