//! The launcher and logging prefixes a line may start with (`[rank3]:`,
//! `[1,0]<stderr>:`, `(RayTrainWorker pid=…)`, glog, server loggers'
//! `ERROR 05-14 10:22:33 [file.py:671]`, logging timestamps, NCCL's
//! `[Rank 1]`), taken off with the rank and the time they give.

/// What the prefixes of a line said.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Prefix {
    pub rank: Option<i64>,
    /// A sortable timestamp, with the kind of clock it came from (values of
    /// different kinds are not comparable).
    pub time: Option<Stamp>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Stamp {
    pub kind: u8,
    pub value: u64,
}

/// Take the launcher and logging prefixes off the start of `s`. Returns the
/// rest (leading indentation kept, so traceback frames stay recognisable)
/// and what the prefixes said.
///
/// The last two answers are remembered: deciding whether a row a terminal
/// may have cut goes on asks it of the row, and of the row's body, up to
/// five times each.
pub fn strip_prefixes(s: &str) -> (&str, Prefix) {
    /// Longer lines are parsed every time (a key is a copy).
    const MAX_KEY: usize = 512;
    type Answer = (String, usize, Prefix);
    thread_local! {
        /// The two latest lines asked, and where their rest starts; the
        /// later first.
        static LAST: std::cell::RefCell<[Answer; 2]> = std::cell::RefCell::default();
    }
    if s.len() > MAX_KEY {
        return parse_prefixes(s);
    }
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if last[0].0 != s {
            last.swap(0, 1);
            if last[0].0 != s {
                let (rest, prefix) = parse_prefixes(s);
                let (key, start, p) = &mut last[0];
                key.clear();
                key.push_str(s);
                *start = s.len() - rest.len();
                *p = prefix;
            }
        }
        (&s[last[0].1..], last[0].2)
    })
}

/// [`strip_prefixes`], not remembered (for a line asked once).
pub fn parse_prefixes(mut s: &str) -> (&str, Prefix) {
    let mut p = Prefix::default();
    for _ in 0..6 {
        let t = s.trim_start();
        if !may_start_prefix(t) {
            break;
        }
        if let Some((rest, rank)) = bracket_rank(t) {
            p.rank = p.rank.or(rank);
            s = rest;
        } else if let Some((rest, rank)) = mpi_prefix(t) {
            p.rank = p.rank.or(Some(rank));
            s = rest;
        } else if let Some((rest, rank)) = worker_prefix(t) {
            p.rank = p.rank.or(rank);
            s = rest;
        } else if let Some((rest, stamp)) = glog_prefix(t) {
            p.time = p.time.or(stamp);
            s = rest;
        } else if let Some((rest, stamp)) = datetime_prefix(t) {
            p.time = p.time.or(Some(stamp));
            s = rest;
        } else if let Some((rest, stamp)) = level_prefix(t) {
            p.time = p.time.or(stamp);
            s = rest;
        } else if let Some(rest) = bracket_level(t) {
            s = rest;
        } else if let Some((rest, rank)) = tee_prefix(s) {
            p.rank = p.rank.or(Some(rank));
            s = rest;
        } else {
            break;
        }
    }
    if p.rank.is_none() {
        // NCCL's own tag, left in the text: old releases print no launcher prefix.
        p.rank = nccl_rank(s.trim_start());
    }
    (s, p)
}

/// Whether a prefix below may start `t` (the line trimmed): each needs its
/// first byte to be one of these (`tee_prefix` reads the untrimmed line, but
/// needs a digit first, so the two agree), and most lines, which start with
/// none, are then not asked of each.
fn may_start_prefix(t: &str) -> bool {
    matches!(
        t.bytes().next(),
        Some(b'[' | b'(' | b'0'..=b'9' | b'D' | b'I' | b'W' | b'E' | b'C' | b'F')
    )
}

/// ProcessGroupNCCL's tag on its lines: `[Rank 1] Watchdog caught …`,
/// `[PG 0 Rank 1] Timeout at NCCL work …`, `[PG ID 0 PG GUID 0(default_pg)
/// Rank 1] Exception …`. The text keeps it (it says whose collective).
fn nccl_rank(t: &str) -> Option<i64> {
    let rest = t.strip_prefix('[')?;
    let close = rest.get(..rest.len().min(120))?.find("] ")?;
    let inner = &rest[..close];
    let n = if let Some(n) = inner.strip_prefix("Rank ") {
        n
    } else if inner.starts_with("PG ") {
        inner.rsplit_once(" Rank ")?.1
    } else {
        return None;
    };
    if n.is_empty() || n.len() > RANK_DIGITS || digits(n) != n.len() {
        return None;
    }
    parse_i64(n)
}

fn digits(s: &str) -> usize {
    s.bytes().take_while(u8::is_ascii_digit).count()
}

fn parse_i64(s: &str) -> Option<i64> {
    s.parse().ok()
}

/// `s.parse::<u64>().ok()` for the few digits of a date or a clock (at most
/// 19, which cannot overflow), without the general parse's cost: a leading
/// `+` is taken as that parse takes it.
fn small_number(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    let digits = match b {
        [b'+', rest @ ..] if !rest.is_empty() => rest,
        _ => b,
    };
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &d| {
        d.is_ascii_digit().then(|| n * 10 + u64::from(d - b'0'))
    })
}

/// The most digits a rank may have: every such number fits an `i64` (the
/// rank sets count any of them in bounded memory, see `ranks`).
const RANK_DIGITS: usize = 18;

/// `[rank3]:`, `[Rank 3]:`, `[default0]:`.
fn bracket_rank(t: &str) -> Option<(&str, Option<i64>)> {
    let rest = t.strip_prefix('[')?;
    let word = ["rank", "Rank", "RANK", "default"]
        .into_iter()
        .find(|w| rest.starts_with(w))?;
    let rest = rest[word.len()..].trim_start();
    let n = digits(rest);
    if n == 0 || n > RANK_DIGITS {
        return None;
    }
    let after = rest[n..].strip_prefix("]:")?;
    Some((
        after.strip_prefix(' ').unwrap_or(after),
        parse_i64(&rest[..n]),
    ))
}

/// mpirun's `[1,0]<stderr>:` (job, rank).
fn mpi_prefix(t: &str) -> Option<(&str, i64)> {
    let rest = t.strip_prefix('[')?;
    let a = digits(rest);
    let rest = rest.get(a..)?.strip_prefix(',')?;
    let b = digits(rest);
    if a == 0 || b == 0 || b > RANK_DIGITS {
        return None;
    }
    let rank = parse_i64(&rest[..b])?;
    let rest = rest[b..].strip_prefix(']')?;
    let rest = rest
        .strip_prefix("<stderr>:")
        .or_else(|| rest.strip_prefix("<stdout>:"))
        .or_else(|| rest.strip_prefix(':'))?;
    Some((rest, rank))
}

/// Ray / vLLM workers: `(RayTrainWorker pid=112196)`, `(VllmWorker rank=1 pid=…)`,
/// `(RayWorkerWrapper pid=…, ip=…)`.
fn worker_prefix(t: &str) -> Option<(&str, Option<i64>)> {
    let rest = t.strip_prefix('(')?;
    let close = rest.get(..rest.len().min(200))?.find(')')?;
    let inner = &rest[..close];
    if !inner.contains("pid=") {
        return None;
    }
    let rank = inner.find("rank=").and_then(|i| {
        let r = &inner[i + 5..];
        parse_i64(&r[..digits(r)])
    });
    let after = &rest[close + 1..];
    Some((after.strip_prefix(' ').unwrap_or(after), rank))
}

/// A logger's level, optional `MM-DD hh:mm:ss` and `[file.py:line]` (vLLM,
/// SGLang and other servers' loggers): `ERROR 05-14 10:22:33
/// [multiproc_executor.py:671] `, older `INFO 06-11 19:48:43 llm_engine.py:161] `,
/// `WARNING [core.py:58] `. The place is required: a level word alone may
/// begin a message.
fn level_prefix(t: &str) -> Option<(&str, Option<Stamp>)> {
    const LEVELS: [&str; 7] = [
        "DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL", "FATAL",
    ];
    let level = LEVELS.iter().find(|l| t.starts_with(*l))?;
    let mut rest = t[level.len()..].strip_prefix(' ')?.trim_start();
    let mut stamp = None;
    // MM-DD hh:mm:ss[.frac]
    let b = rest.as_bytes();
    if b.len() > 6 && digits(rest) == 2 && b[2] == b'-' && digits(&rest[3..]) == 2 && b[5] == b' ' {
        let mmdd: u64 = format!("{}{}", &rest[..2], &rest[3..5]).parse().ok()?;
        let clock_end = 6 + rest[6..]
            .bytes()
            .take_while(|c| c.is_ascii_digit() || matches!(c, b':' | b'.' | b','))
            .count();
        let c = clock_micros(&rest[6..clock_end])?;
        stamp = Some(Stamp {
            kind: 1,
            value: mmdd * 86_400_000_000 + c,
        });
        rest = rest[clock_end..].trim_start();
    }
    // `[file.py:123]` or `file.py:123]`
    let place = rest.strip_prefix('[').unwrap_or(rest);
    let close = memchr::memchr(b']', place.get(..place.len().min(120))?.as_bytes())?;
    let (file, line) = place[..close].rsplit_once(':')?;
    let named = !file.is_empty()
        && file.contains('.')
        && !file.contains(char::is_whitespace)
        && !line.is_empty()
        && line.bytes().all(|c| c.is_ascii_digit());
    if !named {
        return None;
    }
    let after = &place[close + 1..];
    Some((after.strip_prefix(' ').unwrap_or(after), stamp))
}

/// Python logging's bracketed level after a timestamp: `[ERROR]    File …`
/// (`%(asctime)s [%(levelname)s] %(message)s`). The message keeps its own
/// indentation but for the one space the format puts after the bracket.
fn bracket_level(t: &str) -> Option<&str> {
    const LEVELS: [&str; 7] = [
        "DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL", "FATAL",
    ];
    let rest = t.strip_prefix('[')?;
    let level = LEVELS.iter().find(|l| rest.starts_with(*l))?;
    let after = rest[level.len()..].strip_prefix(']')?;
    let after = after.strip_prefix(':').unwrap_or(after);
    if !(after.is_empty() || after.starts_with(' ')) {
        return None;
    }
    Some(after.strip_prefix(' ').unwrap_or(after))
}

/// glog: `[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616]`, older `[E ProcessGroupNCCL.cpp:458]`.
fn glog_prefix(t: &str) -> Option<(&str, Option<Stamp>)> {
    let rest = t.strip_prefix('[')?;
    let level = rest.bytes().next()?;
    if !matches!(level, b'E' | b'W' | b'I' | b'F') {
        return None;
    }
    let close = rest.get(..rest.len().min(160))?.find(']')?;
    let inner = &rest[1..close];
    let mut stamp = None;
    let file_part = if inner.starts_with(' ') {
        inner.trim_start()
    } else {
        // MMDD hh:mm:ss.frac file:line
        // glog's MMDD; c10 prints the month unpadded (`E626`).
        let md = digits(inner);
        if !(3..=4).contains(&md) {
            return None;
        }
        let mut parts = inner[md..].trim_start().splitn(2, ' ');
        let clock = parts.next()?;
        let file = parts.next().unwrap_or("");
        let mmdd: u64 = inner[..md].parse().ok()?;
        stamp = clock_micros(clock).map(|c| Stamp {
            kind: 1,
            value: mmdd * 86_400_000_000 + c,
        });
        stamp?;
        file
    };
    if !file_part.contains(':') || !file_part.contains('.') {
        return None;
    }
    let after = &rest[close + 1..];
    Some((after.strip_prefix(' ').unwrap_or(after), stamp))
}

/// `hh:mm:ss[.frac]` → microseconds since midnight.
fn clock_micros(c: &str) -> Option<u64> {
    let b = c.as_bytes();
    if b.len() < 8 || b[2] != b':' || b[5] != b':' {
        return None;
    }
    let h = small_number(c.get(0..2)?)?;
    let m = small_number(c.get(3..5)?)?;
    let s = small_number(c.get(6..8)?)?;
    let mut micros = 0u64;
    if let Some(frac) = c
        .get(9..)
        .filter(|_| matches!(b.get(8), Some(b'.') | Some(b',')))
    {
        let d = &frac[..digits(frac).min(6)];
        if !d.is_empty() {
            micros = small_number(d)? * 10u64.pow(6 - d.len() as u32);
        }
    }
    Some(((h * 60 + m) * 60 + s) * 1_000_000 + micros)
}

/// `2024-05-01 12:00:00,123 -`, `[2024-05-01 12:00:00]`, `2024-05-01T12:00:00.123Z`,
/// `08/13/2020 18:56:31 -`.
fn datetime_prefix(t: &str) -> Option<(&str, Stamp)> {
    let (bracketed, body) = match t.strip_prefix('[') {
        Some(r) => (true, r),
        None => (false, t),
    };
    let b = body.as_bytes();
    if b.len() < 19 {
        return None;
    }
    let (date_value, kind) = if b[4] == b'-' && b[7] == b'-' && digits(body) == 4 {
        let y = small_number(body.get(0..4)?)?;
        let mo = small_number(body.get(5..7)?)?;
        let d = small_number(body.get(8..10)?)?;
        (y * 10_000 + mo * 100 + d, 2u8)
    } else if b[2] == b'/' && b[5] == b'/' && digits(body) == 2 {
        let mo = small_number(body.get(0..2)?)?;
        let d = small_number(body.get(3..5)?)?;
        let y = small_number(body.get(6..10)?)?;
        (y * 10_000 + mo * 100 + d, 2u8)
    } else {
        return None;
    };
    if !matches!(b[10], b' ' | b'T') {
        return None;
    }
    let clock_end = 11
        + body[11..]
            .bytes()
            .take_while(|c| c.is_ascii_digit() || matches!(c, b':' | b'.' | b','))
            .count();
    let micros = clock_micros(&body[11..clock_end])?;
    let mut rest = &body[clock_end..];
    rest = rest.strip_prefix('Z').unwrap_or(rest);
    if bracketed {
        rest = rest.strip_prefix(']')?;
    }
    let rest = rest.trim_start();
    let rest = rest
        .strip_prefix("- ")
        .or_else(|| rest.strip_prefix(": "))
        .or_else(|| rest.strip_prefix('|'))
        .unwrap_or(rest);
    Some((
        rest,
        Stamp {
            kind,
            value: date_value * 86_400_000_000 + micros,
        },
    ))
}

/// torchrun `--tee`: `15: …` (local rank, then a colon, then not a digit).
fn tee_prefix(s: &str) -> Option<(&str, i64)> {
    let n = digits(s);
    if n == 0 || n > 4 {
        return None;
    }
    let rest = s[n..].strip_prefix(':')?;
    if rest
        .bytes()
        .next()
        .is_some_and(|c| c.is_ascii_digit() || c == b'/' || c == b'\\')
    {
        return None;
    }
    Some((rest.strip_prefix(' ').unwrap_or(rest), parse_i64(&s[..n])?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The short parse reads what the general one reads.
        #[test]
        fn a_small_number_is_parsed_as_parse_parses_it(s in "[0-9+\\- a]{0,8}") {
            prop_assert_eq!(small_number(&s), s.parse::<u64>().ok());
        }

        /// A line the first-byte check turns away is one no prefix starts:
        /// lines of pieces of every prefix, after any indentation.
        #[test]
        fn no_prefix_starts_a_line_the_check_turns_away(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "[rank3]:", "[Rank 1] ", "[default0]:", "[1,0]<stderr>:", "(RayTrainWorker pid=1)",
                "[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616]", "[E x.cpp:4]",
                "2024-05-01 12:00:01,970 - ", "[2024-05-01 12:00:00] ", "08/13/2020 18:56:31 -",
                "ERROR 05-14 10:22:33 [a.py:671] ", "CRITICAL [core.py:58] ", "WARNING ", "DEBUG [x.py:1] ",
                "FATAL [y.py:2] ", "INFO a.py:3] ", "[ERROR] ", "[WARN]: ", "15: ", "3:x", "+1",
                "x", "Traceback", " ", "\t", "(", "[", "]", ":", "7",
            ]), 0..5),
        ) {
            let s: String = pieces.concat();
            let t = s.trim_start();
            if !may_start_prefix(t) {
                prop_assert!(bracket_rank(t).is_none());
                prop_assert!(mpi_prefix(t).is_none());
                prop_assert!(worker_prefix(t).is_none());
                prop_assert!(glog_prefix(t).is_none());
                prop_assert!(datetime_prefix(t).is_none());
                prop_assert!(level_prefix(t).is_none());
                prop_assert!(bracket_level(t).is_none());
                prop_assert!(tee_prefix(&s).is_none());
            }
        }
    }
}
