"""The bundled sample data: a small Lance dataset and an ecpfs index, written by the real
writers (pylance 14.0.2, zarr-python), held in an in-memory object store so examples run
offline.

* ``frames.lance`` (:data:`DATASET_URL`): 40,000 rows in 4 fragments, Lance 2.3:
  ``detections`` (``list<struct<label, confidence, area, x, y, track_id>>``), ``camera``
  (int32) and ``key`` (string, unique, BTree index ``key_idx``), plus a list element index
  ``det_idx`` on ``detections`` keyed by (label, confidence).
* ``ecp_index`` (:data:`ECP_INDEX_URL`): 2,000 float32 vectors of dimension 16 (L2).

>>> import lakeseek
>>> ds = lakeseek.sample.dataset()
>>> "key_idx" in ds.index_names()
True
"""

from typing import Optional

from ._lakeseek import (
    SAMPLE_DATASET_URL as DATASET_URL,
    SAMPLE_ECP_INDEX_URL as ECP_INDEX_URL,
    Dataset,
    EcpIndex,
    IoStats,
    LanceFile,
    ObjectStore,
    Session,
    sample_data_file_url,
    sample_store,
)

__all__ = [
    "DATASET_URL",
    "ECP_INDEX_URL",
    "data_file_url",
    "store",
    "dataset",
    "lance_file",
    "ecp_index",
]


def data_file_url() -> str:
    """URL of one data file (a Lance 2.3 file) of the sample dataset."""
    return sample_data_file_url()


def store() -> ObjectStore:
    """The in-memory object store holding the sample data (pass it as ``object_store=``)."""
    return sample_store()


def dataset(session: Optional[Session] = None, stats: Optional[IoStats] = None) -> Dataset:
    """The sample dataset ``frames.lance``, opened."""
    return Dataset(DATASET_URL, session=session, stats=stats, object_store=store())


def lance_file(session: Optional[Session] = None, stats: Optional[IoStats] = None) -> LanceFile:
    """One data file of the sample dataset, opened."""
    return LanceFile(data_file_url(), session=session, stats=stats, object_store=store())


def ecp_index(session: Optional[Session] = None) -> EcpIndex:
    """The sample ecpfs index, opened."""
    return EcpIndex(ECP_INDEX_URL, session=session, object_store=store())
