//! The tokenizer parameters an INVERTED index records, and the analyzer they build.
//!
//! pylance 14.0.2 writes them as JSON: in `metadata.lance`'s schema metadata `params`
//! (partitioned layout) or in `tokens.lance`'s `tokenizer` (the older single-partition
//! layout). Missing keys take the defaults the writer of that layout used; the analyzer
//! chain is lance's (`lance-tokenizer`, the same crate pylance 14.0.2 tokenizes with): base
//! tokenizer → remove long tokens → lower case → stem → stop words → ASCII folding.

use lance_tokenizer::{
    AsciiFoldingFilter, Language, LowerCaser, NgramTokenizer, RawTokenizer, RemoveLongFilter,
    SimpleTokenizer, Stemmer, StopWordFilter, TextAnalyzer, WhitespaceTokenizer,
};
use serde::Deserialize;

use crate::error::{Error, Result};

/// The tokenizer parameters of one index (the keys lakeseek understands; others ignored).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default)]
pub(crate) struct TokenizerParams {
    /// Document tokenizer: `text`, `json` or none (text).
    pub(crate) lance_tokenizer: Option<String>,
    /// Base tokenizer: simple, whitespace, raw, ngram (others are refused).
    pub(crate) base_tokenizer: String,
    /// Language of the stemmer and stop words (a tantivy language name).
    pub(crate) language: String,
    /// Whether positions are stored (phrase queries need them).
    pub(crate) with_position: bool,
    /// Tokens longer than this are dropped (`None`: no limit).
    pub(crate) max_token_length: Option<usize>,
    /// Lower-case tokens.
    pub(crate) lower_case: bool,
    /// Stem tokens.
    pub(crate) stem: bool,
    /// Remove stop words.
    pub(crate) remove_stop_words: bool,
    /// Stop words replacing the language's list.
    pub(crate) custom_stop_words: Option<Vec<String>>,
    /// Fold non-ASCII characters to ASCII.
    pub(crate) ascii_folding: bool,
    /// Shortest n-gram (ngram base tokenizer).
    pub(crate) min_ngram_length: u32,
    /// Longest n-gram.
    pub(crate) max_ngram_length: u32,
    /// Only n-grams starting at a token's first character.
    pub(crate) prefix_only: bool,
}

impl Default for TokenizerParams {
    /// pylance 14.0.2's defaults (stemming and stop words on, as its code has them).
    fn default() -> Self {
        Self {
            lance_tokenizer: None,
            base_tokenizer: "simple".into(),
            language: "English".into(),
            with_position: false,
            max_token_length: Some(40),
            lower_case: true,
            stem: true,
            remove_stop_words: true,
            custom_stop_words: None,
            ascii_folding: true,
            min_ngram_length: 3,
            max_ngram_length: 3,
            prefix_only: false,
        }
    }
}

/// Parse the params JSON `text` of an index (named `what` in errors).
pub(crate) fn parse_params(text: &str, what: &str) -> Result<TokenizerParams> {
    serde_json::from_str(text).map_err(|e| {
        Error::corrupt(format!("{what}: tokenizer params do not parse")).with_source(e)
    })
}

/// The analyzer of `params`: the token chain pylance builds the index with.
pub(crate) fn build_analyzer(params: &TokenizerParams) -> Result<TextAnalyzer> {
    if let Some(t) = params.lance_tokenizer.as_deref().filter(|t| *t != "text") {
        return Err(Error::unsupported(format!(
            "full-text index with the {t:?} document tokenizer"
        )));
    }
    let mut builder = match params.base_tokenizer.as_str() {
        "simple" => TextAnalyzer::builder(SimpleTokenizer::default()).dynamic(),
        "whitespace" => TextAnalyzer::builder(WhitespaceTokenizer::default()).dynamic(),
        "raw" => TextAnalyzer::builder(RawTokenizer::default()).dynamic(),
        "ngram" => {
            let ngram = NgramTokenizer::new(
                params.min_ngram_length as usize,
                params.max_ngram_length as usize,
                params.prefix_only,
            )
            .map_err(|e| Error::corrupt(format!("n-gram tokenizer params: {e}")))?;
            TextAnalyzer::builder(ngram).dynamic()
        }
        other => {
            return Err(Error::unsupported(format!(
                "full-text index with the {other:?} base tokenizer"
            )))
        }
    };
    if let Some(limit) = params.max_token_length {
        builder = builder.filter_dynamic(RemoveLongFilter::limit(limit));
    }
    if params.lower_case {
        builder = builder.filter_dynamic(LowerCaser);
    }
    let language = language(&params.language)?;
    if params.stem {
        builder = builder.filter_dynamic(Stemmer::new(language));
    }
    if params.remove_stop_words {
        let filter = match &params.custom_stop_words {
            Some(words) => StopWordFilter::remove(words.iter().cloned()),
            None => StopWordFilter::new(language).ok_or_else(|| {
                Error::unsupported(format!("stop words of language {:?}", params.language))
            })?,
        };
        builder = builder.filter_dynamic(filter);
    }
    if params.ascii_folding {
        builder = builder.filter_dynamic(AsciiFoldingFilter);
    }
    Ok(builder.build())
}

/// The tokens of `text` with their positions, as the index's analyzer makes them.
pub(crate) fn tokenize(analyzer: &mut TextAnalyzer, text: &str) -> Vec<(String, u32)> {
    let mut stream = analyzer.token_stream(text);
    let mut out = Vec::new();
    while let Some(token) = stream.next() {
        out.push((token.text.clone(), token.position as u32));
    }
    out
}

/// The tantivy language named `name` (as serde names it: "English", "French", ...).
fn language(name: &str) -> Result<Language> {
    serde_json::from_value(serde_json::Value::String(name.to_string()))
        .map_err(|_| Error::unsupported(format!("full-text index language {name:?}")))
}
