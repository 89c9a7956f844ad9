//! The footer's size, checked before the parquet crate decodes it: it
//! decodes the whole footer at once, key-value metadata and all.

use crate::error::{self, Result};

/// Memory a byte of the Parquet footer may take decoded: its key-value
/// metadata and statistics are copied out (1.17 GB of key-value metadata
/// took 4.4 GB).
const FOOTER_DECODED_PER_BYTE: u64 = 4;

/// Refuse a footer whose decoded metadata would pass the budget, before
/// the parquet crate decodes it (it reads all of it at once).
pub(super) fn within_budget(data: &[u8], budget: u64) -> Result<()> {
    let n = data.len();
    if n < 12 || &data[n - 4..] != b"PAR1" {
        return Ok(());
    }
    let len = u32::from_le_bytes([data[n - 8], data[n - 7], data[n - 6], data[n - 5]]);
    error::within_budget(
        "the Parquet footer (its metadata, decoded)",
        u64::from(len).saturating_mul(FOOTER_DECODED_PER_BYTE),
        budget,
    )
}
