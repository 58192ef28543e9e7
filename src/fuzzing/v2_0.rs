//! Fuzz target `v2_0_page`: Lance 2.0 pages.
//!
//! Input: `[mode][rest...]`.
//! * mode bit 0 clear: `rest` is a whole file (seeds: the 2.0 fixtures), opened and read
//!   like `file_metadata` does.
//! * mode bit 0 set: one raw page:
//!   `[u16 encoding len][ArrayEncoding bytes][u8 type][u8 buffer count][u16 size...]`
//!   `[u8 run count][(u16 start, u8 len)...][buffer bytes...]`: the page's buffers are cut
//!   from the trailing bytes in order; the runs are the page-local rows read; `type` picks
//!   the Arrow type the values decode to. The read is run to completion against memory.

use std::ops::Range;

use arrow_schema::{DataType, Field};

use crate::lance::page::array_encoding::Node;
use crate::lance::v2_0::decode_page_in_memory;

/// Arrow types a raw page may decode to.
fn data_type(selector: u8) -> DataType {
    let item = |t: DataType| std::sync::Arc::new(Field::new("item", t, true));
    match selector % 10 {
        0 => DataType::Int32,
        1 => DataType::Int64,
        2 => DataType::Utf8,
        3 => DataType::Binary,
        4 => DataType::Boolean,
        5 => DataType::Float64,
        6 => DataType::FixedSizeList(item(DataType::Float32), 4),
        7 => DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
        8 => DataType::LargeUtf8,
        _ => DataType::UInt8,
    }
}

/// The fuzz target body.
pub fn v2_0_page(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode & 1 == 0 {
        super::read_file(rest);
        return;
    }
    let mut input = super::Input(rest);
    let encoding_len = input.u16() as usize;
    let encoding = input.take(encoding_len).to_vec();
    let type_selector = input.byte();
    let buffer_count = input.byte() as usize % 8;
    let sizes: Vec<u64> = (0..buffer_count).map(|_| u64::from(input.u16())).collect();
    let run_count = input.byte() as usize % 8;
    let mut rows: Vec<Range<u64>> = Vec::new();
    let mut at = 0u64;
    for _ in 0..run_count {
        let start = at + u64::from(input.u16() % 512);
        let len = u64::from(input.byte() % 64) + 1;
        rows.push(start..start + len);
        at = start + len + 1;
    }
    let file = input.0;
    let mut buffers = Vec::with_capacity(sizes.len());
    let mut position = 0u64;
    for size in sizes {
        let end = (position + size).min(file.len() as u64);
        buffers.push(position..end);
        position = end;
    }
    let Ok(node) = Node::from_bytes(bytes::Bytes::from(encoding), &buffers) else {
        return;
    };
    let data_type = data_type(type_selector);
    if let Ok(array) = decode_page_in_memory(&node, &rows, &data_type, file) {
        let wanted: u64 = rows.iter().map(|r| r.end - r.start).sum();
        assert_eq!(array.len() as u64, wanted, "decoded row count");
    }
}
