use super::*;

/// Frame a manifest the way lance does: [index section][manifest][footer].
fn frame(mut manifest: pb::Manifest, section: Option<pb::IndexSection>) -> Vec<u8> {
    let mut out = Vec::new();
    if let Some(s) = section {
        let body = s.encode_to_vec();
        manifest.index_section = Some(0);
        out.extend_from_slice(&(body.len() as u32).to_le_bytes());
        out.extend_from_slice(&body);
    }
    let pos = out.len() as i64;
    let body = manifest.encode_to_vec();
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&body);
    out.extend_from_slice(&pos.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(b"LANC");
    out
}

fn sample() -> (pb::Manifest, pb::IndexSection) {
    let manifest = pb::Manifest {
        fields: vec![pb::Field {
            name: "x".into(),
            id: 0,
            parent_id: -1,
            logical_type: "int32".into(),
            nullable: true,
            ..Default::default()
        }],
        fragments: vec![pb::DataFragment {
            id: 3,
            files: vec![pb::DataFile {
                path: "a.lance".into(),
                fields: vec![0],
                column_indices: vec![0],
                file_major_version: 2,
                file_minor_version: 2,
                file_size_bytes: 100,
                base_id: None,
            }],
            deletion_file: Some(pb::DeletionFile {
                file_type: 1,
                read_version: 4,
                id: 99,
                num_deleted_rows: 2,
                base_id: None,
            }),
            physical_rows: 10,
            overlays: vec![],
            ..Default::default()
        }],
        version: 5,
        ..Default::default()
    };
    let mut bitmap = Vec::new();
    RoaringBitmap::from_iter([3u32])
        .serialize_into(&mut bitmap)
        .unwrap();
    let section = pb::IndexSection {
        indices: vec![pb::IndexMetadata {
            uuid: Some(pb::Uuid {
                uuid: (0u8..16).collect(),
            }),
            fields: vec![0],
            name: "x_idx".into(),
            dataset_version: 2,
            fragment_bitmap: bitmap,
            index_details: Some(prost_types::Any {
                type_url: "/lance.table.BTreeIndexDetails".into(),
                value: vec![],
            }),
            index_version: None,
            files: vec![pb::IndexFile {
                path: "page_lookup.lance".into(),
                size_bytes: 77,
            }],
            ..Default::default()
        }],
    };
    (manifest, section)
}

fn decode_all(bytes: &[u8]) -> Result<Manifest> {
    let mut known = KnownBytes::new(bytes.len() as u64);
    known.add(0, Bytes::copy_from_slice(bytes));
    match decode_manifest_file(&known)? {
        ManifestStep::Done(m) => Ok(*m),
        ManifestStep::NeedRange(r) => panic!("whole file known but asked for {r:?}"),
    }
}

#[test]
fn decodes_a_framed_manifest_with_index_section() {
    let (m, s) = sample();
    let got = decode_all(&frame(m, Some(s))).unwrap();
    assert_eq!(got.version, 5);
    assert_eq!(got.fragments[0].id, 3);
    assert_eq!(got.fragments[0].files[0].column_of(0), Some(0));
    let del = got.fragments[0].deletion.as_ref().unwrap();
    assert_eq!(del.kind, DeletionKind::Bitmap);
    assert_eq!(del.relative_path(3), "_deletions/3-4-99.bin");
    let idx = &got.indices[0];
    assert_eq!(idx.uuid_string(), "00010203-0405-0607-0809-0a0b0c0d0e0f");
    assert_eq!(idx.type_name(), Some("lance.table.BTreeIndexDetails"));
    assert_eq!(idx.file_size("page_lookup.lance"), Some(77));
    assert!(idx.fragment_bitmap.as_ref().unwrap().contains(3));
}

#[test]
fn asks_for_what_the_tail_misses() {
    let (m, s) = sample();
    let bytes = frame(m, Some(s));
    let size = bytes.len() as u64;
    // Only the footer: asks for the manifest message.
    let mut known = KnownBytes::new(size);
    known.add(
        size - 16,
        Bytes::copy_from_slice(&bytes[bytes.len() - 16..]),
    );
    let ManifestStep::NeedRange(r) = decode_manifest_file(&known).unwrap() else {
        panic!()
    };
    assert_eq!(r.end, size - 16);
    // Footer + manifest but not the index section at 0: asks for [0, position).
    known.add(
        r.start,
        Bytes::copy_from_slice(&bytes[r.start as usize..r.end as usize]),
    );
    let ManifestStep::NeedRange(r2) = decode_manifest_file(&known).unwrap() else {
        panic!()
    };
    assert_eq!(r2, 0..r.start);
    known.add(0, Bytes::copy_from_slice(&bytes[..r2.end as usize]));
    assert!(matches!(
        decode_manifest_file(&known).unwrap(),
        ManifestStep::Done(_)
    ));
}

#[test]
fn rejects_corrupt_framing() {
    let (m, s) = sample();
    let good = frame(m, Some(s));
    let mut bad_magic = good.clone();
    let n = bad_magic.len();
    bad_magic[n - 1] = b'X';
    assert!(matches!(decode_all(&bad_magic), Err(Error::Corrupt { .. })));
    let mut bad_pos = good.clone();
    bad_pos[n - 16..n - 8].copy_from_slice(&(n as i64).to_le_bytes());
    assert!(matches!(decode_all(&bad_pos), Err(Error::Corrupt { .. })));
    let mut neg_pos = good.clone();
    neg_pos[n - 16..n - 8].copy_from_slice(&(-5i64).to_le_bytes());
    assert!(matches!(decode_all(&neg_pos), Err(Error::Corrupt { .. })));
    assert!(matches!(
        decode_all(&good[..10]),
        Err(Error::Corrupt { .. })
    ));
    // Garbage protobuf of the right length.
    let mut garbage = good.clone();
    let pos = i64::from_le_bytes(good[n - 16..n - 8].try_into().unwrap()) as usize;
    for b in &mut garbage[pos + 4..n - 16] {
        *b = 0xFF;
    }
    assert!(matches!(decode_all(&garbage), Err(Error::Corrupt { .. })));
}

#[test]
fn refuses_unknown_reader_flags_and_bad_uuids() {
    let (mut m, s) = sample();
    m.reader_feature_flags = 1 << 6;
    assert!(matches!(
        decode_all(&frame(m, Some(s.clone()))),
        Err(Error::Unsupported { .. })
    ));
    let (m, mut s) = sample();
    s.indices[0].uuid = Some(pb::Uuid {
        uuid: vec![1, 2, 3],
    });
    assert!(matches!(
        decode_all(&frame(m, Some(s))),
        Err(Error::Corrupt { .. })
    ));
}

/// Spilled row ids (2048) and fragment reuse with stable row ids (512) are refused by
/// name, not as unknown bits.
#[test]
fn refuses_spilled_row_ids_and_fragment_reuse_with_stable_ids_by_name() {
    for (flags, words) in [
        ((1 << 11) | 2, ["spilled row lineage", "flag 2048"]),
        ((1 << 9) | 2, ["fragment reuse index", "flag 512"]),
        (
            (1 << 9) | (1 << 11) | 2 | (1 << 6),
            ["spilled row lineage", "flag 2048"],
        ),
    ] {
        let (mut m, s) = sample();
        m.reader_feature_flags = flags;
        match decode_all(&frame(m, Some(s))) {
            Err(e @ Error::Unsupported { .. }) => {
                let text = e.to_string();
                assert!(
                    words.iter().all(|w| text.contains(w)) && !text.contains("flag bits"),
                    "{text}"
                );
            }
            other => panic!("{flags}: {other:?}"),
        }
    }
}

#[test]
fn decodes_the_fixture_manifests() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/datasets/types.lance/_versions");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let latest = names.iter().find(|n| n.ends_with(".manifest")).unwrap();
    let bytes = std::fs::read(dir.join(latest)).unwrap();
    let m = decode_all(&bytes).unwrap();
    assert_eq!(
        Some(m.version),
        crate::lance::dataset::versions::parse_manifest_name(latest).map(|v| v.0)
    );
    assert!(m.schema.field_by_path("s").is_some());
    assert!(m.indices.iter().any(|i| i.name == "s_idx"));
    assert!(
        m.fragments.iter().all(|f| f.id != 1),
        "fragment 1 was deleted entirely"
    );
    assert!(m.fragments.iter().any(|f| f.deletion.is_some()));
}

#[test]
fn old_manifests_without_row_counts_created_at_or_deletion_counts_decode() {
    // pylance 0.6.5: no physical_rows, no num_deleted_rows, no data_format, no writer
    // version; 0.8.21 .. 0.25.2: index metadata without created_at (the sample has none).
    let (mut m, s) = sample();
    m.fragments[0].physical_rows = 0;
    m.fragments[0]
        .deletion_file
        .as_mut()
        .unwrap()
        .num_deleted_rows = 0;
    // Neither a data format nor file versions (0.6.5): legacy. A data format missing where
    // the files say 2.0 (pylance 0.13 writing 2.0 files): 2.0, as lance infers it.
    m.data_format = None;
    let set_file_versions = |m: &mut pb::Manifest, version: (u32, u32)| {
        for file in m.fragments.iter_mut().flat_map(|f| f.files.iter_mut()) {
            (file.file_major_version, file.file_minor_version) = version;
        }
    };
    let mut v2_0 = m.clone();
    set_file_versions(&mut v2_0, (0, 3));
    let got = decode_all(&frame(v2_0, Some(s.clone()))).unwrap();
    assert_eq!(got.data_storage_version, "2.0");
    set_file_versions(&mut m, (0, 0));
    let got = decode_all(&frame(m, Some(s))).unwrap();
    assert!(crate::lance::dataset::rows::lacks_row_count(
        &got.fragments[0]
    ));
    assert_eq!(
        got.fragments[0].deletion.as_ref().unwrap().num_deleted_rows,
        0
    );
    assert_eq!(got.data_storage_version, "legacy");
    assert_eq!(got.writer, None);
    assert_eq!(got.indices.len(), 1);
}

#[test]
fn duplicate_fragment_and_field_ids_are_refused_with_the_reason() {
    let (mut m, s) = sample();
    let twin = m.fragments[0].clone();
    m.fragments.push(twin);
    match decode_all(&frame(m, Some(s.clone()))) {
        Err(Error::Corrupt { what, .. }) => {
            assert!(what.contains("fragment id 3 appears twice"), "{what}");
            assert!(what.contains("old lance writers"), "{what}");
        }
        other => panic!("{other:?}"),
    }
    let (mut m, _) = sample();
    let mut twin = m.fields[0].clone();
    twin.name = "y".into();
    m.fields.push(twin);
    match decode_all(&frame(m, Some(s))) {
        Err(Error::Corrupt { what, .. }) => {
            assert!(what.contains("duplicate field id 0"), "{what}")
        }
        other => panic!("{other:?}"),
    }
}
