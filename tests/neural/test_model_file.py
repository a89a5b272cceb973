"""The checked ``.pt`` model-file reader shared by the CRISP and byte-LM loaders."""

import pytest
import torch

from qdecode.neural.model_file import load_weights, read_model_blob


def _save(path, **blob):
    torch.save(blob, path)
    return path


def test_reads_a_matching_file_and_loads_weights(tmp_path):
    net = torch.nn.Linear(3, 2)
    p = _save(tmp_path / "m.pt", format="fam", format_version=2, state_dict=net.state_dict())
    blob = read_model_blob(p, "fam", 2, "test model")
    other = load_weights(torch.nn.Linear(3, 2), blob, p)
    assert not other.training
    assert torch.equal(other.weight, net.weight)


def test_every_bad_file_gives_a_precise_value_error(tmp_path):
    with pytest.raises(ValueError, match="test model file not found"):
        read_model_blob(tmp_path / "missing.pt", "fam", 1, "test model")
    bad = tmp_path / "corrupt.pt"
    bad.write_bytes(b"not a zip file")
    with pytest.raises(ValueError, match="cannot read test model"):
        read_model_blob(bad, "fam", 1, "test model")
    other = _save(tmp_path / "other.pt", format="someone-else", format_version=1)
    with pytest.raises(ValueError, match="not a test model file.*'someone-else'"):
        read_model_blob(other, "fam", 1, "test model")
    old = _save(tmp_path / "old.pt", format="fam", format_version=0)
    with pytest.raises(ValueError, match="unsupported test model format version 0"):
        read_model_blob(old, "fam", 1, "test model")
    p = _save(tmp_path / "shape.pt", format="fam", format_version=1, state_dict=torch.nn.Linear(4, 2).state_dict())
    blob = read_model_blob(p, "fam", 1, "test model")
    with pytest.raises(ValueError, match="weights do not match"):
        load_weights(torch.nn.Linear(3, 2), blob, p)
    with pytest.raises(ValueError, match="weights do not match"):
        load_weights(torch.nn.Linear(3, 2), {"format": "fam"}, p)
