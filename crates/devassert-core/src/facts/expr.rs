//! The small expression language of `catalog/causes.toml`: numbers, facts,
//! `+ - * /`, comparisons, `&& || !`, parentheses and `known(fact)`,
//! evaluated over facts some of which a command did not measure. An
//! unmeasured fact is unknown, and so is anything computed from it, except
//! where the other side decides (`false && ?` is false, `true || ?` true).
//! `python/devassert/_findings/facts.py` evaluates the same language.

use std::collections::BTreeMap;

/// The measured facts, by name; a name not present is unknown.
pub type Facts = BTreeMap<String, f64>;

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Num(f64),
    Fact(String),
    Known(String),
    Not(Box<Expr>),
    Neg(Box<Expr>),
    Bin(Op, Box<Expr>, Box<Expr>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
}

/// Binding strength: `||` < `&&` < comparisons < `+ -` < `* /`.
fn level(op: Op) -> u8 {
    match op {
        Op::Or => 1,
        Op::And => 2,
        Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge => 3,
        Op::Add | Op::Sub => 4,
        Op::Mul | Op::Div => 5,
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Name(String),
    Op(Op),
    Not,
    Open,
    Close,
}

fn lex(src: &str) -> Result<Vec<Tok>, String> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() || c == b'.' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                i += 1;
            }
            let n = src[start..i]
                .parse()
                .map_err(|_| format!("bad number `{}`", &src[start..i]))?;
            out.push(Tok::Num(n));
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Name(src[start..i].to_string()));
            continue;
        }
        let two = src.get(i..i + 2).unwrap_or("");
        let (tok, len) = match two {
            "&&" => (Tok::Op(Op::And), 2),
            "||" => (Tok::Op(Op::Or), 2),
            "==" => (Tok::Op(Op::Eq), 2),
            "!=" => (Tok::Op(Op::Ne), 2),
            "<=" => (Tok::Op(Op::Le), 2),
            ">=" => (Tok::Op(Op::Ge), 2),
            _ => match c {
                b'<' => (Tok::Op(Op::Lt), 1),
                b'>' => (Tok::Op(Op::Gt), 1),
                b'+' => (Tok::Op(Op::Add), 1),
                b'-' => (Tok::Op(Op::Sub), 1),
                b'*' => (Tok::Op(Op::Mul), 1),
                b'/' => (Tok::Op(Op::Div), 1),
                b'!' => (Tok::Not, 1),
                b'(' => (Tok::Open, 1),
                b')' => (Tok::Close, 1),
                _ => {
                    return Err(format!(
                        "unexpected `{}`",
                        src[i..].chars().next().unwrap_or('?')
                    ))
                }
            },
        };
        out.push(tok);
        i += len;
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Tok>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }

    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.at).cloned();
        self.at += 1;
        t
    }

    /// Precedence climbing over the binary operators.
    fn binary(&mut self, min: u8) -> Result<Expr, String> {
        let mut left = self.unary()?;
        while let Some(Tok::Op(op)) = self.peek() {
            let op = *op;
            if level(op) < min {
                break;
            }
            self.at += 1;
            let right = self.binary(level(op) + 1)?;
            left = Expr::Bin(op, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Expr, String> {
        match self.next() {
            Some(Tok::Not) => Ok(Expr::Not(Box::new(self.unary()?))),
            Some(Tok::Op(Op::Sub)) => Ok(Expr::Neg(Box::new(self.unary()?))),
            Some(Tok::Num(n)) => Ok(Expr::Num(n)),
            Some(Tok::Open) => {
                let e = self.binary(0)?;
                match self.next() {
                    Some(Tok::Close) => Ok(e),
                    _ => Err("missing `)`".into()),
                }
            }
            Some(Tok::Name(name)) if name == "known" => {
                match (self.next(), self.next(), self.next()) {
                    (Some(Tok::Open), Some(Tok::Name(f)), Some(Tok::Close)) => Ok(Expr::Known(f)),
                    _ => Err("known() takes one fact".into()),
                }
            }
            Some(Tok::Name(name)) => Ok(Expr::Fact(name)),
            other => Err(format!("expected a value, got {other:?}")),
        }
    }
}

/// Parse one expression.
pub fn parse(src: &str) -> Result<Expr, String> {
    let mut p = Parser {
        toks: lex(src)?,
        at: 0,
    };
    let e = p.binary(0)?;
    match p.peek() {
        None => Ok(e),
        Some(t) => Err(format!("unexpected {t:?} after the expression")),
    }
}

impl Expr {
    /// The facts the expression reads.
    pub fn facts(&self, out: &mut Vec<String>) {
        match self {
            Expr::Num(_) => {}
            Expr::Fact(f) | Expr::Known(f) => out.push(f.clone()),
            Expr::Not(e) | Expr::Neg(e) => e.facts(out),
            Expr::Bin(_, a, b) => {
                a.facts(out);
                b.facts(out);
            }
        }
    }

    /// The value, or None when it depends on an unknown fact (or divides by 0).
    pub fn eval(&self, facts: &Facts) -> Option<f64> {
        let truth = |b: bool| if b { 1.0 } else { 0.0 };
        match self {
            Expr::Num(n) => Some(*n),
            Expr::Fact(f) => facts.get(f).copied().filter(|v| v.is_finite()),
            Expr::Known(f) => Some(truth(facts.get(f).is_some_and(|v| v.is_finite()))),
            Expr::Not(e) => e.eval(facts).map(|v| truth(v == 0.0)),
            Expr::Neg(e) => e.eval(facts).map(|v| -v),
            Expr::Bin(Op::And, a, b) => match (a.eval(facts), b.eval(facts)) {
                (Some(0.0), _) => Some(0.0),
                (_, Some(0.0)) => Some(0.0),
                (Some(_), Some(_)) => Some(1.0),
                _ => None,
            },
            Expr::Bin(Op::Or, a, b) => match (a.eval(facts), b.eval(facts)) {
                (Some(x), _) if x != 0.0 => Some(1.0),
                (_, Some(y)) if y != 0.0 => Some(1.0),
                (Some(_), Some(_)) => Some(0.0),
                _ => None,
            },
            Expr::Bin(op, a, b) => {
                let (x, y) = (a.eval(facts)?, b.eval(facts)?);
                match op {
                    Op::Eq => Some(truth(x == y)),
                    Op::Ne => Some(truth(x != y)),
                    Op::Lt => Some(truth(x < y)),
                    Op::Le => Some(truth(x <= y)),
                    Op::Gt => Some(truth(x > y)),
                    Op::Ge => Some(truth(x >= y)),
                    Op::Add => Some(x + y),
                    Op::Sub => Some(x - y),
                    Op::Mul => Some(x * y),
                    Op::Div => (y != 0.0).then(|| x / y),
                    Op::And | Op::Or => None,
                }
            }
        }
    }

    /// True only when the facts show it (unknown is not true).
    pub fn holds(&self, facts: &Facts) -> bool {
        self.eval(facts).is_some_and(|v| v != 0.0)
    }

    /// False only when the facts show it (unknown is not false).
    pub fn fails(&self, facts: &Facts) -> bool {
        self.eval(facts) == Some(0.0)
    }
}

/// A number as a text shows it: integers without a fraction.
pub fn show(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// Parse the `{expr}` placeholders of a text.
pub fn parse_template(text: &str) -> Result<Vec<Part>, String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let close = rest[open..]
            .find('}')
            .ok_or_else(|| format!("unclosed `{{` in {text:?}"))?
            + open;
        if open > 0 {
            out.push(Part::Text(rest[..open].to_string()));
        }
        out.push(Part::Value(parse(&rest[open + 1..close])?));
        rest = &rest[close + 1..];
    }
    if !rest.is_empty() {
        out.push(Part::Text(rest.to_string()));
    }
    Ok(out)
}

#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    Text(String),
    Value(Expr),
}

/// The text with its values filled in, or None when one is unknown.
pub fn render(parts: &[Part], facts: &Facts) -> Option<String> {
    let mut s = String::new();
    for p in parts {
        match p {
            Part::Text(t) => s.push_str(t),
            Part::Value(e) => s.push_str(&show(e.eval(facts)?)),
        }
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(pairs: &[(&str, f64)]) -> Facts {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn precedence_and_unknowns() {
        let f = facts(&[("a", 2.0), ("b", 3.0)]);
        assert_eq!(parse("a + b * 2").unwrap().eval(&f), Some(8.0));
        assert_eq!(
            parse("a - 1 >= 1 && b - 1 < 3").unwrap().eval(&f),
            Some(1.0)
        );
        assert_eq!(parse("c > 1").unwrap().eval(&f), None);
        assert!(parse("c > 1 && a > 5").unwrap().fails(&f));
        assert!(parse("c > 1 || a > 1").unwrap().holds(&f));
        assert!(!parse("!(c == 1)").unwrap().fails(&f));
        assert_eq!(parse("known(c) + known(a)").unwrap().eval(&f), Some(1.0));
        assert_eq!(parse("-a + 1").unwrap().eval(&f), Some(-1.0));
        assert!(parse("a +").is_err() && parse("(a").is_err() && parse("a $ b").is_err());
    }

    #[test]
    fn templates_fill_or_give_up() {
        let f = facts(&[("high", 10.0)]);
        let t = parse_template("crop to {high - 1} of {high}").unwrap();
        assert_eq!(render(&t, &f).as_deref(), Some("crop to 9 of 10"));
        let t = parse_template("len {tok_len}").unwrap();
        assert_eq!(render(&t, &f), None);
        assert!(parse_template("open {high").is_err());
    }
}
