"""Errors are Python exceptions mirroring lakeseek::Error, with the object path."""

import shutil

import pytest

import lakeseek
from conftest import DATASETS


def test_hierarchy():
    for cls in (lakeseek.NotFound, lakeseek.InvalidArgument, lakeseek.Corrupt,
                lakeseek.Unsupported, lakeseek.StoreError, lakeseek.ObjectChanged,
                lakeseek.CommitConflict):
        assert issubclass(cls, lakeseek.LakeseekError)
    assert issubclass(lakeseek.LakeseekError, Exception)


def test_missing_dataset_is_not_found_with_its_path(tmp_path):
    missing = tmp_path / "nowhere.lance"
    with pytest.raises(lakeseek.NotFound) as err:
        lakeseek.Dataset(str(missing))
    assert "nowhere.lance" in str(err.value)
    assert "nowhere.lance" in err.value.path


def test_bad_row_address_is_invalid_argument():
    ds = lakeseek.sample.dataset()
    with pytest.raises(lakeseek.InvalidArgument, match="fragment 99"):
        ds.take([99 << 32], ["key"])
    with pytest.raises(lakeseek.LakeseekError):
        ds.take([0], ["no_such_column"])


def test_bad_filter_is_invalid_argument():
    ds = lakeseek.sample.dataset()
    with pytest.raises(lakeseek.InvalidArgument):
        ds.filter("key = ")
    with pytest.raises(lakeseek.InvalidArgument):
        ds.filter("camera = 3")  # no index answers it


def test_bad_python_arguments_are_type_errors():
    ds = lakeseek.sample.dataset()
    with pytest.raises(TypeError):
        ds.take("abc", ["key"])
    with pytest.raises(TypeError):
        ds.take([1], "key")
    with pytest.raises(TypeError):
        ds.take([-1], ["key"])


def test_ecp_vector_of_the_wrong_dimension():
    index = lakeseek.sample.ecp_index()
    with pytest.raises(lakeseek.InvalidArgument, match="dimension"):
        index.search([0.5] * (index.info["dim"] + 1), 5)
    with pytest.raises(lakeseek.InvalidArgument):
        index.query([0.5] * index.info["dim"]).next(0)


def test_corrupt_file_names_the_object_and_byte_range(tmp_path):
    source = next((DATASETS / "bitmap_del.lance" / "data").glob("*.lance"))
    broken = tmp_path / "broken.lance"
    data = bytearray(source.read_bytes())
    data[-40:-8] = b"\xff" * 32  # footer offsets past the end of the file
    broken.write_bytes(bytes(data))
    with pytest.raises(lakeseek.LakeseekError) as err:
        f = lakeseek.LanceFile(str(broken))
        f.read_range(["k"], 0, 10)
    assert isinstance(err.value, (lakeseek.Corrupt, lakeseek.Unsupported))
    assert "broken.lance" in str(err.value) and "broken.lance" in err.value.path


def test_object_store_failure_is_a_store_error():
    with pytest.raises(lakeseek.StoreError) as err:
        lakeseek.LanceFile("s3://bucket/file.lance", storage_options={
            "aws_endpoint": "http://127.0.0.1:9", "aws_access_key_id": "x",
            "aws_secret_access_key": "x", "aws_region": "us-east-1", "allow_http": True,
            "max_retries": "0"})
    assert "file.lance" in str(err.value)
