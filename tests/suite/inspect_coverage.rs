//! `lakeseek inspect` over the committed pylance fixtures shows every compression and layout
//! the foundation issue names as covered by some fixture (foundation issue, "Done when").

use crate::suite::read_support as support;

use std::collections::BTreeSet;

use support::{catalog, open, source_for, Backend};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_required_compression_and_layout_is_covered_by_a_fixture() {
    let mut codecs = BTreeSet::new();
    let mut layouts = BTreeSet::new();
    let mut dictionary_compressions = BTreeSet::new();
    for file in catalog() {
        let (source, path) = source_for(Backend::Local, &file.path).await;
        let reader = open(source, path).await.expect("open fixture");
        let inspection = reader.inspect();
        for column in &inspection.columns {
            for page in &column.pages {
                codecs.extend(page.codecs.iter().cloned());
                layouts.insert(page.layout.clone());
                // e.g. "values: InlineBitpacking(32); dictionary(80 items): General(zstd, ...)"
                if let Some((_, dict)) = page.compression.split_once("dictionary(") {
                    let dict = dict
                        .split_once("): ")
                        .map(|(_, tree)| tree)
                        .unwrap_or_default();
                    for scheme in ["General(lz4", "General(zstd"] {
                        if dict.starts_with(scheme) {
                            dictionary_compressions.insert(scheme);
                        }
                    }
                }
            }
        }
    }
    let required_codecs = [
        "Flat",
        "Variable",
        "InlineBitpacking",
        "OutOfLineBitpacking",
        "Rle",
        "Dictionary",
        "Fsst",
        "General(lz4)",
        "General(zstd)",
        "ByteStreamSplit",
        "Constant",
        "FixedSizeList",
        "Range",
        "Delta",
    ];
    let missing: Vec<&str> = required_codecs
        .iter()
        .copied()
        .filter(|c| !codecs.contains(*c))
        .collect();
    assert!(
        missing.is_empty(),
        "codecs not covered: {missing:?}; covered: {codecs:?}"
    );
    for layout in ["mini-block", "full-zip", "constant", "all-null"] {
        assert!(
            layouts.iter().any(|l| l.starts_with(layout)),
            "layout {layout} not covered: {layouts:?}"
        );
    }
    assert!(
        layouts.iter().any(|l| l.starts_with("sparse")),
        "no 2.3 sparse page: {layouts:?}"
    );
    assert_eq!(
        dictionary_compressions.len(),
        2,
        "page dictionaries compressed with both LZ4 and zstd: {dictionary_compressions:?}"
    );
}
