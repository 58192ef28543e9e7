//! A minimal `.npy` reader for query vectors: little-endian `<f4`, `<f8` or `<f2`, C order,
//! shape `(d,)` or `(n, d)`. Returns rows of f32.

use half::f16;

use crate::error::{Error, Result};

fn bad(what: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(format!("query file: {what}"))
}

/// Parse `.npy` bytes (float32/float64/float16, shape `(d,)` or `(n, d)`) into rows, e.g. query
/// vectors for [`EcpIndex::query`](crate::ecp::EcpIndex::query); a 1-d array is one row.
pub fn parse_npy(bytes: &[u8]) -> Result<Vec<Vec<f32>>> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(bad("not a .npy file (bad magic)"));
    }
    let major = bytes[6];
    let (header_len, start) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => {
            let b = bytes.get(8..12).ok_or_else(|| bad("truncated header"))?;
            (u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize, 12)
        }
        v => return Err(bad(format!("unsupported .npy version {v}"))),
    };
    let header = bytes
        .get(start..start + header_len)
        .ok_or_else(|| bad("truncated header"))?;
    let header = std::str::from_utf8(header).map_err(|_| bad("header is not UTF-8"))?;
    let descr = field(header, "descr").ok_or_else(|| bad("no descr"))?;
    let descr = descr.trim_matches(|c| c == '\'' || c == '"');
    if field(header, "fortran_order").map(str::trim) == Some("True") {
        return Err(bad("Fortran order is not supported"));
    }
    let shape = parse_shape(header).ok_or_else(|| bad("bad shape"))?;
    let (rows, dim) = match shape.as_slice() {
        [d] => (1, *d),
        [n, d] => (*n, *d),
        _ => return Err(bad(format!("expected shape (d,) or (n, d), got {shape:?}"))),
    };
    // A row of no values is no vector; its count would be trusted with no bytes to back
    // it (`(10^18, 0)` would allocate 10^18 empty rows).
    if dim == 0 {
        return Err(bad(format!("shape {shape:?} has vectors of 0 dimensions")));
    }
    let width = match descr {
        "<f4" => 4,
        "<f8" => 8,
        "<f2" => 2,
        other => {
            return Err(bad(format!(
                "unsupported dtype {other} (use float32, float64 or float16)"
            )))
        }
    };
    let count = rows
        .checked_mul(dim)
        .ok_or_else(|| bad("shape overflows"))?;
    let data = &bytes[start + header_len..];
    if data.len()
        != count
            .checked_mul(width)
            .ok_or_else(|| bad("shape overflows"))?
    {
        return Err(bad(format!(
            "{} data bytes for {count} values of {width} bytes",
            data.len()
        )));
    }
    let values: Vec<f32> = match width {
        4 => data
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
        8 => data
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]) as f32)
            .collect(),
        _ => data
            .chunks_exact(2)
            .map(|c| f16::from_le_bytes([c[0], c[1]]).to_f32())
            .collect(),
    };
    Ok(values.chunks_exact(dim).map(<[f32]>::to_vec).collect())
}

fn field<'a>(header: &'a str, name: &str) -> Option<&'a str> {
    let key = format!("'{name}':");
    let start = header.find(&key)? + key.len();
    let rest = &header[start..];
    let end = rest.find(',').unwrap_or(rest.len());
    Some(rest[..end].trim())
}

fn parse_shape(header: &str) -> Option<Vec<usize>> {
    let start = header.find("'shape':")? + "'shape':".len();
    let rest = &header[start..];
    let open = rest.find('(')?;
    let close = rest.find(')')?;
    rest.get(open + 1..close)?
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn npy(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
        let mut header =
            format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(' ');
        }
        header.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn reads_f32_vectors_and_matrices() {
        let data: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(
            parse_npy(&npy("<f4", "(4,)", &data)).unwrap(),
            vec![vec![1.0, 2.0, 3.0, 4.0]]
        );
        assert_eq!(
            parse_npy(&npy("<f4", "(2, 2)", &data)).unwrap(),
            vec![vec![1.0, 2.0], vec![3.0, 4.0]]
        );
    }

    #[test]
    fn rejects_bad_files() {
        let data: Vec<u8> = [1.0f32, 2.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert!(parse_npy(&npy("<i4", "(2,)", &data)).is_err());
        assert!(parse_npy(&npy("<f4", "(3,)", &data)).is_err());
        assert!(parse_npy(b"garbage").is_err());
    }

    #[test]
    fn a_huge_row_count_of_empty_vectors_is_an_error_not_an_allocation() {
        for shape in ["(1000000000000000000, 0)", "(0,)", "(3, 0)"] {
            let err = parse_npy(&npy("<f4", shape, &[])).unwrap_err();
            assert!(err.to_string().contains("0 dimensions"), "{shape}: {err}");
        }
        let err = parse_npy(&npy("<f4", "(18446744073709551615, 2)", &[])).unwrap_err();
        assert!(err.to_string().contains("overflows"), "{err}");
        assert!(parse_npy(&npy("<f4", "(-1, 2)", &[])).is_err());
        assert!(parse_npy(&npy("<f4", "(1, 2, 3)", &[])).is_err());
    }
}
