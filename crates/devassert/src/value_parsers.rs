//! Parsers for flag values that several commands share; a leaf, so that the
//! commands' flag definitions need nothing of the command line above them.

/// A count or size that must be at least 1 (`--vocab 0` is no vocabulary).
pub fn positive<T: std::str::FromStr + PartialEq + From<u8>>(s: &str) -> Result<T, String> {
    match s.trim().parse::<T>() {
        Ok(n) if n == T::from(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{s:?} is not a whole number")),
    }
}
