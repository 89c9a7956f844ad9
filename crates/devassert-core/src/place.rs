//! Values and where they are: a [`Scalar`] as the contract writes it, the
//! valid [`Bound`], a place in Python source and a place in a data file.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// A value as the contract writes it: an integer, a float, or one of the
/// strings `"nan"`, `"inf"`, `"-inf"`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    Int(i64),
    Float(f64),
}

impl Scalar {
    pub fn as_f64(self) -> f64 {
        match self {
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) => f,
        }
    }
}

impl From<i64> for Scalar {
    fn from(v: i64) -> Self {
        Scalar::Int(v)
    }
}

impl From<f64> for Scalar {
    fn from(v: f64) -> Self {
        Scalar::Float(v)
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Scalar::Int(i) => write!(f, "{i}"),
            Scalar::Float(x) if x.is_nan() => f.write_str("nan"),
            Scalar::Float(x) if x == f64::INFINITY => f.write_str("inf"),
            Scalar::Float(x) if x == f64::NEG_INFINITY => f.write_str("-inf"),
            Scalar::Float(x) => write!(f, "{x}"),
        }
    }
}

impl Serialize for Scalar {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Scalar::Int(i) => s.serialize_i64(i),
            Scalar::Float(x) if x.is_finite() => s.serialize_f64(x),
            Scalar::Float(_) => s.serialize_str(&self.to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match Value::deserialize(d)? {
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Ok(Scalar::Int(i))
                } else {
                    n.as_f64()
                        .map(Scalar::Float)
                        .ok_or_else(|| D::Error::custom("number out of range"))
                }
            }
            Value::String(s) => match s.as_str() {
                "nan" => Ok(Scalar::Float(f64::NAN)),
                "inf" => Ok(Scalar::Float(f64::INFINITY)),
                "-inf" => Ok(Scalar::Float(f64::NEG_INFINITY)),
                other => Err(D::Error::custom(format!(
                    "expected a number, \"nan\", \"inf\" or \"-inf\", got {other:?}"
                ))),
            },
            other => Err(D::Error::custom(format!("expected a number, got {other}"))),
        }
    }
}

/// The valid range: `[low, high)` for indices (`high_inclusive` false), `[low, high]`
/// for probabilities.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bound {
    pub low: Option<Scalar>,
    pub high: Option<Scalar>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub high_inclusive: bool,
}

pub(crate) fn is_false(b: &bool) -> bool {
    !*b
}

impl Bound {
    pub fn index(low: i64, high: i64) -> Self {
        Bound {
            low: Some(Scalar::Int(low)),
            high: Some(Scalar::Int(high)),
            high_inclusive: false,
        }
    }
    pub fn closed(low: f64, high: f64) -> Self {
        Bound {
            low: Some(Scalar::Float(low)),
            high: Some(Scalar::Float(high)),
            high_inclusive: true,
        }
    }
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let low = self
            .low
            .map(|v| v.to_string())
            .unwrap_or_else(|| "-inf".into());
        let high = self
            .high
            .map(|v| v.to_string())
            .unwrap_or_else(|| "inf".into());
        let close = if self.high_inclusive { ']' } else { ')' };
        write!(f, "[{low}, {high}{close}")
    }
}

/// A place in Python source code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceLocation {
    pub file: String,
    pub line: u64,
    pub function: Option<String>,
    /// The source line as the traceback showed it, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

impl SourceLocation {
    /// The notebook cell this place is in, as IPython names it (`Cell
    /// In[12]`; explain and the guard in a notebook both name cells so):
    /// a place in the notebook, not a file.
    pub fn cell(&self) -> Option<&str> {
        let count = self.file.strip_prefix("Cell In[")?.strip_suffix(']')?;
        (!count.is_empty() && count.bytes().all(|b| b.is_ascii_digit()))
            .then_some(self.file.as_str())
    }

    /// The file that holds this place's source, if any: never a cell's name,
    /// which no file on this machine stands for.
    pub fn source_file(&self) -> Option<&str> {
        self.cell().is_none().then_some(self.file.as_str())
    }
}

impl fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.cell() {
            // IPython's own words for a cell's line (`%devassert explain` says the same).
            Some(cell) => {
                write!(f, "{cell}, line {}", self.line)?;
                if let Some(func) = self.function.as_deref().filter(|x| *x != "<module>") {
                    write!(f, " in {func}")?;
                }
            }
            None => {
                write!(f, "{}:{}", self.file, self.line)?;
                if let Some(func) = &self.function {
                    write!(f, " in {func}")?;
                }
            }
        }
        Ok(())
    }
}

/// A place in a data file (scan) or a tensor (guard).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct DataLocation {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Flat element index.
    pub index: u64,
    /// The document holding it (Megatron datasets, whose `row` is the
    /// sequence and `offset` the token in it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<Vec<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Scalar>,
}

#[cfg(test)]
mod tests {
    use super::SourceLocation;

    fn place(file: &str, function: Option<&str>) -> SourceLocation {
        SourceLocation {
            file: file.into(),
            line: 7,
            function: function.map(Into::into),
            code: None,
        }
    }

    #[test]
    fn a_cell_is_shown_as_ipython_names_it_and_is_no_file() {
        let cell = place("Cell In[12]", Some("<module>"));
        assert_eq!(cell.to_string(), "Cell In[12], line 7");
        assert_eq!(cell.source_file(), None);
        let f = place("Cell In[3]", Some("Net.forward"));
        assert_eq!(f.to_string(), "Cell In[3], line 7 in Net.forward");
        let script = place("train.py", Some("<module>"));
        assert_eq!(script.to_string(), "train.py:7 in <module>");
        assert_eq!(script.source_file(), Some("train.py"));
        // Only IPython's exact name is a cell.
        for file in [
            "Cell In[x]",
            "Cell In[12].py",
            "dir/Cell In[12]",
            "Cell In[]",
        ] {
            assert_eq!(place(file, None).cell(), None, "{file}");
        }
    }
}
