//! The range check. Pass one computes min and max per chunk over the values
//! that are not ignored — plain loops over native integers, which LLVM turns
//! into vector min/max (AVX2 when the CPU has it). Only chunks whose min or
//! max falls outside the bounds are read again, in pass two, to count the bad
//! values and collect their places.

use crate::dtype::Dtype;
use crate::options::Bounds;
use crate::range::RangeResult;
use crate::values::Values;
use rayon::prelude::*;

/// Bytes per chunk: large enough to amortise the task, small enough to
/// spread a single file over every core.
const CHUNK_BYTES: usize = 1 << 20;
pub trait Elem: bytemuck::Pod + Ord + Send + Sync {
    const LOWEST: Self;
    const HIGHEST: Self;
    fn to_i64(self) -> i64;
    fn from_i64(v: i64) -> Option<Self>;
    fn swap_bytes(self) -> Self;
}

macro_rules! elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            const LOWEST: Self = <$t>::MIN;
            const HIGHEST: Self = <$t>::MAX;
            #[inline(always)]
            fn to_i64(self) -> i64 {
                // u64 values past i64::MAX saturate: they are out of any bound anyway.
                i64::try_from(self).unwrap_or(i64::MAX)
            }
            fn from_i64(v: i64) -> Option<Self> {
                <$t>::try_from(v).ok()
            }
            #[inline(always)]
            fn swap_bytes(self) -> Self {
                <$t>::swap_bytes(self)
            }
        }
    )*};
}
elem!(u8, i8, u16, i16, u32, i32, u64, i64);

/// Scan `values` against `bounds`, skipping `ignore`, keeping `limit` places.
pub fn scan(values: &Values, bounds: Bounds, ignore: &[i64], limit: usize) -> RangeResult {
    scan_with_progress(values, bounds, ignore, limit, &|_| {})
}

/// [`scan`], giving `read` each chunk as pass one finishes it: the
/// progress bar moves inside a large file, not once per file, and the pages
/// of a mapped file can be dropped behind the scan.
pub fn scan_with_progress(
    values: &Values,
    bounds: Bounds,
    ignore: &[i64],
    limit: usize,
    read: &(dyn Fn(&[u8]) + Sync),
) -> RangeResult {
    let args = (values.raw(), values.big_endian, bounds, ignore, limit, read);
    dispatch(values.dtype, args)
}

type Args<'a> = (
    &'a [u8],
    bool,
    Bounds,
    &'a [i64],
    usize,
    &'a (dyn Fn(&[u8]) + Sync),
);

fn dispatch(dtype: Dtype, args: Args<'_>) -> RangeResult {
    match dtype {
        Dtype::U8 => scan_typed::<u8>(args),
        Dtype::I8 => scan_typed::<i8>(args),
        Dtype::U16 => scan_typed::<u16>(args),
        Dtype::I16 => scan_typed::<i16>(args),
        Dtype::U32 => scan_typed::<u32>(args),
        Dtype::I32 => scan_typed::<i32>(args),
        Dtype::U64 => scan_typed::<u64>(args),
        Dtype::I64 => scan_typed::<i64>(args),
    }
}

/// [`scan`] over element bytes held elsewhere (a decoded record batch).
pub fn scan_raw(
    raw: &[u8],
    dtype: Dtype,
    big_endian: bool,
    bounds: Bounds,
    ignore: &[i64],
    limit: usize,
) -> RangeResult {
    dispatch(dtype, (raw, big_endian, bounds, ignore, limit, &|_| {}))
}

/// A chunk as native values: borrowed when aligned and in native byte order,
/// decoded into a fresh buffer otherwise.
fn chunk_values<T: Elem>(bytes: &[u8], swap: bool) -> std::borrow::Cow<'_, [T]> {
    if !swap {
        if let Ok(s) = bytemuck::try_cast_slice::<u8, T>(bytes) {
            return std::borrow::Cow::Borrowed(s);
        }
    }
    let size = std::mem::size_of::<T>();
    let v: Vec<T> = bytes
        .chunks_exact(size)
        .map(|c| {
            let x: T = bytemuck::pod_read_unaligned(c);
            if swap {
                x.swap_bytes()
            } else {
                x
            }
        })
        .collect();
    std::borrow::Cow::Owned(v)
}

fn scan_typed<T: Elem>((raw, big_endian, bounds, ignore, limit, read): Args<'_>) -> RangeResult {
    let size = std::mem::size_of::<T>();
    let n = raw.len() / size;
    let raw = &raw[..n * size];
    let swap = big_endian != cfg!(target_endian = "big");
    let ign: Vec<T> = ignore.iter().filter_map(|&v| T::from_i64(v)).collect();
    let chunk_elems = (CHUNK_BYTES / size).max(1);
    let chunk_bytes = chunk_elems * size;

    // Pass one: min/max per chunk.
    let minmax: Vec<Option<(T, T)>> = raw
        .par_chunks(chunk_bytes)
        .map(|c| {
            let xs = chunk_values::<T>(c, swap);
            let (lo, hi) = minmax_dispatch(&xs, &ign);
            read(c);
            (lo <= hi).then_some((lo, hi))
        })
        .collect();

    let mut out = RangeResult {
        scanned: n as u64,
        ..RangeResult::default()
    };
    for (lo, hi) in minmax.iter().flatten() {
        let (lo, hi) = (lo.to_i64(), hi.to_i64());
        out.min = Some(out.min.map_or(lo, |m| m.min(lo)));
        out.max = Some(out.max.map_or(hi, |m| m.max(hi)));
    }
    let suspect: Vec<usize> = minmax
        .iter()
        .enumerate()
        .filter_map(|(i, mm)| {
            mm.filter(|(lo, hi)| !bounds.contains(lo.to_i64()) || !bounds.contains(hi.to_i64()))
                .map(|_| i)
        })
        .collect();
    if suspect.is_empty() {
        return out;
    }

    // Pass two: only the chunks with a violation.
    let per_chunk: Vec<RangeResult> = suspect
        .par_iter()
        .map(|&ci| {
            let start = ci * chunk_bytes;
            let end = (start + chunk_bytes).min(raw.len());
            let xs = chunk_values::<T>(&raw[start..end], swap);
            collect_bad(&xs, (ci * chunk_elems) as u64, bounds, &ign, limit)
        })
        .collect();
    for c in per_chunk {
        out.absorb(c, 0, limit);
    }
    out
}

/// The bad values of one chunk: counts and places, but not min/max or `scanned`
/// (pass one has them).
fn collect_bad<T: Elem>(
    xs: &[T],
    base: u64,
    bounds: Bounds,
    ign: &[T],
    limit: usize,
) -> RangeResult {
    let mut out = RangeResult::default();
    for (i, &x) in xs.iter().enumerate() {
        if ign.contains(&x) {
            continue;
        }
        let v = x.to_i64();
        if bounds.contains(v) {
            continue;
        }
        out.bad += 1;
        out.count_value(v, 1);
        if out.first.len() < limit {
            out.first.push((base + i as u64, v));
        }
    }
    out
}

/// (min, max) of the values not in `ign`; (HIGHEST, LOWEST) when there are none.
fn minmax_dispatch<T: Elem>(xs: &[T], ign: &[T]) -> (T, T) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked on the line above.
            return unsafe { minmax_avx2(xs, ign) };
        }
    }
    minmax_any(xs, ign)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn minmax_avx2<T: Elem>(xs: &[T], ign: &[T]) -> (T, T) {
    minmax_any(xs, ign)
}

/// Fixed-size ignore lists unroll into branch-free selects; longer lists
/// take the general loop.
#[inline(always)]
fn minmax_any<T: Elem>(xs: &[T], ign: &[T]) -> (T, T) {
    match *ign {
        [] => minmax_k(xs, []),
        [a] => minmax_k(xs, [a]),
        [a, b] => minmax_k(xs, [a, b]),
        [a, b, c] => minmax_k(xs, [a, b, c]),
        [a, b, c, d] => minmax_k(xs, [a, b, c, d]),
        _ => minmax_slow(xs, ign),
    }
}

#[inline(always)]
fn minmax_k<T: Elem, const K: usize>(xs: &[T], ign: [T; K]) -> (T, T) {
    // Several accumulators break the dependency chain; LLVM vectorises each.
    const LANES: usize = 64;
    let mut lo = [T::HIGHEST; LANES];
    let mut hi = [T::LOWEST; LANES];
    let mut blocks = xs.chunks_exact(LANES);
    for b in &mut blocks {
        for j in 0..LANES {
            let v = b[j];
            let mut keep = true;
            for g in ign {
                keep &= v != g;
            }
            lo[j] = lo[j].min(if keep { v } else { T::HIGHEST });
            hi[j] = hi[j].max(if keep { v } else { T::LOWEST });
        }
    }
    let mut l = T::HIGHEST;
    let mut h = T::LOWEST;
    for j in 0..LANES {
        l = l.min(lo[j]);
        h = h.max(hi[j]);
    }
    for &v in blocks.remainder() {
        let mut keep = true;
        for g in ign {
            keep &= v != g;
        }
        l = l.min(if keep { v } else { T::HIGHEST });
        h = h.max(if keep { v } else { T::LOWEST });
    }
    (l, h)
}

fn minmax_slow<T: Elem>(xs: &[T], ign: &[T]) -> (T, T) {
    let mut l = T::HIGHEST;
    let mut h = T::LOWEST;
    for &v in xs {
        if !ign.contains(&v) {
            l = l.min(v);
            h = h.max(v);
        }
    }
    (l, h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapped::Bytes;
    use std::sync::Arc;

    fn vals<T: Elem>(xs: &[T], dtype: Dtype, big_endian: bool) -> Values {
        let mut bytes: Vec<u8> = Vec::new();
        for &x in xs {
            let x = if big_endian != cfg!(target_endian = "big") {
                x.swap_bytes()
            } else {
                x
            };
            bytes.extend_from_slice(bytemuck::bytes_of(&x));
        }
        Values {
            bytes: Arc::new(Bytes::Heap(bytes)),
            start: 0,
            len: xs.len(),
            dtype,
            big_endian,
        }
    }

    #[test]
    fn finds_every_bad_value_across_chunks() {
        let mut xs = vec![7u16; 3 * CHUNK_BYTES / 2 + 5];
        xs[0] = 0;
        xs[10] = 50257;
        xs[CHUNK_BYTES / 2 + 1] = 65535;
        let last = xs.len() - 1;
        xs[last] = 50256;
        let r = scan(
            &vals(&xs, Dtype::U16, false),
            Bounds::new(0, 50257),
            &[],
            20,
        );
        assert_eq!(r.scanned, xs.len() as u64);
        assert_eq!((r.min, r.max), (Some(0), Some(65535)));
        assert_eq!(r.bad, 2);
        assert_eq!(
            r.first,
            vec![(10, 50257), ((CHUNK_BYTES / 2 + 1) as u64, 65535)]
        );
    }

    #[test]
    fn ignored_values_are_neither_bad_nor_in_min_max() {
        let xs = [3i64, -100, 255, 20, -1, 255];
        let r = scan(
            &vals(&xs, Dtype::I64, false),
            Bounds::new(0, 21),
            &[-100, 255],
            20,
        );
        assert_eq!((r.min, r.max), (Some(-1), Some(20)));
        assert_eq!(r.bad, 1);
        assert_eq!(r.first, vec![(4, -1)]);
    }

    #[test]
    fn more_ignores_than_the_unrolled_cases_still_work() {
        let xs = [1i32, 2, 3, 4, 5, 6, 9];
        let r = scan(
            &vals(&xs, Dtype::I32, false),
            Bounds::new(0, 2),
            &[2, 3, 4, 5, 6],
            20,
        );
        assert_eq!(r.bad, 1);
        assert_eq!(r.first, vec![(6, 9)]);
        assert_eq!((r.min, r.max), (Some(1), Some(9)));
    }

    #[test]
    fn big_endian_and_unaligned_data_decode() {
        let xs = [1u32, 70000, 2];
        let mut v = vals(&xs, Dtype::U32, true);
        let mut shifted = vec![0u8];
        shifted.extend_from_slice(v.raw());
        v.bytes = Arc::new(Bytes::Heap(shifted));
        v.start = 1;
        let r = scan(&v, Bounds::new(0, 65536), &[], 20);
        assert_eq!(r.first, vec![(1, 70000)]);
    }

    #[test]
    fn all_ignored_has_no_min_max() {
        let xs = [255u8; 10];
        let r = scan(&vals(&xs, Dtype::U8, false), Bounds::new(0, 21), &[255], 20);
        assert_eq!((r.min, r.max, r.bad), (None, None, 0));
    }

    #[test]
    fn u64_past_i64_saturates_and_is_bad() {
        let xs = [u64::MAX, 1];
        let r = scan(&vals(&xs, Dtype::U64, false), Bounds::new(0, 10), &[], 20);
        assert_eq!(r.first, vec![(0, i64::MAX)]);
    }

    #[test]
    fn results_of_consecutive_runs_absorb_into_the_whole() {
        let xs: Vec<i32> = (0..5000).map(|i| (i * 7919) % 301 - 20).collect();
        let (b, ign, limit) = (Bounds::new(0, 250), [-3i64], 40);
        let whole = scan(&vals(&xs, Dtype::I32, false), b, &ign, limit);
        let mut parts = RangeResult::default();
        let mut base = 0;
        for piece in xs.chunks(777) {
            let r = scan(&vals(piece, Dtype::I32, false), b, &ign, limit);
            parts.absorb(r, base, limit);
            base += piece.len() as u64;
        }
        assert_eq!(parts, whole);
        assert!(whole.bad > limit as u64 && whole.first.len() == limit);
    }

    #[test]
    fn limit_caps_places_not_counts() {
        let xs = vec![-1i16; 1000];
        let r = scan(&vals(&xs, Dtype::I16, false), Bounds::new(0, 10), &[], 3);
        assert_eq!(r.bad, 1000);
        assert_eq!(r.first.len(), 3);
        assert_eq!(r.bad_values.get(&-1), Some(&1000));
    }
}
