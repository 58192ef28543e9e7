//! Token dictionaries: the FST form (one row: `_token_fst_bytes`, an fst map from token to
//! id) and the Arrow form (`_token: Utf8`, `_token_id: UInt32`), decoded purely.

use std::collections::HashMap;

use arrow_array::{cast::AsArray, types::UInt32Type, Array, RecordBatch};

use crate::error::{Error, Result};

/// One partition's token dictionary.
#[derive(Debug, Clone)]
pub(crate) enum TokenSet {
    /// An fst map (validated by `fst` when built).
    Fst(fst::Map<Vec<u8>>),
    /// Token → id, from the Arrow form.
    Arrow(HashMap<String, u32>),
}

impl TokenSet {
    /// The id of `token`, if the partition has it; ids are checked against `num_tokens`.
    pub(crate) fn get(&self, token: &str, num_tokens: u64) -> Result<Option<u32>> {
        let id = match self {
            Self::Fst(map) => map.get(token),
            Self::Arrow(map) => map.get(token).map(|id| u64::from(*id)),
        };
        match id {
            Some(id) if id >= num_tokens => Err(Error::corrupt(format!(
                "token {token:?} has id {id}, past the {num_tokens} posting lists"
            ))),
            Some(id) => Ok(Some(id as u32)),
            None => Ok(None),
        }
    }
}

impl TokenSet {
    /// Every token `keep` admits, ascending (the whole dictionary is in memory already).
    pub(crate) fn tokens_where(&self, keep: impl Fn(&str) -> bool) -> Vec<String> {
        let mut out = Vec::new();
        match self {
            Self::Fst(map) => {
                use fst::Streamer;
                let mut stream = map.stream();
                while let Some((key, _)) = stream.next() {
                    if let Ok(token) = std::str::from_utf8(key) {
                        if keep(token) {
                            out.push(token.to_string());
                        }
                    }
                }
            }
            Self::Arrow(map) => {
                out.extend(map.keys().filter(|t| keep(t)).cloned());
                out.sort_unstable();
            }
        }
        out
    }
}

/// The FST token set of a batch with `_token_fst_bytes` (one row).
pub(crate) fn decode_fst(batch: &RecordBatch) -> Result<TokenSet> {
    let column = batch
        .column_by_name("_token_fst_bytes")
        .ok_or_else(|| Error::corrupt("token file has no _token_fst_bytes column"))?;
    let bytes = column
        .as_binary_opt::<i64>()
        .ok_or_else(|| Error::corrupt("_token_fst_bytes is not LargeBinary"))?;
    if bytes.len() != 1 || bytes.is_null(0) {
        return Err(Error::corrupt(format!(
            "_token_fst_bytes has {} rows, expected one non-null",
            bytes.len()
        )));
    }
    let map = fst::Map::new(bytes.value(0).to_vec())
        .map_err(|e| Error::corrupt("token dictionary (fst) does not decode").with_source(e))?;
    Ok(TokenSet::Fst(map))
}

/// The Arrow token set of a batch with `_token` and `_token_id`.
pub(crate) fn decode_arrow(batch: &RecordBatch) -> Result<TokenSet> {
    let tokens = batch
        .column_by_name("_token")
        .and_then(|c| c.as_string_opt::<i32>())
        .ok_or_else(|| Error::corrupt("token file has no Utf8 _token column"))?;
    let ids = batch
        .column_by_name("_token_id")
        .and_then(|c| c.as_primitive_opt::<UInt32Type>())
        .ok_or_else(|| Error::corrupt("token file has no UInt32 _token_id column"))?;
    if tokens.null_count() > 0 || ids.null_count() > 0 {
        return Err(Error::corrupt("token dictionary has null entries"));
    }
    let map = tokens
        .iter()
        .zip(ids.values().iter())
        .map(|(t, id)| (t.unwrap_or_default().to_string(), *id))
        .collect();
    Ok(TokenSet::Arrow(map))
}
