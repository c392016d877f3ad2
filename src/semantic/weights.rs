//! The tensors of a model's `model.safetensors`, read as the encoder asks
//! for them: the header once, then each tensor's bytes, widened to f32.
//! The word-embedding table (250,037 rows for e5: four fifths of the
//! weights) is never read whole: [`Rows`] reads the rows a batch's tokens
//! need, so a start reads 45 MB instead of 240 MB and converts a fifth.

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use candle_core::{DType, Device, Shape, Tensor};
use half::slice::{HalfBitsSliceExt, HalfFloatSliceExt};
use safetensors::Dtype;
use safetensors::tensor::Metadata;

use crate::base::codec::read_at;

/// The largest header read (the crate's own limit).
const MAX_HEADER: u64 = 100_000_000;

thread_local! {
    /// The bytes of the last tensor a thread read, kept for its next one.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Where a tensor is and what it holds.
#[derive(Debug, Clone)]
struct Info {
    dtype: Dtype,
    shape: Vec<usize>,
    /// From the start of the file.
    start: u64,
}

/// An open weights file.
pub struct Weights {
    file: Arc<File>,
    tensors: HashMap<String, Info>,
}

fn error(what: impl std::fmt::Display) -> candle_core::Error {
    candle_core::Error::Msg(format!("model.safetensors: {what}"))
}

/// The bytes of one value of `dtype`, for the types read.
fn width(dtype: Dtype) -> Option<usize> {
    match dtype {
        Dtype::F16 | Dtype::BF16 => Some(2),
        Dtype::F32 => Some(4),
        Dtype::F64 => Some(8),
        _ => None,
    }
}

/// `bytes` of `dtype` as f32 values, into `out`; half floats through the
/// processor's own conversion where it has one, a slice at a time.
fn widen(dtype: Dtype, bytes: &[u8], out: &mut [f32]) {
    const CHUNK: usize = 1024;
    let mut halves = |convert: fn(&[u16], &mut [f32])| {
        let mut bits = [0u16; CHUNK];
        for (b, o) in bytes.chunks(2 * CHUNK).zip(out.chunks_mut(CHUNK)) {
            let n = o.len();
            for (h, c) in bits.iter_mut().zip(b.chunks_exact(2)) {
                *h = u16::from_le_bytes([c[0], c[1]]);
            }
            convert(&bits[..n], o);
        }
    };
    match dtype {
        Dtype::F16 => halves(|b, o| b.reinterpret_cast::<half::f16>().convert_to_f32_slice(o)),
        Dtype::BF16 => halves(|b, o| b.reinterpret_cast::<half::bf16>().convert_to_f32_slice(o)),
        Dtype::F32 => {
            for (o, c) in out.iter_mut().zip(bytes.chunks_exact(4)) {
                *o = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
        }
        _ => {
            for (o, c) in out.iter_mut().zip(bytes.chunks_exact(8)) {
                *o = f64::from_le_bytes(c.try_into().unwrap_or_default()) as f32;
            }
        }
    }
}

impl Weights {
    /// Open `path` and read its header; every tensor must lie inside the
    /// file and be of a floating-point type.
    pub fn open(path: &Path) -> candle_core::Result<Weights> {
        let file = File::open(path).map_err(error)?;
        let len = file.metadata().map_err(error)?.len();
        let mut head = [0u8; 8];
        read_at(&file, &mut head, 0).map_err(error)?;
        let size = u64::from_le_bytes(head);
        if size > MAX_HEADER || size + 8 > len {
            return Err(error("its header is larger than the file"));
        }
        let mut header = vec![0u8; size as usize];
        read_at(&file, &mut header, 8).map_err(error)?;
        let metadata: Metadata = serde_json::from_slice(&header).map_err(error)?;
        let data = 8 + size;
        let mut tensors = HashMap::new();
        for (name, info) in metadata.tensors() {
            let (from, to) = info.data_offsets;
            let bytes = width(info.dtype)
                .and_then(|w| info.shape.iter().try_fold(w, |n: usize, &d| n.checked_mul(d)));
            let Some(bytes) = bytes else {
                return Err(error(format!("{name} is {:?}, not a float type", info.dtype)));
            };
            if from.checked_add(bytes) != Some(to) || data + to as u64 > len {
                return Err(error(format!("{name} does not lie where its header says")));
            }
            let start = data + from as u64;
            tensors.insert(name, Info { dtype: info.dtype, shape: info.shape.clone(), start });
        }
        Ok(Weights { file: Arc::new(file), tensors })
    }

    /// Whether it holds a tensor `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.tensors.contains_key(name)
    }

    fn info(&self, name: &str) -> candle_core::Result<&Info> {
        self.tensors.get(name).ok_or_else(|| error(format!("it has no tensor {name}")))
    }

    /// The tensor `name`, in f32.
    pub fn tensor(&self, name: &str) -> candle_core::Result<Tensor> {
        let info = self.info(name)?;
        let count: usize = info.shape.iter().product();
        let len = count * width(info.dtype).unwrap_or(0);
        SCRATCH.with_borrow_mut(|scratch| {
            // Zeroed only where it grows.
            if scratch.len() < len {
                scratch.resize(len, 0);
            }
            let bytes = &mut scratch[..len];
            read_at(&self.file, bytes, info.start).map_err(error)?;
            let mut values = vec![0f32; count];
            widen(info.dtype, bytes, &mut values);
            Tensor::from_vec(values, info.shape.clone(), &Device::Cpu)
        })
    }

    /// The table `name`, `rows` × `cols`, read a row at a time.
    pub fn rows(&self, name: &str, rows: usize, cols: usize) -> candle_core::Result<Rows> {
        let info = self.info(name)?;
        if info.shape != [rows, cols] {
            return Err(error(format!("{name} is {:?}, not [{rows}, {cols}]", info.shape)));
        }
        Ok(Rows { file: self.file.clone(), info: info.clone(), rows, cols })
    }
}

impl candle_nn::var_builder::SimpleBackend for Weights {
    fn get(
        &self,
        shape: Shape,
        name: &str,
        _: candle_nn::Init,
        dtype: DType,
        _: &Device,
    ) -> candle_core::Result<Tensor> {
        let tensor = self.tensor(name)?;
        if tensor.shape() != &shape {
            return Err(error(format!("{name} is {:?}, not {:?}", tensor.shape(), shape)));
        }
        tensor.to_dtype(dtype)
    }

    fn get_unchecked(&self, name: &str, dtype: DType, _: &Device) -> candle_core::Result<Tensor> {
        self.tensor(name)?.to_dtype(dtype)
    }

    fn contains_tensor(&self, name: &str) -> bool {
        self.contains(name)
    }
}

/// A table of the weights file whose rows are read when asked for.
pub struct Rows {
    file: Arc<File>,
    info: Info,
    rows: usize,
    cols: usize,
}

impl Rows {
    /// The rows `ids`, in order, as one f32 tensor (`ids.len()` × cols).
    pub fn gather(&self, ids: &[u32]) -> candle_core::Result<Tensor> {
        let width = width(self.info.dtype).unwrap_or(0) * self.cols;
        let mut wanted: Vec<u32> = ids.to_vec();
        wanted.sort_unstable();
        wanted.dedup();
        let mut rows = vec![0f32; wanted.len() * self.cols];
        let mut bytes = vec![0u8; width];
        for (&id, row) in wanted.iter().zip(rows.chunks_exact_mut(self.cols)) {
            if id as usize >= self.rows {
                return Err(error(format!("token id {id} is past its {} rows", self.rows)));
            }
            let at = self.info.start + u64::from(id) * width as u64;
            read_at(&self.file, &mut bytes, at).map_err(error)?;
            widen(self.info.dtype, &bytes, row);
        }
        let mut out = Vec::with_capacity(ids.len() * self.cols);
        for id in ids {
            let at = wanted.binary_search(id).unwrap_or_default() * self.cols;
            out.extend_from_slice(&rows[at..at + self.cols]);
        }
        Tensor::from_vec(out, (ids.len(), self.cols), &Device::Cpu)
    }
}
