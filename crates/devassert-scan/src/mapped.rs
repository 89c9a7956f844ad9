//! The bytes of an input: a read-only memory map of the file, bytes read
//! or decoded, and the one place files are mapped.

use crate::error::ScanError;
use std::path::Path;
use std::sync::Arc;

/// The bytes behind a [`crate::values::Values`].
pub enum Bytes {
    Mmap(memmap2::Mmap),
    Heap(Vec<u8>),
    /// Values decoded from a text or columnar format.
    I64(Vec<i64>),
}

impl Bytes {
    pub fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Mmap(m) => m,
            Bytes::Heap(v) => v,
            Bytes::I64(v) => bytemuck::cast_slice(v),
        }
    }

    /// Drop the whole pages of `part` (a slice of these bytes) from the
    /// resident set, when they are a map: read once, they would count in
    /// the RSS until the kernel reclaims them. Nothing for bytes in memory.
    pub(crate) fn drop_pages(&self, part: &[u8]) {
        #[cfg(unix)]
        if let Bytes::Mmap(m) = self {
            let base = m.as_ptr() as usize;
            let (from, to) = (part.as_ptr() as usize, part.as_ptr() as usize + part.len());
            if from < base || to > base + m.len() {
                return;
            }
            let page = page_size();
            let start = (from - base).div_ceil(page) * page;
            let end = (to - base) / page * page;
            if end > start {
                // SAFETY: as in `DropBehind`: a read-only shared map, whose
                // dropped pages read the file's bytes again when touched.
                let _ = unsafe {
                    m.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start)
                };
            }
        }
        #[cfg(not(unix))]
        let _ = part;
    }
}

pub(crate) fn open(path: &Path) -> Result<Arc<Bytes>, ScanError> {
    // Non-blocking and a regular file only: a FIFO or device never hangs it.
    let file = devassert_core::regular::open(path)?;
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(Arc::new(Bytes::Heap(Vec::new())));
    }
    // SAFETY: the map is only read. If another process truncates the file
    // while it is scanned, reads fault (the same risk ripgrep documents);
    // data files being scanned are not expected to change.
    // Not populated up front: faulting pages in as the threads reach them
    // measured as fast on raw tokens and 10-15% faster on Parquet, where
    // one thread would otherwise map the whole file before decoding starts.
    let map = unsafe { memmap2::MmapOptions::new().map(&file)? };
    Ok(Arc::new(Bytes::Mmap(map)))
}

/// Bytes read through before the pages behind are dropped.
const DROP_EVERY: usize = 32 << 20;

/// The pages of a map a streaming reader (CSV, JSONL) has read past,
/// handed back as it goes: mapped pages read once count in the RSS until
/// the kernel reclaims them (a 1 GiB CSV cell peaked at 1,036 MiB with
/// 1 MiB of heap), so every [`DROP_EVERY`] bytes the range behind is
/// dropped with `MADV_DONTNEED`, and the map is read ahead as sequential.
pub(crate) struct DropBehind<'a> {
    map: Option<&'a memmap2::Mmap>,
    /// Where `data` (what the reader walks) starts in the map.
    base: usize,
    /// Dropped up to here (map offsets).
    done: usize,
}

impl<'a> DropBehind<'a> {
    /// For a reader of `data`, a slice of `bytes`; nothing is dropped from
    /// bytes that are not a map.
    pub(crate) fn new(bytes: &'a Bytes, data: &[u8]) -> Self {
        let map = match bytes {
            Bytes::Mmap(m) => Some(m),
            _ => None,
        };
        #[cfg(unix)]
        if let Some(m) = map {
            // Only advice: a kernel that ignores it reads as before.
            let _ = m.advise(memmap2::Advice::Sequential);
        }
        let base = map.map_or(0, |m| {
            (data.as_ptr() as usize).saturating_sub(m.as_ptr() as usize)
        });
        DropBehind { map, base, done: 0 }
    }

    /// The reader goes back to `at` (to read a line again): the pages from
    /// there are dropped again as it passes them.
    pub(crate) fn restart(&mut self, at: usize) {
        self.done = self.done.min(self.base + at);
    }

    /// The reader is at `at` in its data: drop the whole pages behind it.
    pub(crate) fn reached(&mut self, at: usize) {
        #[cfg(unix)]
        self.drop_to(at);
        #[cfg(not(unix))]
        let _ = at;
    }

    #[cfg(unix)]
    fn drop_to(&mut self, at: usize) {
        let Some(m) = self.map else { return };
        let at = (self.base + at).min(m.len());
        if at < self.done + DROP_EVERY {
            return;
        }
        let page = page_size();
        let end = at / page * page;
        if end <= self.done {
            return;
        }
        // SAFETY: the map is read-only and shared (memmap2's `Mmap`): a
        // dropped page holds nothing but the file's bytes, and a later read
        // of it faults them in from the file again; no slice sees
        // different bytes. Only an error is possible, and it changes nothing.
        let _ = unsafe {
            m.unchecked_advise_range(
                memmap2::UncheckedAdvice::DontNeed,
                self.done,
                end - self.done,
            )
        };
        self.done = end;
    }
}

#[cfg(unix)]
fn page_size() -> usize {
    // SAFETY: sysconf reads a constant.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(n).ok().filter(|&n| n > 0).unwrap_or(4096)
}
