//! What a reader hands the kernel: a run of integers of one dtype somewhere
//! in a buffer (a memory map, bytes read, or decoded values), and the layout
//! that turns a storage index back into a row/offset or an N-d position.

use crate::dtype::Dtype;
use crate::format::InputFormat;
use crate::mapped::Bytes;
use crate::range::RangeResult;
use crate::seq_index::SeqIndex;
use std::sync::Arc;

/// `len` elements of `dtype` starting at byte `start` of `bytes`.
#[derive(Clone)]
pub struct Values {
    pub bytes: Arc<Bytes>,
    pub start: usize,
    pub len: usize,
    pub dtype: Dtype,
    pub big_endian: bool,
}

impl Values {
    pub fn from_i64(v: Vec<i64>) -> Self {
        let len = v.len();
        Values {
            bytes: Arc::new(Bytes::I64(v)),
            start: 0,
            len,
            dtype: Dtype::I64,
            big_endian: false,
        }
    }
    /// The element bytes; readers guarantee they are in bounds.
    pub fn raw(&self) -> &[u8] {
        let all = self.bytes.as_slice();
        let end = self.start + self.len * self.dtype.size();
        &all[self.start.min(all.len())..end.min(all.len())]
    }
}

/// How a storage index maps back to a place the user can find.
#[derive(Debug, Clone, PartialEq)]
pub enum Layout {
    /// A flat run of tokens: the index is the place.
    Flat,
    /// An N-d array (npy, safetensors, image masks); `fortran` when the
    /// first axis varies fastest in storage.
    Shape { dims: Vec<u64>, fortran: bool },
    /// One value per row (a scalar column, a CSV column).
    Scalars,
    /// A list per row: row `r` holds storage indices `offsets[r]..offsets[r+1]`.
    Rows { offsets: Vec<u64> },
    /// Megatron sequences grouped in documents, as its `.idx` says: a place
    /// is (document, sequence as `row`, token in the sequence as `offset`).
    Sequences(Arc<SeqIndex>),
}

/// The place of one value, computed from its storage index.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Place {
    pub index: u64,
    pub document: Option<u64>,
    pub row: Option<u64>,
    pub offset: Option<u64>,
    pub position: Option<Vec<u64>>,
}

impl Layout {
    pub fn place(&self, storage: u64) -> Place {
        match self {
            Layout::Flat => Place {
                index: storage,
                ..Place::default()
            },
            Layout::Scalars => Place {
                index: storage,
                row: Some(storage),
                ..Place::default()
            },
            Layout::Rows { offsets } => {
                // The row whose range holds `storage`: the last start <= storage.
                let row = offsets.partition_point(|&o| o <= storage).saturating_sub(1);
                let start = offsets.get(row).copied().unwrap_or(0);
                Place {
                    index: storage,
                    row: Some(row as u64),
                    offset: Some(storage - start),
                    ..Place::default()
                }
            }
            Layout::Sequences(index) => {
                let (document, seq, token) = index.place(storage);
                Place {
                    index: storage,
                    document,
                    row: Some(seq),
                    offset: Some(token),
                    ..Place::default()
                }
            }
            Layout::Shape { dims, fortran } => {
                let mut pos = vec![0u64; dims.len()];
                let mut rest = storage;
                let axes: Vec<usize> = if *fortran {
                    (0..dims.len()).collect()
                } else {
                    (0..dims.len()).rev().collect()
                };
                for a in axes {
                    let d = dims[a].max(1);
                    pos[a] = rest % d;
                    rest /= d;
                }
                // The flat index users know is numpy's C-order one.
                let index = pos.iter().zip(dims).fold(0u64, |acc, (&p, &d)| acc * d + p);
                Place {
                    index,
                    position: Some(pos),
                    ..Place::default()
                }
            }
        }
    }
}

/// A part's values: for the kernel to scan, or scanned already by a reader
/// that checks each batch as it decodes it (Arrow, Parquet: a column is
/// never held whole in memory).
pub enum Data {
    Values(Values),
    Scanned { dtype: Dtype, result: RangeResult },
}

impl From<Values> for Data {
    fn from(v: Values) -> Self {
        Data::Values(v)
    }
}

impl Data {
    pub fn dtype(&self) -> Dtype {
        match self {
            Data::Values(v) => v.dtype,
            Data::Scanned { dtype, .. } => *dtype,
        }
    }
}

/// One integer array found in a file, ready to scan.
pub struct Part {
    /// Tensor, member or column name, where the file holds several.
    pub name: Option<String>,
    pub format: InputFormat,
    /// The type as the file declares it (`<u2`, `int32`, `list<int64>`, `U16`).
    pub dtype_label: String,
    pub data: Data,
    pub layout: Layout,
    /// Shape as the file declares it, for the summary.
    pub shape: Option<Vec<u64>>,
}
