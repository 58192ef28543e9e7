"""lakeseek's answers equal pylance 14.0.2's on the project's fixtures (the answers the
fixture generators recorded from pylance: tests/fixtures/...)."""

import pyarrow as pa
import pytest

import lakeseek
from conftest import DATASETS, FIXTURES, assert_same_column, from_deltas, load_json, read_ipc

ANSWERS = load_json(DATASETS / "answers.json")
SCALAR_ANSWERS = load_json(DATASETS / "scalar_answers.json")
TAKE_ANSWERS = load_json(DATASETS / "take_answers.json")
CATALOG = load_json(FIXTURES / "files" / "catalog.json")
TAKE_VARIANTS = sorted(TAKE_ANSWERS["variants"])
ECP_FIXTURES = sorted(p.stem for p in (FIXTURES / "ecp" / "expected").glob("*.json"))


def rowaddrs(table):
    return pa.table(table).column("_rowaddr").to_pylist()


@pytest.mark.parametrize("doc", [ANSWERS, SCALAR_ANSWERS], ids=["answers", "scalar_answers"])
def test_filters_match_pylance(doc):
    session = lakeseek.Session()
    checked, failures = 0, []
    for name, ds in doc["datasets"].items():
        url = str(DATASETS / f"{name}.lance")
        unindexed = set(ds.get("unindexed_filters", []))
        opened = {}
        for q in ds["queries"]:
            version = q.get("version")
            if version not in opened:
                opened[version] = lakeseek.Dataset(url, version=version, session=session)
            dataset = opened[version]
            allow_scan = q["filter"] in unindexed
            want = from_deltas(q["addr_deltas"])
            checked += 1
            try:
                if allow_scan:
                    got = rowaddrs(dataset.query(q["filter"], allow_scan=True))
                else:
                    got = dataset.filter(q["filter"]).to_pylist()
            except lakeseek.LakeseekError as e:
                failures.append(f"{name} v{version} {q['filter']!r}: {e}")
                continue
            if got != want:
                failures.append(f"{name} v{version} {q['filter']!r}: {len(got)} rows, pylance {len(want)}")
        for e in ds.get("errors", []):
            dataset = lakeseek.Dataset(url, session=session)
            with pytest.raises(lakeseek.InvalidArgument):
                dataset.filter(e["filter"])
    assert checked > 100
    assert not failures, "\n".join(failures)


def test_query_with_columns_reads_the_matching_rows():
    dataset = lakeseek.Dataset(str(DATASETS / "bitmap_del.lance"))
    q = ANSWERS["datasets"]["bitmap_del"]["queries"][0]
    table = pa.table(dataset.query(q["filter"], columns=["k"]))
    assert table.column_names == ["_rowaddr", "k"]
    assert table.column("_rowaddr").to_pylist() == from_deltas(q["addr_deltas"])
    assert set(table.column("k").to_pylist()) == {7}


def _kept(rows):
    """pylance leaves out deleted rows (the fixture deletes id % 17 == 3, id = 160 * fragment
    + offset)."""
    return [a for a in rows if ((a >> 32) * 160 + (a & 0xFFFFFFFF)) % 17 != 3]


@pytest.mark.parametrize("variant", TAKE_VARIANTS)
def test_nested_takes_match_pylance(variant):
    dataset = lakeseek.Dataset(str(DATASETS / "take" / f"{variant}.lance"))
    columns = TAKE_ANSWERS["variants"][variant]["columns"]
    oracle = read_ipc(DATASETS / "take" / f"{variant}.takes.arrow")
    assert len(oracle) == len(TAKE_ANSWERS["row_sets"])
    for k, (rows, want) in enumerate(zip(TAKE_ANSWERS["row_sets"], oracle)):
        got = pa.table(dataset.take(rows, columns))
        assert got.column("_rowaddr").to_pylist() == _kept(rows), f"{variant} set {k}"
        assert got.num_columns == want.num_columns + 1
        for name in want.schema.names:
            assert_same_column(got.column(name), want.column(name), f"{variant} set {k} {name}")


@pytest.mark.parametrize("variant", ["v2_2", "v2_3_sparse"])
def test_scanned_timestamp_filters_match_pylance(variant):
    dataset = lakeseek.Dataset(str(DATASETS / "take" / f"{variant}.lance"))
    failures = []
    for q in TAKE_ANSWERS["filters"]:
        got = rowaddrs(dataset.query(q["filter"], allow_scan=True))
        if got != from_deltas(q["addr_deltas"]):
            failures.append(q["filter"])
    for q in TAKE_ANSWERS["filter_errors"]:
        with pytest.raises(lakeseek.InvalidArgument):
            dataset.query(q["filter"], allow_scan=True)
    assert not failures, failures


@pytest.mark.parametrize("entry", CATALOG["files"], ids=lambda f: f["path"])
def test_lance_files_match_pylance(entry):
    """Full reads and row-list takes of every fixture file (2.1, 2.2, 2.3, 2.3 sparse)."""
    base = FIXTURES / "files"
    file = lakeseek.LanceFile(str(base / entry["path"]))
    assert file.num_rows == entry["rows"]
    names = [c["name"] for c in entry["columns"]]
    (want,) = read_ipc(base / entry["oracle_full"])
    got = pa.table(file.read_range(names, 0, entry["rows"]))
    for name in names:
        assert_same_column(got.column(name), want.column(name), f"{entry['path']} {name}")
    takes = read_ipc(base / entry["oracle_take"])
    for rows, want in zip(entry["take_row_lists"], takes):
        got = pa.table(file.take(names, rows))
        for name in names:
            assert_same_column(got.column(name), want.column(name), f"{entry['path']} take {name}")


def _check_ecp_case(index, case, name):
    search = index.query(case["query"], exclude=case["exclude"] or None,
                         search_exp=case["search_exp"], max_increments=case["max_increments"])
    for p, page in enumerate(case["pages"]):
        got = search.next(page["k"])
        assert got.ids == page["ids"], f"{name} {case['name']} page {p}"
        assert got.scores == pytest.approx(page["scores"], rel=1e-4, abs=1e-4)


@pytest.mark.parametrize("name", ECP_FIXTURES)
def test_ecp_search_matches_reference(name):
    expected = load_json(FIXTURES / "ecp" / "expected" / f"{name}.json")
    index = lakeseek.EcpIndex(str(FIXTURES / "ecp" / name))
    info = index.info
    assert (info["dim"], info["levels"], info["total_items"]) == (
        expected["dim"], expected["levels"], expected["total_items"])
    for case in expected["cases"]:
        _check_ecp_case(index, case, name)
    first = expected["cases"][0]
    page = index.search(first["query"], first["pages"][0]["k"], search_exp=first["search_exp"],
                        max_increments=first["max_increments"])
    assert page.ids == first["pages"][0]["ids"]
