//! `--shard K/N`: which files of the sorted list one process scans.

/// `--shard K/N`: keep the files whose position in the sorted list is K mod N (K from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (k, n) = s
            .split_once('/')
            .ok_or_else(|| format!("shard {s:?} is not K/N"))?;
        let index: u32 = k
            .trim()
            .parse()
            .map_err(|_| format!("shard index {k:?} is not a number"))?;
        let count: u32 = n
            .trim()
            .parse()
            .map_err(|_| format!("shard count {n:?} is not a number"))?;
        if count == 0 || index >= count {
            return Err(format!("shard {s:?}: need 0 <= K < N (K counts from 0)"));
        }
        Ok(Shard { index, count })
    }
}
