//! Fuzz target `row_id_sequence`: the input is a serialized `RowIdSequence` (a fragment's
//! stable row ids, as the manifest stores them inline).

use crate::lance::rowids::RowIdSequence;

/// Most positions checked per input (keeps executions fast).
const MAX_CHECKED: u64 = 4096;

/// Decode arbitrary bytes as a row id sequence. On success, the sequence must agree with
/// itself: `iter`, `get` and `positions_of` see the same ids at the same positions.
pub fn row_id_sequence(data: &[u8]) {
    let Ok(sequence) = RowIdSequence::decode(data) else {
        return;
    };
    let ids: Vec<u64> = sequence.iter().take(MAX_CHECKED as usize).collect();
    for (p, id) in ids.iter().enumerate() {
        assert_eq!(sequence.get(p as u64), Some(*id), "get({p})");
    }
    if sequence.len() <= MAX_CHECKED {
        assert_eq!(ids.len() as u64, sequence.len(), "iter yields len ids");
        assert_eq!(sequence.get(sequence.len()), None);
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        let mut seen = 0u64;
        sequence.positions_of(&sorted, &mut |id, p| {
            assert_eq!(ids[p as usize], id, "positions_of({id}) = {p}");
            seen += 1;
        });
        assert_eq!(seen, sequence.len(), "every position found once");
    }
}
