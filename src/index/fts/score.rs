//! BM25 as lance scores it (`scorer.rs`): K1 = 1.2, B = 0.75, f32 arithmetic in lance's
//! order, statistics summed over every partition of every segment plus the unindexed rows.

/// BM25 `k1`.
pub(crate) const K1: f32 = 1.2;
/// BM25 `b`.
pub(crate) const B: f32 = 0.75;

/// Corpus statistics of one search.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Corpus {
    /// Documents (deleted ones the index still lists included).
    pub(crate) num_docs: u64,
    /// Tokens over all documents.
    pub(crate) total_tokens: u64,
    /// Per query token: documents containing it.
    pub(crate) token_docs: Vec<u64>,
}

impl Corpus {
    /// Average document length.
    pub(crate) fn avg_doc_length(&self) -> f32 {
        self.total_tokens as f32 / self.num_docs as f32
    }

    /// The idf of query token `t` (0 for a token no document has).
    pub(crate) fn query_weight(&self, t: usize) -> f32 {
        let n = self.token_docs[t];
        if n == 0 {
            return 0.0;
        }
        idf(n, self.num_docs)
    }

    /// The score of a document of `doc_tokens` tokens with `freqs[t]` of each query token.
    pub(crate) fn score(&self, freqs: &[u32], doc_tokens: u32, weights: &[f32]) -> f32 {
        let norm = K1 * (1.0 - B + B * doc_tokens as f32 / self.avg_doc_length());
        let mut score = 0.0f32;
        for (f, w) in freqs.iter().zip(weights) {
            if *f == 0 {
                continue;
            }
            let f = *f as f32;
            score += w * ((K1 + 1.0) * f / (f + norm));
        }
        score
    }
}

/// lance's idf: `ln((N - n + 0.5) / (n + 0.5) + 1)` in f32.
pub(crate) fn idf(token_docs: u64, num_docs: u64) -> f32 {
    let num_docs = num_docs as f32;
    let n = token_docs as f32;
    ((num_docs - n + 0.5) / (n + 0.5) + 1.0).ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idf_and_weight_follow_lance() {
        // N = 10, n = 2: ln(8.5 / 2.5 + 1) = ln(4.4).
        assert!((idf(2, 10) - 4.4f32.ln()).abs() < 1e-6);
        let c = Corpus {
            num_docs: 10,
            total_tokens: 50,
            token_docs: vec![2, 0],
        };
        let w = [c.query_weight(0), c.query_weight(1)];
        assert_eq!(w[1], 0.0);
        // dl = avgdl: norm = K1, weight = 2.2 f / (f + 1.2).
        let s = c.score(&[1, 0], 5, &w);
        assert!((s - w[0] * 2.2 / 2.2).abs() < 1e-6);
    }
}
