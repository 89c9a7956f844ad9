//! The element types of token and label data: their `--dtype` and numpy
//! names, sizes and largest values, in one table.

use std::fmt;
use std::str::FromStr;

/// Element types the raw reader accepts (`--dtype`), and the ones other formats report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dtype {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
}

/// One row per [`Dtype`]: its `--dtype` name, the numpy spelling also
/// accepted, and its size. `--help`, parsing and reports all read this table.
pub struct DtypeSpec {
    pub dtype: Dtype,
    pub name: &'static str,
    pub numpy: &'static str,
    pub size: usize,
    /// The largest value the type holds, saturated to i64.
    pub max: i64,
}

/// Every dtype, in `--dtype` order.
#[rustfmt::skip]
pub const DTYPES: &[DtypeSpec] = &[
    DtypeSpec { dtype: Dtype::U8, name: "u8", numpy: "uint8", size: 1, max: u8::MAX as i64 },
    DtypeSpec { dtype: Dtype::I8, name: "i8", numpy: "int8", size: 1, max: i8::MAX as i64 },
    DtypeSpec { dtype: Dtype::U16, name: "u16", numpy: "uint16", size: 2, max: u16::MAX as i64 },
    DtypeSpec { dtype: Dtype::I16, name: "i16", numpy: "int16", size: 2, max: i16::MAX as i64 },
    DtypeSpec { dtype: Dtype::U32, name: "u32", numpy: "uint32", size: 4, max: u32::MAX as i64 },
    DtypeSpec { dtype: Dtype::I32, name: "i32", numpy: "int32", size: 4, max: i32::MAX as i64 },
    DtypeSpec { dtype: Dtype::U64, name: "u64", numpy: "uint64", size: 8, max: i64::MAX },
    DtypeSpec { dtype: Dtype::I64, name: "i64", numpy: "int64", size: 8, max: i64::MAX },
];

impl Dtype {
    pub fn spec(self) -> &'static DtypeSpec {
        // Every variant has a row: the `dtype_table_is_complete` test.
        DTYPES
            .iter()
            .find(|s| s.dtype == self)
            .unwrap_or(&DTYPES[0])
    }
    pub fn size(self) -> usize {
        self.spec().size
    }
    pub fn name(self) -> &'static str {
        self.spec().name
    }
    /// The numpy name (`int32`), as Megatron and the `.npy` world spell it.
    pub fn numpy_name(self) -> &'static str {
        self.spec().numpy
    }
    /// The largest value the type holds, saturated to i64.
    pub fn max_value(self) -> i64 {
        self.spec().max
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Dtype {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.to_ascii_lowercase();
        DTYPES
            .iter()
            .find(|d| d.name == s || d.numpy == s)
            .map(|d| d.dtype)
            .ok_or_else(|| {
                let names: Vec<&str> = DTYPES.iter().map(|d| d.name).collect();
                format!("unknown dtype {s:?} ({})", names.join(", "))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtype_table_is_complete() {
        let all = [
            Dtype::U8,
            Dtype::I8,
            Dtype::U16,
            Dtype::I16,
            Dtype::U32,
            Dtype::I32,
            Dtype::U64,
            Dtype::I64,
        ];
        assert_eq!(DTYPES.len(), all.len());
        for d in all {
            assert_eq!(DTYPES.iter().filter(|s| s.dtype == d).count(), 1, "{d:?}");
            assert_eq!(d.name().parse::<Dtype>(), Ok(d));
            assert_eq!(d.numpy_name().parse::<Dtype>(), Ok(d));
        }
        assert_eq!(Dtype::I32.size(), 4);
        assert_eq!(Dtype::U16.max_value(), 65535);
        assert_eq!("INT32".parse::<Dtype>(), Ok(Dtype::I32));
        assert!("f32".parse::<Dtype>().is_err());
    }
}
