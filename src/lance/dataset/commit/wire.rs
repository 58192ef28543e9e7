//! Raw protobuf wire editing: remove top-level fields of a message and append new ones,
//! keeping every other field byte for byte (prost would drop the fields lakeseek does not
//! declare, and a manifest must keep all of them). Pure.

use crate::error::{Error, Result};

/// Wire type of a field key.
const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;
const FIXED32: u8 = 5;

/// Read a varint at `*pos`.
fn read_varint(bytes: &[u8], pos: &mut usize) -> Result<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes
            .get(*pos)
            .ok_or_else(|| Error::corrupt("protobuf varint runs past the message"))?;
        *pos += 1;
        value |= u64::from(b & 0x7F) << shift;
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(Error::corrupt("protobuf varint longer than 10 bytes"))
}

/// Append a varint.
pub(crate) fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Append a varint field.
pub(crate) fn put_varint_field(out: &mut Vec<u8>, tag: u32, value: u64) {
    put_varint(out, u64::from(tag) << 3 | u64::from(VARINT));
    put_varint(out, value);
}

/// Append a length-delimited field (string, bytes, message).
pub(crate) fn put_len_field(out: &mut Vec<u8>, tag: u32, payload: &[u8]) {
    put_varint(out, u64::from(tag) << 3 | u64::from(LEN));
    put_varint(out, payload.len() as u64);
    out.extend_from_slice(payload);
}

/// The top-level fields of `message` as (tag, byte range of the whole field).
pub(crate) fn fields(message: &[u8]) -> Result<Vec<(u32, std::ops::Range<usize>)>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < message.len() {
        let start = pos;
        let key = read_varint(message, &mut pos)?;
        let tag = u32::try_from(key >> 3)
            .ok()
            .filter(|t| *t > 0)
            .ok_or_else(|| Error::corrupt(format!("protobuf field number {}", key >> 3)))?;
        let skip = match (key & 7) as u8 {
            VARINT => {
                read_varint(message, &mut pos)?;
                0
            }
            FIXED64 => 8,
            FIXED32 => 4,
            LEN => usize::try_from(read_varint(message, &mut pos)?)
                .map_err(|_| Error::corrupt("protobuf length beyond usize"))?,
            other => {
                return Err(Error::corrupt(format!(
                    "protobuf wire type {other} (field {tag}) is not supported"
                )))
            }
        };
        pos = pos
            .checked_add(skip)
            .filter(|end| *end <= message.len())
            .ok_or_else(|| Error::corrupt(format!("protobuf field {tag} runs past the message")))?;
        out.push((tag, start..pos));
    }
    Ok(out)
}

/// `message` without its top-level fields whose tags are in `drop`.
pub(crate) fn without_fields(message: &[u8], drop: &[u32]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(message.len());
    for (tag, range) in fields(message)? {
        if !drop.contains(&tag) {
            out.extend_from_slice(&message[range]);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[derive(Clone, PartialEq, prost::Message)]
    struct Sample {
        #[prost(uint64, tag = "1")]
        a: u64,
        #[prost(string, tag = "2")]
        b: String,
        #[prost(fixed64, tag = "3")]
        c: u64,
        #[prost(fixed32, tag = "4")]
        d: u32,
        #[prost(uint64, repeated, tag = "300")]
        e: Vec<u64>,
    }

    #[test]
    fn drops_exactly_the_named_fields() {
        let s = Sample {
            a: 300,
            b: "xyz".into(),
            c: 7,
            d: 9,
            e: vec![1, 2, 1 << 40],
        };
        let bytes = s.encode_to_vec();
        let kept = Sample::decode(&without_fields(&bytes, &[2, 4]).unwrap()[..]).unwrap();
        assert_eq!(
            kept,
            Sample {
                b: String::new(),
                d: 0,
                ..s.clone()
            }
        );
        let mut more = without_fields(&bytes, &[1]).unwrap();
        put_varint_field(&mut more, 1, 5);
        put_len_field(&mut more, 2, b"new");
        let back = Sample::decode(&more[..]).unwrap();
        assert_eq!((back.a, back.b.as_str(), back.e.len()), (5, "new", 3));
    }

    #[test]
    fn truncated_messages_are_corrupt() {
        let bytes = Sample {
            b: "hello".into(),
            ..Default::default()
        }
        .encode_to_vec();
        for cut in 1..bytes.len() {
            assert!(fields(&bytes[..cut]).is_err(), "{cut}");
        }
        assert!(fields(&[0x07]).is_err()); // wire type 7
        assert!(fields(&[0x00, 0x00]).is_err()); // field 0
    }
}
